// Computes of argmax / argmin (src/ir/ops/arg_reduce.cc) as two reductions over the axis: the
// extreme value m, then the first (or with select_last_index the last) k with x[k] == m, as a
// min (max) reduction of select(x[k] == m, k, n) (select(.., k, -1)). Both are reduction stages
// of the generic reduction schedule; the keepdims reshape is the output stage. Where a nan is in
// the row the compiled index is unspecified (the reference gives the first nan's, numpy's rule).
#include "kiln/topi/compute.h"
#include "topi/topi_util.h"

namespace kiln::topi {
namespace {

using ir::DType;

ComputeResult arg_compute(const std::string& op, bool is_max, const std::vector<Tensor>& in, const ir::Attrs& attrs,
                          const std::vector<ir::TensorType>& out) {
  const Tensor x = in[0];
  const size_t axis = static_cast<size_t>(attrs.get_int("axis"));
  const bool last = attrs.get_int("select_last_index") != 0;
  const int64_t n = x.shape()[axis];
  ir::Shape kept;
  for (size_t d = 0; d < x.shape().size(); ++d) {
    if (d != axis) kept.push_back(x.shape()[d]);
  }
  auto with_k = [&](const std::vector<Var>& i, const Expr& k) {
    std::vector<Expr> idx = as_exprs(i);
    idx.insert(idx.begin() + static_cast<long>(axis), k);
    return idx;
  };
  tir::IterVar k1 = tir::reduce_axis(n, "k");
  Tensor extreme = tir::compute(
      kept,
      [&](const std::vector<Var>& i) {
        const Expr v = x(with_k(i, k1.var()));
        return is_max ? tir::max_reduce(v, {k1}) : tir::min_reduce(v, {k1});
      },
      op + "_value");
  tir::IterVar k2 = tir::reduce_axis(n, "k");
  Tensor index = tir::compute(
      kept,
      [&](const std::vector<Var>& i) {
        const Expr hit = x(with_k(i, k2.var())) == extreme(as_exprs(i));
        const Expr k = k2.var();
        return last ? tir::max_reduce(tir::select(hit, k, Expr(int64_t{-1})), {k2})
                    : tir::min_reduce(tir::select(hit, k, Expr(n)), {k2});
      },
      op + "_index");
  ComputeResult r;
  r.schedule = ScheduleKind::kReduction;
  r.parts["anchor"] = index;
  const bool keepdims = out[0].shape.size() == x.shape().size();
  r.outputs = {tir::compute(
      out[0].shape,
      [&](const std::vector<Var>& i) {
        std::vector<Expr> idx;
        for (size_t d = 0; d < i.size(); ++d) {
          if (!keepdims || d != axis) idx.push_back(i[d]);
        }
        return cast_to(DType::kI64, index(idx));
      },
      op)};
  return r;
}

KILN_REGISTER_COMPUTE(argmax, "argmax",
                      [](const std::vector<Tensor>& in, const ir::Attrs& a, const std::vector<ir::TensorType>& o,
                         const LayoutHints&) { return arg_compute("argmax", true, in, a, o); });
KILN_REGISTER_COMPUTE(argmin, "argmin",
                      [](const std::vector<Tensor>& in, const ir::Attrs& a, const std::vector<ir::TensorType>& o,
                         const LayoutHints&) { return arg_compute("argmin", false, in, a, o); });

}  // namespace
}  // namespace kiln::topi
