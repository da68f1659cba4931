// The int8 Winograd convolution as graph operators (docs/int8.md, "Winograd F(2x2, 3x3) in
// integers"): what AlterInt8Layout makes of a 3x3, stride-1, dilation-1 int8_conv2d candidate
// whose channels pair up in its input's blocks (the kernel: src/topi/int8_winograd.cc).
//   int8_winograd_weight_transform(w s8 [M, C, 3, 3]; ob, ib) -> i32 [4, 4, M/ob, C/2, ob]:
//     U = G2 g G2^T per (output, input) channel pair, G2 = 2 G of F(2x2, 3x3) (integers, so U is
//     an exact integer, |U| <= 9 * 128), stored as s16 halves: word (e, nu, mo, q, o) holds U[e,
//     nu] of output channel mo*ob + o and input channels lo(q) (low half) and hi(q) (high half),
//     q = cb * ib/2 + j -> lo = cb*ib + j, hi = cb*ib + ib/2 + j (the two halves of an ib-channel
//     block, so the kernel reads each half of a block with one contiguous load).
//   int8_conv2d_winograd(x u8 [N, C/ib, H, W, ib], u (as above), bias i32 [M], scale f32 [M];
//               pads, x_zero_point, y_zero_point, clamp_min, clamp_max, dequantize,
//               dequantize_scale, dequantize_zero_point) -> u8 (f32 with dequantize = 1)
//     [N, M/ob, OH, OW, ob]: exactly int8_conv2d with strides 1, dilations 1 and the 3x3 weights
//     g: for every 2x2 output tile, V = B^T (d - x_zp) B of its 4x4 input window d (x_zp outside
//     the input, so padding adds 0), Y = A^T (sum_c U ⊙ V) A = 4 * the direct sum (the factor of
//     G2), acc = Y / 4, then int8_conv2d's requantize epilogue. Every step is exact integer
//     arithmetic (|V| <= 4 * 255 fits s16; the kernel's i32 sums may wrap but the result, a
//     direct sum that fits i32, comes out exact modulo 2^32), so results are bit-identical to
//     int8_conv2d. The reference computes the same formula in int64.
#include <algorithm>

#include "ir/ops/int8_conv_common.h"
#include "ir/ops/winograd.h"

