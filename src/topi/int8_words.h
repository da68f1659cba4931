// Bytes packed into i32 words for the byte dot product (tir::dot4_u8s8): shared by the int8
// matmul and convolution computes (include/kiln/topi/int8.h).
#ifndef KILN_SRC_TOPI_INT8_WORDS_H_
#define KILN_SRC_TOPI_INT8_WORDS_H_

#include <vector>

#include "kiln/tir/expr.h"

namespace kiln::topi::int8 {

inline tir::Expr i32_const(int64_t v) { return tir::make_int(v, tir::Type(tir::DType::kI32)); }

// The 4 bytes b0..b3 (i32 values, low 8 bits used) as one i32 word, b0 in the lowest byte.
inline tir::Expr word_of(const std::vector<tir::Expr>& bytes) {
  tir::Expr w = tir::bit_and(bytes[0], i32_const(0xFF));
  for (int b = 1; b < 4; ++b) w = tir::bit_or(w, tir::shift_left(tir::bit_and(bytes[b], i32_const(0xFF)), i32_const(8 * b)));
  return w;
}

// out = clamp(round_half_even(f32(y) * scale) + out_zero_point, lo, hi) as u8 (y, the corrected
// i32 accumulator; the contract in int8.h). With a residual value `res` (u8, defined):
// round_half_even(fma(f32(y), scale, f32(res - res_zero_point) * res_scale)).
inline tir::Expr requantize_u8(const tir::Expr& y, const tir::Expr& scale, int32_t out_zero_point, int32_t lo, int32_t hi,
                               const tir::Expr& res = tir::Expr(), int32_t res_zero_point = 0, float res_scale = 1) {
  using namespace tir;
  const Type f32(DType::kF32);
  Expr v = cast(f32, y) * scale;
  if (res.defined()) {
    Expr r = cast(f32, cast(Type(DType::kI32), res) - i32_const(res_zero_point)) * make_const(f32, res_scale);
    v = fma(cast(f32, y), scale, r);
  }
  // The rounding rule of the requantize op (src/ir/ops/quantize_params.h): half to even, clamped
  // to +-2^30 before the conversion so that it is always defined.
  const Expr limit = make_const(f32, 1073741824.0);
  Expr q = cast(Type(DType::kI32), min(max(round(v), -limit), limit)) + i32_const(out_zero_point);
  return cast(Type(DType::kU8), min(max(q, i32_const(lo)), i32_const(hi)));
}

// f32(requantize_u8(y, scale, out_zero_point, lo, hi) - dq_zero_point) * dq_scale, the u8 result
// dequantized, with the same f32 operations and results but without the i32/u8 round trip:
// round_half_even(f32(y) * scale) is an integral f32 (or +-inf), so clamping it in f32 to
// [lo - out_zero_point, hi - out_zero_point] (max, then min, like the i32 clamp) and adding
// out_zero_point - dq_zero_point gives exactly f32(q - dq_zero_point) (every value involved is an
// integer of magnitude < 2^24; the +-2^30 clamp before the i32 conversion is subsumed).
inline tir::Expr requantize_dequantized(const tir::Expr& y, const tir::Expr& scale, int32_t out_zero_point, int32_t lo,
                                        int32_t hi, int32_t dq_zero_point, float dq_scale) {
  using namespace tir;
  const Type f32(DType::kF32);
  Expr r = min(max(round(cast(f32, y) * scale), make_const(f32, lo - out_zero_point)), make_const(f32, hi - out_zero_point));
  if (out_zero_point != dq_zero_point) r = r + make_const(f32, out_zero_point - dq_zero_point);
  return r * make_const(f32, dq_scale);
}

}  // namespace kiln::topi::int8

#endif  // KILN_SRC_TOPI_INT8_WORDS_H_
