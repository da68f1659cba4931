// Fast int8 kernels (docs/int8.md, "Integer kernels"): u8 activations x s8 weights with i32
// accumulation through the byte dot product (tir::dot4_u8s8: vpdpbusd / vpmaddubsw / sdot), on
// weights packed into i32 words of 4 consecutive reduction bytes, and a requantizing epilogue that
// writes the u8 output once:
//
//   acc[m, n] = sum_k A[m, k] * W[k, n]                      (u8 x s8, exact i32)
//   y[m, n]   = acc - a_zero_point * colsum[n] + bias[n]     (colsum[n] = sum_k W[k, n]:
//                                                             the data zero-point term)
//   out[m, n] = clamp(round_half_even(f32(y) * scale[n]) + out_zero_point, lo, hi)   (u8)
//
// The f32 product is one IEEE multiply of f32(y) (exact for |y| < 2^24) by the f32 scale, rounded
// half to even: the reference does the same operations, so results are bit-exact.
// With a residual (a u8 tensor of the output's shape, e.g. a ResNet shortcut in QDQ form), the
// value before rounding is fma(f32(y), scale[n], f32(res - res_zero_point) * res_scale): one f32
// multiply and one fused multiply-add (llvm.fma), again reproducible bit for bit.
#ifndef KILN_TOPI_INT8_H_
#define KILN_TOPI_INT8_H_

#include <cstdint>

#include "kiln/tir/schedule.h"
#include "kiln/tir/tensor.h"

