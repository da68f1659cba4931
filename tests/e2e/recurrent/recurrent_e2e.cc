// LSTM/GRU/RNN end to end: every case made by make_recurrent_cases.py (single ONNX recurrent nodes
// over all attributes, checked against a numpy oracle of the ONNX equations; PyTorch nn.LSTM/GRU/RNN
// stacks, a text classifier and a Conv1d -> GRU speech model exported at opsets 9-17, checked
// against PyTorch) runs on the reference executor and compiled (-O3, through libkiln_runtime).
// Tolerance: rtol 1e-4, atol 1e-5 (float32 against a float64 oracle / PyTorch float32; the
// compiled sigmoid/tanh are within a few ulp). Skips when the fixture could not make the cases.
#include <gtest/gtest.h>
#include <unistd.h>

#include <algorithm>
#include <filesystem>

#include "driver/compile_test_util.h"
#include "frontend/onnx_case_runner.h"
#include "kiln/driver/compile.h"
#include "kiln/frontend/onnx.h"
#include "kiln/support/error.h"

namespace kiln::testing {
namespace {

namespace fs = std::filesystem;

const fs::path kRoot = fs::path(KILN_BINARY_DIR) / "recurrent_cases";
constexpr double kRtol = 1e-4, kAtol = 1e-5;

std::vector<std::string> case_names() {
  std::vector<std::string> names;
  if (!fs::exists(kRoot)) return {"missing"};
  for (const auto& e : fs::directory_iterator(kRoot)) {
    if (e.path().filename() != "bad") names.push_back(e.path().filename().string());
  }
  std::sort(names.begin(), names.end());
  return names;
}

class RecurrentCase : public ::testing::TestWithParam<std::string> {};

TEST_P(RecurrentCase, ReferenceAndCompiledMatchExpected) {
  if (!fs::exists(kRoot)) {
    GTEST_SKIP() << "no cases in " << kRoot << ": make_recurrent_cases.py (fixture e2e.make_recurrent_cases) "
                 << "failed or did not run; it needs /usr/bin/python3 with numpy, onnx and torch";
  }
  const std::string dir = (kRoot / GetParam()).string();
  CaseResult ref = run_onnx_case(dir, kRtol, kAtol);
  // Cases that need another feature of issue 12 (opsets below 11, 1-D convolution) skip, naming it,
  // until that feature lands; every other failure fails.
  for (const char* other : {"outside the supported range", "Conv is supported in 2-D only"}) {
    if (!ref.passed && ref.message.find(other) != std::string::npos) GTEST_SKIP() << "needs another feature: " << ref.message;
  }
  EXPECT_TRUE(ref.passed) << "reference: " << ref.message;
  const fs::path tmp = fs::temp_directory_path() / ("kiln-recurrent-" + std::to_string(getpid()) + "-" + GetParam() + ".so");
  const GraphRunner compiled = [&](const ir::Graph& graph, const std::vector<ir::NDArray>& inputs) {
    driver::compile_graph(graph, tmp.string(), driver::CompileOptions{});
    auto outs = run_compiled(tmp.string(), inputs);
    fs::remove(tmp);
    return outs;
  };
  CaseResult cmp = run_onnx_case(dir, kRtol, kAtol, {}, compiled);
  EXPECT_TRUE(cmp.passed) << "compiled: " << cmp.message;
}

// Invalid recurrent nodes are UserErrors naming the node, the attribute or input, and the reason.
TEST(RecurrentErrors, NameTheProblem) {
  if (!fs::exists(kRoot / "bad")) GTEST_SKIP() << "no bad models in " << kRoot / "bad";
  const std::vector<std::pair<std::string, std::vector<std::string>>> cases = {
      {"unknown_activation", {"(RNN)", "activations", "Swish", "supported: Relu"}},
      {"wrong_weight_shape", {"(LSTM)", "input W", "f32[1, 12, 5]", "expected f32[1, 12, 4]"}},
      {"activation_count", {"(GRU)", "activations", "lists 3 functions; expected 2"}},
  };
  for (const auto& [name, needles] : cases) {
    try {
      frontend::import_onnx((kRoot / "bad" / (name + ".onnx")).string());
      ADD_FAILURE() << name << ": imported without an error";
    } catch (const UserError& e) {
      const std::string text = std::string(e.what()) + " " + e.hint();
      for (const std::string& n : needles) EXPECT_NE(text.find(n), std::string::npos) << name << ": '" << n << "' not in: " << text;
    }
  }
}

INSTANTIATE_TEST_SUITE_P(Cases, RecurrentCase, ::testing::ValuesIn(case_names()),
                         [](const ::testing::TestParamInfo<std::string>& info) { return info.param; });

}  // namespace
}  // namespace kiln::testing
