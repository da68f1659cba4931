// `kiln doctor`: what this installation is made of, and whether it can do its job.
//
// Three steps, kept apart so tests can inject facts:
//   gather_doctor_facts()  asks the libraries, LLVM, the C compiler and the machine (side effects:
//                          runs the C compiler once in a temporary directory);
//   judge_doctor_facts()   pure: turns facts into problems, each with the fix;
//   print_doctor_report()  prints the facts, then one `problem: ...` line per problem.
// run_doctor() does all three and returns the process exit code (0 when there is no problem).
#ifndef KILN_DRIVER_DOCTOR_H_
#define KILN_DRIVER_DOCTOR_H_

#include <cstdint>
#include <iosfwd>
#include <string>
#include <vector>

namespace kiln::driver {

// The C compiler Kiln calls to link generated objects into shared libraries.
struct CCompilerFacts {
  std::string command;         // what was asked for: $KILN_CC, else "cc"
  std::string source;          // where `command` came from: "KILN_CC" or "default"
  std::string path;            // resolved executable; empty when not found
  std::string version;         // first line of `<cc> --version`
  std::string linker;          // the linker it drives (`<cc> -print-prog-name=ld`, resolved)
  std::string linker_version;  // first line of `<linker> --version`
  bool links_shared = false;   // built a trivial shared object, loaded it and called into it
  std::string link_error;      // why not, when links_shared is false
};

// Linking artifacts for a foreign architecture (driver/cross_linker.h), for one triple.
struct CrossLinkFacts {
  std::string triple;     // LLVM triple, e.g. "aarch64-unknown-linux-gnu"
  bool requested = false; // named by `kiln doctor --cross-triple` (then a failure is a problem)
  std::string linker;     // the command that links, and where it came from; empty when none
  bool ok = false;        // linked a trivial shared object of the triple's ELF machine
  std::string detail;     // why not, when !ok
  std::string fix;        // what to install, when !ok
};

struct DoctorFacts {
  std::string cli_version;  // the `kiln` executable's own version
  std::string compiler_version;
  int compiler_abi = 0;
  int expected_runtime_abi = 0;  // the runtime ABI libkiln was built against
  std::string compiler_library_path;
  std::string runtime_version;
  int runtime_abi = 0;
  std::string runtime_library_path;  // the libkiln_runtime actually loaded (dladdr)
  std::string ld_library_path;       // $LD_LIBRARY_PATH, which can pick another runtime

  std::string llvm_version;
  bool llvm_static = false;
  std::string cpu_name;
  std::string default_triple;
  std::vector<std::string> cpu_features;  // every feature LLVM reports enabled, sorted

  CCompilerFacts cc;
  std::vector<CrossLinkFacts> cross_links;  // the other architecture's triple, or those requested

  int cores = 0;
  int64_t available_memory_mb = 0;
  int64_t memory_per_job_mb = 0;
  int recommended_jobs = 0;

  // The calling core's f32 FMA throughput now (codegen/fma_peak.h: 20 windows of ~10 ms): the
  // best window (what the core can do) and the median (what it did just now). 0: not measured.
  double fma_best_gflops = 0;
  double fma_median_gflops = 0;
  int fma_windows = 0;
  std::string fma_detail;  // "znver3, 256-bit FMA, 12 chains", or why it was not measured

  // compile_self_test() (compile.h): a tiny graph compiled, loaded and run on this machine.
  bool compile_checked = false;  // false: not run (facts made up by tests)
  bool compile_ok = false;
  std::string compile_detail;
};

// The CPU features that matter for Kiln's kernels, in the order the report lists them.
const std::vector<std::string>& relevant_cpu_features();

// The build job count rule shared with scripts/job-count.sh:
// max(1, min(cores, available_mb / per_job_mb)).
int recommended_build_jobs(int cores, int64_t available_mb, int64_t per_job_mb);

// What the FMA probe says about timing on this machine right now: "" when the median window is
// within 10 % of the best one; else a note that the core is shared (its arithmetic throughput
// varies from one 10 ms window to the next) and that timings taken now are slow and noisy. Not a
// problem: nothing in the installation to fix.
std::string fma_throughput_note(double best_gflops, double median_gflops);

// The C compiler Kiln calls to link generated objects into shared libraries: $KILN_CC when set
// and non-empty, else "cc". `source`, when given, receives "KILN_CC" or "default". Whatever links
// artifacts should use this, so that doctor checks the compiler that will really be called.
std::string c_compiler_command(std::string* source = nullptr);

// `name` if it contains a '/', else its first match on $PATH; "" when not an executable file.
std::string find_executable(const std::string& name);

// Probes the C compiler `command` (a name looked up on PATH, or a path).
CCompilerFacts probe_c_compiler(const std::string& command, const std::string& source);

// Gathers every fact. `cli_version` is the calling executable's own version; cross-linking is
// checked for `cross_triples`, or (when empty) for the architecture the host is not
// (x86-64 <-> AArch64).
DoctorFacts gather_doctor_facts(const std::string& cli_version,
                                const std::vector<std::string>& cross_triples = {});

// One problem: what is wrong and how to fix it.
struct DoctorProblem {
  std::string what;
  std::string fix;
};

// Pure judgement of the facts; an empty result means all is well.
std::vector<DoctorProblem> judge_doctor_facts(const DoctorFacts& facts);

// Prints the facts, then `problem: <what>` and `  fix: <fix>` per problem, or `ok: ...`.
void print_doctor_report(const DoctorFacts& facts, const std::vector<DoctorProblem>& problems,
                         std::ostream& out);

// Gathers, judges and prints; returns 0 when there is no problem, 1 otherwise.
int run_doctor(const std::string& cli_version, std::ostream& out,
               const std::vector<std::string>& cross_triples = {});

}  // namespace kiln::driver

#endif  // KILN_DRIVER_DOCTOR_H_