namespace kiln::topi::int8 {

// W s8 [K, N] -> i32 panels [ceil(N/nb), ceil(K/4), nb]: word (p, k4, j) holds W[4*k4 + b, p*nb + j]
// as byte b (zero past K and N). Constant weights are packed at compile time (FoldConstant).
tir::Tensor pack_matmul_weights(const tir::Tensor& w, int64_t nb);
// colsum[n] = sum_k W[k, n] (i32 [N]) for the data zero-point term.
tir::Tensor weight_column_sums(const tir::Tensor& w);
// True when every weight is in [-64, 64]: then each pair of u8 x s8 products fits in i16 and the
// kernels use the narrow dot product (one vpmaddubsw on AVX2 instead of two).
bool weights_fit_narrow(const int8_t* w, int64_t count);

struct Requantize {
  int32_t a_zero_point = 0;    // activation (u8) zero point
  int32_t out_zero_point = 0;  // output (u8) zero point
  int32_t lo = 0, hi = 255;    // clamp of the quantized output (ReLU: lo = out_zero_point)
  // int8_conv2d only: f32 output f32(q - dequantize_zero_point) * dequantize_scale (the u8 result
  // q dequantized), computed in f32 without the u8 round trip (requantize_dequantized in
  // src/topi/int8_words.h).
  bool dequantize = false;
  float dequantize_scale = 1;
  int32_t dequantize_zero_point = 0;
};

struct Residual {
  tir::Tensor tensor;           // u8, the output's shape; undefined: no residual
  int32_t zero_point = 0;
  float scale = 1;              // residual scale / output scale
};

struct MatmulKnobs {
  int64_t nb = 16;     // panel width (output columns per register tile: i32 lanes x vectors)
  int64_t tile_m = 4;  // rows per register tile
  bool narrow = false; // weights proven in [-64, 64] (weights_fit_narrow)
};

struct Int8Matmul {
  tir::Tensor out;       // u8 [M, N] (int8_matmul_i32: i32)
  tir::Tensor acc;       // i32 [M, N]: the product (register tile)
  tir::Tensor a_words;   // i32 [M, ceil(K/4)]: A's rows as words of 4 bytes
};

// out = requantize(A u8 [M, K] x panels (pack_matmul_weights of a [K, N] W)); colsum, bias i32
// [N], scale f32 [N].
Int8Matmul int8_matmul(const tir::Tensor& a, const tir::Tensor& panels, const tir::Tensor& colsum,
                       const tir::Tensor& bias, const tir::Tensor& scale, int64_t n, const Requantize& rq,
                       const MatmulKnobs& knobs, const Residual& residual = {});
// out = A u8 [M, K] x panels - a_zero_point * colsum, i32 [M, N]: the exact integer product
// sum_k (A - a_zp) * W with the zero point a run-time u8 tensor ([] or [1]; dynamic quantization).
Int8Matmul int8_matmul_i32(const tir::Tensor& a, const tir::Tensor& panels, const tir::Tensor& colsum,
                           const tir::Tensor& a_zero_point, int64_t n, const MatmulKnobs& knobs);
// Register-tiled schedule: (row tile, panel) parallel, acc tile_m x nb in registers with the
// reduction outermost, the requantize epilogue on the tile.
void schedule_int8_matmul(tir::Schedule& s, const Int8Matmul& mm, const MatmulKnobs& knobs);

// ---- blocked int8 convolution (int8_conv2d.cc), groups == 1 ----
// Input u8 NCHW [N, C, H, W] or NCHW[ib]c [N, C/ib, H, W, ib]; weights s8 OIHW [M, C, KH, KW];
// output u8 NCHW[ob]c [N, M/ob, OH, OW, ob] (M % ob == 0), so the next int8 conv reads it in
// place. Padding reads the activation zero point (its (x - zp) term is 0).
struct Conv2dGeometry {
  int64_t stride_h = 1, stride_w = 1, pad_top = 0, pad_left = 0, pad_bottom = 0, pad_right = 0;
  int64_t dilation_h = 1, dilation_w = 1;
};

struct ConvKnobs {
  int64_t ob = 16;      // output channels per block (i32 lanes x vectors)
  int64_t tile_ow = 4;  // output columns per register tile
  bool narrow = false;  // weights proven in [-64, 64]
};

// Weights s8 [M, C, KH, KW] -> i32 [M/ob, ceil(C/4), KH, KW, ob], word = 4 consecutive channels.
tir::Tensor pack_conv_weights(const tir::Tensor& w, int64_t ob);
// colsum[m] = sum over (c, kh, kw) of w[m, c, kh, kw] (i32 [M]).
tir::Tensor conv_weight_sums(const tir::Tensor& w);

struct Int8Conv2d {
  tir::Tensor out;      // u8 [N, M/ob, OH, OW, ob]
  tir::Tensor acc;      // i32, same shape: the product (register tile)
  // The input staging: i32 words [N, ceil(C/4), H + pads, W + pads] (4 channels per word,
  // padded) for an NCHW input or a block size that 4 does not divide; for NCHW[ib]c with 4 | ib,
  // the words are read from the u8 blocks directly (a pixel's ib channels contiguous) and this is
  // the zero-point padded u8 copy [N, C/ib, H + pads, W + pads, ib], or undefined (no padding: the
  // input read in place).
  tir::Tensor x_words;
};

Int8Conv2d int8_conv2d(const tir::Tensor& x, const tir::Tensor& packed_w, const tir::Tensor& colsum,
                       const tir::Tensor& bias, const tir::Tensor& scale, int64_t kh, int64_t kw,
                       const Conv2dGeometry& g, const Requantize& rq, const ConvKnobs& knobs,
                       const Residual& residual = {});
// (n, channel block, output row) parallel; a tile_ow x ob accumulator tile in registers with
// the reduction (channel words, kh, kw) outside it; the requantize epilogue on the tile.
void schedule_int8_conv2d(tir::Schedule& s, const Int8Conv2d& conv, const ConvKnobs& knobs);

// ---- int8 depthwise convolution (int8_depthwise.cc), groups == C == M ----
// Input u8 NCHW[b]c [N, C/b, H, W, b]; weights s8 [C, 1, KH, KW] packed (at compile time when
// constant) to [C/b, KH, KW, b] so a channel block's weights are one vector load; output u8
// [N, C/b, OH, OW, b].
// No byte dot product (each channel has its own weights): u8 x s8 products in i16 (exact:
// |255 * 128| < 2^15) widened to i32 sums, vectorized over the channel block.
struct Int8Depthwise {
  tir::Tensor out;  // u8 [N, C/b, OH, OW, b]
  tir::Tensor acc;  // i32, same shape
  // The tap-pair form (dilation_w 1, stride_w 1 or 2): i32 words [N, C/b, H + pads, J, b] of two
  // u16 halves, the zero-point padded input at columns j*stride_w and j*stride_w + 1, computed per
  // block of output rows; each pair of horizontal taps is one dot2_s16 (vpmaddwd) with `wpairs`.
  // Otherwise: u8 [N, C/b, H + pads, W + pads, b], the zero-point padded input (one i16 multiply
  // per tap).
  tir::Tensor pad;
  tir::Tensor wpairs;  // pair form: i32 [C/b, KH, ceil(KW/2), b], weight taps 2t and 2t+1 (0 past KW)
};

tir::Tensor pack_depthwise_weights(const tir::Tensor& w, int64_t b);
Int8Depthwise int8_depthwise_conv2d(const tir::Tensor& x, const tir::Tensor& packed_w, const tir::Tensor& colsum,
                                    const tir::Tensor& bias, const tir::Tensor& scale, const Conv2dGeometry& g,
                                    const Requantize& rq);
void schedule_int8_depthwise(tir::Schedule& s, const Int8Depthwise& dw, int64_t tile_ow);

}  // namespace kiln::topi::int8

#endif  // KILN_TOPI_INT8_H_
