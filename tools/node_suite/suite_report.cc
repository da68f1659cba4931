// kiln_node_suite's report step: joins index.tsv, the run step's TSV and ONNX Runtime's TSV into a
// per-test TSV, prints the per-operator table (tests, Kiln reference / compiled passes, compiled
// passes that needed bound inputs, ONNX Runtime passes), the totals and Kiln's failures by
// category, and regenerates the node-suite section of a Markdown file (docs/onnx.md) between the
// markers kBegin and kEnd: the command, the totals, the table and every test Kiln compiled fails.
#include <cstdio>
#include <fstream>
#include <map>
#include <set>
#include <sstream>

#include "kiln/support/error.h"
#include "node_suite/suite.h"

namespace kiln::node_suite {
namespace {

constexpr const char* kBegin = "<!-- node-suite:begin -->";
constexpr const char* kEnd = "<!-- node-suite:end -->";

std::vector<std::string> split_tabs(const std::string& line) {
  std::vector<std::string> cols;
  std::stringstream ss(line);
  std::string c;
  while (std::getline(ss, c, '\t')) cols.push_back(c);
  return cols;
}

std::vector<std::vector<std::string>> read_rows(const std::string& path, bool header) {
  std::vector<std::vector<std::string>> rows;
  std::ifstream in(path);
  std::string line;
  if (header) std::getline(in, line);
  while (std::getline(in, line)) {
    if (!line.empty()) rows.push_back(split_tabs(line));
  }
  return rows;
}

std::string op_key(const TestInfo& t) { return t.domain == "ai.onnx" || t.domain.empty() ? t.op : t.domain + "." + t.op; }

std::string md_cell(std::string s, size_t max = 220) {
  if (s.size() > max) s = s.substr(0, max) + "...";
  std::string out;
  for (char c : s) {
    if (c == '|') out += "\\|";
    else if (c == '`') out += '\'';
    else out += c;
  }
  return out;
}

struct Counts {
  int tests = 0, ref = 0, compiled = 0, bound = 0, ort = 0;
  void add(const KilnResult& k, const Outcome& ort_outcome) {
    ++tests;
    ref += k.ref.status == "pass";
    compiled += k.compiled.status == "pass";
    bound += k.compiled.status == "pass" && !k.compiled.bound.empty();
    ort += ort_outcome.status == "pass";
  }
};

// The reason Kiln fails a test: the compiled run's, or the reference's when only it fails.
const Outcome& kiln_failure(const KilnResult& k) { return k.compiled.status != "pass" ? k.compiled : k.ref; }

}  // namespace

std::vector<TestInfo> read_index(const std::string& index_tsv) {
  std::ifstream probe(index_tsv);
  if (!probe) throw UserError(UserErrorKind::kNotFound, index_tsv, "cannot read the node suite's index", "pass --root DIR (the folder with node/ and index.tsv)");
  std::vector<TestInfo> out;
  for (const auto& c : read_rows(index_tsv, true)) {
    if (c.size() < 6) continue;
    TestInfo t;
    t.name = c[0];
    t.domain = c[1];
    t.op = c[2];
    t.expanded = c[3] == "1";
    t.opset = c[5] == "-" ? 0 : std::atoi(c[5].c_str());
    out.push_back(t);
  }
  return out;
}

std::string failure_category(const std::string& m) {
  auto has = [&](const char* s) { return m.find(s) != std::string::npos; };
  if (has("computed at run time")) return "constant-input";
  // A model importing no ai.onnx opset uses only other domains' operators.
  if (has("operator domain") || has("imports no ai.onnx opset") || (has("operator ") && has(") is not supported"))) return "unsupported-op";
  if (has("element type") && (has("not supported") || has("does not support"))) return "dtype";
  if (has("ai.onnx opset") || (has("opset ") && has("outside the supported range"))) return "opset";
  if (has("is not a tensor")) return "non-tensor";
  if (has("test_data_set_") && has(" output ")) return "mismatch";
  if (has("outputs, the test expects")) return "mismatch";
  if (has("is supported in") || has("not supported")) return "unsupported-feature";
  return "other";
}

std::map<std::string, KilnResult> read_kiln_tsv(const std::string& path) {
  std::ifstream probe(path);
  if (!probe) throw UserError(UserErrorKind::kNotFound, path, "no such file", "run `kiln_node_suite run` first");
  std::map<std::string, KilnResult> out;
  // Categories are derived again from the reasons, so a report of an older run uses today's rules.
  auto category = [](const std::string& status, const std::string& reason) {
    return status == "pass" || status == "crash" || status == "timeout" || status == "-" ? status
                                                                                          : failure_category(reason);
  };
  for (auto c : read_rows(path, true)) {
    c.resize(7);
    out[c[0]] = {{category(c[1], c[3]), c[2], c[3]}, {category(c[4], c[6]), c[5], c[6]}};
  }
  return out;
}

std::map<std::string, Outcome> read_ort_tsv(const std::string& path) {
  std::map<std::string, Outcome> out;
  if (path.empty()) return out;
  for (auto c : read_rows(path, false)) {
    c.resize(3);
    out[c[0]] = {c[1], "", c[2]};
  }
  return out;
}

void report_suite(const ReportOptions& options) {
  const auto tests = read_index(options.root + "/index.tsv");
  const auto kiln = read_kiln_tsv(options.kiln_tsv);
  const auto ort = read_ort_tsv(options.ort_tsv);
  std::map<std::string, Counts> per_op;
  Counts total;
  std::map<std::string, int> ref_categories, compiled_categories;
  std::vector<const TestInfo*> failed;
  std::ofstream tsv;
  if (!options.out_tsv.empty()) {
    tsv.open(options.out_tsv);
    if (!tsv) throw UserError(UserErrorKind::kIO, options.out_tsv, "cannot open the file for writing");
    tsv << "test\top\tdomain\topset\tref\tcompiled\tbound\tort\treason\tort_reason\n";
  }
  const Outcome not_run;
  for (const TestInfo& t : tests) {
    auto k = kiln.find(t.name);
    if (k == kiln.end()) continue;  // not run (a --filter run)
    auto o = ort.find(t.name);
    const Outcome& ort_outcome = o == ort.end() ? not_run : o->second;
    per_op[op_key(t)].add(k->second, ort_outcome);
    total.add(k->second, ort_outcome);
    if (k->second.ref.status != "pass") ++ref_categories[k->second.ref.status];
    if (k->second.compiled.status != "pass") {
      ++compiled_categories[k->second.compiled.status];
      failed.push_back(&t);
    }
    if (tsv) {
      const Outcome& why = kiln_failure(k->second);
      tsv << t.name << '\t' << t.op << '\t' << t.domain << '\t' << t.opset << '\t' << k->second.ref.status << '\t'
          << k->second.compiled.status << '\t' << k->second.compiled.bound << '\t' << ort_outcome.status << '\t'
          << (why.status == "pass" ? "" : why.reason) << '\t' << ort_outcome.reason << '\n';
    }
  }

  std::printf("%-40s %6s %6s %9s %6s %6s\n", "operator", "tests", "ref", "compiled", "bound", "ort");
  for (const auto& [op, c] : per_op) {
    std::printf("%-40s %6d %6d %9d %6d %6d\n", op.c_str(), c.tests, c.ref, c.compiled, c.bound, c.ort);
  }
  std::printf("%-40s %6d %6d %9d %6d %6d\n", "total", total.tests, total.ref, total.compiled, total.bound, total.ort);
  std::printf("\nKiln failures by category (reference / compiled):\n");
  std::set<std::string> cats;
  for (const auto& [c, n] : ref_categories) cats.insert(c);
  for (const auto& [c, n] : compiled_categories) cats.insert(c);
  for (const auto& c : cats) {
    std::printf("  %-20s %5d %5d\n", c.c_str(), ref_categories.count(c) ? ref_categories.at(c) : 0,
                compiled_categories.count(c) ? compiled_categories.at(c) : 0);
  }
  std::printf("\nTOTAL tests=%d kiln_ref=%d kiln_compiled=%d kiln_compiled_bound=%d ort=%d\n", total.tests, total.ref,
              total.compiled, total.bound, total.ort);

  if (options.update_doc.empty() && options.markdown.empty()) return;
  std::ostringstream md;
  md << kBegin << "\n\n";
  md << "Generated by `" << options.command << "` (do not edit by hand: rerun it).\n\n";
  md << "**Totals** (" << total.tests << " tests): Kiln reference " << total.ref << ", Kiln compiled " << total.compiled
     << " (of which " << total.bound << " with bound inputs), ONNX Runtime " << total.ort << ".\n\n";
  md << "Kiln compiled failures by category: ";
  bool first = true;
  for (const auto& [c, n] : compiled_categories) {
    md << (first ? "" : ", ") << c << " " << n;
    first = false;
  }
  md << (compiled_categories.empty() ? "none.\n\n" : ".\n\n") << "| operator | tests | Kiln ref | Kiln compiled | of which bound | ONNX Runtime |\n|---|--:|--:|--:|--:|--:|\n";
  for (const auto& [op, c] : per_op) {
    md << "| " << op << " | " << c.tests << " | " << c.ref << " | " << c.compiled << " | " << c.bound << " | " << c.ort
       << " |\n";
  }
  md << "| **total** | " << total.tests << " | " << total.ref << " | " << total.compiled << " | " << total.bound << " | "
     << total.ort << " |\n\n";
  md << "Every test Kiln compiled fails (" << failed.size() << "), with its reason:\n\n";
  md << "| test | operator | category | reason |\n|---|---|---|---|\n";
  for (const TestInfo* t : failed) {
    const KilnResult& k = kiln.at(t->name);
    md << "| " << t->name << " | " << op_key(*t) << " | " << k.compiled.status << " | " << md_cell(k.compiled.reason)
       << " |\n";
  }
  md << "\n" << kEnd;
  if (!options.markdown.empty()) {
    std::ofstream out(options.markdown);
    if (!out) throw UserError(UserErrorKind::kIO, options.markdown, "cannot open the file for writing");
    out << md.str() << "\n";
  }
  if (options.update_doc.empty()) return;

  std::ifstream in(options.update_doc);
  if (!in) throw UserError(UserErrorKind::kNotFound, options.update_doc, "cannot read the file");
  std::stringstream whole;
  whole << in.rdbuf();
  std::string doc = whole.str();
  const size_t b = doc.find(kBegin), e = doc.find(kEnd);
  if (b == std::string::npos || e == std::string::npos || e < b) {
    throw UserError(UserErrorKind::kParse, options.update_doc, std::string("has no ") + kBegin + " ... " + kEnd + " markers",
                    "add the two marker lines where the node-suite section goes");
  }
  doc = doc.substr(0, b) + md.str() + doc.substr(e + std::string(kEnd).size());
  std::ofstream out(options.update_doc);
  out << doc;
  std::fprintf(stderr, "kiln_node_suite: regenerated the node-suite section of %s\n", options.update_doc.c_str());
}

}  // namespace kiln::node_suite
