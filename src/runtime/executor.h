// GraphExecutor: runs a loaded artifact's plan (the kernels in order) over its own buffers.
//
// Buffers are allocated once, at construction: one per graph input and output and one per
// storage block of intermediates (64-byte aligned); constants point into the mapped weights.
// Each kernel's DLTensor argument array is built once too; a run only refreshes data pointers
// (which zero-copy bound inputs change). One executor is used by one thread at a time; several
// executors over one module may run at the same time (the module is immutable).
// The profiler, when enabled, times every kernel call and reports per-kernel totals; the tracer,
// when enabled, records every kernel launch of every run for a Chrome trace (trace_json.h). A run tells
// the thread pool it is running (thread_pool.h), so workers spin between its parallel loops.
#ifndef KILN_SRC_RUNTIME_EXECUTOR_H_
#define KILN_SRC_RUNTIME_EXECUTOR_H_

#include <chrono>
#include <cstdint>
#include <memory>
#include <string>
#include <string_view>
#include <vector>

#include "module.h"
#include "profile_report.h"
#include "trace_json.h"

namespace kiln::runtime {

class Executor {
 public:
  explicit Executor(std::shared_ptr<const LoadedModule> module);
  ~Executor();
  Executor(const Executor&) = delete;
  Executor& operator=(const Executor&) = delete;

  const LoadedModule& module() const { return *module_; }

  // Copies `value` into input `index` (its dtype and shape must match the input's exactly; CPU,
  // C-contiguous). Undoes an earlier bind_input of that input.
  void set_input(int32_t index, const DLTensor& value);
  // Makes input `index` read straight from `value`'s memory (no copy) until the next set/bind of
  // that input; the memory must stay valid and 64-byte aligned.
  void bind_input(int32_t index, const DLTensor& value);
  void run();
  // Copies output `index` into `out` (dtype and shape must match; CPU, C-contiguous).
  void get_output(int32_t index, DLTensor* out) const;
  // A view of output `index`, valid until the next run() or the executor's end.
  const DLTensor* output_view(int32_t index) const;

  int32_t input_index(const std::string& name) const;
  int32_t output_index(const std::string& name) const;

  void set_profiling(bool enabled);  // also resets the counters
  using KernelProfile = runtime::KernelProfile;
  const std::vector<KernelProfile>& profile() const { return profile_; }  // per kernel call site
  int64_t profiled_runs() const { return profiled_runs_; }
  // Table with one row per kernel symbol (its call sites summed), slowest first: time per run,
  // % and cumulative % of the total, calls per run, time per call, GFLOP/s from the compiler's
  // flop count, % of `peak_gflops` (the machine's peak for the threads used; 0: unknown, the
  // column shows "-"), GB/s over the bytes of its arguments and % of the roofline with its flag
  // (needs `bandwidth_gbps` too; see profile_report.h); then totals. Int8 kernels: GOP/s and %
  // of `int8_peak_gops`.
  std::string profile_report(double peak_gflops = 0, double bandwidth_gbps = 0, double int8_peak_gops = 0) const;

  // Tracing: enabling (or disabling) drops the recorded events and restarts the clock at 0.
  void set_tracing(bool enabled);
  // The recorded runs as Chrome trace-event JSON (trace_json.h); `process_name` names the process.
  std::string trace_json(std::string_view process_name) const;

 private:
  void check_value(const char* what, int32_t index, const artifact::TensorSpec& spec,
                   const DLTensor& value) const;

  std::shared_ptr<const LoadedModule> module_;
  std::vector<void*> owned_;         // aligned allocations to free
  std::vector<void*> default_data_;  // per tensor: its own buffer
  std::vector<void*> data_;          // per tensor: what kernels read/write now
  std::vector<std::vector<DLTensor>> args_;  // per kernel
  std::vector<DLTensor> output_views_;
  bool profiling_ = false;
  int64_t profiled_runs_ = 0;
  std::vector<KernelProfile> profile_;
  bool tracing_ = false;
  int64_t traced_runs_ = 0;
  std::chrono::steady_clock::time_point trace_origin_;
  std::vector<TraceEvent> trace_;
};

}  // namespace kiln::runtime

#endif  // KILN_SRC_RUNTIME_EXECUTOR_H_
