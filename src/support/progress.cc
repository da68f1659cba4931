// The terminal progress line (see progress.h).
#include "kiln/support/progress.h"

#include <unistd.h>

#include <atomic>
#include <cstdio>
#include <cstdlib>
#include <cstring>

namespace kiln {
namespace {

// The progress line drawn now (one at a time: the CLI runs one job), for erase_for_output.
std::atomic<bool> g_line_drawn{false};

std::string seconds_text(double s) {
  char buf[32];
  std::snprintf(buf, sizeof buf, s < 10 ? "%.1f s" : "%.0f s", s);
  return buf;
}

}  // namespace

Progress::Progress(std::string job, bool show) : job_(std::move(job)), shown_(show) {
  start_ = phase_start_ = Clock::now();
}

Progress::~Progress() { finish(); }

bool Progress::stderr_is_terminal() {
  const char* term = std::getenv("TERM");
  return ::isatty(STDERR_FILENO) == 1 && !(term != nullptr && std::strcmp(term, "dumb") == 0);
}

void Progress::phase(const std::string& name, int64_t total, const std::string& unit) {
  std::lock_guard<std::mutex> lock(mutex_);
  phase_ = name;
  unit_ = unit;
  total_ = total;
  done_ = 0;
  phase_start_ = Clock::now();
  draw_locked(true);
}

void Progress::step(int64_t n) {
  std::lock_guard<std::mutex> lock(mutex_);
  done_ += n;
  draw_locked(false);
}

void Progress::finish() {
  std::lock_guard<std::mutex> lock(mutex_);
  if (shown_ && drawn_) erase_for_output();
  drawn_ = false;
  shown_ = false;
}

void Progress::erase_for_output() {
  if (g_line_drawn.exchange(false)) {
    std::fputs("\r\x1b[K", stderr);
    std::fflush(stderr);
  }
}

std::string Progress::line() const {
  std::lock_guard<std::mutex> lock(mutex_);
  return line_locked(Clock::now());
}

std::string Progress::line_locked(Clock::time_point now) const {
  const double elapsed = std::chrono::duration<double>(now - start_).count();
  std::string s = job_ + ": " + phase_;
  if (total_ > 0) {
    s += " " + std::to_string(done_) + "/" + std::to_string(total_) + (unit_.empty() ? "" : " " + unit_);
  }
  s += "  " + seconds_text(elapsed);
  if (total_ > 0 && done_ > 0 && done_ < total_) {
    const double phase_elapsed = std::chrono::duration<double>(now - phase_start_).count();
    s += "  ~" + seconds_text(phase_elapsed / static_cast<double>(done_) * static_cast<double>(total_ - done_)) + " left";
  }
  return s;
}

void Progress::draw_locked(bool force) {
  if (!shown_) return;
  const Clock::time_point now = Clock::now();
  if (!force && drawn_ && g_line_drawn && now - last_draw_ < std::chrono::milliseconds(100)) return;
  last_draw_ = now;
  drawn_ = true;
  g_line_drawn = true;
  std::fprintf(stderr, "\r\x1b[K%s", line_locked(now).c_str());
  std::fflush(stderr);
}

}  // namespace kiln
