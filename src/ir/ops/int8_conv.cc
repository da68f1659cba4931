// The fast int8 convolution as graph operators (docs/int8.md, "Graph wiring"): what
// AlterInt8Layout turns `requantize(qnn_conv2d(x u8, w s8 constant, x_zp, w_zp = 0), ...)` into,
// backed by topi::int8::int8_conv2d (src/topi/int8_graph_ops.cc).
//   int8_pack_conv_weights(w s8 [M, C, KH, KW]; ob) -> i32 [M/ob, ceil(C/4), KH, KW, ob]: word
//     (mo, c4, kh, kw, o) holds w[mo*ob + o, 4*c4 + b, kh, kw] as byte b (b = 0 lowest; 0 past C).
//   int8_conv_weight_sums(w s8 [M, C, KH, KW]) -> i32 [M]: sum of each output channel's weights.
//   int8_conv2d(x u8 [N, C, H, W] or [N, C/ib, H, W, ib], packed_w, colsum i32 [M], bias i32 [M],
//               scale f32 [M]; strides, pads, dilations, channels (= C), x_zero_point,
//               y_zero_point, clamp_min, clamp_max, narrow)
//     -> u8 [N, M/ob, OH, OW, ob] = clamp(R(f32(sum over the taps inside the input of
//        (x - x_zp) * w + bias[m]) * scale[m]) + y_zp, clamp_min, clamp_max)
//   with R the rounding rule of `requantize` (quantize_params.h) and the i32 sum wrapping modulo
//   2^32: exactly requantize(qnn_conv2d(...)) with scale[m] = x_scale[m] / y_scale. The reference
//   reads the weights back from the packed words. `narrow` (weights proven in [-64, 64]) only
//   selects the kernel's dot-product form; `colsum` is the kernel's zero-point term (the
//   reference recomputes the sum over the taps inside the input instead).
//   With dequantize = 1 the output is that u8 value dequantized, f32 [N, M/ob, OH, OW, ob] =
//   f32(q - dequantize_zero_point) * dequantize_scale: exactly dequantize_linear(int8_conv2d(...),
//   dequantize_scale, dequantize_zero_point) (AlterInt8Layout folds a conv's only consumer when
//   it is that dequantize; the kernel then clamps and rounds in f32 without the u8 round trip).
//   int8_pack_depthwise_weights(w s8 [C, 1, KH, KW]; b) -> s8 [C/b, KH, KW, b]: (cb, kh, kw, j)
//     holds w[cb*b + j, 0, kh, kw] (a channel block's weights of one tap are one vector).
//   int8_depthwise_conv2d(x u8 [N, C/b, H, W, b], packed_w, colsum i32 [C], bias i32 [C],
//               scale f32 [C]; strides, pads, dilations, x_zero_point, y_zero_point, clamp_min,
//               clamp_max) -> u8 [N, C/b, OH, OW, b]: the depthwise form (groups = C = M) of the
//     same formula, channel c reading only input channel c (topi::int8::int8_depthwise_conv2d).
#include <algorithm>
#include <cmath>
#include <cstring>

#include "ir/ops/int8_conv_common.h"

