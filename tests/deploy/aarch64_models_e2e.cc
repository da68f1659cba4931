// ResNet-50, MobileNetV2 and the BERT-style encoder (scripts/gen_test_models.py, CTest fixture
// test_models) compiled for AArch64 (neoverse-n1: NEON, dotprod, fp16) and run under qemu-user
// with the cross-built libkiln_runtime and kiln-run-npy (tests/deploy/qemu_runner.h), compared
// with PyTorch's saved outputs by the x86-64 test's metric and bound
// (tests/e2e/compile_models_e2e.cc): max|kiln - torch| / max|torch| <= 1e-3.
// KILN_AARCH64_MODELS=resnet50,... runs only those. Skips, saying what to install, without qemu,
// the AArch64 runtime (fixture deploy.build_runtime_aarch64) or the generated models.
#include <gtest/gtest.h>
#include <unistd.h>

#include <chrono>
#include <cmath>
#include <filesystem>

#include "deploy/qemu_runner.h"
#include "driver/compile_test_util.h"
#include "e2e/generated_models.h"
#include "kiln/driver/compile.h"
#include "kiln/ir/npy.h"

namespace kiln::testing {
namespace {

namespace fs = std::filesystem;

struct ModelCase {
  const char* name;
  const char* input_name;
};

class Aarch64Model : public ::testing::TestWithParam<ModelCase> {};

TEST_P(Aarch64Model, MatchesPyTorchUnderQemu) {
  const ModelCase& c = GetParam();
  const char* only = std::getenv("KILN_AARCH64_MODELS");
  if (only && *only &&
      (std::string(",") + only + ",").find(std::string(",") + c.name + ",") == std::string::npos) {
    GTEST_SKIP() << c.name << " not in KILN_AARCH64_MODELS=" << only;
  }
  const Aarch64Setup setup = find_aarch64_setup(std::string(KILN_BINARY_DIR) + "/aarch64-runtime");
  if (!setup.missing.empty()) GTEST_SKIP() << setup.missing;
  const GeneratedModel m = generated_model(c.name, c.input_name);
  if (!m.present()) GTEST_SKIP() << m.missing_reason();
  const fs::path dir = fs::temp_directory_path() / ("kiln-aarch64-" + std::to_string(getpid()) + "-" + c.name);
  fs::create_directories(dir);
  const std::string artifact = (dir / "model.so").string();
  driver::CompileOptions options;
  options.target = "llvm -mtriple=aarch64-linux-gnu -mcpu=neoverse-n1";
  auto start = std::chrono::steady_clock::now();
  driver::compile_onnx(m.onnx.string(), artifact, options);
  const double compile_s = std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
  start = std::chrono::steady_clock::now();
  const std::vector<ir::NDArray> outs =
      run_artifact_under_qemu(setup, artifact, dir.string(), {ir::read_npy(m.input.string())});
  const double run_s = std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
  fs::remove_all(dir);
  std::printf("%s: compiled for '%s' in %.1f s; qemu-aarch64 load + run %.1f s\n", c.name, options.target.c_str(),
              compile_s, run_s);
  ASSERT_EQ(outs.size(), 1u);
  const ir::NDArray expected = ir::read_npy(m.expected_output.string());
  const Comparison cmp = compare_arrays(outs[0], expected);
  ASSERT_GT(cmp.max_abs_ref, 1e-3) << "PyTorch's reference output is vanishingly small";
  std::printf("%s: max|kiln - torch| / max|torch| = %.3g\n", c.name, cmp.rel());
  EXPECT_LE(cmp.rel(), 1e-3) << "element " << cmp.worst << ": kiln " << outs[0].get_as_double(cmp.worst)
                             << ", torch " << expected.get_as_double(cmp.worst);
}

INSTANTIATE_TEST_SUITE_P(Models, Aarch64Model,
                         ::testing::Values(ModelCase{"resnet50", "input"}, ModelCase{"mobilenetv2", "input"},
                                           ModelCase{"bert_encoder", "input_ids"}),
                         [](const ::testing::TestParamInfo<ModelCase>& info) { return std::string(info.param.name); });

}  // namespace
}  // namespace kiln::testing
