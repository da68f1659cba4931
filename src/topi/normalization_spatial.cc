// Computes of the normalizations over spatial axes (src/ir/ops/normalization_spatial.cc):
//
// instance_norm: one row per (n, c) of x [N, C, S...], in the one-pass row form of softmax and
// layer_norm (schedule_rows.cc): the row's sum and centred sum of squares as lane reductions
// (partial[n, c, l] = sum over the leading spatial axes and the whole vectors of the last one,
// vector adds into `lanes` accumulators; the last axis' n % lanes tail columns as a second
// partial), 1 / sqrt(var + eps) once per row (part "row.rstd"), then one vector pass
// (x - mean) * rstd * scale[c] + bias[c]. Sums in f32 (f64 for f64) with two passes, as
// layer_norm. The per-row stages have only the row's axes [n, c] (so the row schedule, which
// takes the row depth from the anchor's rank, runs them once per row).
//
// lrn: sum of squares over the channel window as a reduction of `size` taps (out-of-range
// channels read as 0), then x / (bias + alpha / size * sum) ^ beta (pow through exp/log).
#include <functional>
#include <limits>

#include "kiln/topi/compute.h"
#include "topi/topi_util.h"

namespace kiln::topi {
namespace {

using ir::DType;

// The full index of x for row o = [n, c], leading spatial indices `rest`, last-axis column j.
std::vector<Expr> spatial_index(const std::vector<Expr>& o, const std::vector<Expr>& rest, const Expr& j) {
  std::vector<Expr> idx = o;
  idx.insert(idx.end(), rest.begin(), rest.end());
  idx.push_back(j);
  return idx;
}

using RowFn = std::function<Expr(const std::vector<Expr>& o, const std::vector<Expr>& rest, const Expr& j)>;

// sum over the spatial axes of f, per row [n, c], as row parts: the lane partials
// whole[n, c, l] = sum over the leading spatial axes and the whole vectors ko of the last axis of
// f(.., ko * lanes + l) (vectorized over l by the row schedule), their sum over l, and the last
// axis' n % lanes tail columns summed by a scalar stage; the total is their sum.
Tensor spatial_lane_sum(ComputeResult& r, const Tensor& x, int64_t lanes, const RowFn& f, const std::string& name) {
  const ir::Shape& shape = x.shape();
  const ir::Shape outer = {shape[0], shape[1]};
  const ir::Shape rest_shape(shape.begin() + 2, shape.end() - 1);
  const int64_t n = shape.back(), full = n / lanes, rem = n % lanes;
  auto rest_axes = [&](const std::string& prefix) {
    std::vector<tir::IterVar> rv;
    for (size_t d = 0; d < rest_shape.size(); ++d) rv.push_back(tir::reduce_axis(rest_shape[d], prefix + std::to_string(d)));
    return rv;
  };
  auto vars_of = [](const std::vector<tir::IterVar>& rv) {
    std::vector<Expr> e;
    for (const auto& v : rv) e.push_back(v.var());
    return e;
  };
  Tensor whole_sum, tail_sum;
  if (full > 0) {
    std::vector<tir::IterVar> rv = rest_axes("r");
    tir::IterVar ko = tir::reduce_axis(full, "ko");
    std::vector<tir::IterVar> all = rv;
    all.push_back(ko);
    ir::Shape pshape = outer;
    pshape.push_back(lanes);
    Tensor whole = tir::compute(
        pshape,
        [&](const std::vector<Var>& i) {
          return tir::sum(f({i[0], i[1]}, vars_of(rv), Expr(ko.var()) * lanes + i[2]), all);
        },
        name + "_lanes");
    tir::IterVar l = tir::reduce_axis(lanes, "l");
    whole_sum = tir::compute(
        outer, [&](const std::vector<Var>& o) { return tir::sum(whole({o[0], o[1], l.var()}), {l}); }, name + "_wsum");
    r.parts["row." + name + "_lanes"] = whole;
    r.parts["row." + name + "_wsum"] = whole_sum;
  }
  if (rem > 0) {
    std::vector<tir::IterVar> rv = rest_axes("t");
    tir::IterVar t = tir::reduce_axis(rem, "tail");
    std::vector<tir::IterVar> all = rv;
    all.push_back(t);
    tail_sum = tir::compute(
        outer,
        [&](const std::vector<Var>& o) { return tir::sum(f({o[0], o[1]}, vars_of(rv), Expr(full * lanes) + t.var()), all); },
        name + "_tail");
    r.parts["row." + name + "_tail"] = tail_sum;
  }
  if (!whole_sum.defined()) return tail_sum;
  if (!tail_sum.defined()) return whole_sum;
  Tensor total = tir::compute(
      outer, [&](const std::vector<Var>& o) { return whole_sum(as_exprs(o)) + tail_sum(as_exprs(o)); }, name);
  r.parts["row." + name] = total;
  return total;
}

ComputeResult instance_norm_compute(const std::vector<Tensor>& in, const ir::Attrs& attrs,
                                    const std::vector<ir::TensorType>&, const LayoutHints& hints) {
  const Tensor x = in[0];
  const DType dt = x.dtype(), ct = compute_dtype(dt);
  const double eps = attrs.get_float("epsilon");
  int64_t count = 1;
  for (size_t d = 2; d < x.shape().size(); ++d) count *= x.shape()[d];
  if (count == 0) {  // nothing to normalize: the (empty) input's shape
    return injective_result(tir::compute(x.shape(), [&](const std::vector<Var>&) { return constant(dt, 0.0); },
                                         "instance_norm"));
  }
  const double inv = 1.0 / static_cast<double>(count);
  const int64_t lanes = hints.vector_lanes_f32;
  ComputeResult r;
  Tensor sum = spatial_lane_sum(
      r, x, lanes,
      [&](const std::vector<Expr>& o, const std::vector<Expr>& rest, const Expr& j) {
        return cast_to(ct, x(spatial_index(o, rest, j)));
      },
      "instance_norm_sum");
  Tensor sq = spatial_lane_sum(
      r, x, lanes,
      [&](const std::vector<Expr>& o, const std::vector<Expr>& rest, const Expr& j) {
        const Expr d = cast_to(ct, x(spatial_index(o, rest, j))) - sum(o) * inv;
        return d * d;
      },
      "instance_norm_sqsum");
  Tensor rstd = tir::compute(
      {x.shape()[0], x.shape()[1]},
      [&](const std::vector<Var>& o) { return Expr(constant(ct, 1.0)) / tir::sqrt(sq(as_exprs(o)) * inv + eps); },
      "instance_norm_rstd");
  r.schedule = ScheduleKind::kReduction;
  r.parts["anchor"] = sq;
  r.parts["row.rstd"] = rstd;
  r.outputs = {tir::compute(
      x.shape(),
      [&](const std::vector<Var>& i) {
        const std::vector<Expr> o = {i[0], i[1]};
        Expr y = (cast_to(ct, x(as_exprs(i))) - sum(o) * inv) * rstd(o);
        if (in.size() > 1) y = y * cast_to(ct, in[1](i[1]));
        if (in.size() > 2) y = y + cast_to(ct, in[2](i[1]));
        return cast_to(dt, y);
      },
      "instance_norm")};
  return r;
}
KILN_REGISTER_COMPUTE(instance_norm, "instance_norm", instance_norm_compute);

ComputeResult lrn_compute(const std::vector<Tensor>& in, const ir::Attrs& attrs, const std::vector<ir::TensorType>&,
                          const LayoutHints&) {
  const Tensor x = in[0];
  const DType dt = x.dtype(), ct = compute_dtype(dt);
  const int64_t size = attrs.get_int("size"), channels = x.shape()[1];
  const int64_t before = (size - 1) / 2;
  const double alpha = attrs.get_float("alpha"), beta = attrs.get_float("beta"), bias = attrs.get_float("bias");
  tir::IterVar k = tir::reduce_axis(size, "k");
  Tensor sq = tir::compute(
      x.shape(),
      [&](const std::vector<Var>& i) {
        const Expr ch = Expr(i[1]) + k.var() - before;
        std::vector<Expr> idx = as_exprs(i);
        idx[1] = tir::min(tir::max(ch, Expr(int64_t{0})), Expr(channels - 1));
        const Expr v = cast_to(ct, x(idx));
        const Expr inside = ch >= Expr(int64_t{0}) && ch < Expr(channels);
        return tir::sum(tir::select(inside, v * v, constant(ct, 0.0)), {k});
      },
      "lrn_sqsum");
  ComputeResult r;
  r.schedule = ScheduleKind::kReduction;
  r.parts["anchor"] = sq;
  r.outputs = {tir::compute(
      x.shape(),
      [&](const std::vector<Var>& i) {
        const Expr base = sq(as_exprs(i)) * (alpha / static_cast<double>(size)) + bias;
        return cast_to(dt, cast_to(ct, x(as_exprs(i))) * tir::exp(tir::log(base) * -beta));
      },
      "lrn")};
  return r;
}
KILN_REGISTER_COMPUTE(lrn, "lrn", lrn_compute);

}  // namespace
}  // namespace kiln::topi
