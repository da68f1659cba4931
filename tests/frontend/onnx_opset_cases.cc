// Old opsets and other exporters' graph forms (tests/frontend/make_onnx_opset_cases.py, a CTest
// fixture): every case imports, runs on the reference executor (rtol 1e-4, atol 1e-5 against
// numpy/PyTorch) and compiled at -O3 into an artifact run through libkiln_runtime (rtol 1e-3,
// atol 1e-4: the compiled kernels accumulate in another order). Then: the channels-last CNN keeps
// no activation transposes inside after the graph passes, and the user-facing errors (opsets 1-6,
// cycles, a value with two producers, an unknown op at an old opset, every symbolic input dim).
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

const fs::path kRoot = fs::path(KILN_BINARY_DIR) / "onnx_opset";

bool cases_missing() { return !fs::exists(kRoot / "opset_cases") || !fs::exists(kRoot / "opset_bad"); }

#define SKIP_IF_NO_CASES()                                                                                  \
  if (cases_missing())                                                                                      \
  GTEST_SKIP() << "no generated models in " << kRoot                                                        \
               << ": tests/frontend/make_onnx_opset_cases.py (CTest fixture frontend.make_onnx_opset_cases) " \
                  "failed or did not run; it needs /usr/bin/python3 with numpy, onnx and torch"

std::vector<std::string> case_names() {
  std::vector<std::string> names;
  if (!fs::exists(kRoot / "opset_cases")) return {"missing"};
  for (const auto& e : fs::directory_iterator(kRoot / "opset_cases")) names.push_back(e.path().filename().string());
  std::sort(names.begin(), names.end());
  return names;
}

class OpsetCase : public ::testing::TestWithParam<std::string> {};

TEST_P(OpsetCase, ReferenceAndCompiledMatchExpected) {
  SKIP_IF_NO_CASES();
  const std::string dir = (kRoot / "opset_cases" / GetParam()).string();
  auto reference = testing::run_onnx_case(dir, 1e-4, 1e-5);
  EXPECT_TRUE(reference.passed) << "reference: " << reference.message;
  const fs::path so = fs::temp_directory_path() / ("kiln-opset-" + std::to_string(getpid()) + "-" + GetParam() + ".so");
  const testing::GraphRunner compiled = [&](const ir::Graph& graph, const std::vector<ir::NDArray>& inputs) {
    driver::compile_graph(graph, so.string(), driver::CompileOptions{});
    auto outs = testing::run_compiled(so.string(), inputs);
    fs::remove(so);
    return outs;
  };
  auto result = testing::run_onnx_case(dir, 1e-3, 1e-4, {}, compiled);
  EXPECT_TRUE(result.passed) << "compiled: " << result.message;
}

INSTANTIATE_TEST_SUITE_P(Generated, OpsetCase, ::testing::ValuesIn(case_names()),
                         [](const ::testing::TestParamInfo<std::string>& info) { return info.param; });

int count_op(const ir::Graph& g, const std::string& op) {
  int n = 0;
  for (const auto& node : g.topo_order()) n += node->kind() == ir::NodeKind::kCall && node->as_call().op().name == op;
  return n;
}

TEST(OpsetImport, ChannelsLastCnnKeepsOnlyBorderTransposes) {
  SKIP_IF_NO_CASES();
  // {case, transposes left}: the NHWC input's and the NHWC output's; the classifier's global pool
  // (ReduceMean over H, W of NHWC) needs none at the output.
  for (const auto& [name, left] : std::vector<std::pair<std::string, int>>{{"channels_last_cnn", 2}, {"channels_last_classifier", 1}}) {
    ir::Graph g = import_onnx((kRoot / "opset_cases" / name / "model.onnx").string());
    EXPECT_EQ(count_op(g, "transpose"), 8) << name;
    pass::PassOptions options;
    options.opt_level = 1;
    options.verify_each_pass = true;
    ir::Graph after = pass::run_pipeline(g, options).graph;
    EXPECT_EQ(count_op(after, "transpose"), left) << name;
    for (const auto& node : after.topo_order()) {
      if (node->kind() != ir::NodeKind::kCall || node->as_call().op().name != "transpose") continue;
      const bool reads_input = node->as_call().args()[0].node->kind() == ir::NodeKind::kInput;
      const bool is_output = after.outputs()[0].node == node;
      EXPECT_TRUE(reads_input || is_output) << name << ": an activation transpose is left inside";
    }
  }
}

