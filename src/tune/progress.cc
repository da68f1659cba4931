// The tuner's progress display (src/tune/progress.h).
#include "tune/progress.h"

#include <algorithm>
#include <cstdio>
#include <ostream>

namespace kiln::tune {

std::string format_duration(double seconds) {
  if (seconds < 0) seconds = 0;
  const int64_t s = static_cast<int64_t>(seconds + 0.5);
  char buf[32];
  if (s >= 3600) {
    std::snprintf(buf, sizeof buf, "%lld:%02lld:%02lld", static_cast<long long>(s / 3600),
                  static_cast<long long>(s / 60 % 60), static_cast<long long>(s % 60));
  } else {
    std::snprintf(buf, sizeof buf, "%lld:%02lld", static_cast<long long>(s / 60), static_cast<long long>(s % 60));
  }
  return buf;
}

Progress::Progress(std::ostream* out, bool tty) : out_(out), tty_(tty), start_(std::chrono::steady_clock::now()) {}

void Progress::improved(int task_index, int tasks_total, const std::string& label, int calls, double default_seconds,
                        double best_seconds, const std::string& knobs) {
  if (out_ == nullptr) return;
  char buf[160];
  std::snprintf(buf, sizeof buf, " x%d: %.2fx (%.4f -> %.4f ms) ", calls, default_seconds / best_seconds,
                default_seconds * 1e3, best_seconds * 1e3);
  if (tty_ && line_open_) *out_ << "\r\033[K";
  *out_ << "[tune] task " << task_index + 1 << "/" << tasks_total << " " << label << buf << knobs << "\n";
  line_open_ = false;
  out_->flush();
}

std::string Progress::status_line(const ProgressSnapshot& s) const {
  const double elapsed = std::chrono::duration<double>(std::chrono::steady_clock::now() - start_).count();
  double eta = -1;
  if (s.budget_seconds > 0) eta = s.budget_seconds - elapsed;
  if (s.trials_limit > 0 && s.trials_now > 0) {
    const double by_trials =
        elapsed / static_cast<double>(s.trials_now) * static_cast<double>(std::max<int64_t>(0, s.trials_limit - s.trials));
    eta = eta < 0 ? by_trials : std::min(eta, by_trials);
  }
  std::string limit;
  if (s.trials_limit > 0) limit = std::to_string(s.trials_limit).insert(0, 1, '/');
  const std::string elapsed_text = format_duration(elapsed);
  const std::string eta_text = eta < 0 ? std::string("?") : format_duration(eta);
  char buf[200];
  std::snprintf(buf, sizeof buf, "[tune] tasks %d/%d, trials %lld%s, model %.3fx (est.), %s elapsed, ETA %s",
                s.tasks_started, s.tasks_total, static_cast<long long>(s.trials), limit.c_str(), s.model_speedup,
                elapsed_text.c_str(), eta_text.c_str());
  return buf;
}

void Progress::round(const ProgressSnapshot& s) {
  if (out_ == nullptr) return;
  if (tty_) {
    *out_ << "\r\033[K" << status_line(s);
    line_open_ = true;
  } else {
    *out_ << status_line(s) << "\n";
  }
  out_->flush();
}

void Progress::finish() {
  if (out_ != nullptr && tty_ && line_open_) *out_ << "\n";
  line_open_ = false;
}

}  // namespace kiln::tune
