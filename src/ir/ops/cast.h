// Element-type conversion of whole arrays (the `cast` operator's kernel), shared with the heavy
// float kernels that compute f16/bf16 by converting to f32 and back.
#ifndef KILN_IR_OPS_CAST_H_
#define KILN_IR_OPS_CAST_H_

#include "kiln/ir/ndarray.h"

namespace kiln::ir::ops {

// Converts every element of `a` to `dtype` with ONNX Cast semantics: float -> integer truncates
// toward zero (NaN -> 0, out-of-range values saturate: ONNX leaves them undefined), integer ->
// integer wraps modulo 2^bits, anything -> bool is `!= 0`, float -> f16/bf16 rounds to nearest even.
// Returns `a` itself when it already has `dtype`.
NDArray cast_array(const NDArray& a, DType dtype);

// For kernels written for f32/f64: the dtype they compute in (f16/bf16 -> f32).
inline DType compute_dtype(DType dtype) { return dtype == DType::kF64 ? DType::kF64 : DType::kF32; }

}  // namespace kiln::ir::ops

#endif  // KILN_IR_OPS_CAST_H_
