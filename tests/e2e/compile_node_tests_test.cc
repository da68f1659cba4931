// ONNX node tests, compiled: every node test of ../shared/onnx-node-tests that passes on the
// reference executor (tools/node_suite/node_case.h) is
// run again with the graph compiled by the driver (default -O3) into an artifact and run through
// libkiln_runtime (the runner's GraphRunner hook), with the same tolerances (rtol 1e-3,
// atol 1e-7, NaN == NaN). Fails on any compiled failure not listed under "Expected compiled
// node-test failures" in docs/compile.md. Prints pass/fail counts. Skips when the data is absent.
// A second test compiles for the host at the other vector width (-vector-width=512 on an AVX2
// host, 256 on an AVX-512 one), so the 16-lane schedules run on odd shapes here too.
#include <gtest/gtest.h>
#include <unistd.h>

#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <map>
#include <set>
#include <sstream>

#include "node_suite/compiled_runner.h"
#include "node_suite/node_case.h"
#include "kiln/codegen/target.h"
#include "kiln/driver/compile.h"
#include "kiln/frontend/onnx.h"

namespace kiln::testing {
namespace {

namespace fs = std::filesystem;

// `| \`test_name\` | reason |` rows under the "Expected compiled node-test failures" heading.
std::set<std::string> expected_compiled_failures() {
  std::set<std::string> out;
  std::ifstream in(fs::path(KILN_SOURCE_DIR) / "docs/compile.md");
  std::string line;
  bool in_section = false;
  while (std::getline(in, line)) {
    if (line.rfind("#", 0) == 0) in_section = line.find("Expected compiled node-test failures") != std::string::npos;
    if (!in_section || line.rfind("| `test_", 0) != 0) continue;
    out.insert(line.substr(3, line.find('`', 3) - 3));
  }
  return out;
}

void check_compiled_node_tests(const std::string& target) {
  const fs::path root = fs::path(KILN_SOURCE_DIR) / ".." / "shared" / "onnx-node-tests";
  if (!fs::exists(root / "node") || !fs::exists(root / "index.tsv")) {
    GTEST_SKIP() << "ONNX node tests not found at " << root << " (optional data; nothing to check)";
  }
  const auto supported_list = frontend::onnx_supported_ops();
  const std::set<std::string> supported(supported_list.begin(), supported_list.end());
  const std::set<std::string> expected = expected_compiled_failures();
  const fs::path dir = fs::temp_directory_path() / ("kiln-node-compiled-" + std::to_string(getpid()));
  fs::create_directories(dir);
  const GraphRunner compiled = compile_graph_runner(dir.string(), target);
  // KILN_NODE_TEST_OPS=TopK,Einsum (optional): only the tests of these ONNX operators.
  std::set<std::string> only_ops;
  if (const char* env = std::getenv("KILN_NODE_TEST_OPS")) {
    std::stringstream list(env);
    for (std::string op; std::getline(list, op, ',');) only_ops.insert(op);
  }
  std::ifstream in(root / "index.tsv");
  std::string line;
  std::getline(in, line);  // header
  int ref_pass = 0, pass = 0, xfail = 0;
  std::vector<std::string> unexpected, fixed;
  while (std::getline(in, line)) {
    std::vector<std::string> cols;
    std::stringstream ss(line);
    std::string c;
    while (std::getline(ss, c, '\t')) cols.push_back(c);
    if (cols.size() < 6) continue;
    const std::string folder = cols[0], domain = cols[1], op = cols[2];
    const int opset = cols[5] == "-" ? 0 : std::atoi(cols[5].c_str());
    if (!(domain == "ai.onnx" || domain.empty()) || !supported.count(op) || opset < frontend::kOnnxMinOpset) continue;
    if (!only_ops.empty() && !only_ops.count(op)) continue;
    const std::string case_dir = (root / "node" / folder).string();
    if (cols[3] == "1") {
      bool all = true;
      for (const auto& o : frontend::onnx_op_types(case_dir + "/model.onnx")) all = all && supported.count(o) != 0;
      if (!all) continue;
    }
    if (!run_onnx_case(case_dir, 1e-3, 1e-7).passed) continue;  // only what the reference passes
    ++ref_pass;
    const CaseResult r = run_onnx_case(case_dir, 1e-3, 1e-7, {}, compiled);
    const bool listed = expected.count(folder) != 0;
    if (r.passed) {
      ++pass;
      if (listed) fixed.push_back(folder);
    } else if (listed) {
      ++xfail;
    } else {
      unexpected.push_back(folder + " (" + op + "): " + r.message.substr(0, 300));
    }
  }
  fs::remove_all(dir);
  std::printf("target '%s'\n", target.c_str());
  std::printf("node tests passing on the reference executor: %d; compiled: %d pass, %d expected failures, %zu "
              "unexpected failures\n",
              ref_pass, pass, xfail, unexpected.size());
  for (const auto& f : fixed) std::printf("note: %s is listed as an expected compiled failure but passes\n", f.c_str());
  std::string all;
  for (const auto& u : unexpected) all += "\n  " + u;
  EXPECT_GT(ref_pass, 0);
  EXPECT_TRUE(unexpected.empty()) << unexpected.size() << " compiled node tests failed that docs/compile.md does not list:"
                                  << all;
}

TEST(CompiledOnnxNodeTests, ReferencePassesImplyCompiledPasses) { check_compiled_node_tests("llvm"); }

TEST(CompiledOnnxNodeTests, OtherVectorWidthPassesToo) {
  check_compiled_node_tests(codegen::host_target().native_vector_bits == 512 ? "llvm -vector-width=256"
                                                                             : "llvm -vector-width=512");
}

}  // namespace
}  // namespace kiln::testing
