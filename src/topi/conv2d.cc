// conv2d (NCHW in and out) in three computes:
//   - blocked (groups == 1, f32/f64; conv2d_nchwc also grouped when no block straddles groups):
//     the output is computed in NCHW[oc_block]c
//     (anchor[n, M/ob, OH, OW, ob]) from weights packed as [M/ob, C/icb, kh, kw, icb, ob] and the
//     input packed (and zero-padded) as NCHW[icb]c, then unpacked to NCHW with the bias. The
//     schedule register-tiles oc_tile blocks x tile_oh rows x tile_ow columns (conv2d_nchwc
//     template), or tile_ow pixels of the output numbered as one axis (flat pixels, see
//     conv2d_nchwc in nn.h; the pixels padded to whole tiles of the layout's pixel_tile). conv2d_nchwc_blocked takes an input already in NCHW[icb]c and copies
//     it only to pad or subsample.
//   - depthwise (groups == C == M, f32/f64): a per-channel window sum over a padded input.
//   - generic (any groups, any float type): a plain reduction (correct, not fast).
// Padding is a separate padded-input stage (zero outside), so the inner loops carry no selects.
#include <algorithm>

#include "kiln/topi/compute.h"
#include "kiln/topi/nn.h"
#include "kiln/topi/schedule.h"
#include "topi/topi_util.h"

