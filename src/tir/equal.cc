// Structural equality of expressions: same kinds, types, constants and children; variables,
// buffers and tensors compare by identity.
#include "kiln/support/error.h"
#include "kiln/tir/expr.h"
#include "kiln/tir/tensor.h"

namespace kiln::tir {
namespace {

bool equal_all(const std::vector<Expr>& a, const std::vector<Expr>& b) {
  if (a.size() != b.size()) return false;
  for (size_t i = 0; i < a.size(); ++i) {
    if (!equal(a[i], b[i])) return false;
  }
  return true;
}

template <typename T>
bool equal_binary(const Expr& a, const Expr& b) {
  const T* x = a.as<T>();
  const T* y = b.as<T>();
  return equal(x->a, y->a) && equal(x->b, y->b);
}

}  // namespace

bool equal(const Expr& a, const Expr& b) {
  if (a.same_as(b)) return true;
  if (!a.defined() || !b.defined()) return false;
  if (a.kind() != b.kind() || a.type() != b.type()) return false;
  switch (a.kind()) {
    case IRNodeKind::kIntImm: return a.as<IntImm>()->value == b.as<IntImm>()->value;
    case IRNodeKind::kFloatImm: return a.as<FloatImm>()->value == b.as<FloatImm>()->value;
    case IRNodeKind::kVariable: return false;  // distinct objects
#define KILN_TIR_EQ_BINARY(N) \
  case IRNodeKind::k##N: return equal_binary<N>(a, b);
      KILN_TIR_EQ_BINARY(Add)
      KILN_TIR_EQ_BINARY(Sub)
      KILN_TIR_EQ_BINARY(Mul)
      KILN_TIR_EQ_BINARY(Div)
      KILN_TIR_EQ_BINARY(FloorDiv)
      KILN_TIR_EQ_BINARY(FloorMod)
      KILN_TIR_EQ_BINARY(Min)
      KILN_TIR_EQ_BINARY(Max)
      KILN_TIR_EQ_BINARY(EQ)
      KILN_TIR_EQ_BINARY(NE)
      KILN_TIR_EQ_BINARY(LT)
      KILN_TIR_EQ_BINARY(LE)
      KILN_TIR_EQ_BINARY(GT)
      KILN_TIR_EQ_BINARY(GE)
      KILN_TIR_EQ_BINARY(And)
      KILN_TIR_EQ_BINARY(Or)
#undef KILN_TIR_EQ_BINARY
    case IRNodeKind::kNot: return equal(a.as<Not>()->a, b.as<Not>()->a);
    case IRNodeKind::kSelect: {
      const auto *x = a.as<Select>(), *y = b.as<Select>();
      return equal(x->condition, y->condition) && equal(x->true_value, y->true_value) &&
             equal(x->false_value, y->false_value);
    }
    case IRNodeKind::kCast: return equal(a.as<Cast>()->value, b.as<Cast>()->value);
    case IRNodeKind::kCall: {
      const auto *x = a.as<Call>(), *y = b.as<Call>();
      return x->op == y->op && equal_all(x->args, y->args);
    }
    case IRNodeKind::kLoad: {
      const auto *x = a.as<Load>(), *y = b.as<Load>();
      return x->buffer.same_as(y->buffer) && equal(x->index, y->index);
    }
    case IRNodeKind::kRamp: {
      const auto *x = a.as<Ramp>(), *y = b.as<Ramp>();
      return x->lanes == y->lanes && equal(x->base, y->base) && equal(x->stride, y->stride);
    }
    case IRNodeKind::kBroadcast: {
      const auto *x = a.as<Broadcast>(), *y = b.as<Broadcast>();
      return x->lanes == y->lanes && equal(x->value, y->value);
    }
    case IRNodeKind::kLet: {
      const auto *x = a.as<Let>(), *y = b.as<Let>();
      return x->var.same_as(y->var) && equal(x->value, y->value) && equal(x->body, y->body);
    }
    case IRNodeKind::kTensorLoad: {
      const auto *x = a.as<TensorLoad>(), *y = b.as<TensorLoad>();
      return x->op.same_as(y->op) && equal_all(x->indices, y->indices);
    }
    case IRNodeKind::kReduce: {
      const auto *x = a.as<Reduce>(), *y = b.as<Reduce>();
      if (x->op != y->op || x->axis.size() != y->axis.size() || !equal(x->source, y->source)) return false;
      for (size_t i = 0; i < x->axis.size(); ++i) {
        if (!x->axis[i].same_as(y->axis[i])) return false;
      }
      return true;
    }
    default: KILN_IFAIL() << "statement kind " << node_kind_name(a.kind()) << " in an Expr";
  }
}

}  // namespace kiln::tir
