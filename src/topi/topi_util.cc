#include "topi/topi_util.h"

namespace kiln::topi {

ir::DType compute_dtype(ir::DType dtype) {
  if (dtype == ir::DType::kF16 || dtype == ir::DType::kBF16) return ir::DType::kF32;
  return dtype;
}

Expr cast_to(ir::DType dtype, const Expr& e) {
  if (e.type().dtype == dtype) return e;
  return tir::cast(tir::Type(dtype, e.type().lanes), e);
}

Expr constant(ir::DType dtype, double value) { return tir::make_const(tir::Type(dtype), value); }

std::vector<Expr> broadcast_indices(const std::vector<Expr>& out, const ir::Shape& shape) {
  const size_t rank = shape.size();
  KILN_ICHECK(rank <= out.size()) << "broadcast of rank " << rank << " into rank " << out.size();
  std::vector<Expr> idx;
  idx.reserve(rank);
  const size_t offset = out.size() - rank;
  for (size_t d = 0; d < rank; ++d) idx.push_back(shape[d] == 1 ? Expr(0) : out[offset + d]);
  return idx;
}

std::vector<Expr> broadcast_indices(const std::vector<Var>& out, const ir::Shape& shape) {
  return broadcast_indices(as_exprs(out), shape);
}

Expr ravel(const std::vector<Expr>& idx, const ir::Shape& shape) {
  Expr flat = Expr(0);
  for (size_t d = 0; d < shape.size(); ++d) flat = d == 0 ? idx[d] : flat * shape[d].expr() + idx[d];
  return flat;
}

std::vector<Expr> unravel(const Expr& flat, const ir::Shape& shape) {
  std::vector<Expr> idx(shape.size());
  Expr rest = flat;
  for (size_t d = shape.size(); d-- > 0;) {
    if (d == 0) {
      idx[d] = rest;
    } else {
      idx[d] = tir::floormod(rest, Expr(shape[d]));
      rest = tir::floordiv(rest, Expr(shape[d]));
    }
  }
  return idx;
}

std::vector<Expr> as_exprs(const std::vector<Var>& vars) { return {vars.begin(), vars.end()}; }

ir::Shape shape_of(const Tensor& t) { return t.shape(); }
ir::TensorType type_of(const Tensor& t) { return ir::TensorType{t.dtype(), t.shape()}; }

void fail_unsupported(const std::string& op, const std::string& what, const std::string& hint) {
  throw UserError(UserErrorKind::kUnsupported, "operator '" + op + "'", what + " has no generated kernel yet",
                  hint.empty() ? "run it with the reference executor" : hint);
}

ComputeResult injective_result(Tensor out) {
  ComputeResult r;
  r.outputs = {std::move(out)};
  r.schedule = ScheduleKind::kInjective;
  return r;
}

}  // namespace kiln::topi
