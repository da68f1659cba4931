// Whole models of the convolution family (issue 12, item 2) against PyTorch: a DCGAN generator and
// a U-Net (ConvTranspose2d), an FCN head (grouped ConvTranspose2d, kernel 16 stride 8), a MelGAN-style
// vocoder (ConvTranspose1d with output_padding, reflection pads, dilated Conv1d), a Conv1d stack
// (MaxPool1d/AvgPool1d, grouped and dilated Conv1d), wav2vec2's feature encoder (strided Conv1d +
// LayerNorm), and a 3-D encoder-decoder (Conv3d, MaxPool3d, AvgPool3d with ceil_mode,
// ConvTranspose3d). Exported by scripts/gen_conv_models.py (CTest fixture conv_models) from
// scripts/sweep_models/conv.py's SMALL_MODELS, with random weights and fixed seeds.
//
// Each model runs on the reference executor and compiled at the default -O3 (blocked NCHWc
// layouts, fusion), and is compared with PyTorch's f32 output:
// max|kiln - torch| / max|torch| <= 1e-4 (both sides f32 or better over a few layers of sums of at
// most a few thousand terms; a wrong tap, phase or pad errs by O(1)). Skips when the models could
// not be generated (no torch).
//
// Single-node cases (tests/e2e/make_conv_cases.py: ConvTranspose on a 1x1 input, kernel < stride,
// 3-D with groups/dilations/output_padding, output_shape with SAME_LOWER and a grown output; 1-D
// and 3-D Conv with SAME_LOWER/groups/dilations; 1-D/3-D Max/Average/LpPool with ceil_mode, MaxPool's
// Indices output;
// GlobalLpPool) against PyTorch / numpy, on the reference and compiled: rtol 1e-4, atol 1e-5.
#include <gtest/gtest.h>

#include <unistd.h>

#include <algorithm>
#include <filesystem>

#include "driver/compile_test_util.h"
#include "frontend/onnx_case_runner.h"
#include "kiln/driver/compile.h"
#include "kiln/frontend/onnx.h"
#include "kiln/ir/npy.h"
#include "kiln/ref/executor.h"

namespace kiln {
namespace {

namespace fs = std::filesystem;

constexpr double kTolerance = 1e-4;

fs::path model_dir() { return fs::path(KILN_BINARY_DIR) / "conv_models"; }

class ConvModel : public ::testing::TestWithParam<const char*> {
 protected:
  void SetUp() override {
    const std::string name = GetParam();
    onnx_ = model_dir() / (name + ".onnx");
    if (!fs::exists(onnx_)) GTEST_SKIP() << onnx_ << " missing (scripts/gen_conv_models.py needs /usr/bin/python3 with torch)";
    x_ = ir::read_npy((model_dir() / (name + ".input.npy")).string());
    expected_ = ir::read_npy((model_dir() / (name + ".output.npy")).string());
  }

  void check(const char* how, const ir::NDArray& got) {
    ASSERT_EQ(got.type(), expected_.type()) << how;
    const testing::Comparison cmp = testing::compare_arrays(got, expected_);
    ASSERT_GT(cmp.max_abs_ref, 1e-3) << "PyTorch's output is vanishingly small";
    std::printf("%s %s: max|kiln - torch| / max|torch| = %.3g\n", GetParam(), how, cmp.rel());
    EXPECT_LE(cmp.rel(), kTolerance) << how << ": element " << cmp.worst << ": kiln " << got.get_as_double(cmp.worst)
                                     << ", torch " << expected_.get_as_double(cmp.worst);
  }

  fs::path onnx_;
  ir::NDArray x_, expected_;
};

TEST_P(ConvModel, ReferenceMatchesPyTorch) {
  ir::Graph graph = frontend::import_onnx(onnx_.string());
  auto outs = ref::run_graph(graph, std::map<std::string, ir::NDArray>{{"input", x_}});
  ASSERT_EQ(outs.size(), 1u);
  check("reference", outs[0]);
}

TEST_P(ConvModel, CompiledMatchesPyTorch) {
  const fs::path artifact = fs::temp_directory_path() / ("kiln-conv-" + std::to_string(getpid()) + "-" + GetParam() + ".so");
  driver::CompileReport report = driver::compile_onnx(onnx_.string(), artifact.string(), driver::CompileOptions{});
  EXPECT_TRUE(report.split_groups.empty()) << "a fused group was split into per-op kernels";
  const std::vector<ir::NDArray> outs = testing::run_compiled(artifact.string(), {x_});
  fs::remove(artifact);
  ASSERT_EQ(outs.size(), 1u);
  check("compiled -O3", outs[0]);
}

INSTANTIATE_TEST_SUITE_P(Models, ConvModel,
                         ::testing::Values("dcgan_small", "unet_small", "fcn_head_small", "melgan_small", "conv1d_stack_small",
                                           "wav2vec2_fe_small", "tiny3d_small"),
                         [](const auto& info) { return std::string(info.param); });

std::vector<std::string> case_names() {
  std::vector<std::string> names;
  const fs::path dir = model_dir() / "cases";
  if (fs::exists(dir)) {
    for (const auto& e : fs::directory_iterator(dir)) names.push_back(e.path().filename().string());
  }
  std::sort(names.begin(), names.end());
  if (names.empty()) names.push_back("missing");
  return names;
}

class ConvCase : public ::testing::TestWithParam<std::string> {};

TEST_P(ConvCase, ReferenceAndCompiledMatch) {
  const fs::path dir = model_dir() / "cases" / GetParam();
  if (!fs::exists(dir)) GTEST_SKIP() << dir << " missing (tests/e2e/make_conv_cases.py needs /usr/bin/python3 with torch and onnx)";
  const testing::CaseResult ref = testing::run_onnx_case(dir.string(), 1e-4, 1e-5);
  EXPECT_TRUE(ref.passed) << "reference: " << ref.message;
  int index = 0;
  const testing::GraphRunner compiled = [&](const ir::Graph& graph, const std::vector<ir::NDArray>& inputs) {
    const fs::path path = fs::temp_directory_path() / ("kiln-conv-case-" + std::to_string(getpid()) + "-" + std::to_string(index++) + ".so");
    driver::compile_graph(graph, path.string(), driver::CompileOptions{});
    auto outs = testing::run_compiled(path.string(), inputs);
    fs::remove(path);
    return outs;
  };
  const testing::CaseResult got = testing::run_onnx_case(dir.string(), 1e-4, 1e-5, {}, compiled);
  EXPECT_TRUE(got.passed) << "compiled: " << got.message;
}

INSTANTIATE_TEST_SUITE_P(Cases, ConvCase, ::testing::ValuesIn(case_names()),
                         [](const ::testing::TestParamInfo<std::string>& info) { return info.param; });

}  // namespace
}  // namespace kiln
