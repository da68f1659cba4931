// Gathering the facts `kiln doctor` judges (see include/kiln/driver/doctor.h): library versions
// and paths, LLVM's view of the host, the C compiler and linker, the build job count.
#include <dlfcn.h>
#include <sched.h>
#include <stdlib.h>
#include <sys/stat.h>
#include <unistd.h>

#include <algorithm>
#include <array>
#include <cstdio>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <sstream>
#include <string>
#include <thread>
#include <vector>

#include "driver/cross_linker.h"
#include "driver/shell_command.h"
#include "kiln/codegen/fma_peak.h"
#include "kiln/codegen/host_info.h"
#include "kiln/driver/compile.h"
#include "kiln/driver/doctor.h"
#include "kiln/runtime/c_api.h"
#include "kiln/support/machine.h"
#include "kiln/version.h"

namespace kiln::driver {
namespace {

std::string first_line(const std::string& text) {
  std::string line = text.substr(0, text.find('\n'));
  while (!line.empty() && (line.back() == '\r' || line.back() == ' ')) line.pop_back();
  return line;
}

bool is_executable_file(const std::string& path) {
  struct stat st;
  return stat(path.c_str(), &st) == 0 && S_ISREG(st.st_mode) && access(path.c_str(), X_OK) == 0;
}

// The last `max_lines` lines of a tool's output, joined with " | " for a one-line report.
std::string tail_lines(const std::string& text, size_t max_lines) {
  std::vector<std::string> lines;
  std::stringstream in(text);
  std::string line;
  while (std::getline(in, line)) {
    if (!line.empty()) lines.push_back(line);
  }
  const size_t start = lines.size() > max_lines ? lines.size() - max_lines : 0;
  std::string joined;
  for (size_t i = start; i < lines.size(); ++i) joined += (joined.empty() ? "" : " | ") + lines[i];
  return joined;
}

// Builds, loads and calls a trivial shared object with `cc`. Returns "" on success, else why not.
std::string try_link_shared_object(const std::string& cc) {
  const char* tmp_env = std::getenv("TMPDIR");
  std::string tmpl = std::string(tmp_env && *tmp_env ? tmp_env : "/tmp") + "/kiln-doctor-XXXXXX";
  if (mkdtemp(tmpl.data()) == nullptr) return "cannot create a temporary directory from " + tmpl;
  const std::filesystem::path dir(tmpl);
  std::string error;
  {
    std::ofstream src(dir / "probe.c");
    src << "int kiln_doctor_probe(int x) { return x * 6; }\n";
  }
  const std::string so = (dir / "probe.so").string();
  std::string output;
  const int rc = run_capture(shell_quote(cc) + " -shared -fPIC -o " + shell_quote(so) + " " +
                                 shell_quote((dir / "probe.c").string()),
                             &output);
  if (rc != 0) {
    error = "'" + cc + " -shared -fPIC' exited with " + std::to_string(rc) + ": " +
            tail_lines(output, 3);
  } else if (void* handle = dlopen(so.c_str(), RTLD_NOW | RTLD_LOCAL)) {
    using Probe = int (*)(int);
    auto probe = reinterpret_cast<Probe>(dlsym(handle, "kiln_doctor_probe"));
    if (probe == nullptr) {
      error = "the shared object it built has no symbol kiln_doctor_probe";
    } else if (probe(7) != 42) {
      error = "the shared object it built computed a wrong result";
    }
    dlclose(handle);
  } else {
    const char* why = dlerror();
    error = std::string("the shared object it built does not load: ") + (why ? why : "?");
  }
  std::error_code ec;
  std::filesystem::remove_all(dir, ec);
  return error;
}

std::string loaded_library_path(const void* symbol) {
  Dl_info info{};
  if (dladdr(symbol, &info) == 0 || info.dli_fname == nullptr) return "";
  return info.dli_fname;
}


}  // namespace

// `name` if it contains a '/', else its first match on $PATH; "" when not an executable file.
std::string find_executable(const std::string& name) {
  if (name.empty()) return "";
  if (name.find('/') != std::string::npos) return is_executable_file(name) ? name : "";
  const char* path_env = std::getenv("PATH");
  std::stringstream dirs(path_env ? path_env : "/usr/bin:/bin");
  std::string dir;
  while (std::getline(dirs, dir, ':')) {
    const std::string candidate = (dir.empty() ? "." : dir) + "/" + name;
    if (is_executable_file(candidate)) return candidate;
  }
  return "";
}

int recommended_build_jobs(int cores, int64_t available_mb, int64_t per_job_mb) {
  const int64_t by_memory = per_job_mb > 0 ? available_mb / per_job_mb : cores;
  return static_cast<int>(std::max<int64_t>(1, std::min<int64_t>(cores, by_memory)));
}

std::string c_compiler_command(std::string* source) {
  const char* kiln_cc = std::getenv("KILN_CC");
  const bool from_env = kiln_cc != nullptr && *kiln_cc != '\0';
  if (source != nullptr) *source = from_env ? "KILN_CC" : "default";
  return from_env ? kiln_cc : "cc";
}

CCompilerFacts probe_c_compiler(const std::string& command, const std::string& source) {
  CCompilerFacts cc;
  cc.command = command;
  cc.source = source;
  cc.path = find_executable(command);
  if (cc.path.empty()) {
    cc.link_error = "not found";
    return cc;
  }
  std::string output;
  if (run_capture(shell_quote(cc.path) + " --version", &output) == 0) {
    cc.version = first_line(output);
  }
  if (run_capture(shell_quote(cc.path) + " -print-prog-name=ld", &output) == 0) {
    const std::string ld = first_line(output);
    cc.linker = find_executable(ld);
    if (cc.linker.empty()) cc.linker = ld + " (not found)";
    else if (run_capture(shell_quote(cc.linker) + " --version", &output) == 0) {
      cc.linker_version = first_line(output);
    }
  }
  cc.link_error = try_link_shared_object(cc.path);
  cc.links_shared = cc.link_error.empty();
  return cc;
}

DoctorFacts gather_doctor_facts(const std::string& cli_version,
                                const std::vector<std::string>& cross_triples) {
  DoctorFacts f;
  f.cli_version = cli_version;
  f.compiler_version = compiler_version();
  f.compiler_abi = compiler_abi_version();
  f.expected_runtime_abi = expected_runtime_abi_version();
  f.compiler_library_path =
      loaded_library_path(reinterpret_cast<const void*>(&compiler_version));
  f.runtime_version = kiln_runtime_version();
  f.runtime_abi = kiln_runtime_abi_version();
  f.runtime_library_path =
      loaded_library_path(reinterpret_cast<const void*>(&kiln_runtime_version));
  if (const char* llp = std::getenv("LD_LIBRARY_PATH")) f.ld_library_path = llp;

  const codegen::HostInfo& host = codegen::host_info();
  f.llvm_version = host.llvm_version;
  f.llvm_static = host.llvm_static;
  f.cpu_name = host.cpu_name;
  f.default_triple = host.default_triple;
  f.cpu_features = host.features;

  std::string cc_source;
  const std::string cc = c_compiler_command(&cc_source);
  f.cc = probe_c_compiler(cc, cc_source);
  std::vector<std::string> triples = cross_triples;
  if (triples.empty()) {
    triples.push_back(f.default_triple.rfind("aarch64", 0) == 0 ? "x86_64-unknown-linux-gnu"
                                                                : "aarch64-unknown-linux-gnu");
  }
  for (const std::string& triple : triples) {
    CrossLinkFacts x;
    x.triple = triple;
    x.requested = !cross_triples.empty();
    const CrossLinker linker = find_cross_linker(triple);
    if (!linker.command.empty()) x.linker = linker.command + " (" + linker.origin + ")";
    x.detail = probe_cross_link(linker);
    x.ok = x.detail.empty();
    if (!x.ok) x.fix = cross_link_hint(triple);
    f.cross_links.push_back(x);
  }

  f.cores = usable_cores();
  f.available_memory_mb = available_memory_mb();
  f.memory_per_job_mb = 2048;
  if (const char* per_job = std::getenv("KILN_MEM_PER_JOB_MB")) {
    char* end = nullptr;
    const long long v = std::strtoll(per_job, &end, 10);
    if (end != per_job && *end == '\0' && v > 0) f.memory_per_job_mb = v;
  }
  f.recommended_jobs =
      recommended_build_jobs(f.cores, f.available_memory_mb, f.memory_per_job_mb);
  try {
    const codegen::FmaPeak peak = codegen::measure_fma_peak(20);
    f.fma_best_gflops = peak.gflops;
    f.fma_median_gflops = peak.median_gflops;
    f.fma_windows = peak.windows;
    f.fma_detail = peak.probe();
  } catch (const std::exception& e) {
    f.fma_detail = e.what();
  }
  const CompileSelfTest compiled = compile_self_test();
  f.compile_checked = true;
  f.compile_ok = compiled.ok;
  f.compile_detail = compiled.detail;
  return f;
}

}  // namespace kiln::driver
