// measure_artifact (kiln/tune/measure.h): the parent side. Forks a child in its own process
// group (measure_child.cc measures and writes one encoded result to a pipe), reads the pipe with
// poll() until the deadline, then reaps the child and turns how it ended into the result: a
// signal ("killed by signal 11 (SIGSEGV)"), a non-zero exit, a timeout (the whole group is
// killed with SIGKILL), or the child's own result, whose runs are filtered here (run_statistics.h).
#include <errno.h>
#include <fcntl.h>
#include <poll.h>
#include <signal.h>
#include <sys/prctl.h>
#include <sys/wait.h>
#include <unistd.h>

#include <chrono>
#include <cmath>
#include <cstring>
#include <sstream>
#include <string>
#include <thread>

#include "kiln/runtime/artifact_format.h"
#include "kiln/tune/measure.h"
#include "measure_child.h"
#include "measure_wire.h"
#include "run_statistics.h"

namespace kiln::tune {
namespace {

using Clock = std::chrono::steady_clock;

MeasureResult failed(const std::string& error) {
  MeasureResult r;
  r.error = error;
  return r;
}

std::string seconds_text(double s) {
  std::ostringstream o;
  o << s;
  return o.str();
}

std::string signal_text(int sig) {
  const char* abbrev = ::sigabbrev_np(sig);
  return "killed by signal " + std::to_string(sig) + (abbrev ? std::string(" (SIG") + abbrev + ")" : "");
}

int remaining_ms(Clock::time_point deadline) {
  const auto left = std::chrono::duration_cast<std::chrono::milliseconds>(deadline - Clock::now()).count();
  return left <= 0 ? 0 : static_cast<int>(std::min<int64_t>(left, 1 << 30));
}

// Reads everything the child writes until EOF; false when the deadline passes first.
bool read_until_eof(int fd, Clock::time_point deadline, std::string* out) {
  char buf[1 << 16];
  for (;;) {
    pollfd p{fd, POLLIN, 0};
    const int ms = remaining_ms(deadline);
    if (ms == 0) return false;
    const int ready = ::poll(&p, 1, ms);
    if (ready < 0 && errno == EINTR) continue;
    if (ready <= 0) return ready < 0 ? true : false;
    const ssize_t n = ::read(fd, buf, sizeof buf);
    if (n < 0 && errno == EINTR) continue;
    if (n <= 0) return true;
    out->append(buf, static_cast<size_t>(n));
  }
}

// Waits for the child to end until the deadline; false when it is still running.
bool reap(pid_t pid, Clock::time_point deadline, int* status) {
  for (;;) {
    const pid_t r = ::waitpid(pid, status, WNOHANG);
    if (r == pid) return true;
    if (r < 0 && errno != EINTR) return true;  // not our child any more: nothing to wait for
    if (Clock::now() >= deadline) return false;
    std::this_thread::sleep_for(std::chrono::milliseconds(2));
  }
}

void kill_group(pid_t pid) {
  ::kill(-pid, SIGKILL);
  ::kill(pid, SIGKILL);
  int status;
  while (::waitpid(pid, &status, 0) < 0 && errno == EINTR) {}
}

}  // namespace

MeasureResult measure_artifact(const std::string& artifact_path, const MeasureOptions& options) {
  int fds[2];
  if (::pipe2(fds, O_CLOEXEC) != 0) return failed(std::string("cannot create a pipe: ") + std::strerror(errno));
  const pid_t parent = ::getpid();
  const auto deadline = Clock::now() + std::chrono::duration_cast<Clock::duration>(
                                           std::chrono::duration<double>(std::max(0.0, options.timeout_seconds)));
  const pid_t pid = ::fork();
  if (pid < 0) {
    ::close(fds[0]);
    ::close(fds[1]);
    return failed(std::string("cannot fork the measuring process: ") + std::strerror(errno));
  }
  if (pid == 0) {
    ::setpgid(0, 0);
    ::prctl(PR_SET_PDEATHSIG, SIGKILL);  // a measurer killed mid-job leaves no candidate running
    if (::getppid() != parent) ::_exit(1);
    ::close(fds[0]);
    try {
      run_measure_child(artifact_path, options, fds[1]);
    } catch (...) {
    }
    ::_exit(70);
  }
  ::setpgid(pid, pid);  // also here: the group exists before any kill below, whoever runs first
  ::close(fds[1]);
  std::string message;
  const bool eof = read_until_eof(fds[0], deadline, &message);
  ::close(fds[0]);
  int status = 0;
  if (!eof || !reap(pid, deadline, &status)) {
    kill_group(pid);
    return failed("timed out after " + seconds_text(options.timeout_seconds) + " s");
  }
  ::kill(-pid, SIGKILL);  // anything the candidate left behind in its group
  if (WIFSIGNALED(status)) return failed(signal_text(WTERMSIG(status)));
  if (WIFEXITED(status) && WEXITSTATUS(status) != 0) {
    return failed("the measuring process exited with status " + std::to_string(WEXITSTATUS(status)));
  }
  if (message.empty()) return failed("the measuring process ended without a result");
  MeasureResult r;
  try {
    r = wire::decode_result(message);
  } catch (const artifact::FormatError& e) {
    return failed(std::string("garbled result from the measuring process: ") + e.what());
  }
  if (r.ok) {
    const RobustMedian m = robust_median(r.runs);
    r.seconds = m.median;
    r.rejected = m.rejected;
  }
  return r;
}

}  // namespace kiln::tune
