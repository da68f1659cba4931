// A small real artifact for the artifact/runtime tests: kernels built with the tensor-expression
// API, lowered, compiled to an object file by the LLVM code generator, and written with
// driver::write_artifact. The model (shapes [16, 64], f32):
//   T1 = relu(X + W)     kernel add_relu (rows in parallel), W a constant
//   T2 = T1 * 2          kernel scale2
//   T3 = T2 * 2          kernel scale2 again (same symbol, other tensors)
//   Y  = T3 + X          kernel add
// so Y = 4 * relu(X + W) + X. T1 and T3 are never live together: the memory planner puts them
// in the same bytes (3 intermediates, 2 buffers' worth of memory).
#ifndef KILN_TESTS_DRIVER_ARTIFACT_TEST_UTIL_H_
#define KILN_TESTS_DRIVER_ARTIFACT_TEST_UTIL_H_

#include <elf.h>

#include <cstring>
#include <filesystem>
#include <fstream>
#include <iterator>
#include <string>
#include <utility>
#include <vector>

#include "kiln/codegen/llvm_module.h"
#include "kiln/codegen/target.h"
#include "kiln/driver/artifact.h"
#include "kiln/ir/ndarray.h"
#include "kiln/tir/lower.h"
#include "kiln/tir/schedule.h"
#include "kiln/tir/tensor.h"

namespace kiln::testing {

inline constexpr int64_t kRows = 16, kCols = 64;

inline float input_pattern(int64_t i, int seed) {
  return static_cast<float>(((i * 7 + seed * 13) % 23) - 11) / 4.0f;
}
inline float weight_value(int64_t i) { return static_cast<float>((i % 5) - 2) * 0.5f; }

// Y for input X, computed in plain C++.
inline std::vector<float> reference_output(const std::vector<float>& x) {
  std::vector<float> y(x.size());
  for (size_t i = 0; i < x.size(); ++i) {
    const float t1 = std::max(x[i] + weight_value(static_cast<int64_t>(i)), 0.0f);
    y[i] = (t1 * 2.0f) * 2.0f + x[i];
  }
  return y;
}

// Object code of the three kernels for `target`, and their names.
inline std::vector<char> test_kernel_object(const codegen::Target& target) {
  using namespace kiln::tir;  // NOLINT
  const std::vector<int64_t> shape{kRows, kCols};
  const int lanes = std::max(1, target.vector_lanes(32));
  codegen::LLVMModule module(target, "artifact_test_kernels");
  {
    Tensor a = placeholder(shape, DType::kF32, "A");
    Tensor b = placeholder(shape, DType::kF32, "B");
    Tensor c = compute(shape, [&](const std::vector<Var>& i) { return max(a(i[0], i[1]) + b(i[0], i[1]), 0.0f); },
                       "C", {"i", "j"});
    Schedule s({c});
    s[c].parallel(s[c].axis(0));
    auto [o, in] = s[c].split(s[c].axis(1), lanes);
    s[c].vectorize(in);
    module.add_prim_func(lower(s, {a, b, c}, "add_relu"));
  }
  {
    Tensor a = placeholder(shape, DType::kF32, "A");
    Tensor c = compute(shape, [&](const std::vector<Var>& i) { return a(i[0], i[1]) * 2.0f; }, "C", {"i", "j"});
    Schedule s({c});
    module.add_prim_func(lower(s, {a, c}, "scale2"));
  }
  {
    Tensor a = placeholder(shape, DType::kF32, "A");
    Tensor b = placeholder(shape, DType::kF32, "B");
    Tensor c = compute(shape, [&](const std::vector<Var>& i) { return a(i[0], i[1]) + b(i[0], i[1]); }, "C",
                       {"i", "j"});
    Schedule s({c});
    module.add_prim_func(lower(s, {a, b, c}, "add"));
  }
  return module.object_code();
}

// The builder of the test model; `symbols` renames the kernels (to test a missing symbol).
inline driver::ArtifactBuilder test_builder(const codegen::Target& target, const std::string& add_symbol = "add") {
  driver::ArtifactBuilder b;
  const ir::Shape shape{kRows, kCols};
  ir::NDArray w = ir::NDArray::empty(ir::DType::kF32, shape);
  for (int64_t i = 0; i < w.numel(); ++i) w.set_from_double(i, weight_value(i));
  const int32_t x = b.add_input("x", ir::DType::kF32, shape);
  const int32_t wid = b.add_constant("w", w);
  const int32_t t1 = b.add_intermediate("t1", ir::DType::kF32, shape);
  const int32_t t2 = b.add_intermediate("t2", ir::DType::kF32, shape);
  const int32_t t3 = b.add_intermediate("t3", ir::DType::kF32, shape);
  const int32_t y = b.add_output("y", ir::DType::kF32, shape);
  // Flop counts per call as the textbook gives them (add + max, one multiply, one add per element).
  const uint64_t n = kRows * kCols;
  b.add_kernel("add_relu", "add+relu", {x, wid, t1}, 2 * n);
  b.add_kernel("scale2", "multiply", {t1, t2}, n);
  b.add_kernel("scale2", "multiply", {t2, t3}, n);
  b.add_kernel(add_symbol, "add", {t3, x, y}, n);
  b.add_object(test_kernel_object(target));
  return b;
}

inline driver::ArtifactSummary write_test_artifact(const std::string& path,
                                                   const codegen::Target& target = codegen::host_target(),
                                                   const driver::ArtifactOptions& options = {},
                                                   const std::string& add_symbol = "add") {
  return driver::write_artifact(test_builder(target, add_symbol), target, path, options);
}

inline std::string read_all(const std::string& path) {
  std::ifstream in(path, std::ios::binary);
  return std::string((std::istreambuf_iterator<char>(in)), std::istreambuf_iterator<char>());
}

inline void write_all(const std::string& path, const std::string& bytes) {
  std::ofstream out(path, std::ios::binary | std::ios::trunc);
  out.write(bytes.data(), static_cast<std::streamsize>(bytes.size()));
}

// File offset and size of an ELF section (plain <elf.h>; the runtime's reader is not used, so
// the tests check it independently). {0, 0} when absent.
inline std::pair<uint64_t, uint64_t> section_range(const std::string& bytes, const std::string& name) {
  Elf64_Ehdr eh;
  std::memcpy(&eh, bytes.data(), sizeof eh);
  std::vector<Elf64_Shdr> sh(eh.e_shnum);
  std::memcpy(sh.data(), bytes.data() + eh.e_shoff, sh.size() * sizeof(Elf64_Shdr));
  const char* names = bytes.data() + sh[eh.e_shstrndx].sh_offset;
  for (const auto& h : sh) {
    if (name == names + h.sh_name) return {h.sh_offset, h.sh_size};
  }
  return {0, 0};
}

}  // namespace kiln::testing

#endif  // KILN_TESTS_DRIVER_ARTIFACT_TEST_UTIL_H_
