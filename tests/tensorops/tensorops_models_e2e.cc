// Whole models of the indexing / scan / selection / einsum operators (written by
// make_tensorops_models.py into ${build}/tensorops_models, CTest fixture tensorops_models), each
// imported and run on the reference executor AND compiled by the driver (default -O3) into an
// artifact run through libkiln_runtime, compared with numpy's (single-node Einsum/MatMul cases)
// or PyTorch's (DETR post-processing, GPT step, pixel shuffle, spatial transformer) outputs.
// Tolerance: |kiln - expected| <= 1e-5 + 1e-4 |expected| per element (f32 models of a few
// layers: the sums reassociate, a wrong index or op errs by O(1)); integer outputs exactly.
// Skips with the reason when the models could not be generated.
#include <gtest/gtest.h>
#include <unistd.h>

#include <filesystem>
#include <fstream>
#include <iterator>

#include "driver/compile_test_util.h"
#include "frontend/onnx_case_runner.h"
#include "kiln/driver/compile.h"

namespace kiln::testing {
namespace {

namespace fs = std::filesystem;

constexpr double kRtol = 1e-4, kAtol = 1e-5;

TEST(TensoropsModels, ReferenceAndCompiledMatch) {
  const fs::path root = fs::path(KILN_BINARY_DIR) / "tensorops_models";
  if (!fs::exists(root)) GTEST_SKIP() << root << " is missing: make_tensorops_models.py could not run (needs onnx and torch)";
  const fs::path dir = fs::temp_directory_path() / ("kiln-tensorops-models-" + std::to_string(getpid()));
  fs::create_directories(dir);
  int index = 0;
  const GraphRunner compiled = [&](const ir::Graph& graph, const std::vector<ir::NDArray>& inputs) {
    const std::string path = (dir / ("model" + std::to_string(index++) + ".so")).string();
    driver::compile_graph(graph, path, driver::CompileOptions{});
    auto outs = run_compiled(path, inputs);
    fs::remove(path);
    return outs;
  };
  std::vector<fs::path> cases;
  for (const auto& e : fs::directory_iterator(root)) {
    if (e.path().filename() != "errors") cases.push_back(e.path());
  }
  std::sort(cases.begin(), cases.end());
  ASSERT_GE(cases.size(), 20u);
  for (const fs::path& c : cases) {
    const CaseResult ref = run_onnx_case(c.string(), kRtol, kAtol);
    EXPECT_TRUE(ref.passed) << c.filename() << " (reference): " << ref.message;
    const CaseResult comp = run_onnx_case(c.string(), kRtol, kAtol, {}, compiled);
    EXPECT_TRUE(comp.passed) << c.filename() << " (compiled): " << comp.message;
    std::printf("%-28s reference %s, compiled %s\n", c.filename().c_str(), ref.passed ? "ok" : "FAIL",
                comp.passed ? "ok" : "FAIL");
  }
  fs::remove_all(dir);
}

// Models Kiln must refuse: the UserError names the node and input and says why (errors/*.txt
// holds a substring of the message).
TEST(TensoropsModels, ClearErrors) {
  const fs::path root = fs::path(KILN_BINARY_DIR) / "tensorops_models" / "errors";
  if (!fs::exists(root)) GTEST_SKIP() << root << " is missing: make_tensorops_models.py could not run (needs onnx and torch)";
  int checked = 0;
  for (const auto& e : fs::directory_iterator(root)) {
    if (e.path().extension() != ".onnx") continue;
    std::ifstream in(fs::path(e.path()).replace_extension(".txt"));
    const std::string needle((std::istreambuf_iterator<char>(in)), std::istreambuf_iterator<char>());
    try {
      frontend::import_onnx(e.path().string());
      ADD_FAILURE() << e.path().filename() << " imported without an error";
    } catch (const UserError& err) {
      EXPECT_NE(std::string(err.what()).find(needle), std::string::npos) << e.path().filename() << ": " << err.what();
      std::printf("%-28s %s\n", e.path().filename().c_str(), err.what());
    }
    ++checked;
  }
  EXPECT_GE(checked, 6);
}

}  // namespace
}  // namespace kiln::testing
