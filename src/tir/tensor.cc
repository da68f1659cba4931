// Placeholders, computes and reduction axes.
#include "kiln/tir/tensor.h"

#include "kiln/ir/tensor_type.h"
#include "kiln/support/error.h"
#include "kiln/tir/ir_visitor.h"

namespace kiln::tir {

std::vector<IterVar> OperationNode::reduce_axis() const {
  if (const auto* r = body.as<Reduce>()) return r->axis;
  return {};
}

std::vector<Tensor> OperationNode::inputs() const { return tensors_read(body); }

std::vector<Tensor> tensors_read(const Expr& e) {
  struct Collect : IRVisitor {
    std::vector<Tensor> out;
    void visit(const TensorLoad* op) override {
      bool seen = false;
      for (const Tensor& t : out) seen = seen || t.same_as(Tensor(op->op));
      if (!seen) out.push_back(Tensor(op->op));
      IRVisitor::visit(op);
    }
  } c;
  if (e.defined()) c.visit_expr(e);
  return c.out;
}

Expr Tensor::operator()(std::vector<Expr> indices) const {
  if (static_cast<int>(indices.size()) != ndim()) {
    throw UserError(UserErrorKind::kInvalidArgument, "tensor '" + name() + "'",
                    "has " + std::to_string(ndim()) + " dimensions but was indexed with " +
                        std::to_string(indices.size()) + " indices",
                    "pass one index per dimension");
  }
  for (Expr& i : indices) {
    if (i.type().is_int_or_uint() && i.type() != kIndexType && i.type().is_scalar()) i = cast(kIndexType, i);
  }
  return TensorLoad::make(*this, std::move(indices));
}

namespace {

void check_shape(const std::vector<int64_t>& shape, const std::string& name) {
  if (name.empty()) {
    throw UserError(UserErrorKind::kInvalidArgument, "tensor", "has an empty name", "give every tensor a name");
  }
  for (int64_t d : shape) {
    if (d < 0) {
      throw UserError(UserErrorKind::kInvalidArgument, "tensor '" + name + "'",
                      "has a negative dimension in shape " + ir::shape_to_string(shape), "");
    }
  }
}

}  // namespace

Tensor placeholder(std::vector<int64_t> shape, DType dtype, std::string name) {
  check_shape(shape, name);
  auto* n = new OperationNode;
  n->kind = OpKind::kPlaceholder;
  n->name = std::move(name);
  n->dtype = dtype;
  n->shape = std::move(shape);
  return Tensor(n);
}

Tensor compute(std::vector<int64_t> shape, const std::function<Expr(const std::vector<Var>&)>& fn, std::string name,
               std::vector<std::string> axis_names) {
  check_shape(shape, name);
  if (!axis_names.empty() && axis_names.size() != shape.size()) {
    throw UserError(UserErrorKind::kInvalidArgument, "compute '" + name + "'",
                    "has " + std::to_string(shape.size()) + " dimensions but " + std::to_string(axis_names.size()) +
                        " axis names",
                    "give one name per dimension or none");
  }
  std::vector<Var> vars;
  std::vector<IterVar> axis;
  for (size_t d = 0; d < shape.size(); ++d) {
    std::string axis_name = "i";
    axis_name += std::to_string(d);
    Var v(axis_names.empty() ? axis_name : axis_names[d]);
    vars.push_back(v);
    axis.push_back(IterVar::make(v, Range::from_extent(shape[d]), IterKind::kDataPar));
  }
  Expr body = fn(vars);
  if (!body.defined() || !body.type().is_scalar()) {
    throw UserError(UserErrorKind::kInvalidArgument, "compute '" + name + "'",
                    "body is undefined or a vector", "return one scalar expression per element");
  }
  // A Reduce may only be the whole body.
  struct FindNestedReduce : IRVisitor {
    bool found = false;
    void visit(const Reduce* op) override { found = true; }
  } nested;
  if (const auto* r = body.as<Reduce>()) {
    nested.visit_expr(r->source);
  } else {
    nested.visit_expr(body);
  }
  if (nested.found) {
    throw UserError(UserErrorKind::kUnsupported, "compute '" + name + "'",
                    "uses a reduction inside a larger expression",
                    "make the reduction its own compute and use its result in a second compute");
  }
  auto* n = new OperationNode;
  n->kind = OpKind::kCompute;
  n->name = std::move(name);
  n->dtype = body.type().dtype;
  n->shape = std::move(shape);
  n->axis = std::move(axis);
  n->body = std::move(body);
  return Tensor(n);
}

Expr read_or(const Tensor& t, const std::vector<Expr>& indices, Expr fallback) {
  if (static_cast<int>(indices.size()) != t.ndim()) return t(indices);  // reports the error
  Expr inside;
  std::vector<Expr> clamped;
  for (int d = 0; d < t.ndim(); ++d) {
    const Expr& i = indices[d];
    const Expr hi = make_int(t.shape()[d] - 1, i.type());
    Expr c = i >= make_zero(i.type()) && i <= hi;
    inside = inside.defined() ? (inside && c) : c;
    clamped.push_back(min(max(i, make_zero(i.type())), hi));
  }
  if (!inside.defined()) return t(indices);
  return select(inside, t(clamped), std::move(fallback));
}

IterVar reduce_axis(int64_t extent, std::string name) {
  if (extent <= 0) {
    throw UserError(UserErrorKind::kInvalidArgument, "reduce_axis '" + name + "'",
                    "has extent " + std::to_string(extent) + "; a reduction needs at least one element", "");
  }
  return IterVar::make(Var(std::move(name)), Range::from_extent(extent), IterKind::kReduce);
}

}  // namespace kiln::tir
