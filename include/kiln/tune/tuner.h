// The auto-tuner's search loop (issue 15): `kiln tune`.
//
//   std::vector<TuningTask> tasks = extract_tasks("model.onnx", compile_options);
//   TuneOptions o; o.records = "model.db"; o.trials = 400;
//   std::unique_ptr<Measurer> m = make_local_measurer();
//   TuneReport r = tune_tasks(tasks, o, *m);
//   std::cout << r.summary();
//
// Contract:
//   - Each task's default schedule is measured first (its record is_default); it is the baseline
//     every candidate's speed and outputs are compared with. Then rounds: the task where the model
//     spends the most time (calls x best time so far, discounted by the trials it already had)
//     gets a batch: a pool of valid candidates (random points of its knob space and mutations of
//     its best ones; knobs apply_schedule rejects are skipped, never measured), ranked by the cost
//     model (cost_model.h, one per task, refit after every batch) on the candidate's features;
//     the top ones plus one random (epsilon-greedy) are built (candidate.h) and measured.
//   - A default, and a candidate whose time would beat its task's best, is measured twice (in two
//     batches) and recorded with the median of all its timed runs: one lucky median of a noisy
//     machine does not make a winner.
//   - Every measurement is added to the RecordDatabase as soon as it is made. A candidate is
//     `verified` when its outputs (same seed as the default's) match the default's: floats within
//     |a - b| <= atol + rtol |b| with rtol = 1e-4, atol = 1e-5 x max(1, max |default|) (the knobs
//     change tiling and loop order, not the reduction order much); integers exactly. Only ok and
//     verified records (and the defaults) are ever the best one (records.h).
//   - trials counts the records of these tasks on this device in the database, the ones of an
//     earlier (interrupted) run included: with `resume`, the tuner continues from them, never
//     measuring a knob set the database already holds (the default is re-run for its outputs
//     only, not recorded again). Without `resume`, a database that already holds records of
//     these tasks on this device is a UserError (pass --resume or use another file).
//   - Each record carries its task's knob-space fingerprint (records.h `space`); records of
//     another space (another Kiln's templates, record_applicability.h) are neither resumed from
//     nor counted.
//   - Stops at `trials`, at `time_budget_seconds`, or when every task's space is exhausted.
#ifndef KILN_TUNE_TUNER_H_
#define KILN_TUNE_TUNER_H_

#include <cstdint>
#include <iosfwd>
#include <string>
#include <vector>

#include "kiln/topi/knob_space.h"
#include "kiln/tune/measure.h"
#include "kiln/tune/task.h"

namespace kiln::tune {

struct TuneOptions {
  std::string records;              // the database file (created when missing)
  int64_t trials = 0;               // 0: no limit (then time_budget_seconds must be set)
  double time_budget_seconds = 0;   // 0: no limit
  bool resume = false;
  int batch = 4;                    // candidates measured per round
  int pool = 64;                    // candidates ranked by the cost model per round
  uint64_t seed = 1;                // sampling and the cost model
  MeasureOptions measure;           // repeats, timeout, threads, input seed (return_outputs forced)
  std::ostream* progress = nullptr; // stderr-like; null: no progress display
  bool progress_tty = false;        // redraw one status line; else one line per round
  std::string work_dir;             // "" : a fresh directory under $TMPDIR (removed at the end)
};

struct TaskOutcome {
  std::string signature, label;
  int calls = 0;
  int64_t trials = 0;          // records of this task (this run and earlier ones)
  double default_seconds = 0;  // 0: not measured
  double best_seconds = 0;
  std::string best_knobs;      // Knobs::to_string of the best record
};

struct TuneReport {
  std::vector<TaskOutcome> tasks;
  int64_t trials = 0;          // records of these tasks on this device
  int64_t measured_now = 0;    // measurements made by this run
  int64_t failed_now = 0;      // of which built but failed to run (crash, timeout) or to build
  double seconds = 0;
  std::string cost_model;      // CostModel::name()
  std::string measurer;        // Measurer::describe()
  // sum(calls x default) / sum(calls x best) over tasks with a measured default.
  double model_speedup() const;
  std::string summary() const;
};

TuneReport tune_tasks(const std::vector<TuningTask>& tasks, const codegen::Target& target, const TuneOptions& options,
                      Measurer& measurer);

// The cost model's features of a candidate of `space` (log2 of each knob value in the space's
// order, log2 of the task's FLOPs, log2 of the register-tile product and its fill of the limit).
std::vector<double> candidate_features(const topi::KnobSpace& space, const topi::Knobs& knobs, uint64_t flops);

// Whether a candidate's outputs match the default's (the tolerance above); `why` says where not.
bool outputs_match(const std::vector<ir::TensorType>& types, const std::vector<std::vector<char>>& expected,
                   const std::vector<std::vector<char>>& got, std::string* why);

}  // namespace kiln::tune

#endif  // KILN_TUNE_TUNER_H_