namespace kiln::ir::ops {
namespace {

constexpr const char* kPack = "int8_pack_conv_weights";
constexpr const char* kSums = "int8_conv_weight_sums";
constexpr const char* kConv = "int8_conv2d";
constexpr const char* kPackDw = "int8_pack_depthwise_weights";
constexpr const char* kDw = "int8_depthwise_conv2d";

void require_dtype(const std::string& op, int index, const std::string& name, const TensorType& t, DType want) {
  if (t.dtype != want) fail_unsupported_dtype(op, index, name, t.dtype, dtype_name(want));
}

std::vector<TensorType> infer_pack(const std::vector<TensorType>& in, const Attrs& attrs) {
  require_dtype(kPack, 0, "w", in[0], DType::kI8);
  require_rank(kPack, 0, "w", in[0], 4, "[M, C, KH, KW]");
  const int64_t ob = attrs.get_int("ob"), m = in[0].shape[0], c = in[0].shape[1];
  if (ob < 1 || m % ob != 0) fail_attr(kPack, "ob", "is " + std::to_string(ob) + ": it must divide M = " + std::to_string(m));
  return {{DType::kI32, {m / ob, (c + 3) / 4, in[0].shape[2], in[0].shape[3], ob}}};
}

std::vector<NDArray> reference_pack(const std::vector<NDArray>& in, const Attrs&, const std::vector<TensorType>& out) {
  const Shape& ws = in[0].shape();
  const Shape& os = out[0].shape;
  const int64_t C = ws[1], KH = ws[2], KW = ws[3], C4 = os[1], ob = os[4];
  auto w = in[0].data<int8_t>();
  NDArray y = NDArray::empty(DType::kI32, os);
  auto o = y.mutable_data<int32_t>();
  for (int64_t mo = 0; mo < os[0]; ++mo)
    for (int64_t c4 = 0; c4 < C4; ++c4)
      for (int64_t kh = 0; kh < KH; ++kh)
        for (int64_t kw = 0; kw < KW; ++kw)
          for (int64_t j = 0; j < ob; ++j) {
            uint32_t word = 0;
            for (int64_t b = 0; b < 4; ++b) {
              const int64_t c = 4 * c4 + b;
              const int8_t v = c < C ? w[(((mo * ob + j) * C + c) * KH + kh) * KW + kw] : int8_t{0};
              word |= static_cast<uint32_t>(static_cast<uint8_t>(v)) << (8 * b);
            }
            o[(((mo * C4 + c4) * KH + kh) * KW + kw) * ob + j] = static_cast<int32_t>(word);
          }
  return {y};
}

std::vector<TensorType> infer_sums(const std::vector<TensorType>& in, const Attrs&) {
  require_dtype(kSums, 0, "w", in[0], DType::kI8);
  require_rank(kSums, 0, "w", in[0], 4, "[M, C, KH, KW]");
  return {{DType::kI32, {in[0].shape[0]}}};
}

std::vector<NDArray> reference_sums(const std::vector<NDArray>& in, const Attrs&, const std::vector<TensorType>& out) {
  auto w = in[0].data<int8_t>();
  const int64_t m = out[0].shape[0], per = in[0].numel() / std::max<int64_t>(1, m);
  NDArray y = NDArray::empty(DType::kI32, out[0].shape);
  auto o = y.mutable_data<int32_t>();
  for (int64_t i = 0; i < m; ++i) {
    int32_t s = 0;
    for (int64_t k = 0; k < per; ++k) s += w[i * per + k];
    o[i] = s;
  }
  return {y};
}

std::vector<TensorType> infer_conv(const std::vector<TensorType>& in, const Attrs& attrs) {
  const TensorType &x = in[0], &pw = in[1];
  require_dtype(kConv, 0, "x", x, DType::kU8);
  if (x.rank() != 4 && x.rank() != 5) fail_input(kConv, 0, "x", "must be [N, C, H, W] or [N, C/ib, H, W, ib]");
  require_dtype(kConv, 1, "packed_w", pw, DType::kI32);
  require_rank(kConv, 1, "packed_w", pw, 5, "[M/ob, ceil(C/4), KH, KW, ob] (int8_pack_conv_weights)");
  const int64_t c = attrs.get_int("channels");
  const int64_t xc = x.rank() == 5 ? x.shape[1] * x.shape[4] : static_cast<int64_t>(x.shape[1]);
  if (xc != c) fail_input(kConv, 0, "x", "has " + std::to_string(xc) + " channels, the channels attribute says " + std::to_string(c));
  if (pw.shape[1] != (c + 3) / 4) fail_input(kConv, 1, "packed_w", "does not hold ceil(C/4) channel words");
  const int64_t m = pw.shape[0] * pw.shape[4];
  const char* names[3] = {"colsum", "bias", "scale"};
  for (int i = 2; i < 5; ++i) {
    require_dtype(kConv, i, names[i - 2], in[i], i == 4 ? DType::kF32 : DType::kI32);
    if (in[i].shape != Shape{m}) fail_input(kConv, i, names[i - 2], "must be [M] = [" + std::to_string(m) + "]");
  }
  const auto& s = ints_of_size(kConv, attrs, "strides", 2);
  const auto& p = ints_of_size(kConv, attrs, "pads", 4);
  const auto& d = ints_of_size(kConv, attrs, "dilations", 2);
  const int64_t oh = sliding_output_size(kConv, 0, x.shape[2], pw.shape[2], s[0], d[0], p[0], p[2], false);
  const int64_t ow = sliding_output_size(kConv, 1, x.shape[3], pw.shape[3], s[1], d[1], p[1], p[3], false);
  const DType out = int8_conv::output_dtype(kConv, attrs);
  return {{out, {x.shape[0], pw.shape[0], oh, ow, pw.shape[4]}}};
}

using int8_conv::requantize_one;

std::vector<NDArray> reference_conv(const std::vector<NDArray>& in, const Attrs& attrs, const std::vector<TensorType>& out) {
  const NDArray& xa = in[0];
  const bool blocked = xa.shape().size() == 5;
  const Shape &xs = xa.shape(), &ps = in[1].shape(), &os = out[0].shape;
  const int64_t N = xs[0], ib = blocked ? static_cast<int64_t>(xs[4]) : 1, C = attrs.get_int("channels"), H = xs[2], W = xs[3];
  const int64_t C4 = ps[1], KH = ps[2], KW = ps[3], ob = ps[4], OH = os[2], OW = os[3], M = ps[0] * ob;
  const auto& s = attrs.get_ints("strides");
  const auto& p = attrs.get_ints("pads");
  const auto& dl = attrs.get_ints("dilations");
  const int64_t xzp = attrs.get_int("x_zero_point");
  auto x = xa.data<uint8_t>();
  auto pw = in[1].data<int32_t>();
  auto bias = in[3].data<int32_t>();
  auto scale = in[4].data<float>();
  auto x_at = [&](int64_t n, int64_t c, int64_t h, int64_t w) -> int64_t {
    return blocked ? x[(((n * (C / ib) + c / ib) * H + h) * W + w) * ib + c % ib] : x[((n * C + c) * H + h) * W + w];
  };
  auto w_at = [&](int64_t m, int64_t c, int64_t kh, int64_t kw) -> int64_t {
    const auto word = static_cast<uint32_t>(pw[((((m / ob) * C4 + c / 4) * KH + kh) * KW + kw) * ob + m % ob]);
    return static_cast<int8_t>(static_cast<uint8_t>(word >> (8 * (c % 4))));
  };
  NDArray y = NDArray::empty(DType::kU8, os);
  auto o = y.mutable_data<uint8_t>();
  for (int64_t n = 0; n < N; ++n)
    for (int64_t m = 0; m < M; ++m)
      for (int64_t oy = 0; oy < OH; ++oy)
        for (int64_t ox = 0; ox < OW; ++ox) {
          int64_t acc = 0;
          for (int64_t c = 0; c < C; ++c)
            for (int64_t ky = 0; ky < KH; ++ky) {
              const int64_t iy = oy * s[0] - p[0] + ky * dl[0];
              if (iy < 0 || iy >= H) continue;
              for (int64_t kx = 0; kx < KW; ++kx) {
                const int64_t ix = ox * s[1] - p[1] + kx * dl[1];
                if (ix >= 0 && ix < W) acc += (x_at(n, c, iy, ix) - xzp) * w_at(m, c, ky, kx);
              }
            }
          o[(((n * (M / ob) + m / ob) * OH + oy) * OW + ox) * ob + m % ob] = requantize_one(acc, bias[m], scale[m], attrs);
        }
  return {int8_conv::finish_output(std::move(y), attrs)};
}

std::vector<TensorType> infer_pack_dw(const std::vector<TensorType>& in, const Attrs& attrs) {
  require_dtype(kPackDw, 0, "w", in[0], DType::kI8);
  require_rank(kPackDw, 0, "w", in[0], 4, "[C, 1, KH, KW]");
  const int64_t b = attrs.get_int("b"), c = in[0].shape[0];
  if (in[0].shape[1] != 1) fail_input(kPackDw, 0, "w", "must have one input channel per group ([C, 1, KH, KW])");
  if (b < 1 || c % b != 0) fail_attr(kPackDw, "b", "is " + std::to_string(b) + ": it must divide C = " + std::to_string(c));
  return {{DType::kI8, {c / b, in[0].shape[2], in[0].shape[3], b}}};
}

std::vector<NDArray> reference_pack_dw(const std::vector<NDArray>& in, const Attrs&, const std::vector<TensorType>& out) {
  const Shape& os = out[0].shape;
  const int64_t KH = os[1], KW = os[2], b = os[3];
  auto w = in[0].data<int8_t>();
  NDArray y = NDArray::empty(DType::kI8, os);
  auto o = y.mutable_data<int8_t>();
  for (int64_t cb = 0; cb < os[0]; ++cb)
    for (int64_t kh = 0; kh < KH; ++kh)
      for (int64_t kw = 0; kw < KW; ++kw)
        for (int64_t j = 0; j < b; ++j) o[((cb * KH + kh) * KW + kw) * b + j] = w[((cb * b + j) * KH + kh) * KW + kw];
  return {y};
}

std::vector<TensorType> infer_dw(const std::vector<TensorType>& in, const Attrs& attrs) {
  const TensorType &x = in[0], &pw = in[1];
  require_dtype(kDw, 0, "x", x, DType::kU8);
  require_rank(kDw, 0, "x", x, 5, "[N, C/b, H, W, b]");
  require_dtype(kDw, 1, "packed_w", pw, DType::kI8);
  require_rank(kDw, 1, "packed_w", pw, 4, "[C/b, KH, KW, b] (int8_pack_depthwise_weights)");
  if (pw.shape[0] != x.shape[1] || pw.shape[3] != x.shape[4]) fail_input(kDw, 1, "packed_w", "does not match x's channel blocks");
  const int64_t c = x.shape[1] * x.shape[4];
  const char* names[3] = {"colsum", "bias", "scale"};
  for (int i = 2; i < 5; ++i) {
    require_dtype(kDw, i, names[i - 2], in[i], i == 4 ? DType::kF32 : DType::kI32);
    if (in[i].shape != Shape{c}) fail_input(kDw, i, names[i - 2], "must be [C] = [" + std::to_string(c) + "]");
  }
  const auto& s = ints_of_size(kDw, attrs, "strides", 2);
  const auto& p = ints_of_size(kDw, attrs, "pads", 4);
  const auto& d = ints_of_size(kDw, attrs, "dilations", 2);
  const int64_t oh = sliding_output_size(kDw, 0, x.shape[2], pw.shape[1], s[0], d[0], p[0], p[2], false);
  const int64_t ow = sliding_output_size(kDw, 1, x.shape[3], pw.shape[2], s[1], d[1], p[1], p[3], false);
  return {{DType::kU8, {x.shape[0], x.shape[1], oh, ow, x.shape[4]}}};
}

std::vector<NDArray> reference_dw(const std::vector<NDArray>& in, const Attrs& attrs, const std::vector<TensorType>& out) {
  const Shape &xs = in[0].shape(), &ps = in[1].shape(), &os = out[0].shape;
  const int64_t N = xs[0], CB = xs[1], H = xs[2], W = xs[3], b = xs[4], KH = ps[1], KW = ps[2], OH = os[2], OW = os[3];
  const auto& s = attrs.get_ints("strides");
  const auto& p = attrs.get_ints("pads");
  const auto& dl = attrs.get_ints("dilations");
  const int64_t xzp = attrs.get_int("x_zero_point");
  auto x = in[0].data<uint8_t>();
  auto w = in[1].data<int8_t>();
  auto bias = in[3].data<int32_t>();
  auto scale = in[4].data<float>();
  NDArray y = NDArray::empty(DType::kU8, os);
  auto o = y.mutable_data<uint8_t>();
  for (int64_t n = 0; n < N; ++n)
    for (int64_t cb = 0; cb < CB; ++cb)
      for (int64_t oy = 0; oy < OH; ++oy)
        for (int64_t ox = 0; ox < OW; ++ox)
          for (int64_t j = 0; j < b; ++j) {
            int64_t acc = 0;
            for (int64_t ky = 0; ky < KH; ++ky) {
              const int64_t iy = oy * s[0] - p[0] + ky * dl[0];
              if (iy < 0 || iy >= H) continue;
              for (int64_t kx = 0; kx < KW; ++kx) {
                const int64_t ix = ox * s[1] - p[1] + kx * dl[1];
                if (ix < 0 || ix >= W) continue;
                acc += (x[(((n * CB + cb) * H + iy) * W + ix) * b + j] - xzp) * w[((cb * KH + ky) * KW + kx) * b + j];
              }
            }
            const int64_t c = cb * b + j;
            o[(((n * CB + cb) * OH + oy) * OW + ox) * b + j] = requantize_one(acc, bias[c], scale[c], attrs);
          }
  return {y};
}

}  // namespace

KILN_REGISTER_OP(int8_pack_depthwise_weights) {
  OpDef d;
  d.name = kPackDw;
  d.doc = "s8 depthwise weights [C, 1, KH, KW] -> [C/b, KH, KW, b] (a channel block per tap)";
  d.min_inputs = d.max_inputs = 1;
  d.attrs = {{"b", AttrKind::kInt, AttrValue(int64_t{16}), "channels per block"}};
  d.infer_type = infer_pack_dw;
  d.reference = reference_pack_dw;
  d.pattern = OpPattern::kInjective;
  return with_arity_check(std::move(d));
}

KILN_REGISTER_OP(int8_depthwise_conv2d) {
  OpDef d;
  d.name = kDw;
  d.doc = "u8 x s8 depthwise convolution on NCHW[b]c with the requantize epilogue (the fast int8 kernel)";
  d.min_inputs = d.max_inputs = 5;
  d.attrs = int8_conv::requantize_attrs();
  d.infer_type = infer_dw;
  d.reference = reference_dw;
  d.pattern = OpPattern::kOpaque;  // the epilogue is part of the kernel
  return with_arity_check(std::move(d));
}

KILN_REGISTER_OP(int8_pack_conv_weights) {
  OpDef d;
  d.name = kPack;
  d.doc = "s8 conv weights [M, C, KH, KW] -> i32 words of 4 channels [M/ob, ceil(C/4), KH, KW, ob]";
  d.min_inputs = d.max_inputs = 1;
  d.attrs = {{"ob", AttrKind::kInt, AttrValue(int64_t{16}), "output channels per block"}};
  d.infer_type = infer_pack;
  d.reference = reference_pack;
  d.pattern = OpPattern::kInjective;
  return with_arity_check(std::move(d));
}

KILN_REGISTER_OP(int8_conv_weight_sums) {
  OpDef d;
  d.name = kSums;
  d.doc = "i32 sum of each output channel's s8 conv weights";
  d.min_inputs = d.max_inputs = 1;
  d.infer_type = infer_sums;
  d.reference = reference_sums;
  d.pattern = OpPattern::kCommReduce;
  return with_arity_check(std::move(d));
}

KILN_REGISTER_OP(int8_conv2d) {
  OpDef d;
  d.name = kConv;
  d.doc = "u8 x s8 convolution with the requantize epilogue, u8 NCHW[ob]c output (the fast int8 kernel)";
  d.min_inputs = d.max_inputs = 5;
  d.attrs = int8_conv::requantize_attrs();
  d.attrs.push_back({"channels", AttrKind::kInt, std::nullopt, "input channels C"});
  d.attrs.push_back({"narrow", AttrKind::kInt, AttrValue(int64_t{0}), "1: weights proven in [-64, 64] (narrow dot product)"});
  int8_conv::add_dequantize_attrs(d.attrs);
  d.infer_type = infer_conv;
  d.reference = reference_conv;
  // The requantize epilogue is part of the kernel; elementwise consumers (the QDQ residual chain
  // on the blocks: dequantize, add, relu, quantize) fuse after it, applied to the register tile.
  d.pattern = OpPattern::kOutEWiseFusable;
  return with_arity_check(std::move(d));
}

}  // namespace kiln::ir::ops
