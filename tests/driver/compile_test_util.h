// Helpers for the compile driver's tests: run a compiled artifact through libkiln_runtime (the
// C++ wrapper of the C API, as a deployed program would) and compare outputs.
#ifndef KILN_TESTS_DRIVER_COMPILE_TEST_UTIL_H_
#define KILN_TESTS_DRIVER_COMPILE_TEST_UTIL_H_

#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <cstring>
#include <string>
#include <vector>

#include "kiln/driver/artifact.h"
#include "kiln/ir/ndarray.h"
#include "kiln/runtime/kiln_runtime.hpp"
#include "node_suite/compiled_runner.h"

namespace kiln::testing {

// Loads the artifact, sets `inputs` by index, runs once, copies every output out (a gtest failure
// for anything that throws: tools/node_suite/compiled_runner.h).
inline std::vector<ir::NDArray> run_compiled(const std::string& path, const std::vector<ir::NDArray>& inputs,
                                             int threads = -1) {
  return run_artifact_arrays(path, inputs, threads);
}

// max|got - want| / max|want| over all elements, with the worst element reported.
struct Comparison {
  double max_abs_diff = 0, max_abs_ref = 0;
  int64_t worst = -1;
  double rel() const { return max_abs_ref > 0 ? max_abs_diff / max_abs_ref : max_abs_diff; }
};

inline Comparison compare_arrays(const ir::NDArray& got, const ir::NDArray& want) {
  Comparison c;
  EXPECT_EQ(got.type(), want.type());
  if (!(got.type() == want.type())) return c;
  for (int64_t i = 0; i < want.numel(); ++i) {
    const double a = got.get_as_double(i), b = want.get_as_double(i);
    const double d = std::isfinite(a) ? std::abs(a - b) : INFINITY;
    if (d > c.max_abs_diff || c.worst < 0) {
      if (d > c.max_abs_diff) c.max_abs_diff = d;
      if (c.worst < 0 || d >= c.max_abs_diff) c.worst = i;
    }
    c.max_abs_ref = std::max(c.max_abs_ref, std::abs(b));
  }
  return c;
}

// Element-wise |got - want| <= atol + rtol |want|, printing the first mismatches.
inline void expect_close(const ir::NDArray& got, const ir::NDArray& want, double rtol, double atol,
                         const std::string& what) {
  ASSERT_EQ(got.type(), want.type()) << what;
  int reported = 0;
  for (int64_t i = 0; i < want.numel(); ++i) {
    const double a = got.get_as_double(i), b = want.get_as_double(i);
    if (!(std::abs(a - b) <= atol + rtol * std::abs(b))) {
      ADD_FAILURE() << what << ": index " << i << " actual " << a << " expected " << b;
      if (++reported >= 5) return;
    }
  }
}

}  // namespace kiln::testing

#endif  // KILN_TESTS_DRIVER_COMPILE_TEST_UTIL_H_
