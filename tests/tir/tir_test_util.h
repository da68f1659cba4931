// Helpers for tir tests: deterministic random arrays and element-wise comparison that prints the
// first mismatching index with actual and expected values.
#ifndef KILN_TESTS_TIR_TIR_TEST_UTIL_H_
#define KILN_TESTS_TIR_TIR_TEST_UTIL_H_

#include <gtest/gtest.h>

#include <cmath>
#include <cstdint>
#include <functional>
#include <string>

#include "kiln/ir/ndarray.h"

namespace kiln::tir::testing {

inline ir::NDArray random_array(ir::DType dtype, const ir::Shape& shape, uint64_t seed) {
  ir::NDArray a = ir::NDArray::empty(dtype, shape);
  uint64_t x = seed * 6364136223846793005ULL + 1442695040888963407ULL;
  for (int64_t i = 0; i < a.numel(); ++i) {
    x = x * 6364136223846793005ULL + 1442695040888963407ULL;
    const double u = static_cast<double>((x >> 11) & ((1ULL << 53) - 1)) / static_cast<double>(1ULL << 53);
    a.set_from_double(i, ir::is_float(dtype) ? u * 2.0 - 1.0 : std::floor(u * 20.0 - 10.0));
  }
  return a;
}

// expected(i) gives the reference value of flat element i.
inline ::testing::AssertionResult all_close(const ir::NDArray& actual, const std::function<double(int64_t)>& expected,
                                            double tol) {
  for (int64_t i = 0; i < actual.numel(); ++i) {
    const double a = actual.get_as_double(i), e = expected(i);
    if (!(std::fabs(a - e) <= tol * (1.0 + std::fabs(e)))) {
      return ::testing::AssertionFailure() << "mismatch at flat index " << i << ": actual " << a << ", expected " << e
                                           << " (tolerance " << tol << ")";
    }
  }
  return ::testing::AssertionSuccess();
}

}  // namespace kiln::tir::testing

#endif  // KILN_TESTS_TIR_TIR_TEST_UTIL_H_
