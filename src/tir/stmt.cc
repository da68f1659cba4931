// Validating factories of the statement nodes and PrimFunc.
#include "kiln/tir/stmt.h"

#include "kiln/support/error.h"
#include "kiln/tir/tensor.h"

namespace kiln::tir {

const char* node_kind_name(IRNodeKind kind) {
  switch (kind) {
#define KILN_TIR_KIND_NAME(N) \
  case IRNodeKind::k##N: return #N;
    KILN_TIR_FOR_EACH_EXPR_NODE(KILN_TIR_KIND_NAME)
    KILN_TIR_FOR_EACH_STMT_NODE(KILN_TIR_KIND_NAME)
#undef KILN_TIR_KIND_NAME
  }
  return "?";
}

const char* for_kind_name(ForKind kind) {
  switch (kind) {
    case ForKind::kSerial: return "serial";
    case ForKind::kParallel: return "parallel";
    case ForKind::kVectorized: return "vectorized";
    case ForKind::kUnrolled: return "unrolled";
  }
  return "?";
}

const char* memory_scope_name(MemoryScope scope) {
  switch (scope) {
    case MemoryScope::kStack: return "stack";
    case MemoryScope::kHeap: return "heap";
  }
  return "?";
}

Stmt For::make(Var loop_var, Expr min, Expr extent, ForKind kind, Stmt body) {
  KILN_ICHECK(loop_var.defined() && min.defined() && extent.defined() && body.defined()) << "For with an undefined part";
  KILN_ICHECK(loop_var.type().is_scalar() && loop_var.type().is_int()) << "For variable " << loop_var.name()
                                                                       << " of type " << loop_var.type().to_string();
  KILN_ICHECK(min.type() == loop_var.type() && extent.type() == loop_var.type())
      << "For " << loop_var.name() << ": min/extent types differ from the variable's";
  auto* n = new For;
  n->loop_var = std::move(loop_var);
  n->min = std::move(min);
  n->extent = std::move(extent);
  n->kind = kind;
  n->body = std::move(body);
  return Stmt(n);
}

Stmt Store::make(Buffer buffer, Expr value, Expr index) {
  KILN_ICHECK(buffer.defined() && value.defined() && index.defined()) << "Store with an undefined part";
  KILN_ICHECK(index.type().is_int_or_uint()) << "Store index of type " << index.type().to_string();
  KILN_ICHECK(value.type() == Type(buffer->dtype, index.type().lanes))
      << "Store of a " << value.type().to_string() << " into " << buffer->name << " ("
      << ir::dtype_name(buffer->dtype) << ") with index lanes " << index.type().lanes;
  auto* n = new Store;
  n->buffer = std::move(buffer);
  n->value = std::move(value);
  n->index = std::move(index);
  return Stmt(n);
}

Stmt LetStmt::make(Var var, Expr value, Stmt body) {
  KILN_ICHECK(var.defined() && value.defined() && body.defined()) << "LetStmt with an undefined part";
  KILN_ICHECK(var.type() == value.type()) << "LetStmt " << var.name() << " type mismatch";
  auto* n = new LetStmt;
  n->var = std::move(var);
  n->value = std::move(value);
  n->body = std::move(body);
  return Stmt(n);
}

Stmt IfThenElse::make(Expr condition, Stmt then_case, Stmt else_case) {
  KILN_ICHECK(condition.defined() && then_case.defined()) << "IfThenElse with an undefined part";
  KILN_ICHECK(condition.type() == kBoolType) << "IfThenElse condition of type " << condition.type().to_string();
  auto* n = new IfThenElse;
  n->condition = std::move(condition);
  n->then_case = std::move(then_case);
  n->else_case = std::move(else_case);
  return Stmt(n);
}

Stmt Allocate::make(Buffer buffer, MemoryScope scope, int alignment, Stmt body) {
  KILN_ICHECK(buffer.defined() && body.defined()) << "Allocate with an undefined part";
  KILN_ICHECK(alignment > 0 && (alignment & (alignment - 1)) == 0) << "Allocate alignment " << alignment;
  auto* n = new Allocate;
  n->buffer = std::move(buffer);
  n->scope = scope;
  n->alignment = alignment;
  n->body = std::move(body);
  return Stmt(n);
}

Stmt Block::make(std::vector<Stmt> stmts) {
  std::vector<Stmt> flat;
  for (Stmt& s : stmts) {
    KILN_ICHECK(s.defined()) << "Block with an undefined statement";
    if (const auto* b = s.as<Block>()) {
      flat.insert(flat.end(), b->stmts.begin(), b->stmts.end());
    } else if (!is_nop(s)) {
      flat.push_back(std::move(s));
    }
  }
  if (flat.empty()) return make_nop();
  if (flat.size() == 1) return flat[0];
  auto* n = new Block;
  n->stmts = std::move(flat);
  return Stmt(n);
}

Stmt Evaluate::make(Expr value) {
  KILN_ICHECK(value.defined()) << "Evaluate of an undefined expression";
  auto* n = new Evaluate;
  n->value = std::move(value);
  return Stmt(n);
}

Stmt ProducerStore::make(const Tensor& tensor, Expr value, std::vector<Expr> indices) {
  KILN_ICHECK(tensor.defined() && value.defined()) << "ProducerStore with an undefined part";
  KILN_ICHECK(static_cast<int>(indices.size()) == tensor.ndim()) << "ProducerStore to " << tensor.name() << " with "
                                                                 << indices.size() << " indices";
  KILN_ICHECK(value.type() == Type(tensor.dtype())) << "ProducerStore of a " << value.type().to_string() << " into "
                                                    << tensor.name();
  auto* n = new ProducerStore;
  n->op = Ref<OperationNode>(tensor.get());
  n->value = std::move(value);
  n->indices = std::move(indices);
  return Stmt(n);
}

Stmt ProducerRealize::make(const Tensor& tensor, std::vector<Range> bounds, MemoryScope scope, Stmt body) {
  KILN_ICHECK(tensor.defined() && body.defined()) << "ProducerRealize with an undefined part";
  KILN_ICHECK(static_cast<int>(bounds.size()) == tensor.ndim()) << "ProducerRealize of " << tensor.name()
                                                                << " with " << bounds.size() << " bounds";
  auto* n = new ProducerRealize;
  n->op = Ref<OperationNode>(tensor.get());
  n->bounds = std::move(bounds);
  n->scope = scope;
  n->body = std::move(body);
  return Stmt(n);
}

Stmt make_nop() { return Evaluate::make(make_int(0)); }

bool is_nop(const Stmt& s) {
  const auto* e = s.as<Evaluate>();
  return e && is_const(e->value);
}

PrimFunc PrimFunc::make(std::string name, std::vector<Buffer> params, Stmt body) {
  KILN_ICHECK(!name.empty() && body.defined()) << "PrimFunc without a name or body";
  auto* n = new PrimFuncNode;
  n->name = std::move(name);
  n->params = std::move(params);
  n->body = std::move(body);
  return PrimFunc(n);
}

}  // namespace kiln::tir
