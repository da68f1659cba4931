// Runs one operator's generated kernel (topi::build_op_kernel -> LLVM JIT on the host) on random
// inputs and compares every output element with the op's reference implementation
// (ir::OpDef::reference) within |got - want| <= atol + rtol * |want|, printing the first
// mismatches (flat index, actual, expected).
#ifndef KILN_TESTS_TOPI_TOPI_TEST_UTIL_H_
#define KILN_TESTS_TOPI_TOPI_TEST_UTIL_H_

#include <dlpack/dlpack.h>
#include <gtest/gtest.h>

#include <cmath>
#include <optional>
#include <random>
#include <sstream>
#include <string>
#include <vector>

#include "kiln/codegen/llvm_module.h"
#include "kiln/codegen/target.h"
#include "kiln/ir/ndarray.h"
#include "kiln/ir/op.h"
#include "kiln/tir/stmt.h"
#include "kiln/topi/build.h"

namespace kiln::topi::testing {

// How an input's random values are drawn.
struct Dist {
  enum Kind { kUniform, kPositive, kNonzero, kIndex, kBool } kind = kUniform;
  double lo = -2, hi = 2;  // kUniform/kPositive range; kNonzero: |v| in [lo, hi]; kIndex: [lo, hi)
  static Dist uniform(double lo = -2, double hi = 2) { return {kUniform, lo, hi}; }
  static Dist positive(double lo = 0.1, double hi = 3) { return {kPositive, lo, hi}; }
  static Dist nonzero(double lo = 0.5, double hi = 2) { return {kNonzero, lo, hi}; }
  static Dist index(int64_t lo, int64_t hi) { return {kIndex, static_cast<double>(lo), static_cast<double>(hi)}; }
  static Dist boolean() { return {kBool, 0, 1}; }
};

struct Tolerance {
  double rtol = 1e-5;
  double atol = 1e-6;
};

// For f32 sums of k products against the double reference: rtol 1e-4, atol growing as sqrt(k).
inline Tolerance sum_tol(int64_t k) { return {1e-4, 1e-5 * std::sqrt(static_cast<double>(k)) * 4}; }

inline DLDataType dl_type(ir::DType dt) {
  switch (dt) {
    case ir::DType::kF32: return {kDLFloat, 32, 1};
    case ir::DType::kF64: return {kDLFloat, 64, 1};
    case ir::DType::kF16: return {kDLFloat, 16, 1};
    case ir::DType::kBF16: return {kDLBfloat, 16, 1};
    case ir::DType::kI8: return {kDLInt, 8, 1};
    case ir::DType::kU8: return {kDLUInt, 8, 1};
    case ir::DType::kI16: return {kDLInt, 16, 1};
    case ir::DType::kI32: return {kDLInt, 32, 1};
    case ir::DType::kI64: return {kDLInt, 64, 1};
    case ir::DType::kBool: return {kDLUInt, 8, 1};
    case ir::DType::kU16: return {kDLUInt, 16, 1};
    case ir::DType::kU32: return {kDLUInt, 32, 1};
    case ir::DType::kU64: return {kDLUInt, 64, 1};
  }
  return {kDLFloat, 32, 1};
}

// A DLTensor view of an NDArray (the array and `shape` storage must outlive it).
inline DLTensor dl_view(ir::NDArray& a, std::vector<int64_t>& shape) {
  shape = a.shape();
  DLTensor t{};
  t.data = a.numel() == 0 ? nullptr : a.mutable_raw_data();
  t.device = {kDLCPU, 0};
  t.ndim = static_cast<int32_t>(shape.size());
  t.dtype = dl_type(a.dtype());
  t.shape = shape.data();
  t.strides = nullptr;
  t.byte_offset = 0;
  return t;
}

inline ir::NDArray random_array(const ir::TensorType& type, const Dist& dist, std::mt19937& rng) {
  ir::NDArray a = ir::NDArray::empty(type.dtype, type.shape);
  const bool is_int = !ir::is_float(type.dtype) && type.dtype != ir::DType::kBool;
  std::uniform_real_distribution<double> u(dist.lo, dist.hi);
  for (int64_t i = 0; i < a.numel(); ++i) {
    double v = 0;
    switch (dist.kind) {
      case Dist::kUniform:
      case Dist::kPositive: v = u(rng); break;
      case Dist::kNonzero: v = u(rng) * (rng() % 2 ? 1 : -1); break;
      case Dist::kIndex: v = std::floor(u(rng)); break;
      case Dist::kBool: v = static_cast<double>(rng() % 2); break;
    }
    if (is_int) {
      v = std::round(v * (dist.kind == Dist::kIndex ? 1 : 20));
      if (dist.kind == Dist::kNonzero && v == 0) v = 1;
      if (type.dtype == ir::DType::kU8) v = std::fabs(v);
    }
    a.set_from_double(i, v);
  }
  return a;
}

struct OpCase {
  std::string op;
  std::vector<ir::TensorType> inputs;
  ir::Attrs attrs;
  std::vector<Dist> dists;  // per input; missing entries: uniform
  Tolerance tol;
  std::optional<Knobs> knobs;  // empty: the target's defaults
};

inline std::string describe(const OpCase& c) {
  std::ostringstream s;
  s << c.op << "(";
  for (size_t i = 0; i < c.inputs.size(); ++i) s << (i ? ", " : "") << c.inputs[i].to_string();
  s << ")";
  for (const auto& [k, v] : c.attrs.values()) s << " " << k << "=" << ir::attr_value_to_string(v);
  return s.str();
}

// Builds, runs and compares; returns the number of mismatching elements (reported via ADD_FAILURE).
inline int64_t check_op(const OpCase& c, uint32_t seed = 1) {
  SCOPED_TRACE(describe(c));
  const ir::OpDef& def = ir::OpRegistry::global().get(c.op);
  const ir::Attrs attrs = ir::OpRegistry::global().validate_attrs(def, c.attrs);
  const std::vector<ir::TensorType> out_types = def.infer_type(c.inputs, attrs);
  std::mt19937 rng(seed);
  std::vector<ir::NDArray> inputs;
  for (size_t i = 0; i < c.inputs.size(); ++i) {
    inputs.push_back(random_array(c.inputs[i], i < c.dists.size() ? c.dists[i] : Dist::uniform(), rng));
  }
  const std::vector<ir::NDArray> want = def.reference(inputs, attrs, out_types);

  const codegen::Target& target = codegen::host_target();
  OpKernelOptions options;
  options.knobs = c.knobs;
  tir::PrimFunc f = build_op_kernel(c.op, c.inputs, c.attrs, target, options);
  codegen::LLVMModule module(target, "topi_test");
  module.add_prim_func(f);
  codegen::JitModule jit(std::move(module));
  std::vector<ir::NDArray> outputs;
  for (const ir::TensorType& t : out_types) outputs.push_back(ir::NDArray::empty(t.dtype, t.shape));
  std::vector<std::vector<int64_t>> shapes(inputs.size() + outputs.size());
  std::vector<DLTensor> args;
  for (size_t i = 0; i < inputs.size(); ++i) args.push_back(dl_view(inputs[i], shapes[i]));
  for (size_t i = 0; i < outputs.size(); ++i) args.push_back(dl_view(outputs[i], shapes[inputs.size() + i]));
  jit.run(f->name, args);

  int64_t bad = 0;
  for (size_t o = 0; o < outputs.size(); ++o) {
    EXPECT_EQ(outputs[o].type(), want[o].type());
    for (int64_t i = 0; i < want[o].numel(); ++i) {
      const double got = outputs[o].get_as_double(i), exp = want[o].get_as_double(i);
      const bool ok = (std::isnan(exp) && std::isnan(got)) || got == exp ||
                      std::fabs(got - exp) <= c.tol.atol + c.tol.rtol * std::fabs(exp);
      if (!ok) {
        if (bad < 5) {
          ADD_FAILURE() << "output " << o << " index " << i << ": actual " << got << ", expected " << exp
                        << " (rtol " << c.tol.rtol << ", atol " << c.tol.atol << ")";
        }
        ++bad;
      }
    }
  }
  if (bad > 0) ADD_FAILURE() << bad << " mismatching elements";
  return bad;
}

inline ir::TensorType tt(std::vector<int64_t> shape, ir::DType dt = ir::DType::kF32) {
  return ir::TensorType{dt, std::move(shape)};
}

}  // namespace kiln::topi::testing

#endif  // KILN_TESTS_TOPI_TOPI_TEST_UTIL_H_
