// Depthwise conv2d on the blocked layout (see nchwc.h): what conv2d_nchwc with groups == C runs.
// The channel block is the vector: every tap is one vector FMA of an input vector (b channels of
// one pixel, contiguous) with the tap's weight vector, so no unblocking/reblocking of the data is
// needed. Padding is a zero-padded copy of the input rows that one output row reads (the schedule
// attaches it per row, so the copy stays in L1 and the window sum reads without bounds tests).
#include "topi/nchwc.h"

namespace kiln::topi {

using ir::DType;

bool is_blocked_depthwise(const Tensor& x, const Tensor& w, const Conv2dParams& p, const ir::TensorType& out) {
  const ir::Shape& xs = x.shape();
  const ir::Shape& ws = w.shape();
  if (xs.size() != 5 || ws.size() != 6 || out.shape.size() != 5) return false;
  if (out.dtype != DType::kF32 && out.dtype != DType::kF64) return false;
  const int64_t b = xs[4], c = xs[1] * xs[4];
  return p.groups == c && ws[1] == 1 && ws[4] == 1 && ws[5] == b && out.shape[4] == b && ws[0] == xs[1];
}

ComputeResult depthwise_conv2d_nchwc(const Tensor& x, const Tensor& w, const std::optional<Tensor>& bias,
                                     const Conv2dParams& p, const ir::TensorType& out) {
  KILN_ICHECK(is_blocked_depthwise(x, w, p, out)) << "depthwise_conv2d_nchwc on unsupported operands";
  const ir::Shape& xs = x.shape();
  const int64_t b = xs[4], kh = w.shape()[2], kw = w.shape()[3];
  const bool padded = p.pad_top || p.pad_left || p.pad_bottom || p.pad_right;
  Tensor xp = x;
  if (padded) {
    xp = tir::compute(
        {xs[0], xs[1], xs[2] + p.pad_top + p.pad_bottom, xs[3] + p.pad_left + p.pad_right, b},
        [&](const std::vector<Var>& i) {
          return tir::read_or(x, {i[0], i[1], i[2] - p.pad_top, i[3] - p.pad_left, i[4]}, constant(x.dtype(), 0));
        },
        "pad_x", {"n", "cb", "h", "w", "c"});
  }
  tir::IterVar rh = tir::reduce_axis(kh, "rh"), rw = tir::reduce_axis(kw, "rw");
  Tensor acc = tir::compute(
      out.shape,
      [&](const std::vector<Var>& i) {
        const Expr v = xp(i[0], i[1], i[2] * p.stride_h + Expr(rh) * p.dilation_h,
                          i[3] * p.stride_w + Expr(rw) * p.dilation_w, i[4]);
        return tir::sum(v * w(i[1], Expr(0), Expr(rh), Expr(rw), Expr(0), i[4]), {rh, rw});
      },
      "depthwise_nchwc", {"n", "cb", "oh", "ow", "c"});
  ComputeResult r;
  r.schedule = ScheduleKind::kDepthwise;
  r.parts["anchor"] = acc;
  if (padded) r.parts["pad"] = xp;
  if (bias) {
    const Tensor bv = *bias;
    r.outputs = {tir::compute(
        out.shape,
        [&](const std::vector<Var>& i) { return acc(as_exprs(i)) + cast_to(out.dtype, bv(i[1] * Expr(b) + i[4])); },
        "bias_add", {"n", "cb", "oh", "ow", "c"})};
  } else {
    r.outputs = {acc};
  }
  return r;
}

}  // namespace kiln::topi
