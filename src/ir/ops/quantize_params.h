// Shared pieces of the quantized operators (quantize.cc, quantize_qnn.cc): validation of a
// quantization parameter (scale or zero point: per tensor, or per axis as a 1-D tensor of the
// axis' length), the per-element parameter index of the reference loops, and the rounding rule of
// docs/int8.md ("Ops and rounding rule"): f32 round half to even, clamped to +-2^30 before the
// conversion to an integer so that the conversion is always defined.
#ifndef KILN_SRC_IR_OPS_QUANTIZE_PARAMS_H_
#define KILN_SRC_IR_OPS_QUANTIZE_PARAMS_H_

#include <cmath>
#include <cstdint>
#include <limits>
#include <string>

#include "ir/ops/op_util.h"

namespace kiln::ir::ops {

// |round(v)| is clamped to this before converting to i32 (the compiled kernels do the same).
inline constexpr float kQuantRoundLimit = 1073741824.0f;  // 2^30

// True for the element types a quantized tensor may have (i8 u8 i16 u16).
bool is_quantized_dtype(DType dtype);
// Smallest and largest value of an integer dtype.
int64_t dtype_min_int(DType dtype);
int64_t dtype_max_int(DType dtype);

// Validates `param` (input `index` named `name` of `op`) as a quantization parameter of a tensor of
// shape `data`: a scalar ([] or [1]) or a 1-D tensor of length data[axis] (per axis). Throws
// UserError naming the input. Returns the number of values (1 or data[axis]).
int64_t check_quant_param(const std::string& op, int index, const std::string& name, const TensorType& param,
                          const Shape& data, int64_t axis);

// Inner element count after `axis` and the axis length, so that flat element i of `data` uses
// parameter (i / inner) % size when the parameter is per axis.
struct ParamIndexer {
  int64_t inner = 1, size = 1;
  bool per_axis = false;
  ParamIndexer(const Shape& data, int64_t axis, int64_t count);
  int64_t operator()(int64_t flat) const { return per_axis ? (flat / inner) % size : 0; }
};

// The rounding rule: round half to even in f32, NaN -> 0, clamped to +-2^30.
inline int64_t round_quant(float v) {
  if (std::isnan(v)) return 0;
  float r = std::nearbyint(v);  // default rounding mode: half to even
  if (r < -kQuantRoundLimit) r = -kQuantRoundLimit;
  if (r > kQuantRoundLimit) r = kQuantRoundLimit;
  return static_cast<int64_t>(r);
}

inline int64_t clamp_int(int64_t v, int64_t lo, int64_t hi) { return v < lo ? lo : (v > hi ? hi : v); }

}  // namespace kiln::ir::ops

#endif  // KILN_SRC_IR_OPS_QUANTIZE_PARAMS_H_
