// Pre-quantized ONNX models (tests/frontend/make_quant_cases.py, a CTest fixture): each case
// imports, runs on the reference executor (-O0: no rewrite) and compiled at -O3 (RealizeQuantizedOps
// turns the QDQ patterns into qnn_conv2d / qnn_matmul + requantize), both compared with the numpy
// evaluation of the ONNX definitions within two units of the output's quantization step (the
// float64 numpy sums and Kiln's f32 / integer sums may round an intermediate tie differently; one
// unit flips of intermediate layers can add up to two at the output). Then: the rewrite really
// happens on the QDQ CNN, and bad quantization parameters are UserErrors naming node and input.
#include <gtest/gtest.h>
#include <unistd.h>

#include <filesystem>

#include "driver/compile_test_util.h"
#include "frontend/onnx_case_runner.h"
#include "kiln/driver/compile.h"
#include "kiln/frontend/onnx.h"
#include "kiln/pass/pass.h"

namespace kiln::frontend {
namespace {

namespace fs = std::filesystem;

const fs::path kRoot = fs::path(KILN_BINARY_DIR) / "onnx_quant";

#define SKIP_IF_NO_CASES()                                                                             \
  if (!fs::exists(kRoot / "cases"))                                                                    \
  GTEST_SKIP() << "no generated models in " << kRoot                                                   \
               << ": tests/frontend/make_quant_cases.py (CTest fixture frontend.make_quant_cases) "   \
                  "failed or did not run; it needs /usr/bin/python3 with numpy, onnx and torch"

// Output quantization step of each case (the tolerance is two of them).
double step_of(const std::string& name) {
  if (name == "qdq_cnn") return 0.03;
  if (name == "qlinear_conv") return 1.0;
  return 0.0;  // dynamic_conv_integer: exact integer sums, one f32 multiply
}

class QuantCase : public ::testing::TestWithParam<std::string> {};

TEST_P(QuantCase, ReferenceAndCompiledMatchExpected) {
  SKIP_IF_NO_CASES();
  const std::string dir = (kRoot / "cases" / GetParam()).string();
  const double atol = 2 * step_of(GetParam()) + 1e-5;
  auto reference = testing::run_onnx_case(dir, 1e-5, atol);
  EXPECT_TRUE(reference.passed) << "reference: " << reference.message;
  const fs::path so = fs::temp_directory_path() / ("kiln-quant-" + std::to_string(getpid()) + "-" + GetParam() + ".so");
  const testing::GraphRunner compiled = [&](const ir::Graph& graph, const std::vector<ir::NDArray>& inputs) {
    driver::compile_graph(graph, so.string(), driver::CompileOptions{});
    auto outs = testing::run_compiled(so.string(), inputs);
    fs::remove(so);
    return outs;
  };
  auto result = testing::run_onnx_case(dir, 1e-5, atol, {}, compiled);
  EXPECT_TRUE(result.passed) << "compiled: " << result.message;
}

std::vector<std::string> case_names() { return {"qdq_cnn", "qlinear_conv", "dynamic_conv_integer"}; }

INSTANTIATE_TEST_SUITE_P(Generated, QuantCase, ::testing::ValuesIn(case_names()),
                         [](const ::testing::TestParamInfo<std::string>& info) { return info.param; });

int count_op(const ir::Graph& g, const std::string& op) {
  int n = 0;
  for (const auto& node : g.topo_order()) n += node->kind() == ir::NodeKind::kCall && node->as_call().op().name == op;
  return n;
}

TEST(QuantRewrite, QdqCnnBecomesIntegerOps) {
  SKIP_IF_NO_CASES();
  const ir::Graph g = import_onnx((kRoot / "cases" / "qdq_cnn" / "model.onnx").string());
  EXPECT_EQ(count_op(g, "conv2d"), 2);
  pass::PassOptions options;
  options.verify_each_pass = true;
  const ir::Graph after = pass::run_passes(g, {"RealizeQuantizedOps", "DeadCodeElimination"}, options).graph;
  EXPECT_EQ(count_op(after, "conv2d"), 0);
  EXPECT_EQ(count_op(after, "qnn_conv2d"), 2);
  EXPECT_EQ(count_op(after, "qnn_matmul"), 1);
  EXPECT_EQ(count_op(after, "requantize"), 3);
  EXPECT_EQ(count_op(after, "max_pool2d"), 1);  // now on u8
  for (const auto& node : after.topo_order()) {
    if (node->kind() == ir::NodeKind::kCall && node->as_call().op().name == "max_pool2d") {
      EXPECT_EQ(node->as_call().output_types()[0].dtype, ir::DType::kU8);
    }
  }
}

TEST(QuantImport, BadParametersNameNodeAndInput) {
  SKIP_IF_NO_CASES();
  const std::vector<std::pair<std::string, std::vector<std::string>>> cases = {
      {"zero_scale", {"quant_node", "y_scale", "holds 0"}},
      {"negative_scale", {"quant_node", "y_scale", "-0.5"}},
      {"nan_scale", {"quant_node", "y_scale", "nan"}},
      {"axis_length_mismatch", {"quant_node", "y_scale", "axis"}},
      {"zero_point_dtype", {"dequant_node", "x_zero_point", "i8"}},
      {"int32_zero_point", {"dequant_node", "x_zero_point", "holds 7", "int32"}},
      {"contrib_qgemm", {"qgemm_node", "com.microsoft.QGemm", "not supported"}},
  };
  for (const auto& [name, needles] : cases) {
    try {
      import_onnx((kRoot / "bad" / name / "model.onnx").string());
      ADD_FAILURE() << name << ": imported";
    } catch (const UserError& e) {
      const std::string msg = e.what();
      for (const auto& n : needles) EXPECT_NE(msg.find(n), std::string::npos) << name << ": " << msg;
    }
  }
}

}  // namespace
}  // namespace kiln::frontend
