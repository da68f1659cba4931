// kiln_node_suite: runs the whole ONNX node suite (../shared/onnx-node-tests/node, every test, not
// only Kiln's supported ops) through Kiln's reference executor and Kiln compiled, one forked child
// per test and mode (a crash or a timeout is recorded, the run goes on), and reports it side by
// side with ONNX Runtime's results (ort_node_suite.js): a per-test TSV, a per-operator table, the
// failures by category and, for docs/onnx.md, a Markdown section. Driven by scripts/node-suite.sh.
#ifndef KILN_TOOLS_NODE_SUITE_SUITE_H_
#define KILN_TOOLS_NODE_SUITE_SUITE_H_

#include <map>
#include <string>
#include <vector>

namespace kiln::node_suite {

// One row of the suite's index.tsv (folder, domain, op_type, expanded, ..., ai.onnx opset).
struct TestInfo {
  std::string name, domain, op;
  bool expanded = false;
  int opset = 0;  // 0: no ai.onnx opset import
};
std::vector<TestInfo> read_index(const std::string& index_tsv);

// The outcome of one test in one mode. status: "pass" or a failure category (failure_category()),
// "crash", "timeout" or "-" (not run).
struct Outcome {
  std::string status = "-";
  std::string bound;  // inputs bound to the test's values, comma-separated ("" when none)
  std::string reason;
};

// The failure category of an error message from node_case.h's runner: unsupported-op,
// constant-input, dtype, opset, non-tensor, mismatch, unsupported-feature (an attribute value, a
// rank or a mode Kiln refuses) or other.
std::string failure_category(const std::string& message);

struct RunOptions {
  std::string root;  // the folder holding node/ and index.tsv
  std::string out_tsv;
  std::string target = "llvm";
  std::string filter;  // substring of the test name; "" = all
  int jobs = 2;
  double timeout_s = 120;
  bool ref = true, compiled = true;
};
// Runs every test of the index (matching the filter); writes out_tsv: test, ref status, ref bound,
// ref reason, compiled status, compiled bound, compiled reason. Progress on stderr.
void run_suite(const RunOptions& options);

struct KilnResult {
  Outcome ref, compiled;
};
std::map<std::string, KilnResult> read_kiln_tsv(const std::string& path);
// ort_node_suite.js's output (test, pass|fail, reason); a missing file gives an empty map.
std::map<std::string, Outcome> read_ort_tsv(const std::string& path);

struct ReportOptions {
  std::string root, kiln_tsv, ort_tsv;
  std::string out_tsv;      // per-test table, "" = none
  std::string update_doc;   // a Markdown file whose node-suite section is regenerated, "" = none
  std::string markdown;     // a file to write that section to on its own, "" = none
  std::string command;      // the command line quoted in the Markdown section
};
// Prints the per-operator table, totals and failure categories to stdout.
void report_suite(const ReportOptions& options);

}  // namespace kiln::node_suite

#endif  // KILN_TOOLS_NODE_SUITE_SUITE_H_
