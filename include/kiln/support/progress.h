// Progress of a long job on a terminal: one status line on stderr, rewritten in place, e.g.
//   kiln compile: codegen (LLVM) 9/16 modules  3.1 s  ~2.4 s left
// naming the phase, the count done of the total, the time since the job started and, for a
// counted phase, an estimate of what is left (the phase's time so far per item, times the items
// left). Redrawn at most every 100 ms; finish() erases it, so the job's own report follows on a
// clean line.
//
// Log lines (KILN_LOG) erase it first. Shown only when `enabled` and stderr is a terminal (not a pipe, a file or TERM=dumb):
// Progress::on_terminal(!quiet) gives that. A disabled Progress does nothing, so callers report
// unconditionally. Thread-safe: worker threads may call step().
#ifndef KILN_SUPPORT_PROGRESS_H_
#define KILN_SUPPORT_PROGRESS_H_

#include <chrono>
#include <cstdint>
#include <mutex>
#include <string>

namespace kiln {

class Progress {
 public:
  // A shown progress line for `job` ("kiln compile") when `show`, else a silent one.
  Progress(std::string job, bool show);
  ~Progress();
  Progress(const Progress&) = delete;
  Progress& operator=(const Progress&) = delete;

  // `show` and stderr is a terminal whose TERM is not "dumb".
  static bool stderr_is_terminal();
  static Progress on_terminal(std::string job, bool show) { return Progress(std::move(job), show && stderr_is_terminal()); }

  bool shown() const { return shown_; }
  // Starts a phase: `total` items of `unit` ("kernels"), or 0 for an uncounted phase.
  void phase(const std::string& name, int64_t total = 0, const std::string& unit = "");
  // One more item (or `n`) of the phase done.
  void step(int64_t n = 1);
  // Erases the line (also on destruction).
  void finish();

  // The line as it would be drawn now (tests).
  std::string line() const;

  // Erases the shown progress line, if one is drawn, so that other output to stderr (the log)
  // starts on a clean line; the line is drawn again at its next update.
  static void erase_for_output();

 private:
  using Clock = std::chrono::steady_clock;
  std::string line_locked(Clock::time_point now) const;
  void draw_locked(bool force);

  std::string job_;
  bool shown_ = false;
  bool drawn_ = false;
  mutable std::mutex mutex_;
  std::string phase_, unit_;
  int64_t total_ = 0, done_ = 0;
  Clock::time_point start_, phase_start_, last_draw_;
};

}  // namespace kiln

#endif  // KILN_SUPPORT_PROGRESS_H_
