// Helpers for the operator tests: run an operator the way the graph layer does (attribute
// validation with defaults, type inference (which checks the input count), reference), build small arrays, and compare
// arrays within a tolerance, printing the mismatching indices.
#ifndef KILN_TESTS_IR_OPS_OP_TEST_UTIL_H_
#define KILN_TESTS_IR_OPS_OP_TEST_UTIL_H_

#include <gtest/gtest.h>

#include <cmath>
#include <sstream>
#include <string>
#include <vector>

#include "kiln/ir/attrs.h"
#include "kiln/ir/ndarray.h"
#include "kiln/ir/op.h"
#include "kiln/support/error.h"

namespace kiln::ir::testing {

inline std::vector<TensorType> infer(const std::string& name, const std::vector<TensorType>& inputs,
                                     const Attrs& attrs = {}) {
  const auto& reg = OpRegistry::global();
  const OpDef& op = reg.get(name);
  return op.infer_type(inputs, reg.validate_attrs(op, attrs));
}

inline std::vector<NDArray> run(const std::string& name, const std::vector<NDArray>& inputs, const Attrs& attrs = {}) {
  const auto& reg = OpRegistry::global();
  const OpDef& op = reg.get(name);
  const Attrs full = reg.validate_attrs(op, attrs);
  std::vector<TensorType> types;
  for (const auto& a : inputs) types.push_back(a.type());
  const std::vector<TensorType> out_types = op.infer_type(types, full);
  std::vector<NDArray> outs = op.reference(inputs, full, out_types);
  EXPECT_EQ(outs.size(), out_types.size()) << name;
  for (size_t i = 0; i < outs.size() && i < out_types.size(); ++i) {
    EXPECT_EQ(outs[i].type(), out_types[i]) << name << " output " << i << ": reference and inference disagree";
  }
  return outs;
}

inline NDArray run1(const std::string& name, const std::vector<NDArray>& inputs, const Attrs& attrs = {}) {
  return run(name, inputs, attrs).at(0);
}

inline NDArray make(DType dtype, Shape shape, const std::vector<double>& values) {
  NDArray a = NDArray::empty(dtype, std::move(shape));
  EXPECT_EQ(static_cast<int64_t>(values.size()), a.numel()) << "test data size";
  for (int64_t i = 0; i < a.numel() && i < static_cast<int64_t>(values.size()); ++i) a.set_from_double(i, values[i]);
  return a;
}

inline NDArray f32(Shape shape, const std::vector<double>& values) { return make(DType::kF32, std::move(shape), values); }

// Same type and every element within atol + rtol * |expected| (nan matches nan, inf matches inf).
inline ::testing::AssertionResult all_close(const NDArray& actual, const NDArray& expected, double rtol = 1e-6,
                                            double atol = 1e-6) {
  if (actual.type() != expected.type()) {
    return ::testing::AssertionFailure() << "type " << actual.type().to_string() << ", expected "
                                         << expected.type().to_string();
  }
  std::ostringstream msg;
  int64_t bad = 0;
  for (int64_t i = 0; i < actual.numel(); ++i) {
    const double a = actual.get_as_double(i), e = expected.get_as_double(i);
    bool ok;
    if (std::isnan(e)) ok = std::isnan(a);
    else if (std::isinf(e)) ok = a == e;
    else ok = std::fabs(a - e) <= atol + rtol * std::fabs(e);
    if (!ok && bad++ < 8) msg << "\n  [" << i << "] actual " << a << ", expected " << e;
  }
  if (bad == 0) return ::testing::AssertionSuccess();
  return ::testing::AssertionFailure() << bad << " of " << actual.numel() << " elements differ (rtol " << rtol
                                       << ", atol " << atol << "):" << msg.str();
}

// Runs `fn` and checks it throws UserError of `kind` whose subject and reason mention `needle`.
template <typename Fn>
::testing::AssertionResult throws_user_error(Fn&& fn, UserErrorKind kind, const std::string& needle) {
  try {
    fn();
  } catch (const UserError& e) {
    const std::string text = e.subject() + ": " + e.reason() + " (" + e.hint() + ")";
    if (e.kind() != kind) return ::testing::AssertionFailure() << "wrong kind " << to_string(e.kind()) << ": " << text;
    if (text.find(needle) == std::string::npos) {
      return ::testing::AssertionFailure() << "message lacks '" << needle << "': " << text;
    }
    return ::testing::AssertionSuccess() << text;
  } catch (const std::exception& e) {
    return ::testing::AssertionFailure() << "threw another exception: " << e.what();
  }
  return ::testing::AssertionFailure() << "did not throw";
}

}  // namespace kiln::ir::testing

#endif  // KILN_TESTS_IR_OPS_OP_TEST_UTIL_H_
