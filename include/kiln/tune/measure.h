// Measuring one candidate kernel on a device (issue 15). Runtime-side: this header and its library
// (kiln_tune_measure, src/tune_measure/) depend on libkiln_runtime only -- never on the compiler --
// so `kiln-tune-worker` runs on a device that has no LLVM and no libkiln.
//
// A candidate is a small artifact (built by the tuner: one fused kernel, its inputs and weights as
// artifact inputs, its outputs as artifact outputs) for the device's target. Measuring it:
//
//   MeasureOptions o; o.repeats = 10; o.timeout_seconds = 10;
//   MeasureResult r = measure_artifact("/tmp/cand_17.so", o);
//
// Contract:
//   - Runs in a child process (fork): a candidate that crashes, hangs past timeout_seconds or
//     fails to load is a result with ok = false and an error saying which -- never kills the
//     caller.
//   - Inputs are filled from `seed` (same seed, same inputs, on any machine: floats uniform in
//     [-1, 1], integers in their dtype's small range), so two candidates of one task see the same
//     data and their outputs can be compared.
//   - `warmup` untimed runs, then timed runs until `repeats` runs AND `min_seconds` of timed runs
//     have passed (with `flush_cache`, at most 4 x `repeats` runs; the caches are evicted before
//     each timed run, untimed);
//     outliers (beyond median + 3 x MAD) are dropped and the median of the rest is reported.
//   - With return_outputs, the outputs of the last run come back as raw bytes (C order).
#ifndef KILN_TUNE_MEASURE_H_
#define KILN_TUNE_MEASURE_H_

#include <cstdint>
#include <memory>
#include <string>
#include <vector>

namespace kiln::tune {

struct MeasureOptions {
  int warmup = 2;
  int repeats = 10;
  double min_seconds = 0.02;
  double timeout_seconds = 10;
  int threads = 1;  // kiln_set_num_threads in the child
  uint64_t seed = 1;
  bool return_outputs = false;
  // Evict the CPU caches before each timed run (the eviction is not timed): inside a model a
  // kernel may find its weights in memory, not in the caches (src/tune_measure/cache_evictor.h).
  // Off by default: docs/tuning.md "Measurement" has what it changed on ResNet-50.
  bool flush_cache = false;
};

struct MeasureResult {
  std::string id;           // the job's id (MeasureJob::id)
  bool ok = false;
  std::string error;        // when !ok: "timed out after 10 s", "killed by signal 11", a load error
  double seconds = 0;       // median after outlier rejection
  std::vector<double> runs; // every timed run, seconds, before rejection
  int rejected = 0;         // outliers dropped
  std::vector<std::vector<char>> outputs;  // with return_outputs
};

MeasureResult measure_artifact(const std::string& artifact_path, const MeasureOptions& options);

// One measurement request: an artifact file the measurer can read, and how to measure it.
struct MeasureJob {
  std::string id;
  std::string artifact_path;
  MeasureOptions options;
};

// Where candidates are measured: in child processes on this machine (make_local_measurer) or on
// remote devices through a broker (tune/redis_measurer.h). measure() returns one result per job,
// in the jobs' order; a job that cannot be measured is a result with ok = false, not a throw.
class Measurer {
 public:
  virtual ~Measurer() = default;
  virtual std::vector<MeasureResult> measure(const std::vector<MeasureJob>& jobs) = 0;
  virtual std::string describe() const = 0;  // "local (1 process)", "redis 127.0.0.1:6390, 3 workers"
};

std::unique_ptr<Measurer> make_local_measurer();

}  // namespace kiln::tune

#endif  // KILN_TUNE_MEASURE_H_
