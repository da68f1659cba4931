// ONNX -> graph IR converters for the convolution family at spatial rank 1, 2 and 3: Conv,
// ConvTranspose, MaxPool, AveragePool, LpPool, GlobalLpPool (GlobalAveragePool/GlobalMaxPool take
// any rank as graph ops already and stay in onnx_ops_nn.cc's table entries here too).
//
// Contract: every form becomes the graph ops that already compile to blocked kernels (docs/ops.md):
//   - 2-D: conv2d / max_pool2d / avg_pool2d directly.
//   - 1-D: the 2-D op with H = 1 ([N, C, L] -> [N, C, 1, L], kernel 1 x K), so 1-D convolutions get
//     the NCHWc register-tiled schedule over the length axis.
//   - 3-D Conv: the depth axis becomes part of the batch and the kernel's depth taps part of the
//     input channels: x [N, C, D, H, W] (depth-padded) -> KD strided depth slices stacked as
//     [N, OD, C, KD, H, W] (one gather) -> reshape [N*OD, C*KD, H, W] -> conv2d with w reshaped
//     [M, C/g*KD, KH, KW] -> [N*OD, M, OH, OW] -> [N, M, OD, OH, OW]. The depth unfold is
//     injective (it fuses into the conv's input packing); every FLOP runs in the blocked conv2d.
//   - 3-D pooling: separable: the 2-D pool over (H, W) on [N, C*D, H, W], then over (D, 1) on
//     [N, C, D, OH*OW]. Exact for max and for averages (the divisor of a box window is the
//     product of the per-axis counts, for either count_include_pad and ceil_mode).
//   - MaxPool's Indices output (storage_order 0 or 1): per kernel tap, equal(strided view, max)
//     selects the tap's flat index; the smallest over the taps (first maximum in window order).
//   - LpPool: (sum over the window of |x|^p)^(1/p), the window sum a depthwise convolution with a
//     kernel of ones (ceil_mode: extra end padding), 3-D separable like the pools.
//   - ConvTranspose: phase (sub-pixel) decomposition. Output o = i*s + k*d - pad_begin, so the
//     outputs o = q*s + r of phase r read only the taps k with (r + pad_begin - k*d) = 0 mod s,
//     at input q + (r + pad_begin - k*d) / s: a stride-1 convolution (dilation d / gcd(s, d)) of
//     the input with that sub-kernel, reversed. The s^dims phase outputs (each [N, M, ceil(O/s)...])
//     interleave by one reshape/transpose into the output. No zero insertion: the FLOPs are exactly
//     the transposed convolution's. When every phase reads the same input window (kernel = stride
//     multiple with matching pads, e.g. U-Net's 2x2 stride-2 up-convolutions), or the convolution
//     is depthwise-like (C/group = 1) and the union of the phase windows costs at most 2.25x, the
//     phases are one convolution over the union window with prod(s) * M output channels (ordered
//     [group, phase, m]; a depth-to-space after it).
//     A 1 x 1 input (a GAN generator's latent vector) is one matmul [N, C] x [C, M * prod(K)].
#include <algorithm>
#include <cmath>
#include <functional>
#include <limits>
#include <numeric>

#include "kiln/support/error.h"
#include "onnx_node.h"

