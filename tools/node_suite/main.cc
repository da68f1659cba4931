// kiln_node_suite: the whole ONNX node suite through Kiln (see suite.h). Usually driven by
// scripts/node-suite.sh, which also runs ONNX Runtime (ort_node_suite.js) beside it.
//   kiln_node_suite run    --root DIR --out KILN.tsv [--jobs N] [--timeout S] [--filter TEXT]
//                          [--target T] [--ref-only | --compiled-only]
//   kiln_node_suite report --root DIR --kiln KILN.tsv [--ort ORT.tsv] [--tsv OUT.tsv]
//                          [--update-doc FILE.md] [--markdown OUT.md] [--command TEXT]
// Exit status: 0 done (failing tests are results, not errors), 2 usage or user error, 3 internal.
#include <CLI/CLI.hpp>
#include <cstdio>

#include "kiln/support/error.h"
#include "node_suite/suite.h"

int main(int argc, char** argv) {
  using namespace kiln::node_suite;
  CLI::App app{"Runs the whole ONNX node suite through Kiln's reference executor and compiled artifacts",
               "kiln_node_suite"};
  app.require_subcommand(1);
  RunOptions run;
  CLI::App* run_cmd = app.add_subcommand("run", "run every test (one forked child per test and mode)");
  run_cmd->add_option("--root", run.root, "folder holding node/ and index.tsv")->required();
  run_cmd->add_option("--out", run.out_tsv, "results TSV to write")->required();
  run_cmd->add_option("--jobs", run.jobs, "children at a time")->capture_default_str();
  run_cmd->add_option("--timeout", run.timeout_s, "seconds per test and mode")->capture_default_str();
  run_cmd->add_option("--filter", run.filter, "only tests whose name contains TEXT");
  run_cmd->add_option("--target", run.target, "compile target")->capture_default_str();
  bool ref_only = false, compiled_only = false;
  run_cmd->add_flag("--ref-only", ref_only, "reference executor only");
  run_cmd->add_flag("--compiled-only", compiled_only, "compiled only");
  ReportOptions report;
  CLI::App* report_cmd = app.add_subcommand("report", "tables from the results");
  report_cmd->add_option("--root", report.root, "folder holding node/ and index.tsv")->required();
  report_cmd->add_option("--kiln", report.kiln_tsv, "the run step's TSV")->required();
  report_cmd->add_option("--ort", report.ort_tsv, "ort_node_suite.js's TSV");
  report_cmd->add_option("--tsv", report.out_tsv, "per-test TSV to write");
  report_cmd->add_option("--update-doc", report.update_doc, "Markdown file whose node-suite section is regenerated");
  report_cmd->add_option("--markdown", report.markdown, "write that section to this file");
  report_cmd->add_option("--command", report.command, "the command quoted in that section");
  CLI11_PARSE(app, argc, argv);
  try {
    if (run_cmd->parsed()) {
      run.ref = !compiled_only;
      run.compiled = !ref_only;
      run_suite(run);
    } else {
      report_suite(report);
    }
  } catch (const kiln::UserError& e) {
    std::fprintf(stderr, "error: %s\n", e.what());
    return 2;
  } catch (const std::exception& e) {
    std::fprintf(stderr, "internal error: %s\n", e.what());
    return 3;
  }
  return 0;
}
