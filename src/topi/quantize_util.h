// Expression helpers shared by the quantized operators' computes (src/topi/quantize*.cc): reading
// a per-tensor or per-axis quantization parameter, the rounding rule of docs/int8.md (f32 round
// half to even, clamped to +-2^30, converted to i32), the final clamp to a quantized dtype, and an
// operand as i32 minus its zero point.
#ifndef KILN_SRC_TOPI_QUANTIZE_UTIL_H_
#define KILN_SRC_TOPI_QUANTIZE_UTIL_H_

#include <string>
#include <vector>

#include "kiln/ir/tensor_type.h"
#include "kiln/tir/tensor.h"

namespace kiln::topi {

// param[] / param[0] (a scalar or [1]) or param[i[axis]] (per axis).
tir::Expr quant_param_at(const tir::Tensor& param, const std::vector<tir::Var>& i, int64_t axis);
// i32(clamp(round_half_even(v), -2^30, 2^30)) for an f32 v.
tir::Expr round_to_i32(const tir::Expr& v);
// An i32 value clamped to [max(lo, dtype min), min(hi, dtype max)] and cast to `dt`.
tir::Expr clamp_to(ir::DType dt, const tir::Expr& v, int64_t lo, int64_t hi);
// i32(t) - i32(zero_point) with the zero point per tensor or along `axis` of t.
tir::Tensor shifted_i32(const tir::Tensor& t, const tir::Tensor& zero_point, int64_t axis, const std::string& name);

}  // namespace kiln::topi

#endif  // KILN_SRC_TOPI_QUANTIZE_UTIL_H_
