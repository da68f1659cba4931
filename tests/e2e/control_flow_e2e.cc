// Control flow (If, Loop, Scan) end to end: the models of tests/e2e/make_control_flow_models.py
// (CTest fixture control_flow_models: onnx.helper models with numpy references, and
// torch.jit.script modules exported by torch.onnx.export with PyTorch's outputs) are imported,
// run on the reference executor and compiled by the driver (-O3) into an artifact run through
// libkiln_runtime; every data set's outputs must match within rtol 1e-4 / atol 1e-5 (f32 math in
// a different order than numpy/PyTorch; the bodies are a few ops deep). Also checks that constant
// conditions fold (no `where` left) and that the models Kiln cannot support fail with a UserError
// naming the node and the reason. Skips when the models could not be generated.
#include <gtest/gtest.h>
#include <unistd.h>

#include <filesystem>
#include <fstream>
#include <functional>

#include "driver/compile_test_util.h"
#include "frontend/onnx_case_runner.h"
#include "kiln/driver/compile.h"
#include "kiln/frontend/onnx.h"
#include "kiln/ir/text.h"

namespace kiln {
namespace {

namespace fs = std::filesystem;

const fs::path kRoot = fs::path(KILN_BINARY_DIR) / "control_flow_models";

#define SKIP_IF_NO_MODELS()                                                                                        \
  if (!fs::exists(kRoot / "cases") || !fs::exists(kRoot / "bad"))                                                 \
  GTEST_SKIP() << "no generated models in " << kRoot                                                               \
               << ": tests/e2e/make_control_flow_models.py (CTest fixture e2e.make_control_flow_models) failed or " \
                  "did not run; it needs /usr/bin/python3 with numpy and onnx (torch for the PyTorch models)"

std::vector<std::string> case_names() {
  std::vector<std::string> names;
  if (!fs::exists(kRoot / "cases")) return {"missing"};
  for (const auto& e : fs::directory_iterator(kRoot / "cases")) names.push_back(e.path().filename().string());
  std::sort(names.begin(), names.end());
  return names;
}

// input_shapes.txt (one `NAME:D0,D1,...` per line) fixes the dynamic dims of PyTorch exports.
frontend::OnnxImportOptions options_for(const fs::path& dir) {
  frontend::OnnxImportOptions o;
  std::ifstream in(dir / "input_shapes.txt");
  std::string line;
  while (std::getline(in, line)) {
    if (!line.empty()) frontend::parse_input_shape_option(line, &o.input_shapes);
  }
  return o;
}

ir::Graph import_case(const std::string& name) {
  const fs::path dir = kRoot / "cases" / name;
  return frontend::import_onnx((dir / "model.onnx").string(), options_for(dir));
}

int count_calls(const ir::Graph& g, const std::string& op) {
  int n = 0;
  for (const auto& node : g.topo_order()) {
    if (node->kind() == ir::NodeKind::kCall && node->as_call().op().name == op) ++n;
  }
  return n;
}

class ControlFlowCase : public ::testing::TestWithParam<std::string> {};

TEST_P(ControlFlowCase, ReferenceAndCompiledMatchExpected) {
  SKIP_IF_NO_MODELS();
  const std::string name = GetParam();
  const fs::path dir = kRoot / "cases" / name;
  const frontend::OnnxImportOptions options = options_for(dir);
  const testing::CaseResult ref = testing::run_onnx_case(dir.string(), 1e-4, 1e-5, options);
  EXPECT_TRUE(ref.passed) << name << " (reference executor): " << ref.message;
  const fs::path artifact = fs::temp_directory_path() / ("kiln-cf-" + std::to_string(getpid()) + "-" + name + ".so");
  const testing::GraphRunner compiled = [&](const ir::Graph& graph, const std::vector<ir::NDArray>& inputs) {
    driver::compile_graph(graph, artifact.string(), driver::CompileOptions{});
    auto outs = testing::run_compiled(artifact.string(), inputs);
    fs::remove(artifact);
    return outs;
  };
  const testing::CaseResult comp = testing::run_onnx_case(dir.string(), 1e-4, 1e-5, options, compiled);
  EXPECT_TRUE(comp.passed) << name << " (compiled): " << comp.message;
}

INSTANTIATE_TEST_SUITE_P(Generated, ControlFlowCase, ::testing::ValuesIn(case_names()),
                         [](const ::testing::TestParamInfo<std::string>& info) { return info.param; });

TEST(ControlFlowImport, ConstantConditionsFoldToTheTakenBranch) {
  SKIP_IF_NO_MODELS();
  // The untaken branch of if_constant_condition would not even import (a Reshape to 7x7).
  ir::Graph g = import_case("if_constant_condition");
  EXPECT_EQ(g.num_calls(), 1) << ir::graph_to_text(g);
  EXPECT_EQ(count_calls(g, "relu"), 1);
  if (fs::exists(kRoot / "cases/torch_if_shape_check")) {
    ir::Graph t = import_case("torch_if_shape_check");
    EXPECT_EQ(count_calls(t, "where"), 0) << ir::graph_to_text(t);
    EXPECT_EQ(count_calls(t, "conv2d"), 1) << ir::graph_to_text(t);
  }
}

TEST(ControlFlowImport, RunTimeConditionSelectsWithWhere) {
  SKIP_IF_NO_MODELS();
  ir::Graph g = import_case("if_runtime_condition");
  EXPECT_EQ(count_calls(g, "where"), 1) << ir::graph_to_text(g);
}

TEST(ControlFlowImport, LoopsUnrollWithFoldedIterationNumbers) {
  SKIP_IF_NO_MODELS();
  // 5 iterations; the slices by the iteration number fold into constants, so each iteration is a
  // mul (y * i) and an add with a constant row (row * w folds too).
  ir::Graph g = import_case("loop_scan_outputs");
  EXPECT_EQ(count_calls(g, "strided_slice"), 0) << ir::graph_to_text(g);
  EXPECT_EQ(count_calls(g, "add"), 5) << ir::graph_to_text(g);
  EXPECT_EQ(count_calls(g, "concat"), 1) << ir::graph_to_text(g);
  // The while loop whose condition folds runs exactly 3 iterations (add, sub, add).
  ir::Graph w = import_case("loop_while_condition_folds");
  EXPECT_EQ(count_calls(w, "add") + count_calls(w, "sub"), 3) << ir::graph_to_text(w);
}

void expect_user_error(const std::string& bad_model, const std::vector<std::string>& parts) {
  try {
    frontend::import_onnx((kRoot / "bad" / (bad_model + ".onnx")).string());
    ADD_FAILURE() << bad_model << ": no error";
  } catch (const UserError& e) {
    const std::string all = std::string(e.what()) + "\nhint: " + e.hint();
    for (const auto& p : parts) EXPECT_NE(all.find(p), std::string::npos) << "missing '" << p << "' in: " << all;
  }
}

TEST(ControlFlowErrors, UnsupportedFormsNameTheNodeAndTheReason) {
  SKIP_IF_NO_MODELS();
  expect_user_error("if_runtime_shapes_differ", {"'my_if' (If)", "then_branch", "else_branch", "computed at run time"});
  expect_user_error("loop_runtime_trip_count", {"'my_loop' (Loop)", "trip count M, 'M'", "computed at run time"});
  expect_user_error("loop_too_long", {"'long_loop' (Loop)", "more than 100000 nodes", "unrolls"});
  expect_user_error("loop_sequence_body", {"'seq_loop' (Loop)", "sequence", "not supported"});
}

}  // namespace
}  // namespace kiln
