// The test arrays of npy_test.cc and npz_test.cc: element i of the array of `dtype` is
// pattern(dtype, i), which npy_check.py computes too.
#ifndef KILN_TESTS_IR_NPY_PATTERN_H_
#define KILN_TESTS_IR_NPY_PATTERN_H_

#include "kiln/ir/ndarray.h"

namespace kiln::ir::testing {

inline const Shape kPatternShape = {2, 3, 4};

// npy_check.py's pattern(): element i of the test array of `dtype`.
inline double pattern(DType dtype, int64_t i) {
  switch (dtype) {
    case DType::kBool: return i % 3 == 0;
    case DType::kU8: return (i * 7) % 200;
    case DType::kU16: return (i * 7) % 200 + 60000;
    case DType::kU32: return (i * 7) % 200 + 4000000000.0;
    case DType::kU64: return (i * 7) % 200 + 4503599627370496.0;  // 2^52 + a small integer: exact in double
    case DType::kF32:
    case DType::kF64:
    case DType::kF16:
    case DType::kBF16: return (i - 5) * 0.25;
    case DType::kI64: return (i % 7) - 3 + i * 1000;
    default: return (i % 7) - 3;
  }
}

inline NDArray pattern_array(DType dtype, Shape shape = kPatternShape) {
  NDArray a = NDArray::empty(dtype, shape);
  for (int64_t i = 0; i < a.numel(); ++i) a.set_from_double(i, pattern(dtype, i));
  return a;
}

}  // namespace kiln::ir::testing

#endif  // KILN_TESTS_IR_NPY_PATTERN_H_
