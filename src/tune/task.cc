// Task extraction for the auto-tuner (include/kiln/tune/task.h).
#include "kiln/tune/task.h"

#include <map>

#include "kiln/driver/kernel_flops.h"
#include "kiln/support/error.h"
#include "kiln/support/logging.h"
#include "kiln/topi/build.h"

namespace kiln::tune {

topi::GroupCompute task_compute(const TuningTask& task, const codegen::Target& target) {
  return topi::group_compute(task.group.members, task.group.input_types, task.group.outputs, target);
}

std::vector<TuningTask> extract_tasks(const ir::Graph& graph, const driver::CompileOptions& options) {
  const codegen::Target target = codegen::parse_target(options.target);
  const pass::PipelineResult pipeline = driver::run_compile_passes(graph, options, target);
  std::vector<TuningTask> tasks;
  std::map<std::string, size_t> index_of;  // signature -> task
  std::map<std::string, bool> unbuildable;
  for (const ir::NodePtr& node : pipeline.graph.topo_order()) {
    if (node->kind() != ir::NodeKind::kCall) continue;
    const ir::CallNode& call = node->as_call();
    const std::string sig = driver::kernel_group_signature(call, target);
    auto it = index_of.find(sig);
    if (it != index_of.end()) {
      ++tasks[it->second].calls;
      continue;
    }
    if (unbuildable.count(sig)) continue;
    TuningTask t;
    t.signature = sig;
    t.group = driver::make_kernel_group(call);
    t.target = target.str();
    t.calls = 1;
    t.label = driver::join_member_ops(t.group) + " " +
              (t.group.output_types.empty() ? std::string() : t.group.output_types[0].to_string());
    try {
      const topi::GroupCompute gc = task_compute(t, target);
      t.schedule = gc.result.schedule;
      t.default_knobs = topi::default_knobs(gc.result, target);
      topi::OpKernelOptions ko;
      ko.kernel_name = "kiln_task";
      t.flops = driver::count_kernel_flops(
                    topi::build_group_kernel(t.group.members, t.group.input_types, t.group.outputs, target, -1, ko))
                    .flops;
    } catch (const Error& e) {
      // The compile driver splits such a group into per-op kernels; nothing to tune as one.
      KILN_LOG(tune, kInfo) << "not a tuning task (built per op by the compiler): " << t.label << ": " << e.what();
      unbuildable[sig] = true;
      continue;
    }
    index_of[sig] = tasks.size();
    tasks.push_back(std::move(t));
  }
  return tasks;
}

std::vector<TuningTask> extract_tasks(const std::string& onnx_path, const driver::CompileOptions& options) {
  return extract_tasks(driver::import_onnx_for_compile(onnx_path, options), options);
}

}  // namespace kiln::tune
