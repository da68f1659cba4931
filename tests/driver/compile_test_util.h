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

namespace kiln::testing {

// Loads the artifact, sets `inputs` by index, runs once, copies every output out.
inline std::vector<ir::NDArray> run_compiled(const std::string& path, const std::vector<ir::NDArray>& inputs,
                                             int threads = -1) {
  namespace rt = kiln::runtime;
  if (threads > 0) kiln_set_num_threads(threads);
  rt::Module m = rt::Module::load(path);
  rt::Executor e(m);
  std::vector<std::vector<int64_t>> shapes;
  for (const ir::NDArray& in : inputs) shapes.push_back(in.type().shape);
  for (size_t i = 0; i < inputs.size(); ++i) {
    DLTensor t{};
    t.data = const_cast<void*>(inputs[i].raw_data());
    t.device = {kDLCPU, 0};
    t.ndim = static_cast<int32_t>(shapes[i].size());
    t.dtype = driver::to_dl_dtype(inputs[i].dtype());
    t.shape = shapes[i].data();
    e.set_input(static_cast<int32_t>(i), t);
  }
  e.run();
  std::vector<ir::NDArray> outs;
  for (int32_t o = 0; o < m.num_outputs(); ++o) {
    const DLTensor& y = e.output(o);
    ir::Shape shape(y.shape, y.shape + y.ndim);
    ir::DType dtype = ir::DType::kF32;
    bool known = false;
    for (ir::DType d : {ir::DType::kF32, ir::DType::kF64, ir::DType::kF16, ir::DType::kBF16, ir::DType::kI8,
                        ir::DType::kU8, ir::DType::kI16, ir::DType::kI32, ir::DType::kI64, ir::DType::kBool}) {
      const DLDataType dl = driver::to_dl_dtype(d);
      if (dl.code == y.dtype.code && dl.bits == y.dtype.bits && dl.lanes == y.dtype.lanes) {
        dtype = d;
        known = true;
      }
    }
    if (!known) {
      ADD_FAILURE() << "run_compiled: unexpected output dtype code " << int(y.dtype.code) << " bits " << int(y.dtype.bits);
      continue;
    }
    outs.push_back(ir::NDArray::empty(dtype, shape));
    const size_t bytes = static_cast<size_t>(outs.back().numel()) * ir::dtype_size(dtype);
    std::memcpy(outs.back().mutable_raw_data(), static_cast<const char*>(y.data) + y.byte_offset, bytes);
  }
  return outs;
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
