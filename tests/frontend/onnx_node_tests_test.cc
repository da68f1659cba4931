// ONNX node-test conformance: runs every node test of ../shared/onnx-node-tests whose operator the
// importer supports (index.tsv's op_type; `_expanded` variants only when Kiln supports every op in
// them; tests of an ai.onnx opset below kOnnxMinOpset are skipped) through the importer and the reference executor, compares
// with ONNX's tolerances (rtol 1e-3, atol 1e-7, NaN == NaN), prints pass/fail counts per operator,
// and fails on any failure not listed under "Expected node-test failures" in docs/onnx.md.
// Skips with a message when the data is absent.
#include <gtest/gtest.h>

#include <algorithm>
#include <filesystem>
#include <fstream>
#include <map>
#include <set>
#include <sstream>

#include "frontend/onnx_case_runner.h"
#include "kiln/frontend/onnx.h"

namespace kiln::frontend {
namespace {

namespace fs = std::filesystem;

struct Row {
  std::string folder, domain, op_type;
  bool expanded = false;
  int opset = 0;
};

std::vector<Row> read_index(const fs::path& path) {
  std::vector<Row> rows;
  std::ifstream in(path);
  std::string line;
  std::getline(in, line);  // header
  while (std::getline(in, line)) {
    std::vector<std::string> cols;
    std::stringstream ss(line);
    std::string c;
    while (std::getline(ss, c, '\t')) cols.push_back(c);
    if (cols.size() < 6) continue;
    Row r;
    r.folder = cols[0];
    r.domain = cols[1];
    r.op_type = cols[2];
    r.expanded = cols[3] == "1";
    r.opset = cols[5] == "-" ? 0 : std::atoi(cols[5].c_str());
    rows.push_back(r);
  }
  return rows;
}

// `| \`test_name\` | reason |` rows under the "Expected node-test failures" heading of docs/onnx.md.
std::map<std::string, std::string> expected_failures() {
  std::map<std::string, std::string> out;
  std::ifstream in(fs::path(KILN_SOURCE_DIR) / "docs/onnx.md");
  std::string line;
  bool in_section = false;
  while (std::getline(in, line)) {
    if (line.rfind("## ", 0) == 0) in_section = line.find("Expected node-test failures") != std::string::npos;
    if (!in_section || line.rfind("| `test_", 0) != 0) continue;
    auto end = line.find('`', 3);
    std::string name = line.substr(3, end - 3);
    auto bar = line.find('|', end);
    out[name] = bar == std::string::npos ? "" : line.substr(bar + 1);
  }
  return out;
}

TEST(OnnxNodeTests, SupportedOperatorsPass) {
  const fs::path root = fs::path(KILN_SOURCE_DIR) / ".." / "shared" / "onnx-node-tests";
  if (!fs::exists(root / "node") || !fs::exists(root / "index.tsv")) {
    GTEST_SKIP() << "ONNX node tests not found at " << root << " (optional data; nothing to check)";
  }
  auto supported_list = onnx_supported_ops();
  std::set<std::string> supported(supported_list.begin(), supported_list.end());
  auto expected = expected_failures();
  struct Counts {
    int pass = 0, fail = 0, expected_fail = 0, skipped = 0;
  };
  std::map<std::string, Counts> per_op;
  std::vector<std::string> unexpected, fixed;
  for (const Row& r : read_index(root / "index.tsv")) {
    if (!(r.domain == "ai.onnx" || r.domain.empty()) || !supported.count(r.op_type)) continue;
    Counts& c = per_op[r.op_type];
    if (r.opset < kOnnxMinOpset) {
      ++c.skipped;
      continue;
    }
    if (r.expanded) {
      // An expanded test (the op written out as a function body) runs when Kiln supports every op in it.
      bool all_supported = true;
      for (const auto& op : onnx_op_types((root / "node" / r.folder / "model.onnx").string())) {
        all_supported = all_supported && supported.count(op) != 0;
      }
      if (!all_supported) {
        ++c.skipped;
        continue;
      }
    }
    auto result = testing::run_onnx_case((root / "node" / r.folder).string(), 1e-3, 1e-7);
    const bool listed = expected.count(r.folder) != 0;
    if (result.passed) {
      ++c.pass;
      if (listed) fixed.push_back(r.folder);
    } else if (listed) {
      ++c.expected_fail;
    } else {
      ++c.fail;
      unexpected.push_back(r.folder + " (" + r.op_type + ", opset " + std::to_string(r.opset) + "): " + result.message);
    }
  }
  int pass = 0, fail = 0, xfail = 0, skipped = 0;
  std::printf("%-22s %5s %5s %6s %7s\n", "operator", "pass", "fail", "xfail", "skipped");
  for (const auto& [op, c] : per_op) {
    std::printf("%-22s %5d %5d %6d %7d\n", op.c_str(), c.pass, c.fail, c.expected_fail, c.skipped);
    pass += c.pass;
    fail += c.fail;
    xfail += c.expected_fail;
    skipped += c.skipped;
  }
  std::printf("%-22s %5d %5d %6d %7d\n", "total", pass, fail, xfail, skipped);
  for (const auto& f : fixed) std::printf("note: %s is listed as an expected failure in docs/onnx.md but passes\n", f.c_str());
  std::string all;
  for (const auto& u : unexpected) all += "\n  " + u;
  EXPECT_TRUE(unexpected.empty()) << unexpected.size() << " node tests failed that docs/onnx.md does not list:" << all;
}

}  // namespace
}  // namespace kiln::frontend
