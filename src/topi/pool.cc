// max_pool2d and avg_pool2d (NCHW) and their blocked forms max_pool2d_nchwc / avg_pool2d_nchwc
// (NCHW{b}c in and out): one reduction over the (kh, kw) window per output element. Padding reads
// are read_or (max: the type's lowest value, avg: 0); in the blocked form the test depends on the
// pixel only, so it is one scalar compare per vector of b channels. avg's divisor counts the taps
// inside the input (or the padded input with count_include_pad), computed by a second, cheap
// reduction of 0/1 over the same window so ceil_mode's clipped windows are right. NCHW pools use
// the generic reduction template; blocked pools the blocked window template (kDepthwise with a
// rank-5 anchor: the channel block is the vector, a tile of output columns in registers).
#include <limits>

#include "kiln/topi/compute.h"
#include "topi/topi_util.h"

namespace kiln::topi {
namespace {

using ir::DType;

struct Window {
  int64_t kh, kw, sh, sw, dh, dw, pt, pl, pb, pr;
};

Window window_of(const ir::Attrs& attrs) {
  const auto& k = attrs.get_ints("kernel");
  const auto& s = attrs.get_ints("strides");
  const auto& d = attrs.get_ints("dilations");
  const auto& p = attrs.get_ints("pads");
  return {k[0], k[1], s[0], s[1], d[0], d[1], p[0], p[1], p[2], p[3]};
}

ComputeResult pool_compute(bool is_max, bool blocked, const std::vector<Tensor>& in, const ir::Attrs& attrs,
                           const std::vector<ir::TensorType>& out) {
  const Tensor x = in[0];
  // The input index of output element i's tap at (h, w): [n, c, h, w] or [n, cb, h, w, c].
  auto at = [&](const std::vector<Var>& i, const Expr& h, const Expr& v) {
    std::vector<Expr> idx = {i[0], i[1], h, v};
    if (blocked) idx.push_back(i[4]);
    return idx;
  };
  const Window w = window_of(attrs);
  const DType dt = x.dtype(), ct = compute_dtype(dt);
  const int64_t H = x.shape()[2], W = x.shape()[3];
  tir::IterVar rh = tir::reduce_axis(w.kh, "rh"), rw = tir::reduce_axis(w.kw, "rw");
  auto ih = [&](const Var& oh) { return oh * w.sh + Expr(rh) * w.dh - w.pt; };
  auto iw = [&](const Var& ow) { return ow * w.sw + Expr(rw) * w.dw - w.pl; };
  ComputeResult r;
  r.schedule = blocked ? ScheduleKind::kDepthwise : ScheduleKind::kReduction;
  if (is_max) {
    const Expr lowest = ir::is_float(dt) ? constant(ct, -std::numeric_limits<double>::infinity())
                                         : tir::type_min(tir::Type(ct));
    Tensor y = tir::compute(
        out[0].shape,
        [&](const std::vector<Var>& i) {
          return tir::max_reduce(cast_to(ct, tir::read_or(x, at(i, ih(i[2]), iw(i[3])), cast_to(dt, lowest))),
                                 {rh, rw});
        },
        "max_pool2d_red");
    r.parts["anchor"] = y;
    r.outputs = {tir::compute(out[0].shape, [&](const std::vector<Var>& i) { return cast_to(dt, y(as_exprs(i))); },
                              "max_pool2d")};
    return r;
  }
  const bool include_pad = attrs.get_int("count_include_pad") != 0;
  Tensor s = tir::compute(
      out[0].shape,
      [&](const std::vector<Var>& i) {
        return tir::sum(cast_to(ct, tir::read_or(x, at(i, ih(i[2]), iw(i[3])), constant(dt, 0))), {rh, rw});
      },
      "avg_pool2d_sum");
  tir::IterVar ch = tir::reduce_axis(w.kh, "ch"), cw = tir::reduce_axis(w.kw, "cw");
  const int64_t lo_h = include_pad ? -w.pt : 0, hi_h = include_pad ? H + w.pb : H;
  const int64_t lo_w = include_pad ? -w.pl : 0, hi_w = include_pad ? W + w.pr : W;
  // The count depends on (oh, ow) only: a [OH, OW] stage.
  Tensor cnt = tir::compute(
      {out[0].shape[2], out[0].shape[3]},
      [&](const std::vector<Var>& i) {
        const Expr h = i[0] * w.sh + Expr(ch) * w.dh - w.pt;
        const Expr v = i[1] * w.sw + Expr(cw) * w.dw - w.pl;
        const Expr inside = h >= Expr(lo_h) && h < Expr(hi_h) && v >= Expr(lo_w) && v < Expr(hi_w);
        return tir::sum(tir::select(inside, constant(ct, 1), constant(ct, 0)), {ch, cw});
      },
      "avg_pool2d_count");
  r.parts["anchor"] = s;
  r.outputs = {tir::compute(
      out[0].shape, [&](const std::vector<Var>& i) { return cast_to(dt, s(as_exprs(i)) / cnt(i[2], i[3])); },
      "avg_pool2d")};
  return r;
}

ComputeFn pool_fn(bool is_max, bool blocked) {
  return [is_max, blocked](const std::vector<Tensor>& in, const ir::Attrs& a, const std::vector<ir::TensorType>& o,
                           const LayoutHints&) { return pool_compute(is_max, blocked, in, a, o); };
}

KILN_REGISTER_COMPUTE(max_pool2d, "max_pool2d", pool_fn(true, false));
KILN_REGISTER_COMPUTE(avg_pool2d, "avg_pool2d", pool_fn(false, false));
KILN_REGISTER_COMPUTE(max_pool2d_nchwc, "max_pool2d_nchwc", pool_fn(true, true));
KILN_REGISTER_COMPUTE(avg_pool2d_nchwc, "avg_pool2d_nchwc", pool_fn(false, true));

}  // namespace
}  // namespace kiln::topi
