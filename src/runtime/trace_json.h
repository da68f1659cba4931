// The executor's trace (Executor::trace_json, `kiln run --trace FILE`): every kernel launch of the
// traced runs as one complete event ("ph": "X") of Chrome's trace-event format, the JSON that
// Perfetto (ui.perfetto.dev) and chrome://tracing open, as ONNX Runtime's profiler files are.
//
//   {"displayTimeUnit": "ms", "traceEvents": [
//     {"name": "process_name", "ph": "M", "pid": 1, "args": {"name": "kiln: model.so"}},
//     {"name": "run 0", "cat": "run", "ph": "X", "ts": 0.0, "dur": 812.5, "pid": 1, "tid": 4242},
//     {"name": "conv2d+add+relu", "cat": "kernel", "ph": "X", "ts": 1.25, "dur": 40.5, "pid": 1,
//      "tid": 4242, "args": {"symbol": "...", "step": 1, "run": 0, "flops": 118013952,
//      "op_kind": "float", "bytes": 1204224, "tensors": ["data: f32[1, 3, 224, 224]", ...]}},
//     ...]}
//
// Times are microseconds since tracing was enabled; tid is the OS thread id of the thread that ran
// the run (kernels run one after another on it, their parallel loops on the pool's workers).
// Every string is escaped for JSON, and bytes that are not valid UTF-8 (a model's tensor names are
// anyone's text) become U+FFFD, so the file always parses. A pure function of the plan and the
// recorded events, so tests inject them.
#ifndef KILN_SRC_RUNTIME_TRACE_JSON_H_
#define KILN_SRC_RUNTIME_TRACE_JSON_H_

#include <cstdint>
#include <string>
#include <string_view>
#include <vector>

#include "kiln/runtime/artifact_format.h"

namespace kiln::runtime {

struct TraceEvent {
  int32_t kernel = -1;  // plan.kernels index; -1: the whole run
  int64_t run = 0;      // which traced run (0, 1, ...)
  double start_us = 0;  // since tracing was enabled
  double duration_us = 0;
  uint64_t thread_id = 0;
};

// `process_name` names the process row (e.g. "kiln: model.so").
std::string format_trace_json(const artifact::Plan& plan, const std::vector<TraceEvent>& events,
                              std::string_view process_name);

// `text` as a JSON string literal (quotes included): ", \ and control characters escaped, bytes
// that are not valid UTF-8 replaced by U+FFFD.
std::string json_string(std::string_view text);

}  // namespace kiln::runtime

#endif  // KILN_SRC_RUNTIME_TRACE_JSON_H_