TEST(OpsetImport, Upsample9BecomesResizeWithOnnxCoordinates) {
  SKIP_IF_NO_CASES();
  ir::Graph g = import_onnx((kRoot / "opset_cases/upsample9_linear/model.onnx").string());
  ASSERT_EQ(g.num_calls(), 1);
  const auto& call = g.outputs()[0].node->as_call();
  EXPECT_EQ(call.op().name, "resize");
  EXPECT_EQ(call.attrs().get_string("coordinate_transformation_mode"), "asymmetric");
  EXPECT_EQ(call.attrs().get_string("mode"), "linear");
}

void expect_user_error(const std::function<void()>& fn, UserErrorKind kind, const std::vector<std::string>& parts) {
  try {
    fn();
    ADD_FAILURE() << "no error";
  } catch (const UserError& e) {
    const std::string all = std::string(e.what()) + "\nhint: " + e.hint();
    EXPECT_EQ(e.kind(), kind) << all;
    for (const auto& p : parts) EXPECT_NE(all.find(p), std::string::npos) << "missing '" << p << "' in: " << all;
  }
}

std::string bad(const std::string& name) { return (kRoot / "opset_bad" / (name + ".onnx")).string(); }

TEST(OpsetImportErrors, OpsetsBelowSevenAreRejectedWithAWayOut) {
  SKIP_IF_NO_CASES();
  expect_user_error([] { import_onnx(bad("opset5")); }, UserErrorKind::kUnsupported,
                    {"opset 5", "7..", "re-export", "opset_version", "version_converter"});
}

TEST(OpsetImportErrors, CycleAndTwoProducers) {
  SKIP_IF_NO_CASES();
  expect_user_error([] { import_onnx(bad("cycle")); }, UserErrorKind::kInvalidArgument, {"cycle", "'first' (Add)", "'second' (Relu)"});
  expect_user_error([] { import_onnx(bad("two_producers")); }, UserErrorKind::kInvalidArgument,
                    {"'two' (Neg)", "'one' (Relu)", "output 'y'"});
}

TEST(OpsetImportErrors, UnknownOpNamesOpNodeAndOpset) {
  SKIP_IF_NO_CASES();
  expect_user_error([] { import_onnx(bad("unknown_op_opset9")); }, UserErrorKind::kUnsupported,
                    {"MaxRoiPool", "'roi_pooler'", "opset 9"});
}

TEST(OpsetImportErrors, EverySymbolicDimIsListedWithAnExampleCommand) {
  SKIP_IF_NO_CASES();
  expect_user_error([] { import_onnx(bad("symbolic_dims")); }, UserErrorKind::kInvalidArgument,
                    {"4 input dimensions", "input 'x' axis 0 ('N')", "input 'x' axis 2 ('H')", "input 'x' axis 3 ('W')",
                     "input 'z' axis 0 ('batch')", "--input-shape x:1,3,1,1 --input-shape z:1,5"});
  OnnxImportOptions x_only;
  x_only.input_shapes["x"] = {2, 3, 8, 8};
  expect_user_error([&] { import_onnx(bad("symbolic_dims"), x_only); }, UserErrorKind::kInvalidArgument,
                    {"1 input dimension is", "input 'z' axis 0 ('batch')", "--input-shape z:1,5"});
  x_only.input_shapes["z"] = {2, 5};
  ir::Graph g = import_onnx(bad("symbolic_dims"), x_only);
  EXPECT_EQ(g.inputs()[0]->as_input().type().shape, (ir::Shape{2, 3, 8, 8}));
  EXPECT_EQ(g.inputs()[1]->as_input().type().shape, (ir::Shape{2, 5}));
}

}  // namespace
}  // namespace kiln::frontend
