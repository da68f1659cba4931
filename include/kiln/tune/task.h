// Tuning tasks (issue 15): the distinct fused kernels of a model on a target, what `kiln tune`
// searches schedules for and what `kiln compile --records` looks records up by.
//
//   std::vector<TuningTask> tasks = extract_tasks("resnet50.onnx", options);
//   for (const TuningTask& t : tasks) std::cout << t.label << " x" << t.calls << "\n";
//
// Contract:
//   - The compile pipeline's passes run exactly as in `kiln compile` (same CompileOptions), and
//     every top-level call becomes the same kernel group (driver/kernel_group.h). Calls with the
//     same kernel (same body text) are one task; `calls` counts them. Tasks are in the order of
//     their first call.
//   - signature is driver::kernel_group_signature: stable across runs and machines for the same
//     model and target options; distinct bodies have distinct signatures.
//   - flops: the default schedule's kernel's floating-point work per call (kernel_flops.h).
//   - A group topi cannot build as one kernel (which the compile driver splits into per-op
//     kernels) is not a task: its per-op kernels keep their default schedules.
#ifndef KILN_TUNE_TASK_H_
#define KILN_TUNE_TASK_H_

#include <cstdint>
#include <string>
#include <vector>

#include "kiln/codegen/target.h"
#include "kiln/driver/compile.h"
#include "kiln/driver/kernel_group.h"
#include "kiln/topi/compute.h"
#include "kiln/topi/schedule.h"

namespace kiln::tune {

struct TuningTask {
  std::string signature;
  std::string label;          // "conv2d+add+relu f32[1,64,56,56]" (ops and the first output's type)
  driver::KernelGroup group;  // members, input types (weights included), outputs
  std::string target;         // canonical target string (codegen::Target::str)
  int calls = 0;              // how many times the model calls this kernel
  uint64_t flops = 0;         // per call, default schedule
  topi::ScheduleKind schedule = topi::ScheduleKind::kInjective;  // the anchor's template
  topi::Knobs default_knobs;
};

std::vector<TuningTask> extract_tasks(const ir::Graph& graph, const driver::CompileOptions& options);
// Imports the model (options.input_shapes, options.constant_inputs) first.
std::vector<TuningTask> extract_tasks(const std::string& onnx_path, const driver::CompileOptions& options);

// The anchor's compute for a task (what knob_space and default_knobs take).
topi::GroupCompute task_compute(const TuningTask& task, const codegen::Target& target);

}  // namespace kiln::tune

#endif  // KILN_TUNE_TASK_H_
