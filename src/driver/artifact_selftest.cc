// Builds, loads and runs a one-kernel artifact (see artifact_selftest.h).
#include "kiln/driver/artifact_selftest.h"

#include <unistd.h>

#include <chrono>
#include <cstdio>
#include <exception>
#include <filesystem>
#include <vector>

#include "kiln/codegen/llvm_module.h"
#include "kiln/codegen/target.h"
#include "kiln/driver/artifact.h"
#include "kiln/runtime/c_api.h"
#include "kiln/tir/lower.h"
#include "kiln/tir/schedule.h"
#include "kiln/tir/tensor.h"

namespace kiln::driver {
namespace {

namespace fs = std::filesystem;
constexpr int64_t kSize = 64;

std::string run_artifact_check(const std::string& path) {
  KilnModule* module = nullptr;
  KilnExecutor* exec = nullptr;
  auto fail = [&](const std::string& step) {
    const std::string message = step + ": " + kiln_get_last_error();
    kiln_executor_free(exec);
    kiln_module_free(module);
    return message;
  };
  if (kiln_module_load(path.c_str(), &module) != 0) return fail("loading");
  if (kiln_executor_create(module, &exec) != 0) return fail("creating an executor");
  std::vector<float> x(kSize);
  for (int64_t i = 0; i < kSize; ++i) x[i] = static_cast<float>(i) - 20.5f;
  int64_t shape[1] = {kSize};
  DLTensor t{};
  t.data = x.data();
  t.device = {kDLCPU, 0};
  t.ndim = 1;
  t.dtype = DLDataType{kDLFloat, 32, 1};
  t.shape = shape;
  if (kiln_executor_set_input(exec, 0, &t) != 0) return fail("setting the input");
  if (kiln_executor_run(exec) != 0) return fail("running");
  const DLTensor* y = nullptr;
  if (kiln_executor_output_view(exec, 0, &y) != 0) return fail("reading the output");
  const float* got = static_cast<const float*>(y->data);
  std::string error;
  for (int64_t i = 0; i < kSize && error.empty(); ++i) {
    const float expected = x[i] * 2.0f + 1.0f;
    if (got[i] != expected) {
      error = "wrong result at index " + std::to_string(i) + ": " + std::to_string(got[i]) + " instead of " +
              std::to_string(expected);
    }
  }
  kiln_executor_free(exec);
  kiln_module_free(module);
  return error;
}

}  // namespace

ArtifactSelfTest self_test_artifact() {
  ArtifactSelfTest result;
  fs::path dir;
  try {
    dir = fs::temp_directory_path() / ("kiln-selftest-" + std::to_string(getpid()));
    fs::create_directories(dir);
    const auto start = std::chrono::steady_clock::now();
    const codegen::Target& target = codegen::host_target();
    tir::Tensor a = tir::placeholder({kSize}, ir::DType::kF32, "A");
    tir::Tensor b = tir::compute({kSize}, [&](const std::vector<tir::Var>& i) { return a(i[0]) * 2.0f + 1.0f; },
                                 "B", {"i"});
    tir::Schedule s({b});
    codegen::LLVMModule module(target, "kiln_selftest");
    module.add_prim_func(tir::lower(s, {a, b}, "kiln_selftest_scale"));
    ArtifactBuilder builder;
    const int32_t x = builder.add_input("x", ir::DType::kF32, {kSize});
    const int32_t y = builder.add_output("y", ir::DType::kF32, {kSize});
    builder.add_kernel("kiln_selftest_scale", "multiply+add", {x, y});
    builder.add_object(module.object_code());
    const std::string path = (dir / "selftest.so").string();
    const ArtifactSummary summary = write_artifact(builder, target, path, {});
    const std::string error = run_artifact_check(path);
    const double ms = std::chrono::duration<double, std::milli>(std::chrono::steady_clock::now() - start).count();
    if (error.empty()) {
      result.ok = true;
      char line[160];
      std::snprintf(line, sizeof line, "built, loaded and ran a one-kernel artifact for %s (%s) in %.0f ms",
                    target.triple.c_str(), target.cpu.c_str(), ms);
      result.detail = line;
    } else {
      result.detail = "the artifact linked by `" + summary.link_command + "` failed: " + error;
    }
  } catch (const std::exception& e) {
    result.detail = std::string("building the artifact failed: ") + e.what();
  }
  std::error_code ec;
  if (!dir.empty()) fs::remove_all(dir, ec);
  return result;
}

}  // namespace kiln::driver
