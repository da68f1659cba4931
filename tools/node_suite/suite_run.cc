// kiln_node_suite's run step: every test of the index through Kiln's reference executor and Kiln
// compiled (node_case.h, compiled_runner.h), each (test, mode) in its own forked child so that a
// crash (a signal) or a hang (killed after the per-test timeout) is recorded and the run goes on.
// Children run at most `jobs` at a time, each with one runtime thread; a child writes its outcome
// to a file in a scratch folder, its stdout/stderr to a log whose tail explains a crash.
#include <fcntl.h>
#include <signal.h>
#include <sys/wait.h>
#include <unistd.h>

#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <map>
#include <sstream>
#include <thread>

#include "kiln/frontend/onnx.h"
#include "kiln/support/error.h"
#include "node_suite/compiled_runner.h"
#include "node_suite/node_case.h"
#include "node_suite/suite.h"

namespace kiln::node_suite {
namespace {

namespace fs = std::filesystem;
using Clock = std::chrono::steady_clock;

std::string one_line(std::string s, size_t max = 400) {
  for (char& c : s) {
    if (c == '\t' || c == '\n' || c == '\r') c = ' ';
  }
  if (s.size() > max) s = s.substr(0, max) + "...";
  return s;
}

std::string join(const std::vector<std::string>& v) {
  std::string out;
  for (const auto& s : v) out += (out.empty() ? "" : ",") + s;
  return out;
}

// The last non-empty line of a child's log (an ICHECK, an abort message), or "".
std::string log_tail(const fs::path& log) {
  std::ifstream in(log);
  std::string line, last;
  while (std::getline(in, line)) {
    if (line.find_first_not_of(" \t\r") != std::string::npos) last = line;
  }
  return one_line(last, 200);
}

struct Job {
  size_t test;
  bool compiled;
  fs::path result, log;
};

// In the child: runs one mode of one test and writes "status \t bound \t reason".
[[noreturn]] void run_child(const RunOptions& options, const TestInfo& t, const Job& job, const fs::path& scratch) {
  setenv("KILN_NUM_THREADS", "1", 1);
  int fd = open(job.log.c_str(), O_WRONLY | O_CREAT | O_TRUNC, 0644);
  if (fd >= 0) {
    dup2(fd, 1);
    dup2(fd, 2);
    close(fd);
  }
  const std::string dir = (fs::path(options.root) / "node" / t.name).string();
  testing::CaseResult r;
  try {
    r = job.compiled ? testing::run_onnx_case(dir, 1e-3, 1e-7, {}, testing::compile_graph_runner(scratch.string(), options.target))
                     : testing::run_onnx_case(dir, 1e-3, 1e-7);
  } catch (const std::exception& e) {  // not a kiln::Error (those are caught in run_onnx_case)
    r.passed = false;
    r.message = std::string("exception: ") + e.what();
  }
  for (size_t at; (at = r.message.find(dir + "/")) != std::string::npos;) r.message.erase(at, dir.size() + 1);
  std::ofstream out(job.result);
  out << (r.passed ? "pass" : failure_category(r.message)) << '\t' << join(r.bound_inputs) << '\t'
      << one_line(r.passed ? "" : r.message) << '\n';
  out.close();
  std::fflush(nullptr);
  _exit(0);
}

Outcome read_outcome(const Job& job, int wait_status, bool timed_out, double timeout_s) {
  Outcome o;
  if (timed_out) {
    o.status = "timeout";
    std::ostringstream os;
    os << "killed after " << timeout_s << " s";
    o.reason = os.str();
    return o;
  }
  std::ifstream in(job.result);
  std::string line;
  if (WIFEXITED(wait_status) && WEXITSTATUS(wait_status) == 0 && std::getline(in, line)) {
    std::vector<std::string> cols;
    std::stringstream ss(line);
    std::string c;
    while (std::getline(ss, c, '\t')) cols.push_back(c);
    cols.resize(3);
    o.status = cols[0];
    o.bound = cols[1];
    o.reason = cols[2];
    return o;
  }
  o.status = "crash";
  const std::string tail = log_tail(job.log);
  if (WIFSIGNALED(wait_status)) {
    o.reason = std::string("signal ") + strsignal(WTERMSIG(wait_status));
  } else {
    o.reason = "exit status " + std::to_string(WEXITSTATUS(wait_status));
  }
  if (!tail.empty()) o.reason += ": " + tail;
  return o;
}

}  // namespace

void run_suite(const RunOptions& options) {
  const std::vector<TestInfo> all = read_index((fs::path(options.root) / "index.tsv").string());
  std::vector<TestInfo> tests;
  for (const auto& t : all) {
    if (options.filter.empty() || t.name.find(options.filter) != std::string::npos) tests.push_back(t);
  }
  if (tests.empty()) throw UserError(UserErrorKind::kNotFound, options.root, "no test matches", "check --root and --filter");
  const fs::path scratch = fs::temp_directory_path() / ("kiln-node-suite-" + std::to_string(getpid()));
  fs::create_directories(scratch);
  (void)frontend::onnx_supported_ops();  // build the converter table once, before forking

  std::vector<Job> jobs;
  for (size_t i = 0; i < tests.size(); ++i) {
    for (bool compiled : {false, true}) {
      if (compiled ? !options.compiled : !options.ref) continue;
      const std::string stem = std::to_string(i) + (compiled ? ".compiled" : ".ref");
      jobs.push_back({i, compiled, scratch / (stem + ".result"), scratch / (stem + ".log")});
    }
  }
  std::vector<Outcome> ref(tests.size()), compiled(tests.size());
  struct Running {
    size_t job;
    Clock::time_point start;
  };
  std::map<pid_t, Running> running;
  size_t next = 0, done = 0;
  const auto started = Clock::now();
  while (next < jobs.size() || !running.empty()) {
    while (next < jobs.size() && static_cast<int>(running.size()) < std::max(1, options.jobs)) {
      std::fflush(nullptr);
      const pid_t pid = fork();
      KILN_ICHECK(pid >= 0) << "fork failed: " << std::strerror(errno);
      if (pid == 0) run_child(options, tests[jobs[next].test], jobs[next], scratch);
      running[pid] = {next++, Clock::now()};
    }
    int status = 0;
    pid_t pid = waitpid(-1, &status, WNOHANG);
    bool timed_out = false;
    if (pid == 0) {
      for (auto& [p, r] : running) {
        if (std::chrono::duration<double>(Clock::now() - r.start).count() > options.timeout_s) {
          kill(p, SIGKILL);
          waitpid(p, &status, 0);
          pid = p;
          timed_out = true;
          break;
        }
      }
      if (pid == 0) {
        std::this_thread::sleep_for(std::chrono::milliseconds(5));
        continue;
      }
    }
    auto it = running.find(pid);
    if (it == running.end()) continue;
    const Job& job = jobs[it->second.job];
    (job.compiled ? compiled : ref)[job.test] = read_outcome(job, status, timed_out, options.timeout_s);
    running.erase(it);
    if (++done % 100 == 0 || done == jobs.size()) {
      std::fprintf(stderr, "kiln_node_suite: %zu/%zu runs, %.0f s\n", done, jobs.size(),
                   std::chrono::duration<double>(Clock::now() - started).count());
    }
  }
  std::error_code ec;
  fs::remove_all(scratch, ec);

  std::ofstream out(options.out_tsv);
  if (!out) throw UserError(UserErrorKind::kIO, options.out_tsv, "cannot open the file for writing");
  out << "test\tref\tref_bound\tref_reason\tcompiled\tcompiled_bound\tcompiled_reason\n";
  for (size_t i = 0; i < tests.size(); ++i) {
    out << tests[i].name << '\t' << ref[i].status << '\t' << ref[i].bound << '\t' << ref[i].reason << '\t'
        << compiled[i].status << '\t' << compiled[i].bound << '\t' << compiled[i].reason << '\n';
  }
}

}  // namespace kiln::node_suite
