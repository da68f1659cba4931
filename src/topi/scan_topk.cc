// Scans and selection along one axis (src/ir/ops/scan_topk.cc):
// - cumsum / cumprod: a parallel prefix scan (Hillis-Steele): ceil(log2 n) injective stages,
//   stage k + 1 adding (multiplying) to each element the one 2^k before it along the axis, each
//   stage materialized (a part) and vectorized over the whole tensor; reverse reads the axis
//   mirrored, exclusive reads the previous position (the identity at the first).
// - topk, few of many (k <= 128 and 2k < n): k selection steps of two reductions each (the best
//   value after the previous pick, then the first index holding it): O(k n).
// - topk otherwise: the rank of every element in its line (how many elements come before it:
//   larger, or equal with a smaller index; for smallest-first, smaller), then for output position
//   j the element whose rank is j (a max-reduction of its index), and its value: O(n^2).
//   Both are sorted by construction; equal values keep their index order, as the reference.
// Sums and products accumulate in f32 for f16/bf16 (the reference in double) and in the integer
// type itself for integers (wrapping, as the reference).
#include "kiln/topi/compute.h"
#include "topi/topi_util.h"

namespace kiln::topi {
namespace {

using ir::DType;

template <bool kProduct>
ComputeResult scan_compute(const std::vector<Tensor>& in, const ir::Attrs& attrs, const std::vector<ir::TensorType>& out,
                           const LayoutHints&) {
  const Tensor x = in[0];
  const size_t axis = static_cast<size_t>(attrs.get_int("axis"));
  const bool exclusive = attrs.get_int("exclusive") != 0, reverse = attrs.get_int("reverse") != 0;
  const DType dt = x.dtype(), acc = compute_dtype(dt);
  const int64_t n = x.shape()[axis];
  const std::string name = kProduct ? "cumprod" : "cumsum";
  const Expr identity = constant(acc, kProduct ? 1.0 : 0.0);
  auto combine = [](const Expr& a, const Expr& b) { return kProduct ? a * b : a + b; };
  // Scanned position p <-> index along the axis (mirrored when reversed).
  auto along = [&](const Expr& p) { return reverse ? Expr(n - 1) - p : p; };
  ComputeResult result;
  result.schedule = ScheduleKind::kInjective;
  if (n == 0) {
    result.outputs = {tir::compute(out[0].shape, [&](const std::vector<Var>&) { return constant(dt, 0.0); }, name)};
    return result;
  }
  // Stage 0 reads x in scan order; stage k + 1 combines each element with the one 2^k before it.
  Tensor stage = tir::compute(
      out[0].shape,
      [&](const std::vector<Var>& i) {
        std::vector<Expr> idx = as_exprs(i);
        idx[axis] = along(i[axis]);
        return cast_to(acc, x(idx));
      },
      name + "_0");
  int level = 0;
  for (int64_t step = 1; step < n; step *= 2) {
    const Tensor prev = stage;
    stage = tir::compute(
        out[0].shape,
        [&](const std::vector<Var>& i) {
          std::vector<Expr> back = as_exprs(i);
          back[axis] = tir::max(Expr(i[axis]) - step, Expr(int64_t{0}));
          return combine(prev(as_exprs(i)), tir::select(Expr(i[axis]) >= Expr(step), prev(back), identity));
        },
        name + "_" + std::to_string(++level));
    result.parts["scan" + std::to_string(level)] = stage;
  }
  const Tensor scanned = stage;
  result.outputs = {tir::compute(
      out[0].shape,
      [&](const std::vector<Var>& i) {
        std::vector<Expr> idx = as_exprs(i);
        const Expr p = along(i[axis]);
        if (!exclusive) {
          idx[axis] = p;
          return cast_to(dt, scanned(idx));
        }
        idx[axis] = tir::max(p - 1, Expr(int64_t{0}));
        return cast_to(dt, tir::select(p >= Expr(int64_t{1}), scanned(idx), identity));
      },
      name)};
  return result;
}
KILN_REGISTER_COMPUTE(cumsum, "cumsum", scan_compute<false>);
KILN_REGISTER_COMPUTE(cumprod, "cumprod", scan_compute<true>);

// Few of many (k <= kMaxSelectionSteps, 2k < n): k selection steps, each two reductions over the
// line: the best value after the previous pick in the order (value, then index), and the smallest
// index holding it. O(k n) work instead of the rank method's O(n^2).
constexpr int64_t kMaxSelectionSteps = 128;

ComputeResult topk_by_selection(const Tensor& x, size_t axis, bool largest, int64_t k, const std::vector<ir::TensorType>& out) {
  const int64_t n = x.shape()[axis];
  const DType cdt = compute_dtype(x.dtype());
  ir::Shape rows = x.shape();
  rows.erase(rows.begin() + static_cast<long>(axis));
  auto at = [&](const std::vector<Var>& row, const Expr& r) {
    std::vector<Expr> idx = as_exprs(row);
    idx.insert(idx.begin() + static_cast<long>(axis), r);
    return cast_to(cdt, x(idx));
  };
  const Expr worst = largest ? tir::type_min(tir::Type(cdt)) : tir::type_max(tir::Type(cdt));
  ComputeResult result;
  result.schedule = ScheduleKind::kReduction;
  std::vector<Tensor> value(static_cast<size_t>(k)), index(static_cast<size_t>(k));
  for (int64_t j = 0; j < k; ++j) {
    // Whether element r comes after pick j - 1 in the order.
    auto eligible = [&](const std::vector<Var>& row, const Expr& r) -> Expr {
      if (j == 0) return tir::make_bool(true);
      const Expr xr = at(row, r), v = value[j - 1](as_exprs(row)), i = index[j - 1](as_exprs(row));
      return (largest ? xr < v : xr > v) || ((xr == v) && (r > i));
    };
    tir::IterVar r = tir::reduce_axis(n, "r");
    value[j] = tir::compute(
        rows,
        [&](const std::vector<Var>& row) {
          const Expr v = tir::select(eligible(row, r.var()), at(row, r.var()), worst);
          return largest ? tir::max_reduce(v, {r}) : tir::min_reduce(v, {r});
        },
        "topk_value" + std::to_string(j));
    tir::IterVar q = tir::reduce_axis(n, "q");
    index[j] = tir::compute(
        rows,
        [&](const std::vector<Var>& row) {
          const Expr hit = eligible(row, q.var()) && (at(row, q.var()) == value[j](as_exprs(row)));
          return tir::min_reduce(tir::select(hit, Expr(q.var()), Expr(n - 1)), {q});
        },
        "topk_index" + std::to_string(j));
  }
  auto gather = [&](const std::vector<Tensor>& picks, const std::vector<Var>& o) {
    std::vector<Expr> row = as_exprs(o);
    const Expr j = row[axis];
    row.erase(row.begin() + static_cast<long>(axis));
    Expr v = picks[static_cast<size_t>(k - 1)](row);
    for (int64_t p = k - 1; p-- > 0;) v = tir::select(j == Expr(p), picks[static_cast<size_t>(p)](row), v);
    return v;
  };
  Tensor indices = tir::compute(out[1].shape, [&](const std::vector<Var>& o) { return gather(index, o); }, "topk_indices");
  result.outputs = {tir::compute(
                        out[0].shape,
                        [&](const std::vector<Var>& o) {
                          std::vector<Expr> idx = as_exprs(o);
                          idx[axis] = indices(as_exprs(o));
                          return x(idx);
                        },
                        "topk_values"),
                    indices};
  result.parts["anchor"] = value[0];
  return result;
}

ComputeResult topk_compute(const std::vector<Tensor>& in, const ir::Attrs& attrs, const std::vector<ir::TensorType>& out,
                           const LayoutHints&) {
  const Tensor x = in[0];
  const size_t axis = static_cast<size_t>(attrs.get_int("axis"));
  const bool largest = attrs.get_int("largest") != 0;
  const int64_t n = x.shape()[axis];
  ComputeResult result;
  result.schedule = ScheduleKind::kReduction;
  if (n == 0 || ir::shape_numel(out[0].shape) == 0) {
    result.outputs = {tir::compute(out[0].shape, [&](const std::vector<Var>&) { return constant(x.dtype(), 0.0); }, "topk_values"),
                      tir::compute(out[1].shape, [&](const std::vector<Var>&) { return Expr(int64_t{0}); }, "topk_indices")};
    return result;
  }
  const int64_t k = out[0].shape[axis];
  if (k <= kMaxSelectionSteps && 2 * k < n) return topk_by_selection(x, axis, largest, k, out);
  const DType cdt = compute_dtype(x.dtype());
  tir::IterVar r = tir::reduce_axis(n, "r");
  // rank[.., i, ..] = #{r : x[r] before x[i]}.
  Tensor rank = tir::compute(
      x.shape(),
      [&](const std::vector<Var>& i) {
        std::vector<Expr> ridx = as_exprs(i);
        ridx[axis] = r.var();
        const Expr xr = cast_to(cdt, x(ridx)), xi = cast_to(cdt, x(as_exprs(i)));
        const Expr better = largest ? xr > xi : xr < xi;
        const Expr before = better || ((xr == xi) && (Expr(r.var()) < Expr(i[axis])));
        return tir::sum(tir::select(before, Expr(int64_t{1}), Expr(int64_t{0})), {r});
      },
      "topk_rank");
  tir::IterVar s = tir::reduce_axis(n, "s");
  // index[.., j, ..] = the s whose rank is j.
  Tensor index = tir::compute(
      out[1].shape,
      [&](const std::vector<Var>& j) {
        std::vector<Expr> sidx = as_exprs(j);
        sidx[axis] = s.var();
        return tir::max_reduce(tir::select(rank(sidx) == Expr(j[axis]), Expr(s.var()), Expr(int64_t{0})), {s});
      },
      "topk_index");
  result.parts["anchor"] = rank;
  result.parts["index"] = index;
  Tensor indices = tir::compute(out[1].shape, [&](const std::vector<Var>& j) { return index(as_exprs(j)); }, "topk_indices");
  Tensor values = tir::compute(
      out[0].shape,
      [&](const std::vector<Var>& j) {
        std::vector<Expr> idx = as_exprs(j);
        idx[axis] = index(as_exprs(j));
        return x(idx);
      },
      "topk_values");
  result.outputs = {values, indices};
  return result;
}
KILN_REGISTER_COMPUTE(topk, "topk", topk_compute);

}  // namespace
}  // namespace kiln::topi
