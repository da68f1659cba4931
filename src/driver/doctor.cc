// Judging and printing the facts of `kiln doctor` (see include/kiln/driver/doctor.h).
#include "kiln/driver/doctor.h"

#include <algorithm>
#include <cstdio>
#include <ostream>
#include <string>
#include <vector>

namespace kiln::driver {
namespace {

bool starts_with(const std::string& s, const std::string& prefix) {
  return s.rfind(prefix, 0) == 0;
}

bool is_aarch64(const std::string& triple) {
  return starts_with(triple, "aarch64") || starts_with(triple, "arm64");
}

const std::vector<std::string>& aarch64_relevant_features() {
  static const std::vector<std::string> kFeatures = {"neon", "fullfp16", "dotprod", "i8mm",
                                                     "bf16", "sve",  "sve2"};
  return kFeatures;
}

std::string or_unknown(const std::string& s) { return s.empty() ? "(unknown)" : s; }

void row(std::ostream& out, const std::string& label, const std::string& value) {
  out << "  " << label << std::string(label.size() < 20 ? 20 - label.size() : 1, ' ') << value
      << "\n";
}

}  // namespace

const std::vector<std::string>& relevant_cpu_features() {
  static const std::vector<std::string> kFeatures = {
      "sse4.2",     "avx",        "avx2",       "fma",         "f16c",     "avx512f",
      "avx512bw",   "avx512dq",   "avx512vl",   "avx512vnni",  "avx512bf16", "avx512fp16",
      "avxvnni",    "amx-tile",   "amx-int8",   "amx-bf16"};
  return kFeatures;
}

std::vector<DoctorProblem> judge_doctor_facts(const DoctorFacts& f) {
  std::vector<DoctorProblem> problems;
  const std::string llp_hint =
      f.ld_library_path.empty()
          ? ""
          : " LD_LIBRARY_PATH is set ('" + f.ld_library_path +
                "') and is searched before the build's RUNPATH: remove the directory holding the "
                "other libkiln_runtime from it.";
  if (f.runtime_abi != f.expected_runtime_abi) {
    problems.push_back(
        {"runtime ABI mismatch: libkiln_runtime at " + or_unknown(f.runtime_library_path) +
             " has runtime ABI " + std::to_string(f.runtime_abi) + ", but libkiln " +
             f.compiler_version + " at " + or_unknown(f.compiler_library_path) +
             " was built for runtime ABI " + std::to_string(f.expected_runtime_abi),
         "use the libkiln_runtime built together with this libkiln (rebuild with 'make', or "
         "reinstall both from one Kiln version)." + llp_hint});
  }
  if (f.runtime_version != f.compiler_version) {
    problems.push_back({"version mismatch: libkiln_runtime at " +
                            or_unknown(f.runtime_library_path) + " is Kiln " + f.runtime_version +
                            ", libkiln at " + or_unknown(f.compiler_library_path) + " is Kiln " +
                            f.compiler_version,
                        "use libraries from one Kiln build (rebuild with 'make')." + llp_hint});
  }
  if (!f.cli_version.empty() && f.cli_version != f.compiler_version) {
    problems.push_back({"version mismatch: this kiln executable is Kiln " + f.cli_version +
                            " but it loaded libkiln " + f.compiler_version + " from " +
                            or_unknown(f.compiler_library_path),
                        "run the kiln executable from the same build as libkiln."});
  }
  if (f.runtime_library_path.empty()) {
    problems.push_back({"cannot tell which libkiln_runtime was loaded (dladdr found no file)",
                        "check that libkiln_runtime.so is a regular shared library."});
  }
  if (f.cpu_name.empty() || f.default_triple.empty()) {
    problems.push_back({"LLVM reported no host CPU or target triple",
                        "rebuild libkiln against a working LLVM 19 (see docs/build.md)."});
  }
  const std::string cc_name =
      "C compiler '" + f.cc.command + "' (" +
      (f.cc.source == "KILN_CC" ? "from $KILN_CC" : "the default; KILN_CC chooses another") + ")";
  if (f.cc.path.empty()) {
    problems.push_back(
        {cc_name + " not found" + (f.cc.command.find('/') == std::string::npos ? " on PATH" : ""),
         "install one ('apt-get install gcc', which scripts/install-deps.sh does) or set KILN_CC "
         "to a C compiler that can link shared libraries."});
  } else if (!f.cc.links_shared) {
    problems.push_back({cc_name + " at " + f.cc.path +
                            " cannot build and load a trivial shared object: " + f.cc.link_error,
                        "check that '" + f.cc.command +
                            " -shared -fPIC' works (binutils and libc6-dev installed), or set "
                            "KILN_CC to a C compiler that does."});
  }
  for (const CrossLinkFacts& x : f.cross_links) {
    if (x.requested && !x.ok) {
      problems.push_back({"cannot link artifacts for " + x.triple + ": " + x.detail, x.fix});
    }
  }
  if (f.compile_checked && !f.compile_ok) {
    problems.push_back({"cannot compile and run a model on this machine: " + f.compile_detail,
                        "run 'kiln compile --example tiny-cnn -o /tmp/t.so' with --log driver=debug and fix "
                        "the step it names (often the C compiler above)"});
  }
  return problems;
}

void print_doctor_report(const DoctorFacts& f, const std::vector<DoctorProblem>& problems,
                         std::ostream& out) {
  out << "Kiln doctor\n";
  row(out, "kiln", f.cli_version);
  row(out, "libkiln", f.compiler_version + "  compiler ABI " + std::to_string(f.compiler_abi) +
                          ", built for runtime ABI " + std::to_string(f.expected_runtime_abi));
  row(out, "  loaded from", or_unknown(f.compiler_library_path));
  row(out, "libkiln_runtime",
      f.runtime_version + "  runtime ABI " + std::to_string(f.runtime_abi));
  row(out, "  loaded from", or_unknown(f.runtime_library_path));
  row(out, "LD_LIBRARY_PATH", f.ld_library_path.empty() ? "(unset)" : f.ld_library_path);
  row(out, "LLVM", f.llvm_version + (f.llvm_static ? ", linked statically into libkiln"
                                                   : ", linked as the shared libLLVM"));
  row(out, "host CPU", or_unknown(f.cpu_name) +
                           (f.cpu_name == "generic" ? " (LLVM does not know this CPU model; "
                                                      "code is tuned generically but still uses "
                                                      "the features below)"
                                                    : ""));
  row(out, "target triple", or_unknown(f.default_triple));
  const auto& relevant =
      is_aarch64(f.default_triple) ? aarch64_relevant_features() : relevant_cpu_features();
  std::string have, lack;
  for (const std::string& feature : relevant) {
    const bool present =
        std::binary_search(f.cpu_features.begin(), f.cpu_features.end(), feature);
    std::string& list = present ? have : lack;
    list += (list.empty() ? "" : " ") + feature;
  }
  row(out, "CPU features", have.empty() ? "(none of the relevant ones)" : have);
  row(out, "  absent", lack.empty() ? "(none)" : lack);
  row(out, "  all enabled", std::to_string(f.cpu_features.size()) + " features reported by LLVM");
  row(out, "C compiler", f.cc.command + " (" + (f.cc.source == "KILN_CC" ? "$KILN_CC" : "default") +
                             ") -> " + (f.cc.path.empty() ? "NOT FOUND" : f.cc.path));
  if (!f.cc.path.empty()) {
    row(out, "  version", or_unknown(f.cc.version));
    row(out, "  linker", or_unknown(f.cc.linker) +
                             (f.cc.linker_version.empty() ? "" : ": " + f.cc.linker_version));
    row(out, "  shared object", f.cc.links_shared ? "ok (built, loaded and called a trivial one)"
                                                   : "FAILED: " + f.cc.link_error);
  }
  for (const CrossLinkFacts& x : f.cross_links) {
    row(out, "cross link", x.triple + ": " +
                               (x.ok ? "ok via " + x.linker
                                     : "NOT AVAILABLE" + (x.linker.empty() ? "" : " (" + x.linker + ")") +
                                           ": " + x.detail + "; fix: " + x.fix));
  }
  if (f.compile_checked) {
    row(out, "compile + run", (f.compile_ok ? "ok: " : "FAILED: ") + f.compile_detail);
  }
  if (f.fma_best_gflops > 0) {
    char text[160];
    std::snprintf(text, sizeof text, "best %.1f, median %.1f GFLOP/s per core over %d x 10 ms (", f.fma_best_gflops,
                  f.fma_median_gflops, f.fma_windows);
    row(out, "FMA throughput", text + f.fma_detail + ")");
    const std::string note = fma_throughput_note(f.fma_best_gflops, f.fma_median_gflops);
    if (!note.empty()) row(out, "  now", note);
  } else if (!f.fma_detail.empty()) {
    row(out, "FMA throughput", "not measured: " + f.fma_detail);
  }
  row(out, "build jobs",
      std::to_string(f.recommended_jobs) + "  = max(1, min(" + std::to_string(f.cores) +
          " cores, " + std::to_string(f.available_memory_mb) + " MB available / " +
          std::to_string(f.memory_per_job_mb) + " MB per job))");
  if (problems.empty()) {
    out << "ok: no problems found\n";
    return;
  }
  for (const DoctorProblem& p : problems) out << "problem: " << p.what << "; fix: " << p.fix << "\n";
}

std::string fma_throughput_note(double best_gflops, double median_gflops) {
  if (best_gflops <= 0 || median_gflops >= 0.9 * best_gflops) return "";
  char text[320];
  std::snprintf(text, sizeof text,
                "busy: the median window is %.0f %% below the best, so this core's arithmetic is shared "
                "with other work right now (another process, or another tenant of a VM host); time "
                "measurements taken now will be slow and noisy",
                100 * (1 - median_gflops / best_gflops));
  return text;
}

int run_doctor(const std::string& cli_version, std::ostream& out,
               const std::vector<std::string>& cross_triples) {
  const DoctorFacts facts = gather_doctor_facts(cli_version, cross_triples);
  const std::vector<DoctorProblem> problems = judge_doctor_facts(facts);
  print_doctor_report(facts, problems, out);
  return problems.empty() ? 0 : 1;
}

}  // namespace kiln::driver