namespace kiln::ir::ops {
namespace {

constexpr const char* kTransform = "int8_winograd_weight_transform";
constexpr const char* kConv = "int8_conv2d_winograd";

// Entry (i, j) of 2 G, B^T and A^T of F(2x2, 3x3) as integers.
int64_t g2(int i, int j) { return static_cast<int64_t>(2 * winograd_matrices(2).G(i, j)); }
int64_t bt(int i, int j) { return static_cast<int64_t>(winograd_matrices(2).BT(i, j)); }
int64_t at(int i, int j) { return static_cast<int64_t>(winograd_matrices(2).AT(i, j)); }

// Input channel of half `half` of word q (ib channels per block).
int64_t channel_of(int64_t q, int half, int64_t ib) { return (q / (ib / 2)) * ib + half * (ib / 2) + q % (ib / 2); }

std::vector<TensorType> infer_transform(const std::vector<TensorType>& in, const Attrs& attrs) {
  const TensorType& w = in[0];
  if (w.dtype != DType::kI8) fail_unsupported_dtype(kTransform, 0, "w", w.dtype, "int8");
  require_rank(kTransform, 0, "w", w, 4, "[M, C, 3, 3]");
  if (w.shape[2] != 3 || w.shape[3] != 3) fail_input(kTransform, 0, "w", "must be a 3x3 kernel");
  const int64_t ob = attrs.get_int("ob"), ib = attrs.get_int("ib"), m = w.shape[0], c = w.shape[1];
  if (ob < 1 || m % ob != 0) fail_attr(kTransform, "ob", "is " + std::to_string(ob) + ": it must divide M = " + std::to_string(m));
  if (ib < 2 || ib % 2 != 0 || c % ib != 0) {
    fail_attr(kTransform, "ib", "is " + std::to_string(ib) + ": it must be even and divide C = " + std::to_string(c));
  }
  return {{DType::kI32, {4, 4, m / ob, c / 2, ob}}};
}

std::vector<NDArray> reference_transform(const std::vector<NDArray>& in, const Attrs& attrs, const std::vector<TensorType>& out) {
  const Shape& ws = in[0].shape();
  const Shape& os = out[0].shape;
  const int64_t C = ws[1], MB = os[2], Q = os[3], ob = os[4], ib = attrs.get_int("ib");
  auto w = in[0].data<int8_t>();
  NDArray y = NDArray::empty(DType::kI32, os);
  auto o = y.mutable_data<int32_t>();
  for (int e = 0; e < 4; ++e)
    for (int nu = 0; nu < 4; ++nu)
      for (int64_t mo = 0; mo < MB; ++mo)
        for (int64_t q = 0; q < Q; ++q)
          for (int64_t j = 0; j < ob; ++j) {
            uint32_t word = 0;
            for (int half = 0; half < 2; ++half) {
              const int64_t m = mo * ob + j, c = channel_of(q, half, ib);
              int64_t v = 0;
              for (int kh = 0; kh < 3; ++kh)
                for (int kw = 0; kw < 3; ++kw) v += g2(e, kh) * w[((m * C + c) * 3 + kh) * 3 + kw] * g2(nu, kw);
              word |= static_cast<uint32_t>(static_cast<uint16_t>(static_cast<int16_t>(v))) << (16 * half);
            }
            o[(((e * 4 + nu) * MB + mo) * Q + q) * ob + j] = static_cast<int32_t>(word);
          }
  return {y};
}

std::vector<TensorType> infer_conv(const std::vector<TensorType>& in, const Attrs& attrs) {
  const TensorType &x = in[0], &u = in[1];
  if (x.dtype != DType::kU8) fail_unsupported_dtype(kConv, 0, "x", x.dtype, "uint8");
  require_rank(kConv, 0, "x", x, 5, "[N, C/ib, H, W, ib]");
  if (u.dtype != DType::kI32) fail_unsupported_dtype(kConv, 1, "u", u.dtype, "int32");
  require_rank(kConv, 1, "u", u, 5, "[4, 4, M/ob, C/2, ob] (int8_winograd_weight_transform)");
  const int64_t c = x.shape[1] * x.shape[4], m = u.shape[2] * u.shape[4];
  if (x.shape[4] % 2 != 0 || u.shape[0] != 4 || u.shape[1] != 4 || u.shape[3] * 2 != c) {
    fail_input(kConv, 1, "u", "does not hold the 4x4 transformed weights of x's " + std::to_string(c) + " channels in pairs");
  }
  const char* names[2] = {"bias", "scale"};
  for (int i = 2; i < 4; ++i) {
    if (in[i].dtype != (i == 3 ? DType::kF32 : DType::kI32)) fail_unsupported_dtype(kConv, i, names[i - 2], in[i].dtype, i == 3 ? "float32" : "int32");
    if (in[i].shape != Shape{m}) fail_input(kConv, i, names[i - 2], "must be [M] = [" + std::to_string(m) + "]");
  }
  const auto& p = ints_of_size(kConv, attrs, "pads", 4);
  const int64_t oh = sliding_output_size(kConv, 0, x.shape[2], 3, 1, 1, p[0], p[2], false);
  const int64_t ow = sliding_output_size(kConv, 1, x.shape[3], 3, 1, 1, p[1], p[3], false);
  return {{int8_conv::output_dtype(kConv, attrs), {x.shape[0], u.shape[2], oh, ow, u.shape[4]}}};
}

std::vector<NDArray> reference_conv(const std::vector<NDArray>& in, const Attrs& attrs, const std::vector<TensorType>& out) {
  const Shape &xs = in[0].shape(), &us = in[1].shape(), &os = out[0].shape;
  const int64_t N = xs[0], CB = xs[1], H = xs[2], W = xs[3], ib = xs[4], MB = us[2], Q = us[3], ob = us[4];
  const int64_t OH = os[2], OW = os[3];
  const auto& p = attrs.get_ints("pads");
  const int64_t xzp = attrs.get_int("x_zero_point");
  auto x = in[0].data<uint8_t>();
  auto uw = in[1].data<int32_t>();
  auto bias = in[2].data<int32_t>();
  auto scale = in[3].data<float>();
  auto u_at = [&](int e, int nu, int64_t m, int64_t q, int half) -> int64_t {
    const auto word = static_cast<uint32_t>(uw[(((e * 4 + nu) * MB + m / ob) * Q + q) * ob + m % ob]);
    return static_cast<int16_t>(static_cast<uint16_t>(word >> (16 * half)));
  };
  NDArray y = NDArray::empty(DType::kU8, os);
  auto o = y.mutable_data<uint8_t>();
  std::vector<int64_t> v(static_cast<size_t>(16 * Q * 2));  // V[e, nu] per (q, half) of one tile
  for (int64_t n = 0; n < N; ++n)
    for (int64_t ty = 0; ty < (OH + 1) / 2; ++ty)
      for (int64_t tx = 0; tx < (OW + 1) / 2; ++tx) {
        for (int64_t q = 0; q < Q; ++q)
          for (int half = 0; half < 2; ++half) {
            const int64_t c = channel_of(q, half, ib);
            int64_t d[4][4];
            for (int r = 0; r < 4; ++r)
              for (int s = 0; s < 4; ++s) {
                const int64_t iy = 2 * ty - p[0] + r, ix = 2 * tx - p[1] + s;
                const bool inside = iy >= 0 && iy < H && ix >= 0 && ix < W;
                d[r][s] = inside ? x[(((n * CB + c / ib) * H + iy) * W + ix) * ib + c % ib] - xzp : 0;
              }
            for (int e = 0; e < 4; ++e)
              for (int nu = 0; nu < 4; ++nu) {
                int64_t t = 0;
                for (int r = 0; r < 4; ++r)
                  for (int s = 0; s < 4; ++s) t += bt(e, r) * d[r][s] * bt(nu, s);
                v[static_cast<size_t>(((e * 4 + nu) * Q + q) * 2 + half)] = t;
              }
          }
        for (int64_t m = 0; m < MB * ob; ++m) {
          int64_t mt[4][4];
          for (int e = 0; e < 4; ++e)
            for (int nu = 0; nu < 4; ++nu) {
              int64_t s = 0;
              for (int64_t q = 0; q < Q; ++q)
                for (int half = 0; half < 2; ++half) s += u_at(e, nu, m, q, half) * v[static_cast<size_t>(((e * 4 + nu) * Q + q) * 2 + half)];
              mt[e][nu] = s;
            }
          for (int r = 0; r < 2; ++r)
            for (int s = 0; s < 2; ++s) {
              const int64_t oy = 2 * ty + r, ox = 2 * tx + s;
              if (oy >= OH || ox >= OW) continue;
              int64_t total = 0;
              for (int e = 0; e < 4; ++e)
                for (int nu = 0; nu < 4; ++nu) total += at(r, e) * mt[e][nu] * at(s, nu);
              // total = 4 * the direct sum exactly (G2 = 2 G on both sides).
              o[(((n * MB + m / ob) * OH + oy) * OW + ox) * ob + m % ob] = int8_conv::requantize_one(total / 4, bias[m], scale[m], attrs);
            }
        }
      }
  return {int8_conv::finish_output(std::move(y), attrs)};
}

}  // namespace

KILN_REGISTER_OP(int8_winograd_weight_transform) {
  OpDef d;
  d.name = kTransform;
  d.doc = "s8 3x3 conv weights [M, C, 3, 3] -> the int8 Winograd F(2x2, 3x3) weights, s16 pairs [4, 4, M/ob, C/2, ob]";
  d.min_inputs = d.max_inputs = 1;
  d.attrs = {{"ob", AttrKind::kInt, AttrValue(int64_t{16}), "output channels per block"},
             {"ib", AttrKind::kInt, AttrValue(int64_t{16}), "input channels per block of the convolution's input"}};
  d.infer_type = infer_transform;
  d.reference = reference_transform;
  d.pattern = OpPattern::kOpaque;
  return with_arity_check(std::move(d));
}

KILN_REGISTER_OP(int8_conv2d_winograd) {
  OpDef d;
  d.name = kConv;
  d.doc = "u8 x s8 3x3 stride-1 convolution by Winograd F(2x2, 3x3) in exact integers, requantize epilogue, u8 NCHW[ob]c";
  d.min_inputs = d.max_inputs = 4;
  d.attrs = {};
  for (const AttrSpec& a : int8_conv::requantize_attrs()) {
    if (a.name != "strides" && a.name != "dilations") d.attrs.push_back(a);
  }
  int8_conv::add_dequantize_attrs(d.attrs);
  d.infer_type = infer_conv;
  d.reference = reference_conv;
  d.pattern = OpPattern::kOutEWiseFusable;
  return with_arity_check(std::move(d));
}

}  // namespace kiln::ir::ops