namespace kiln::topi {
namespace {

using ir::DType;

bool has_padding(const Conv2dParams& p) { return p.pad_top || p.pad_left || p.pad_bottom || p.pad_right; }

// x zero-padded: xp[n, c, h, w] = x[n, c, h - pt, w - pl] (0 outside), or x itself without pads.
Tensor padded_input(const Tensor& x, const Conv2dParams& p) {
  if (!has_padding(p)) return x;
  const ir::Shape& s = x.shape();
  return tir::compute(
      {s[0], s[1], s[2] + p.pad_top + p.pad_bottom, s[3] + p.pad_left + p.pad_right},
      [&](const std::vector<Var>& i) {
        return tir::read_or(x, {i[0], i[1], i[2] - p.pad_top, i[3] - p.pad_left}, constant(x.dtype(), 0));
      },
      "pad_x");
}

Tensor add_bias_cast(const Tensor& acc, const std::vector<Tensor>& in, DType dt, const ir::Shape& oshape,
                     const std::function<Expr(const std::vector<Var>&)>& read_acc) {
  (void)acc;
  return tir::compute(
      oshape,
      [&](const std::vector<Var>& i) {
        Expr v = read_acc(i);
        if (in.size() > 2) v = v + cast_to(v.type().dtype, in[2](Expr(i[1])));
        return cast_to(dt, v);
      },
      "conv2d");
}

ComputeResult conv2d_generic(const std::vector<Tensor>& in, const Conv2dParams& p, const ir::TensorType& out) {
  const Tensor x = in[0], w = in[1];
  const DType dt = out.dtype, ct = compute_dtype(dt);
  const int64_t cg = w.shape()[1], kh = w.shape()[2], kw = w.shape()[3];
  const int64_t mg = out.shape[1] / p.groups;
  tir::IterVar rc = tir::reduce_axis(cg, "rc"), rh = tir::reduce_axis(kh, "rh"), rw = tir::reduce_axis(kw, "rw");
  const Tensor xp = padded_input(x, p);
  Tensor acc = tir::compute(
      out.shape,
      [&](const std::vector<Var>& i) {
        const Expr c = tir::floordiv(i[1], Expr(mg)) * cg + rc;
        const Expr v = xp(i[0], c, i[2] * p.stride_h + Expr(rh) * p.dilation_h, i[3] * p.stride_w + Expr(rw) * p.dilation_w);
        return tir::sum(cast_to(ct, v) * cast_to(ct, w(i[1], Expr(rc), Expr(rh), Expr(rw))), {rc, rh, rw});
      },
      "conv2d_acc");
  ComputeResult r;
  r.schedule = ScheduleKind::kReduction;
  r.parts["anchor"] = acc;
  if (!xp.same_as(x)) r.parts["pad"] = xp;
  r.outputs = {add_bias_cast(acc, in, dt, out.shape, [&](const std::vector<Var>& i) { return acc(as_exprs(i)); })};
  return r;
}

ComputeResult conv2d_depthwise(const std::vector<Tensor>& in, const Conv2dParams& p, const ir::TensorType& out) {
  const Tensor x = in[0], w = in[1];
  const DType dt = out.dtype;
  const int64_t kh = w.shape()[2], kw = w.shape()[3];
  tir::IterVar rh = tir::reduce_axis(kh, "rh"), rw = tir::reduce_axis(kw, "rw");
  const Tensor xp = padded_input(x, p);
  Tensor acc = tir::compute(
      out.shape,
      [&](const std::vector<Var>& i) {
        const Expr v = xp(i[0], i[1], i[2] * p.stride_h + Expr(rh) * p.dilation_h, i[3] * p.stride_w + Expr(rw) * p.dilation_w);
        return tir::sum(v * w(i[1], Expr(0), Expr(rh), Expr(rw)), {rh, rw});
      },
      "depthwise_conv2d");
  ComputeResult r;
  r.schedule = ScheduleKind::kDepthwise;
  r.parts["anchor"] = acc;
  if (!xp.same_as(x)) r.parts["pad"] = xp;
  if (in.size() > 2) {
    r.outputs = {add_bias_cast(acc, in, dt, out.shape, [&](const std::vector<Var>& i) { return acc(as_exprs(i)); })};
  } else {
    r.outputs = {acc};
  }
  return r;
}

ComputeResult conv2d_compute(const std::vector<Tensor>& in, const ir::Attrs& attrs,
                             const std::vector<ir::TensorType>& out, const LayoutHints& hints) {
  const Conv2dParams p = conv2d_params(attrs);
  const Tensor x = in[0], w = in[1];
  const DType dt = out[0].dtype;
  // i32: qnn_conv2d's zero-point-shifted operands (quantize_qnn.cc), exact integer sums.
  const bool fast_type = dt == DType::kF32 || dt == DType::kF64 || dt == DType::kI32;
  const int64_t C = x.shape()[1], M = out[0].shape[1];
  if (fast_type && p.groups == 1) {
    const int64_t ob = conv2d_oc_block(M, out[0].shape[3], hints);
    const Tensor wp = pack_conv2d_weights(w, ob, conv2d_ic_block(C, hints));
    ComputeResult r = conv2d_nchwc(x, wp, p, out[0], ob, hints);
    // Unpack to NCHW, adding the bias.
    const Tensor y = r.outputs[0];
    r.outputs = {add_bias_cast(y, in, dt, out[0].shape, [&](const std::vector<Var>& i) {
      return y(i[0], tir::floordiv(i[1], Expr(ob)), i[2], i[3], tir::floormod(i[1], Expr(ob)));
    })};
    r.parts["pack_w"] = wp;
    return r;
  }
  if (fast_type && p.groups == C && M == C && w.shape()[1] == 1) return conv2d_depthwise(in, p, out[0]);
  return conv2d_generic(in, p, out[0]);
}
KILN_REGISTER_COMPUTE(conv2d, "conv2d", conv2d_compute);

}  // namespace

Conv2dParams conv2d_params(const ir::Attrs& attrs) {
  const auto& s = attrs.get_ints("strides");
  const auto& pads = attrs.get_ints("pads");
  const auto& d = attrs.get_ints("dilations");
  Conv2dParams p;
  p.stride_h = s[0];
  p.stride_w = s[1];
  p.pad_top = pads[0];
  p.pad_left = pads[1];
  p.pad_bottom = pads[2];
  p.pad_right = pads[3];
  p.dilation_h = d[0];
  p.dilation_w = d[1];
  p.groups = attrs.get_int("groups");
  return p;
}

int64_t conv2d_oc_block(int64_t out_channels, int64_t out_width, const LayoutHints& hints) {
  (void)out_width;
  // Two vectors per register-tile row (more FMAs per broadcast input value) when they divide M.
  const int64_t lanes = hints.vector_lanes_f32;
  if (out_channels % (2 * lanes) == 0) return 2 * lanes;
  for (int64_t ob = lanes; ob > 1; ob /= 2) {
    if (out_channels % ob == 0) return ob;
  }
  return 1;
}

int64_t conv2d_ic_block(int64_t in_channels, const LayoutHints& hints) {
  for (int64_t icb = hints.vector_lanes_f32; icb > 1; icb /= 2) {
    if (in_channels % icb == 0) return icb;
  }
  return 1;
}

Tensor pack_conv2d_weights(const Tensor& w, int64_t oc_block, int64_t ic_block) {
  const ir::Shape& s = w.shape();
  KILN_ICHECK(s[0] % oc_block == 0 && s[1] % ic_block == 0) << "blocks " << oc_block << "/" << ic_block;
  return tir::compute(
      {s[0] / oc_block, s[1] / ic_block, s[2], s[3], ic_block, oc_block},
      [&](const std::vector<Var>& i) { return w(i[0] * oc_block + i[5], i[1] * ic_block + i[4], i[2], i[3]); },
      "pack_w");
}

namespace {

// The blocked convolution on the input `x` (NCHW, or NCHW[icb]c when `blocked`).
ComputeResult conv2d_nchwc_impl(const Tensor& x, bool blocked, const Tensor& w_packed, const Conv2dParams& p,
                                const ir::TensorType& out, int64_t oc_block, const LayoutHints& hints) {
  const ir::Shape& ws = w_packed.shape();
  const int64_t cb = ws[1], kh = ws[2], kw = ws[3], icb = ws[4];
  const int64_t ob = oc_block;
  KILN_ICHECK(ws[5] == ob) << "packed weights' oc block " << ws[5] << " != " << ob;
  const ir::Shape& xs = x.shape();
  // Grouped (groups > 1): the weights hold cb = (C/g)/icb input blocks per output block; output
  // block o reads the input blocks of its group, from (o / oc blocks per group) * cb on.
  const int64_t groups = p.groups, in_blocks = cb * groups;
  const int64_t oc_blocks_per_group = out.shape[1] / ob / groups;
  KILN_ICHECK(oc_blocks_per_group * ob * groups == out.shape[1]) << "oc block " << ob << " straddles groups";
  KILN_ICHECK(!blocked || (xs.size() == 5 && xs[1] == in_blocks && xs[4] == icb))
      << "blocked input of block " << xs.back() << " for weights of input block " << icb;
  KILN_ICHECK(blocked || xs[1] == in_blocks * icb) << "input channels " << xs[1] << " for " << in_blocks << " blocks";
  // The input in NCHW[icb]c, zero-padded: one stage, so the reduction reads contiguous channel
  // blocks and never tests bounds. A 1x1 kernel without padding reads only every stride-th pixel:
  // the packed input keeps just those (a quarter of the input at stride 2). An input that is
  // already blocked, without padding or subsampling, is read as it is (no copy), unless it is
  // computed in the kernel (fused producers such as a channel shuffle, a slice or a layout
  // transform): the convolution reads each input element once per output block, so the producers'
  // index arithmetic runs once, in the packing stage, rather than on every read.
  const bool subsample = kh == 1 && kw == 1 && !has_padding(p) && (p.stride_h > 1 || p.stride_w > 1);
  const int64_t sh = subsample ? p.stride_h : 1, sw = subsample ? p.stride_w : 1;
  const bool copy_free = blocked && !subsample && !has_padding(p) && x.get()->kind == tir::OpKind::kPlaceholder;
  const Tensor xp =
      copy_free ? x
                : tir::compute(
                      subsample ? ir::Shape{xs[0], in_blocks, out.shape[2], out.shape[3], icb}
                                : ir::Shape{xs[0], in_blocks, xs[2] + p.pad_top + p.pad_bottom,
                                            xs[3] + p.pad_left + p.pad_right, icb},
                      [&](const std::vector<Var>& i) {
                        const Expr h = i[2] * sh - p.pad_top, w = i[3] * sw - p.pad_left;
                        const std::vector<Expr> idx = blocked ? std::vector<Expr>{i[0], i[1], h, w, i[4]}
                                                              : std::vector<Expr>{i[0], i[1] * icb + i[4], h, w};
                        if (!has_padding(p)) return x(idx);
                        return tir::read_or(x, idx, constant(x.dtype(), 0));
                      },
                      "pack_x", {"n", "cb", "h", "w", "ci"});
  const int64_t step_h = subsample ? 1 : p.stride_h, step_w = subsample ? 1 : p.stride_w;
  tir::IterVar rco = tir::reduce_axis(cb, "rco"), rh = tir::reduce_axis(kh, "rh"), rw = tir::reduce_axis(kw, "rw"),
               rci = tir::reduce_axis(icb, "rci");
  const int64_t oh = out.shape[2], ow = out.shape[3];
  // Flat pixels: the output pixels as one axis of OH*OW (register tiles over it have no row
  // tails: 49 = 9 x 5 + 4 instead of 7 rows of 4 + 3 columns) when the cycle model prefers that
  // (conv2d_flatten_pixels). Output pixel p reads input rows/columns (p / OW, p % OW) scaled by
  // the stride: per pixel of the unrolled tile an address that does not change in the reduction.
  ConvTileShape tile_shape;
  tile_shape.oc_blocks = out.shape[1] / ob;
  tile_shape.out_height = oh;
  tile_shape.out_width = ow;
  tile_shape.vectors_per_block = std::max<int64_t>(1, ob / hints.vector_lanes_f32);
  tile_shape.weight_block_bytes = ob * cb * kh * kw * icb * static_cast<int64_t>(ir::dtype_size(w_packed.dtype()));
  tile_shape.blocks_per_group = groups > 1 ? oc_blocks_per_group : 0;
  // Flat pixels of a window (or padded) conv: the pixel axis padded to whole tiles; a padded pixel
  // recomputes the last one (its index clamped), so every tile runs the same guard-free reduction
  // and only the stores are bounded. An unpadded 1x1 conv reads its pixels contiguously
  // ((p / OW) * OW + p % OW = p, one base address per tile); the clamp would give each pixel an
  // address of its own, which cost it more than the tail's test (RegNetY's 1x1 448 -> 448 on 7x7,
  // warm: 89-93 GFLOP/s with the test, 70-84 padded), so it keeps a shorter tested tail.
  tile_shape.pad_tails = !(kh == 1 && kw == 1 && !has_padding(p));
  const bool flat = oh > 1 && conv2d_flatten_pixels(tile_shape, hints.num_vector_regs);
  const int64_t pixels = oh * ow;
  const int64_t pixel_tile =
      flat && tile_shape.pad_tails ? conv2d_flat_pixel_tile(tile_shape, hints.num_vector_regs).tile_ow : 1;
  const int64_t padded_pixels = (pixels + pixel_tile - 1) / pixel_tile * pixel_tile;
  auto product = [&](const Expr& n, const Expr& mo, const Expr& h, const Expr& w, const Expr& o) {
    const Expr cblock = groups == 1 ? Expr(rco) : tir::floordiv(mo, Expr(oc_blocks_per_group)) * cb + Expr(rco);
    const Expr v = xp(n, cblock, h * step_h + Expr(rh) * p.dilation_h, w * step_w + Expr(rw) * p.dilation_w,
                      Expr(rci));
    return tir::sum(v * w_packed(mo, Expr(rco), Expr(rh), Expr(rw), Expr(rci), o), {rco, rh, rw, rci});
  };
  ComputeResult r;
  r.schedule = ScheduleKind::kConv2dNchwc;
  Tensor acc;
  if (flat) {
    acc = tir::compute(
        {out.shape[0], out.shape[1] / ob, padded_pixels, ob},
        [&](const std::vector<Var>& i) {
          const Expr pix = padded_pixels > pixels ? tir::min(Expr(i[2]), Expr(pixels - 1)) : Expr(i[2]);
          return product(i[0], i[1], tir::floordiv(pix, Expr(ow)), tir::floormod(pix, Expr(ow)), i[3]);
        },
        "conv2d_nchwc", {"n", "oc", "pix", "ob"});
    const Tensor y = tir::compute(
        {out.shape[0], out.shape[1] / ob, oh, ow, ob},
        [&](const std::vector<Var>& i) { return acc(i[0], i[1], i[2] * ow + i[3], i[4]); }, "unflatten",
        {"n", "oc", "oh", "ow", "ob"});
    r.parts["unflatten"] = y;
    r.outputs = {y};
  } else {
    acc = tir::compute(
        {out.shape[0], out.shape[1] / ob, oh, ow, ob},
        [&](const std::vector<Var>& i) { return product(i[0], i[1], i[2], i[3], i[4]); }, "conv2d_nchwc",
        {"n", "oc", "oh", "ow", "ob"});
    r.outputs = {acc};
  }
  r.parts["anchor"] = acc;
  if (!copy_free) r.parts["pack_x"] = xp;
  r.layout["oc_block"] = ob;
  r.layout["ic_block"] = icb;
  // Grouped: the register tile's channel blocks must lie in one group (default_knobs).
  if (groups > 1) r.layout["oc_blocks_per_group"] = oc_blocks_per_group;
  if (flat && tile_shape.pad_tails) r.layout["pixel_tile"] = pixel_tile;
  return r;
}

}  // namespace

ComputeResult conv2d_nchwc(const Tensor& x, const Tensor& w_packed, const Conv2dParams& p, const ir::TensorType& out,
                           int64_t oc_block, const LayoutHints& hints) {
  return conv2d_nchwc_impl(x, false, w_packed, p, out, oc_block, hints);
}

ComputeResult conv2d_nchwc_blocked(const Tensor& xb, const Tensor& w_packed, const Conv2dParams& p,
                                   const ir::TensorType& out, int64_t oc_block, const LayoutHints& hints) {
  return conv2d_nchwc_impl(xb, true, w_packed, p, out, oc_block, hints);
}

}  // namespace kiln::topi
