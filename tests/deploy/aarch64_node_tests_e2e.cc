// The ONNX node tests compiled for AArch64 and run under qemu-user (tests/deploy/qemu_runner.h),
// compared with the tests' expected outputs by ONNX's rule (rtol 1e-3, atol 1e-7): every test
// the reference executor passes must pass compiled for AArch64 too, unless docs/deploy.md lists
// it under "Expected AArch64 node-test failures" (or docs/compile.md lists it for every target).
// CTest runs the operators in kDefaultOps (a few minutes under qemu on 2 cores);
// KILN_NODE_TEST_OPS=Op1,Op2 picks others and KILN_NODE_TEST_OPS=all runs every supported test
// (scripts/aarch64-node-tests.sh). Skips, saying what to install, without qemu or the AArch64
// runtime (CTest fixture deploy.build_runtime_aarch64).
#include <gtest/gtest.h>
#include <unistd.h>

#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <set>
#include <sstream>

#include "deploy/qemu_runner.h"
#include "kiln/frontend/onnx.h"
#include "node_suite/node_case.h"

namespace kiln::testing {
namespace {

namespace fs = std::filesystem;

const char* const kTarget = "llvm -mtriple=aarch64-linux-gnu -mcpu=neoverse-n1";
// The operators of the models Kiln is deployed with (convolutions, matmuls, norms, activations,
// pooling, shape ops), each with its ONNX node tests.
const char* const kDefaultOps =
    "Conv,ConvTranspose,MatMul,Gemm,Relu,Add,Mul,Sigmoid,Tanh,Softmax,MaxPool,AveragePool,"
    "GlobalAveragePool,BatchNormalization,LayerNormalization,Gelu,Erf,Transpose,Reshape,Concat,"
    "Gather,ReduceMean,Clip,Where,Cast,Slice,Flatten";

std::set<std::string> listed_failures(const std::string& doc, const std::string& heading) {
  std::set<std::string> out;
  std::ifstream in(fs::path(KILN_SOURCE_DIR) / doc);
  std::string line;
  bool in_section = false;
  while (std::getline(in, line)) {
    if (line.rfind("#", 0) == 0) in_section = line.find(heading) != std::string::npos;
    if (in_section && line.rfind("| `test_", 0) == 0) out.insert(line.substr(3, line.find('`', 3) - 3));
  }
  return out;
}

std::set<std::string> split_ops(const std::string& text) {
  std::set<std::string> ops;
  std::stringstream list(text);
  for (std::string op; std::getline(list, op, ',');) ops.insert(op);
  return ops;
}

TEST(Aarch64NodeTests, ReferencePassesImplyAarch64Passes) {
  const fs::path root = fs::path(KILN_SOURCE_DIR) / ".." / "shared" / "onnx-node-tests";
  if (!fs::exists(root / "index.tsv")) GTEST_SKIP() << "ONNX node tests not found at " << root;
  const Aarch64Setup setup = find_aarch64_setup(std::string(KILN_BINARY_DIR) + "/aarch64-runtime");
  if (!setup.missing.empty()) GTEST_SKIP() << setup.missing;
  const char* env = std::getenv("KILN_NODE_TEST_OPS");
  const std::string only = env && *env ? env : kDefaultOps;
  const std::set<std::string> only_ops = only == "all" ? std::set<std::string>{} : split_ops(only);
  std::set<std::string> expected = listed_failures("docs/deploy.md", "Expected AArch64 node-test failures");
  for (const auto& t : listed_failures("docs/compile.md", "Expected compiled node-test failures")) expected.insert(t);
  const auto supported_list = frontend::onnx_supported_ops();
  const std::set<std::string> supported(supported_list.begin(), supported_list.end());
  const fs::path scratch = fs::temp_directory_path() / ("kiln-aarch64-node-" + std::to_string(getpid()));
  fs::create_directories(scratch);
  const GraphRunner qemu = qemu_graph_runner(setup, scratch.string(), kTarget);

  std::ifstream in(root / "index.tsv");
  std::string line;
  std::getline(in, line);  // header
  int ref_pass = 0, pass = 0, xfail = 0;
  std::vector<std::string> unexpected;
  while (std::getline(in, line)) {
    std::vector<std::string> cols;
    std::stringstream ss(line);
    for (std::string c; std::getline(ss, c, '\t');) cols.push_back(c);
    if (cols.size() < 6) continue;
    const std::string &folder = cols[0], &domain = cols[1], &op = cols[2];
    const int opset = cols[5] == "-" ? 0 : std::atoi(cols[5].c_str());
    if (!(domain == "ai.onnx" || domain.empty()) || !supported.count(op) || opset < frontend::kOnnxMinOpset) continue;
    if (!only_ops.empty() && !only_ops.count(op)) continue;
    const std::string case_dir = (root / "node" / folder).string();
    bool all_supported = true;
    for (const auto& o : frontend::onnx_op_types(case_dir + "/model.onnx")) all_supported &= supported.count(o) != 0;
    if (!all_supported || !run_onnx_case(case_dir, 1e-3, 1e-7).passed) continue;  // what the reference passes
    ++ref_pass;
    const CaseResult r = run_onnx_case(case_dir, 1e-3, 1e-7, {}, qemu);
    if (r.passed) {
      ++pass;
      if (expected.count(folder)) std::printf("note: %s is listed as an expected failure but passes\n", folder.c_str());
    } else if (expected.count(folder)) {
      ++xfail;
    } else {
      unexpected.push_back(folder + " (" + op + "): " + r.message.substr(0, 300));
    }
  }
  fs::remove_all(scratch);
  std::printf("target '%s', operators: %s\n", kTarget, only.c_str());
  std::printf("node tests passing on the reference executor: %d; AArch64 under qemu: %d pass, %d expected failures, "
              "%zu unexpected failures\n", ref_pass, pass, xfail, unexpected.size());
  std::string all;
  for (const auto& u : unexpected) all += "\n  " + u;
  EXPECT_GT(ref_pass, 0);
  EXPECT_TRUE(unexpected.empty()) << unexpected.size() << " AArch64 node tests failed that docs/deploy.md does not list:"
                                  << all;
}

}  // namespace
}  // namespace kiln::testing
