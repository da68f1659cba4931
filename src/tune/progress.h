// The tuner's progress display on stderr (src/tune/tuner.cc): tasks with a baseline / total,
// trials, the best-so-far speedup per task (one line each time a task improves) and estimated for
// the whole model (sum of calls x best time vs calls x default time), elapsed time and ETA. On a
// terminal the status line is redrawn in place; otherwise one line per round.
#ifndef KILN_SRC_TUNE_PROGRESS_H_
#define KILN_SRC_TUNE_PROGRESS_H_

#include <chrono>
#include <cstdint>
#include <iosfwd>
#include <string>

namespace kiln::tune {

struct ProgressSnapshot {
  int tasks_started = 0;  // default measured
  int tasks_total = 0;
  int64_t trials = 0;           // in the database, earlier runs included
  int64_t trials_now = 0;       // made by this run (the rate for the ETA)
  int64_t trials_limit = 0;     // 0: none
  double budget_seconds = 0;    // 0: none
  double model_speedup = 1;     // estimated, whole model
};

class Progress {
 public:
  Progress(std::ostream* out, bool tty);
  // A task's best improved: "task 3/17 conv2d+add+relu f32[...] x6: 1.31x (0.412 -> 0.315 ms) knobs".
  void improved(int task_index, int tasks_total, const std::string& label, int calls, double default_seconds,
                double best_seconds, const std::string& knobs);
  void round(const ProgressSnapshot& s);
  void finish();

 private:
  std::string status_line(const ProgressSnapshot& s) const;
  std::ostream* out_;
  bool tty_;
  bool line_open_ = false;
  std::chrono::steady_clock::time_point start_;
};

std::string format_duration(double seconds);

}  // namespace kiln::tune

#endif  // KILN_SRC_TUNE_PROGRESS_H_
