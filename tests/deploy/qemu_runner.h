// Runs graphs compiled for AArch64 under qemu-user: qemu_graph_runner() returns a node_case.h
// GraphRunner that compiles the graph for an AArch64 target (driver::compile_graph, -O3), writes
// the inputs as .npy files and runs the artifact with the cross-built kiln-run-npy
// (examples/c/run_npy.c) and libkiln_runtime under `qemu-aarch64 -L /usr/aarch64-linux-gnu`,
// then reads the outputs back. find_aarch64_setup() locates the pieces and says what is missing.
#ifndef KILN_TESTS_DEPLOY_QEMU_RUNNER_H_
#define KILN_TESTS_DEPLOY_QEMU_RUNNER_H_

#include <sys/wait.h>
#include <unistd.h>

#include <atomic>
#include <cstdio>
#include <cstdlib>
#include <filesystem>
#include <memory>
#include <string>
#include <vector>

#include "kiln/driver/compile.h"
#include "kiln/ir/npy.h"
#include "kiln/support/error.h"
#include "node_suite/node_case.h"

namespace kiln::testing {

struct Aarch64Setup {
  std::string qemu;         // qemu-aarch64
  std::string sysroot;      // /usr/aarch64-linux-gnu (the target's libc for qemu -L)
  std::string runtime_dir;  // holds the cross-built libkiln_runtime.so.N
  std::string runner;       // the cross-built kiln-run-npy
  std::string missing;      // non-empty: what is missing and how to get it
};

inline std::string which(const std::string& name) {
  const char* path = std::getenv("PATH");
  std::string dirs = path ? path : "/usr/bin:/bin";
  size_t start = 0;
  while (start <= dirs.size()) {
    const size_t colon = dirs.find(':', start);
    const std::string dir = dirs.substr(start, colon == std::string::npos ? std::string::npos : colon - start);
    const std::filesystem::path p = std::filesystem::path(dir.empty() ? "." : dir) / name;
    if (access(p.c_str(), X_OK) == 0) return p.string();
    if (colon == std::string::npos) break;
    start = colon + 1;
  }
  return "";
}

// `cross_build` is the KILN_RUNTIME_ONLY AArch64 build directory (scripts/build-runtime-aarch64.sh).
inline Aarch64Setup find_aarch64_setup(const std::string& cross_build) {
  Aarch64Setup s;
  s.qemu = which("qemu-aarch64");
  s.sysroot = "/usr/aarch64-linux-gnu";
  s.runtime_dir = cross_build + "/lib";
  s.runner = cross_build + "/bin/kiln-run-npy";
  if (s.qemu.empty()) {
    s.missing = "qemu-aarch64 not found: install qemu-user (scripts/install-deps.sh)";
  } else if (!std::filesystem::exists(s.sysroot + "/lib/ld-linux-aarch64.so.1")) {
    s.missing = s.sysroot + " has no AArch64 libc: install libc6-dev-arm64-cross (scripts/install-deps.sh)";
  } else if (!std::filesystem::exists(s.runner) || !std::filesystem::exists(s.runtime_dir + "/libkiln_runtime.so")) {
    s.missing = "no AArch64 runtime in " + cross_build + ": run scripts/build-runtime-aarch64.sh " + cross_build;
  }
  return s;
}

// The command line that runs `artifact` under qemu with `npy_inputs` (by position) into `out_dir`.
inline std::string qemu_run_command(const Aarch64Setup& s, const std::string& artifact, const std::string& out_dir,
                                    const std::vector<std::string>& npy_inputs) {
  std::string cmd = "'" + s.qemu + "' -L '" + s.sysroot + "' -E 'LD_LIBRARY_PATH=" + s.runtime_dir + "' '" +
                    s.runner + "' '" + artifact + "' '" + out_dir + "'";
  for (const std::string& in : npy_inputs) cmd += " '" + in + "'";
  return cmd;
}

// Runs `command`; returns its exit status and stores stdout+stderr.
inline int run_command(const std::string& command, std::string* output) {
  output->clear();
  FILE* pipe = popen((command + " 2>&1").c_str(), "r");
  if (pipe == nullptr) return -1;
  char buf[4096];
  size_t n;
  while ((n = std::fread(buf, 1, sizeof buf, pipe)) > 0) output->append(buf, n);
  const int status = pclose(pipe);
  return WIFEXITED(status) ? WEXITSTATUS(status) : -1;
}

// Runs an AArch64 artifact under qemu on `inputs`; returns every output. A failed run is a
// UserError carrying the runner's message (the node-case machinery reports it as the failure).
inline std::vector<ir::NDArray> run_artifact_under_qemu(const Aarch64Setup& s, const std::string& artifact,
                                                        const std::string& work_dir,
                                                        const std::vector<ir::NDArray>& inputs) {
  namespace fs = std::filesystem;
  fs::create_directories(work_dir);
  std::vector<std::string> files;
  for (size_t i = 0; i < inputs.size(); ++i) {
    files.push_back((fs::path(work_dir) / ("input_" + std::to_string(i) + ".npy")).string());
    ir::write_npy(files.back(), inputs[i]);
  }
  std::string output;
  const int rc = run_command(qemu_run_command(s, artifact, work_dir, files), &output);
  if (rc != 0) {
    throw UserError(UserErrorKind::kIO, artifact, "running under qemu-aarch64 failed (exit " +
                                                            std::to_string(rc) + "): " + output.substr(0, 600));
  }
  std::vector<ir::NDArray> outs;
  for (int i = 0;; ++i) {
    const fs::path p = fs::path(work_dir) / ("output_" + std::to_string(i) + ".npy");
    if (!fs::exists(p)) break;
    outs.push_back(ir::read_npy(p.string()));
  }
  return outs;
}

// A GraphRunner compiling for `target` (an AArch64 target string) and running under qemu. Each
// call uses (and then removes) its own subdirectory of `scratch_dir`.
inline GraphRunner qemu_graph_runner(const Aarch64Setup& setup, const std::string& scratch_dir,
                                     const std::string& target) {
  auto counter = std::make_shared<std::atomic<int>>(0);
  return [setup, scratch_dir, target, counter](const ir::Graph& graph, const std::vector<ir::NDArray>& inputs) {
    const std::filesystem::path dir =
        std::filesystem::path(scratch_dir) / ("case" + std::to_string(getpid()) + "_" + std::to_string((*counter)++));
    struct Remove {
      std::filesystem::path p;
      ~Remove() {
        std::error_code ec;
        std::filesystem::remove_all(p, ec);
      }
    } remove{dir};
    std::filesystem::create_directories(dir);
    driver::CompileOptions options;
    options.target = target;
    const std::string artifact = (dir / "model.so").string();
    driver::compile_graph(graph, artifact, options);
    return run_artifact_under_qemu(setup, artifact, dir.string(), inputs);
  };
}

}  // namespace kiln::testing

#endif  // KILN_TESTS_DEPLOY_QEMU_RUNNER_H_