namespace kiln::frontend::onnx_import {
namespace {

using ir::Attrs;
using ir::Shape;
using ir::Value;

using Ints = std::vector<int64_t>;

int64_t floor_div(int64_t a, int64_t b) { return a / b - ((a % b != 0) && ((a < 0) != (b < 0)) ? 1 : 0); }
int64_t floor_mod(int64_t a, int64_t b) { return a - floor_div(a, b) * b; }
int64_t product(const Ints& v) { return std::accumulate(v.begin(), v.end(), int64_t{1}, std::multiplies<>()); }

// ---- small graph builders (no-ops are skipped) ----

Value reshape(ImportContext& ctx, const Value& v, const Shape& shape) {
  if (v.type().shape == shape) return v;
  return ctx.call1("reshape", {v}, Attrs().set("shape", shape));
}

Value transpose(ImportContext& ctx, const Value& v, const Ints& perm) {
  bool identity = true;
  for (size_t i = 0; i < perm.size(); ++i) identity = identity && perm[i] == static_cast<int64_t>(i);
  if (identity) return v;
  return ctx.call1("transpose", {v}, Attrs().set("perm", perm));
}

// Pads (positive) or crops (negative) the listed spatial axes; `pads` = [begin..., end...] over
// axes 2..rank-1.
Value pad_spatial(ImportContext& ctx, const Value& v, const Ints& pads) {
  const size_t rank = v.type().shape.size(), spatial = rank - 2;
  bool any = false;
  for (int64_t p : pads) any = any || p != 0;
  if (!any) return v;
  Ints full(2 * rank, 0);
  for (size_t i = 0; i < spatial; ++i) {
    full[2 + i] = pads[i];
    full[rank + 2 + i] = pads[spatial + i];
  }
  return ctx.call1("pad", {v}, Attrs().set("pads", full));
}

// `count` elements along `axis` from `begin` by `step` (> 0 or < 0).
Value slice_axis(ImportContext& ctx, const Value& v, int64_t axis, int64_t begin, int64_t step, int64_t count) {
  const int64_t dim = v.type().shape[axis];
  if (begin == 0 && step == 1 && count == dim) return v;
  int64_t end = begin + count * step;
  if (step < 0 && end < 0) end = std::numeric_limits<int64_t>::min() / 2;  // through index 0
  return ctx.call1("strided_slice", {v}, Attrs().set("begins", Ints{begin}).set("ends", Ints{end}).set("axes", Ints{axis}).set("steps", Ints{step}));
}

Value constant_filled(ImportContext& ctx, ir::DType dtype, const Shape& shape, double value, const std::string& hint) {
  ir::NDArray a = ir::NDArray::empty(dtype, shape);
  for (int64_t i = 0; i < a.numel(); ++i) a.set_from_double(i, value);
  return ctx.constant(std::move(a), hint);
}

// ---- windows: kernel, strides, dilations, explicit pads ----

struct Window {
  Ints kernel, strides, dilations, pads;  // pads: [begin..., end...]
};

int64_t spatial_rank(ImportContext& ctx, const Value& x, const std::string& op) {
  const int64_t rank = x.type().rank();
  if (rank < 3 || rank > 5) {
    ctx.fail_unsupported(op + " is supported with 1, 2 or 3 spatial dimensions (input rank 3, 4 or 5: [N, C, spatial...]); this input is " +
                         x.type().to_string());
  }
  return rank - 2;
}

Ints spatial_ints(ImportContext& ctx, const std::string& name, size_t spatial, int64_t fallback, int64_t min_value) {
  Ints v = ctx.attr_ints(name, Ints(spatial, fallback));
  if (v.size() != spatial) ctx.fail_attr(name, "has " + std::to_string(v.size()) + " entries, expected " + std::to_string(spatial));
  for (int64_t e : v) {
    if (e < min_value) ctx.fail_attr(name, "has the entry " + std::to_string(e) + "; entries must be >= " + std::to_string(min_value));
  }
  return v;
}

Window resolve_window(ImportContext& ctx, const Shape& in, Ints kernel) {
  const size_t spatial = in.size() - 2;
  Window w;
  w.kernel = std::move(kernel);
  for (int64_t k : w.kernel) if (k < 1) ctx.fail_attr("kernel_shape", "entries must be positive");
  w.strides = spatial_ints(ctx, "strides", spatial, 1, 1);
  w.dilations = spatial_ints(ctx, "dilations", spatial, 1, 1);
  const std::string auto_pad = ctx.attr_string("auto_pad", "NOTSET");
  if (auto_pad == "NOTSET") {
    w.pads = ctx.attr_ints("pads", Ints(2 * spatial, 0));
    if (w.pads.size() != 2 * spatial) ctx.fail_attr("pads", "has " + std::to_string(w.pads.size()) + " entries, expected " + std::to_string(2 * spatial));
    for (int64_t p : w.pads) if (p < 0) ctx.fail_attr("pads", "must not be negative");
  } else if (auto_pad == "VALID") {
    w.pads.assign(2 * spatial, 0);
  } else if (auto_pad == "SAME_UPPER" || auto_pad == "SAME_LOWER") {
    w.pads.assign(2 * spatial, 0);
    for (size_t i = 0; i < spatial; ++i) {
      const int64_t size = in[2 + i];
      const int64_t out = (size + w.strides[i] - 1) / w.strides[i];
      const int64_t eff = (w.kernel[i] - 1) * w.dilations[i] + 1;
      const int64_t total = std::max<int64_t>(0, (out - 1) * w.strides[i] + eff - size);
      const int64_t small = total / 2, big = total - total / 2;
      w.pads[i] = auto_pad == "SAME_UPPER" ? small : big;
      w.pads[i + spatial] = auto_pad == "SAME_UPPER" ? big : small;
    }
  } else {
    ctx.fail_attr("auto_pad", "is '" + auto_pad + "'; expected NOTSET, SAME_UPPER, SAME_LOWER or VALID");
  }
  return w;
}

// Output length of a sliding window (ONNX/PyTorch rule: with ceil_mode, a last window starting in
// the end padding is dropped).
int64_t window_output(ImportContext& ctx, int64_t in, int64_t k, int64_t s, int64_t d, int64_t pb, int64_t pe, bool ceil_mode) {
  const int64_t eff = (k - 1) * d + 1;
  const int64_t span = in + pb + pe - eff;
  if (span < 0) {
    ctx.fail_invalid("the dilated kernel (" + std::to_string(eff) + ") is larger than the padded input (" + std::to_string(in + pb + pe) + ")",
                     "check kernel_shape, dilations and pads");
  }
  int64_t out = (ceil_mode ? (span + s - 1) / s : span / s) + 1;
  if (ceil_mode && (out - 1) * s >= in + pb) --out;
  return out;
}

// ---- convolution at spatial rank 1, 2, 3 over conv2d ----

Value conv2d(ImportContext& ctx, const Value& x, const Value& w, const Value* bias, const Ints& strides, const Ints& pads,
             const Ints& dilations, int64_t groups) {
  std::vector<Value> args{x, w};
  if (bias) args.push_back(*bias);
  Attrs attrs;
  attrs.set("strides", strides).set("pads", pads).set("dilations", dilations).set("groups", groups);
  return ctx.call1("conv2d", args, attrs);
}

// A convolution in ONNX Conv's form (x [N, C, spatial...], w [M, C/groups, kernel...]) with explicit
// pads, at spatial rank 1, 2 or 3.
Value conv_nd(ImportContext& ctx, const Value& x, const Value& w, const Value* bias, const Window& win, int64_t groups) {
  const Shape xs = x.type().shape, ws = w.type().shape;
  const size_t spatial = xs.size() - 2;
  if (ws.size() != xs.size()) {
    ctx.fail_invalid("the weight " + w.type().to_string() + " must have the input's rank (" + std::to_string(xs.size()) + ")");
  }
  if (spatial == 2) return conv2d(ctx, x, w, bias, win.strides, win.pads, win.dilations, groups);
  if (spatial == 1) {
    Value x4 = reshape(ctx, x, {xs[0], xs[1], 1, xs[2]});
    Value w4 = reshape(ctx, w, {ws[0], ws[1], 1, ws[2]});
    Value y = conv2d(ctx, x4, w4, bias, {1, win.strides[0]}, {0, win.pads[0], 0, win.pads[1]}, {1, win.dilations[0]}, groups);
    const Shape ys = y.type().shape;
    return reshape(ctx, y, {ys[0], ys[1], ys[3]});
  }
  // 3-D: depth into the batch, depth taps into the input channels.
  const int64_t n = xs[0], c = xs[1], h = xs[3], wd = xs[4];
  const int64_t m = ws[0], cg = ws[1], kd = ws[2], kh = ws[3], kw = ws[4];
  const int64_t sd = win.strides[0], dd = win.dilations[0], pdb = win.pads[0], pde = win.pads[3];
  const int64_t od = window_output(ctx, xs[2], kd, sd, dd, pdb, pde, false);
  Value xp = pad_spatial(ctx, x, {pdb, 0, 0, pde, 0, 0});
  Value x4;
  if (kd == 1 && sd == 1) {
    x4 = reshape(ctx, transpose(ctx, xp, {0, 2, 1, 3, 4}), {n * od, c, h, wd});
  } else {
    // One gather of depth planes kd*dd + od*sd (a single-consumer chain pad -> gather -> transpose
    // -> reshape, so FuseOps puts all of it into the conv kernel's input packing).
    ir::NDArray planes = ir::NDArray::empty(ir::DType::kI64, {kd, od});
    for (int64_t t = 0; t < kd; ++t) {
      for (int64_t o = 0; o < od; ++o) planes.set_from_double(t * od + o, static_cast<double>(t * dd + o * sd));
    }
    Value stacked = ctx.call1("gather", {xp, ctx.constant(std::move(planes), "conv3d_depth_taps")},
                              Attrs().set("axis", int64_t{2}));  // [N, C, KD, OD, H, W]
    x4 = reshape(ctx, transpose(ctx, stacked, {0, 3, 1, 2, 4, 5}), {n * od, c * kd, h, wd});
  }
  Value w4 = reshape(ctx, w, {m, cg * kd, kh, kw});
  Value y4 = conv2d(ctx, x4, w4, bias, {win.strides[1], win.strides[2]}, {win.pads[1], win.pads[2], win.pads[4], win.pads[5]},
                    {win.dilations[1], win.dilations[2]}, groups);
  const Shape ys = y4.type().shape;
  return transpose(ctx, reshape(ctx, y4, {n, od, m, ys[2], ys[3]}), {0, 2, 1, 3, 4});
}

std::vector<Value> convert_conv(ImportContext& ctx) {
  Value x = ctx.input(0);
  Value w = ctx.input(1);
  const int64_t spatial = spatial_rank(ctx, x, "Conv");
  if (w.type().rank() != spatial + 2) {
    ctx.fail_invalid("input 1 (W) is " + w.type().to_string() + "; expected rank " + std::to_string(spatial + 2) + " like X " + x.type().to_string());
  }
  Ints kernel(w.type().shape.begin() + 2, w.type().shape.end());
  if (ctx.has_attr("kernel_shape") && ctx.attr_ints("kernel_shape", {}) != kernel) {
    ctx.fail_attr("kernel_shape", "disagrees with the weight's shape " + w.type().to_string());
  }
  Window win = resolve_window(ctx, x.type().shape, kernel);
  std::optional<Value> bias;
  if (ctx.has_input(2)) bias = ctx.input(2);
  return {conv_nd(ctx, x, w, bias ? &*bias : nullptr, win, ctx.attr_int("group", 1))};
}

// ---- pooling at spatial rank 1, 2, 3 over a 2-D pool ----

// A 2-D pool on [N, C, H, W]: kernel, strides, pads [t, l, b, r], dilations.
using Pool2d = std::function<Value(const Value& x, const Ints& kernel, const Ints& strides, const Ints& pads, const Ints& dilations)>;

Value pool_nd(ImportContext& ctx, const Value& x, const Window& w, const Pool2d& pool2d) {
  const Shape xs = x.type().shape;
  const size_t spatial = xs.size() - 2;
  if (spatial == 2) return pool2d(x, w.kernel, w.strides, w.pads, w.dilations);
  if (spatial == 1) {
    Value y = pool2d(reshape(ctx, x, {xs[0], xs[1], 1, xs[2]}), {1, w.kernel[0]}, {1, w.strides[0]}, {0, w.pads[0], 0, w.pads[1]},
                     {1, w.dilations[0]});
    const Shape ys = y.type().shape;
    return reshape(ctx, y, {ys[0], ys[1], ys[3]});
  }
  // 3-D, separable: (H, W) on [N, C*D, H, W], then (D, 1) on [N, C, D, OH*OW].
  const int64_t n = xs[0], c = xs[1], d = xs[2];
  Value hw = pool2d(reshape(ctx, x, {n, c * d, xs[3], xs[4]}), {w.kernel[1], w.kernel[2]}, {w.strides[1], w.strides[2]},
                    {w.pads[1], w.pads[2], w.pads[4], w.pads[5]}, {w.dilations[1], w.dilations[2]});
  const int64_t oh = hw.type().shape[2], ow = hw.type().shape[3];
  Value dp = pool2d(reshape(ctx, hw, {n, c, d, oh * ow}), {w.kernel[0], 1}, {w.strides[0], 1}, {w.pads[0], 0, w.pads[3], 0},
                    {w.dilations[0], 1});
  return reshape(ctx, dp, {n, c, dp.type().shape[2], oh, ow});
}

Ints pool_kernel(ImportContext& ctx, int64_t spatial) {
  Ints kernel = ctx.attr_ints("kernel_shape", {});
  if (static_cast<int64_t>(kernel.size()) != spatial) {
    ctx.fail_attr("kernel_shape", "has " + std::to_string(kernel.size()) + " entries; the input has " + std::to_string(spatial) + " spatial dimensions");
  }
  return kernel;
}

// A value at or below every element of `dtype` (the padding of MaxPool's argmax taps).
double lowest_of(ir::DType dtype) {
  switch (dtype) {
    case ir::DType::kI8: return -128;
    case ir::DType::kU8: return 0;
    case ir::DType::kI16: return -32768;
    case ir::DType::kI32: return -2147483648.0;
    case ir::DType::kI64: return -9223372036854775808.0;
    default: return -3.4028234663852886e38;  // f32's lowest (-inf in f16/bf16)
  }
}

// MaxPool's Indices output: the flat index (row-major, or column-major over the spatial axes with
// storage_order = 1, plus (n*C + c) * prod(spatial)) of the first maximum of each window. Built from
// compiled elementwise ops: for every kernel tap, the strided view of the padded input that the
// tap reads, compared with the pooled maximum; the smallest matching flat index wins
// (row-major order of the window, as ONNX Runtime's loop picks it). Taps in the padding get an
// index no real position has.
Value max_pool_indices(ImportContext& ctx, const Value& x, const Value& y, const Window& w, bool column_major) {
  const Shape xs = x.type().shape, ys = y.type().shape;
  const int64_t spatial = static_cast<int64_t>(xs.size()) - 2;
  const Ints sizes(xs.begin() + 2, xs.end()), outs(ys.begin() + 2, ys.end());
  Ints pads(2 * spatial);
  for (int64_t i = 0; i < spatial; ++i) {
    pads[i] = w.pads[i];
    const int64_t reach = (outs[i] - 1) * w.strides[i] + (w.kernel[i] - 1) * w.dilations[i] + 1;
    pads[spatial + i] = std::max(w.pads[spatial + i], reach - sizes[i] - w.pads[i]);
  }
  Ints full(2 * xs.size(), 0);
  for (int64_t i = 0; i < spatial; ++i) {
    full[2 + i] = pads[i];
    full[xs.size() + 2 + i] = pads[spatial + i];
  }
  Value xp = ctx.call1("pad", {x}, Attrs().set("pads", full).set("value", lowest_of(x.type().dtype)));
  constexpr int64_t kOutside = std::numeric_limits<int64_t>::max();
  Value outside = ctx.constant(ir::NDArray::scalar(ir::DType::kI64, static_cast<double>(kOutside)), "maxpool_outside");
  const int64_t taps = product(w.kernel), pixels = product(outs);
  Ints axes, steps;
  for (int64_t i = 0; i < spatial; ++i) {
    axes.push_back(2 + i);
    steps.push_back(w.strides[i]);
  }
  Value best;
  for (int64_t t = 0; t < taps; ++t) {
    Ints k(spatial), begins(spatial), ends(spatial);
    for (int64_t i = spatial - 1, rest = t; i >= 0; --i) {
      k[i] = rest % w.kernel[i];
      rest /= w.kernel[i];
      begins[i] = k[i] * w.dilations[i];
      ends[i] = begins[i] + (outs[i] - 1) * w.strides[i] + 1;
    }
    Value view = ctx.call1("strided_slice", {xp}, Attrs().set("begins", begins).set("ends", ends).set("axes", axes).set("steps", steps));
    ir::NDArray offsets = ir::NDArray::empty(ir::DType::kI64, outs);
    auto data = offsets.mutable_data<int64_t>();
    for (int64_t p = 0; p < pixels; ++p) {
      int64_t offset = 0, row_stride = 1, col_stride = 1;
      bool inside = true;
      Ints pos(spatial);
      for (int64_t i = spatial - 1, rest = p; i >= 0; --i) {
        pos[i] = (rest % outs[i]) * w.strides[i] - w.pads[i] + k[i] * w.dilations[i];
        rest /= outs[i];
        inside = inside && pos[i] >= 0 && pos[i] < sizes[i];
      }
      for (int64_t i = spatial - 1; i >= 0 && !column_major; --i) {
        offset += pos[i] * row_stride;
        row_stride *= sizes[i];
      }
      for (int64_t i = 0; i < spatial && column_major; ++i) {
        offset += pos[i] * col_stride;
        col_stride *= sizes[i];
      }
      data[p] = inside ? offset : kOutside;
    }
    Value hit = ctx.call1("equal", {view, y});
    Value cand = ctx.call1("where", {hit, ctx.constant(std::move(offsets), "maxpool_tap_offsets"), outside});
    best = best.defined() ? ctx.call1("min", {best, cand}) : cand;
  }
  Shape base_shape{xs[0], xs[1]};
  for (int64_t i = 0; i < spatial; ++i) base_shape.push_back(1);
  ir::NDArray base = ir::NDArray::empty(ir::DType::kI64, base_shape);
  for (int64_t p = 0; p < xs[0] * xs[1]; ++p) base.mutable_data<int64_t>()[p] = p * product(sizes);
  return ctx.call1("add", {best, ctx.constant(std::move(base), "maxpool_plane_offsets")});
}

std::vector<Value> convert_max_pool(ImportContext& ctx) {
  Value x = ctx.input(0);
  const int64_t spatial = spatial_rank(ctx, x, "MaxPool");
  const int64_t storage_order = ctx.attr_int("storage_order", 0);
  if (storage_order != 0 && storage_order != 1) ctx.fail_attr("storage_order", "must be 0 (row major) or 1 (column major)");
  const Window win = resolve_window(ctx, x.type().shape, pool_kernel(ctx, spatial));
  const int64_t ceil_mode = ctx.attr_int("ceil_mode", 0);
  Value y = pool_nd(ctx, x, win, [&](const Value& v, const Ints& k, const Ints& s, const Ints& p, const Ints& d) {
    Attrs attrs;
    attrs.set("kernel", k).set("strides", s).set("pads", p).set("dilations", d).set("ceil_mode", ceil_mode);
    return ctx.call1("max_pool2d", {v}, attrs);
  });
  if (ctx.node().outputs.size() > 1 && !ctx.node().outputs[1].empty()) {
    return {y, max_pool_indices(ctx, x, y, win, storage_order == 1)};
  }
  return {y};
}

std::vector<Value> convert_avg_pool(ImportContext& ctx) {
  Value x = ctx.input(0);
  const int64_t spatial = spatial_rank(ctx, x, "AveragePool");
  const Window win = resolve_window(ctx, x.type().shape, pool_kernel(ctx, spatial));
  const int64_t ceil_mode = ctx.attr_int("ceil_mode", 0);
  const int64_t count_include_pad = ctx.attr_int("count_include_pad", 0);
  return {pool_nd(ctx, x, win, [&](const Value& v, const Ints& k, const Ints& s, const Ints& p, const Ints& d) {
    Attrs attrs;
    attrs.set("kernel", k).set("strides", s).set("pads", p).set("dilations", d).set("ceil_mode", ceil_mode).set("count_include_pad", count_include_pad);
    return ctx.call1("avg_pool2d", {v}, attrs);
  })};
}

// |x|^p and its inverse y^(1/p) for LpPool / GlobalLpPool.
Value abs_pow(ImportContext& ctx, const Value& x, double p) {
  if (p == 2) return ctx.call1("mul", {x, x});
  Value a = ctx.call1("abs", {x});
  if (p == 1) return a;
  return ctx.call1("pow", {a, ctx.constant(ir::NDArray::scalar(x.type().dtype, p), "lp_p")});
}

Value root(ImportContext& ctx, const Value& y, double p) {
  if (p == 1) return y;
  if (p == 2) return ctx.call1("sqrt", {y});
  return ctx.call1("pow", {y, ctx.constant(ir::NDArray::scalar(y.type().dtype, 1.0 / p), "lp_inv_p")});
}

double lp_order(ImportContext& ctx) {
  const int64_t p = ctx.attr_int("p", 2);
  if (p < 1) ctx.fail_attr("p", "is " + std::to_string(p) + "; the norm order must be >= 1");
  return static_cast<double>(p);
}

std::vector<Value> convert_lp_pool(ImportContext& ctx) {
  Value x = ctx.input(0);
  const int64_t spatial = spatial_rank(ctx, x, "LpPool");
  const Window win = resolve_window(ctx, x.type().shape, pool_kernel(ctx, spatial));
  const bool ceil_mode = ctx.attr_int("ceil_mode", 0) != 0;
  const double p = lp_order(ctx);
  // Window sums: a depthwise convolution with a kernel of ones; ceil_mode's extra windows by end
  // padding (zeros add nothing).
  Value sums = pool_nd(ctx, abs_pow(ctx, x, p), win, [&](const Value& v, const Ints& k, const Ints& s, const Ints& pads, const Ints& d) {
    const Shape vs = v.type().shape;
    Ints padded = pads;
    for (int i = 0; i < 2; ++i) {
      const int64_t out = window_output(ctx, vs[2 + i], k[i], s[i], d[i], pads[i], pads[2 + i], ceil_mode);
      const int64_t need = (out - 1) * s[i] + (k[i] - 1) * d[i] + 1 - (vs[2 + i] + pads[i] + pads[2 + i]);
      padded[2 + i] += std::max<int64_t>(0, need);
    }
    Value ones = constant_filled(ctx, v.type().dtype, {vs[1], 1, k[0], k[1]}, 1.0, "lp_pool_window");
    return conv2d(ctx, v, ones, nullptr, s, padded, d, vs[1]);
  });
  return {root(ctx, sums, p)};
}

std::vector<Value> convert_global_lp_pool(ImportContext& ctx) {
  Value x = ctx.input(0);
  if (x.type().rank() < 3) ctx.fail_invalid("input must be [N, C, spatial...], got " + x.type().to_string());
  const double p = lp_order(ctx);
  Ints axes;
  for (int64_t a = 2; a < x.type().rank(); ++a) axes.push_back(a);
  Value sums = ctx.call1("reduce_sum", {abs_pow(ctx, x, p)}, Attrs().set("axes", axes).set("keepdims", int64_t{1}));
  return {root(ctx, sums, p)};
}

// ---- ConvTranspose ----

// One spatial axis of one phase: the taps of the transposed kernel it reads, as a stride-1
// convolution over the input.
struct PhaseAxis {
  int64_t taps = 0;       // J: kernel taps of this phase (0: the phase gets no contribution)
  int64_t k_last = 0;     // the largest tap index k (the sub-kernel runs k_last, k_last - step, ...)
  int64_t step = 1;       // spacing of the taps in k
  int64_t dilation = 1;   // spacing of their inputs: d / gcd(s, d)
  int64_t pad_begin = 0;  // input padding (negative: cropping) so that output q reads from q
  int64_t pad_end = 0;
};

PhaseAxis phase_axis(int64_t r, int64_t in, int64_t k, int64_t s, int64_t d, int64_t pad_begin, int64_t q) {
  PhaseAxis a;
  const int64_t g = std::gcd(s, d);
  a.step = s / g;
  a.dilation = d / g;
  int64_t k_first = -1;
  for (int64_t t = 0; t < k; ++t) {
    if (floor_mod(r + pad_begin - t * d, s) == 0) {
      if (k_first < 0) k_first = t;
      a.k_last = t;
      ++a.taps;
    }
  }
  if (a.taps == 0) return a;
  const int64_t offset_min = (r + pad_begin - a.k_last * d) / s;  // exact
  a.pad_begin = -offset_min;
  const int64_t need = (q - 1) + (a.taps - 1) * a.dilation + 1;
  a.pad_end = need - in - a.pad_begin;
  return a;
}

std::vector<Value> convert_conv_transpose(ImportContext& ctx) {
  Value x = ctx.input(0);
  Value w = ctx.input(1);
  const int64_t spatial = spatial_rank(ctx, x, "ConvTranspose");
  const Shape xs = x.type().shape, ws = w.type().shape;
  if (static_cast<int64_t>(ws.size()) != spatial + 2) {
    ctx.fail_invalid("input 1 (W) is " + w.type().to_string() + "; expected [C, M/group, kernel...] of rank " + std::to_string(spatial + 2));
  }
  const int64_t groups = ctx.attr_int("group", 1);
  if (groups < 1 || xs[1] % groups != 0 || ws[0] != xs[1]) {
    ctx.fail_invalid("the weight " + w.type().to_string() + " must be [C, M/group, kernel...] with C = " + std::to_string(xs[1]) +
                     " divisible by group = " + std::to_string(groups));
  }
  const int64_t n = xs[0], c = xs[1], cg = c / groups, mg = ws[1], m = mg * groups;
  const Ints kernel(ws.begin() + 2, ws.end());
  if (ctx.has_attr("kernel_shape") && ctx.attr_ints("kernel_shape", {}) != kernel) {
    ctx.fail_attr("kernel_shape", "disagrees with the weight's shape " + w.type().to_string());
  }
  const Ints strides = spatial_ints(ctx, "strides", spatial, 1, 1);
  const Ints dilations = spatial_ints(ctx, "dilations", spatial, 1, 1);
  const Ints out_pad = spatial_ints(ctx, "output_padding", spatial, 0, 0);
  const std::string auto_pad = ctx.attr_string("auto_pad", "NOTSET");
  if (auto_pad != "NOTSET" && auto_pad != "VALID" && auto_pad != "SAME_UPPER" && auto_pad != "SAME_LOWER") {
    ctx.fail_attr("auto_pad", "is '" + auto_pad + "'; expected NOTSET, SAME_UPPER, SAME_LOWER or VALID");
  }
  Ints full(spatial), out(spatial), pads(2 * spatial, 0);
  for (int64_t i = 0; i < spatial; ++i) {
    full[i] = strides[i] * (xs[2 + i] - 1) + out_pad[i] + (kernel[i] - 1) * dilations[i] + 1;
  }
  Ints output_shape = ctx.attr_ints("output_shape", {});
  if (!output_shape.empty()) {
    if (static_cast<int64_t>(output_shape.size()) == spatial + 2) output_shape.erase(output_shape.begin(), output_shape.begin() + 2);
    if (static_cast<int64_t>(output_shape.size()) != spatial) ctx.fail_attr("output_shape", "must have one entry per spatial dimension");
  } else if (auto_pad == "SAME_UPPER" || auto_pad == "SAME_LOWER") {
    for (int64_t i = 0; i < spatial; ++i) output_shape.push_back(xs[2 + i] * strides[i]);
  }
  if (!output_shape.empty()) {
    for (int64_t i = 0; i < spatial; ++i) {
      const int64_t total = full[i] - output_shape[i];
      const int64_t half = floor_div(total, 2);
      pads[i] = auto_pad == "SAME_UPPER" ? half : total - half;
      pads[spatial + i] = total - pads[i];
      out[i] = output_shape[i];
    }
  } else {
    if (auto_pad == "NOTSET") {
      pads = ctx.attr_ints("pads", Ints(2 * spatial, 0));
      if (static_cast<int64_t>(pads.size()) != 2 * spatial) ctx.fail_attr("pads", "must have " + std::to_string(2 * spatial) + " entries");
    }
    for (int64_t i = 0; i < spatial; ++i) out[i] = full[i] - pads[i] - pads[spatial + i];
  }
  for (int64_t i = 0; i < spatial; ++i) {
    if (out[i] < 1) ctx.fail_invalid("the output size in spatial dimension " + std::to_string(i) + " is " + std::to_string(out[i]), "check pads and output_shape");
  }
  std::optional<Value> bias;
  if (ctx.has_input(2)) bias = ctx.input(2);
  Shape bias_shape{m};
  for (int64_t i = 0; i < spatial; ++i) bias_shape.push_back(1);

  // A 1 x 1 (x 1) input (a generator's latent vector): every output pixel k gets x . W[:, :, k],
  // one matmul [N, C] x [C, M * prod(K)], cropped/padded to the output. (The phase convolution
  // would read a kernel-sized window that is almost all padding.)
  bool point_input = groups == 1;
  for (int64_t i = 0; i < spatial; ++i) point_input = point_input && xs[2 + i] == 1 && dilations[i] == 1;
  if (point_input) {
    Value y = ctx.call1("matmul", {reshape(ctx, x, {n, c}), reshape(ctx, w, {c, m * product(kernel)})});
    Shape full_shape{n, m};
    full_shape.insert(full_shape.end(), kernel.begin(), kernel.end());
    Ints window(2 * spatial);
    for (int64_t i = 0; i < spatial; ++i) {
      window[i] = -pads[i];
      window[spatial + i] = out[i] - (kernel[i] - pads[i]);
    }
    y = pad_spatial(ctx, reshape(ctx, y, full_shape), window);
    if (bias) y = ctx.call1("add", {y, reshape(ctx, *bias, bias_shape)});
    return {y};
  }

  // The weight in Conv's form [M, C/group, kernel...]: [g, Cg, Mg, K...] -> [g, Mg, Cg, K...].
  Shape grouped{groups, cg, mg};
  grouped.insert(grouped.end(), kernel.begin(), kernel.end());
  Ints perm{0, 2, 1};
  for (int64_t i = 0; i < spatial; ++i) perm.push_back(3 + i);
  Shape conv_shape{m, cg};
  conv_shape.insert(conv_shape.end(), kernel.begin(), kernel.end());
  Value wc = reshape(ctx, transpose(ctx, reshape(ctx, w, grouped), perm), conv_shape);

  // Phases: every combination of per-axis residues r_i in [0, s_i), in row-major order.
  Ints q(spatial);
  for (int64_t i = 0; i < spatial; ++i) q[i] = (out[i] + strides[i] - 1) / strides[i];
  const int64_t phases = product(strides);
  std::vector<std::vector<PhaseAxis>> plan(phases);
  for (int64_t p = 0; p < phases; ++p) {
    int64_t rest = p;
    std::vector<PhaseAxis> axes(spatial);
    for (int64_t i = spatial - 1; i >= 0; --i) {
      const int64_t r = rest % strides[i];
      rest /= strides[i];
      axes[i] = phase_axis(r, xs[2 + i], kernel[i], strides[i], dilations[i], pads[i], q[i]);
    }
    plan[p] = axes;
  }
  // The sub-kernel of a phase: taps k_last, k_last - step, ... on each axis (ascending input).
  auto sub_kernel = [&](const std::vector<PhaseAxis>& axes) {
    Value v = wc;
    for (int64_t i = 0; i < spatial; ++i) v = slice_axis(ctx, v, 2 + i, axes[i].k_last, -axes[i].step, axes[i].taps);
    return v;
  };
  // Runs the stride-1 convolution of the phase (or of all phases at once with `wk`).
  auto phase_conv = [&](const std::vector<PhaseAxis>& axes, const Value& wk, const Value* b) {
    Ints crop(2 * spatial), conv_pads(2 * spatial);
    Window win;
    for (int64_t i = 0; i < spatial; ++i) {
      crop[i] = std::min<int64_t>(0, axes[i].pad_begin);
      crop[spatial + i] = std::min<int64_t>(0, axes[i].pad_end);
      win.pads.push_back(std::max<int64_t>(0, axes[i].pad_begin));
      win.kernel.push_back(axes[i].taps);
      win.strides.push_back(1);
      win.dilations.push_back(axes[i].dilation);
    }
    for (int64_t i = 0; i < spatial; ++i) win.pads.push_back(std::max<int64_t>(0, axes[i].pad_end));
    for (int64_t i = 0; i < 2 * spatial; ++i) {
      if (-crop[i] >= xs[2 + i % spatial]) ctx.fail_unsupported("output_shape/pads place the output entirely outside the input's reach");
    }
    return conv_nd(ctx, pad_spatial(ctx, x, crop), wk, b, win, groups);
  };

  Shape phase_shape{n, m};
  phase_shape.insert(phase_shape.end(), q.begin(), q.end());
  // The union of the phases' input windows per axis (offsets lo..hi on the dilation grid). When
  // every phase reads it without waste (or the convolution is depthwise-like, Cg = 1, where the
  // FLOPs are cheap and many small kernels plus a many-input interleave are not: FCN's per-class
  // 16x16 stride-8 upsampling has 64 phases), all phases are ONE convolution over the union window
  // (each phase's kernel zero-padded to it) with prod(s) * M output channels, ordered
  // [group, phase, m] so groups stay contiguous.
  std::vector<PhaseAxis> joint(spatial);
  bool combinable = phases > 1;
  double union_taps = 1, mean_taps = 0;
  for (int64_t i = 0; i < spatial && combinable; ++i) {
    const int64_t dl = plan[0][i].dilation;
    int64_t lo = std::numeric_limits<int64_t>::max(), hi = std::numeric_limits<int64_t>::min();
    for (int64_t p = 0; p < phases; ++p) {
      const PhaseAxis& a = plan[p][i];
      combinable = combinable && a.taps > 0;
      lo = std::min(lo, -a.pad_begin);
      hi = std::max(hi, -a.pad_begin + (a.taps - 1) * dl);
    }
    for (int64_t p = 0; p < phases; ++p) combinable = combinable && floor_mod(-plan[p][i].pad_begin - lo, dl) == 0;
    joint[i].taps = (hi - lo) / dl + 1;
    joint[i].dilation = dl;
    joint[i].pad_begin = -lo;
    joint[i].pad_end = (q[i] - 1) + (joint[i].taps - 1) * dl + 1 - xs[2 + i] - joint[i].pad_begin;
    union_taps *= static_cast<double>(joint[i].taps);
  }
  for (int64_t p = 0; p < phases && combinable; ++p) {
    double t = 1;
    for (const PhaseAxis& a : plan[p]) t *= static_cast<double>(a.taps);
    mean_taps += t / static_cast<double>(phases);
  }
  const bool combined = combinable && (union_taps <= mean_taps + 1e-9 || (cg == 1 && union_taps <= 2.25 * mean_taps + 1e-9));

  Value stacked;  // [N, M, s..., Q...]
  Value y;
  if (phases == 1) {
    stacked = plan[0][0].taps > 0 ? phase_conv(plan[0], sub_kernel(plan[0]), bias ? &*bias : nullptr) : Value();
  }
  if (combined) {
    std::vector<Value> kernels, biases;
    Shape kshape{groups, 1, mg, cg};
    for (const PhaseAxis& a : joint) kshape.push_back(a.taps);
    for (int64_t p = 0; p < phases; ++p) {
      Ints zeros(2 * spatial);
      for (int64_t i = 0; i < spatial; ++i) {
        zeros[i] = (joint[i].pad_begin - plan[p][i].pad_begin) / joint[i].dilation;
        zeros[spatial + i] = joint[i].taps - plan[p][i].taps - zeros[i];
      }
      kernels.push_back(reshape(ctx, pad_spatial(ctx, sub_kernel(plan[p]), zeros), kshape));
      if (bias) biases.push_back(reshape(ctx, *bias, {groups, 1, mg}));
    }
    Shape wshape{groups * phases * mg, cg};
    for (const PhaseAxis& a : joint) wshape.push_back(a.taps);
    Value wk = reshape(ctx, ctx.call1("concat", kernels, Attrs().set("axis", int64_t{1})), wshape);
    std::optional<Value> b;
    if (bias) b = reshape(ctx, ctx.call1("concat", biases, Attrs().set("axis", int64_t{1})), {groups * phases * mg});
    Value conv = phase_conv(joint, wk, b ? &*b : nullptr);  // [N, g * P * Mg, Q...]
    Shape split{n, groups};
    split.insert(split.end(), strides.begin(), strides.end());
    split.push_back(mg);
    split.insert(split.end(), q.begin(), q.end());
    Ints order{0, 1, 2 + spatial};
    for (int64_t i = 0; i < spatial; ++i) {
      order.push_back(3 + spatial + i);
      order.push_back(2 + i);
    }
    Shape joined{n, m};
    for (int64_t i = 0; i < spatial; ++i) joined.push_back(q[i] * strides[i]);
    y = reshape(ctx, transpose(ctx, reshape(ctx, conv, split), order), joined);
  } else if (phases > 1 || !stacked.defined()) {
    std::vector<Value> parts;
    Shape one{n, m, 1};
    one.insert(one.end(), q.begin(), q.end());
    for (int64_t p = 0; p < phases; ++p) {
      bool empty = false;
      for (const PhaseAxis& a : plan[p]) empty = empty || a.taps == 0;
      Value part;
      if (empty) {  // no tap reaches these outputs: the bias (or zero)
        part = constant_filled(ctx, x.type().dtype, phase_shape, 0.0, "conv_transpose_empty_phase");
        if (bias) part = ctx.call1("add", {part, reshape(ctx, *bias, bias_shape)});
      } else {
        part = phase_conv(plan[p], sub_kernel(plan[p]), bias ? &*bias : nullptr);
      }
      parts.push_back(reshape(ctx, part, one));
    }
    Value all = parts.size() == 1 ? parts[0] : ctx.call1("concat", parts, Attrs().set("axis", int64_t{2}));
    Shape s{n, m};
    s.insert(s.end(), strides.begin(), strides.end());
    s.insert(s.end(), q.begin(), q.end());
    stacked = reshape(ctx, all, s);
  }
  // Interleave: [N, M, s_0.., Q_0..] -> [N, M, Q_0, s_0, Q_1, s_1, ...] -> [N, M, Q_i * s_i...].
  if (!y.defined()) y = stacked;
  if (phases > 1 && !combined) {
    Ints order{0, 1};
    for (int64_t i = 0; i < spatial; ++i) {
      order.push_back(2 + spatial + i);
      order.push_back(2 + i);
    }
    Shape joined{n, m};
    for (int64_t i = 0; i < spatial; ++i) joined.push_back(q[i] * strides[i]);
    y = reshape(ctx, transpose(ctx, stacked, order), joined);
  }
  for (int64_t i = 0; i < spatial; ++i) y = slice_axis(ctx, y, 2 + i, 0, 1, out[i]);
  return {y};
}

}  // namespace

void add_conv_converters(std::map<std::string, Converter>& table) {
  table["Conv"] = convert_conv;
  table["ConvTranspose"] = convert_conv_transpose;
  table["MaxPool"] = convert_max_pool;
  table["AveragePool"] = convert_avg_pool;
  table["LpPool"] = convert_lp_pool;
  table["GlobalLpPool"] = convert_global_lp_pool;
}

}  // namespace kiln::frontend::onnx_import
