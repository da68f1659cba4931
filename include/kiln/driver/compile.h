// The compile driver: from a graph (or an ONNX file) to one deployable artifact.
//
//   ONNX import -> pass pipeline at the opt level (pass.h) -> for each fused group ONE kernel
//   (topi::build_group_kernel: the members' computes chained, the anchor's default schedule,
//   elementwise/injective members inlined) -> tir lower -> one LLVM module -> object code ->
//   ArtifactBuilder + write_artifact (memory plan, constants, metadata).
//
// Contract:
//   - Every top-level call of the optimized graph becomes one kernel call in graph order (a
//     `fused` call: its body as one kernel; any other call, e.g. at O0/O1: the op alone).
//     Identical fused bodies (same text, so same types and attributes) share one kernel symbol.
//   - A group topi cannot build as one kernel (a fusion shape the schedules refuse) is split into
//     one kernel per member op; every such split is listed in CompileReport::split_groups and
//     logged once per compile (component `driver`, warning) -- never silently.
//   - An op with no compute definition at all is a UserError(kUnsupported) naming the op.
//   - Small constants inside fused bodies become artifact constants (extra kernel arguments).
#ifndef KILN_DRIVER_COMPILE_H_
#define KILN_DRIVER_COMPILE_H_

#include <iosfwd>
#include <map>
#include <string>
#include <utility>
#include <vector>

#include "kiln/codegen/target.h"
#include "kiln/driver/artifact.h"
#include "kiln/ir/graph.h"
#include "kiln/ir/ndarray.h"
#include "kiln/pass/pass.h"

namespace kiln {
class Progress;
}

namespace kiln::driver {

struct CompileOptions {
  std::string target = "llvm";  // codegen::parse_target syntax; "llvm" = this machine
  int opt_level = 3;            // 0..3 (pass.h)
  std::map<std::string, ir::Shape> input_shapes;  // ONNX import: fix symbolic input dimensions
  std::map<std::string, ir::NDArray> constant_inputs;  // ONNX import: inputs bound to constants (--bind)
  std::string dump_ir_after;                      // "" | "all" | a pass name
  std::ostream* dump_stream = nullptr;            // std::cerr when null
  std::vector<std::string> disabled_passes;
  bool force_split = false;  // tests: build every group as per-op kernels (the fallback path)
  // A tuning-records database (kiln tune, docs/tuning.md): each kernel whose signature has a best
  // record for this target's device is built with that record's knobs; others keep the default
  // schedules. Records of other devices are ignored with one warning that counts them.
  // The same file's layer records settle the graph-level choices (pass/layer_choice.h: Winograd
  // per conv, a conv's output block); records measured in another search space (another Kiln's
  // templates) are ignored with one warning that counts them (tune/record_applicability.h).
  // Kernel records are not applied at all when `kiln tune`'s whole-model check recorded that the
  // model is no faster with them (tune/model_check.h).
  std::string records;
  // Explicit graph-level choices (the auto-tuner flipping one); when set, `records` does not
  // settle them. Not owned; the compile logs every choice point met into it.
  pass::LayerChoices* layer_choices = nullptr;
  // Threads for LLVM code generation (the kernels' modules compile in parallel); 0: one per core
  // within the available memory (codegen::default_codegen_threads, $KILN_COMPILE_THREADS).
  int codegen_threads = 0;
  // Reuse and keep compiled modules in the kernel cache (driver/kernel_cache.h: $KILN_CACHE_DIR,
  // $KILN_CACHE=off); false: compile every module.
  bool use_kernel_cache = true;
  // Where the phases report progress (support/progress.h; the CLI's terminal line); not owned,
  // null: nowhere.
  Progress* progress = nullptr;
  ArtifactOptions artifact;
};

struct KernelCall {
  std::string symbol;     // the kernel's exported name
  std::string fused_ops;  // member ops joined by '+'
  bool split = false;     // part of a group split into per-op kernels
};

struct CompileReport {
  std::string output_path;
  std::string target;                       // canonical target string
  pass::PipelineResult pipeline;            // passes run, with times and stats
  std::vector<KernelCall> kernel_calls;     // in execution order
  int distinct_kernels = 0;                 // symbols in the object code
  int codegen_threads = 1;                  // threads LLVM code generation ran on
  int codegen_modules = 0;                  // LLVM modules the kernels were spread over
  int cached_modules = 0;                   // of them, taken from the kernel cache
  std::string kernel_cache_dir;             // "" when the cache was off
  std::vector<std::string> split_groups;    // labels of groups built as per-op kernels, with why
  ArtifactSummary artifact;
  std::string records_path;                 // CompileOptions::records
  int tuned_kernels = 0;                    // distinct kernels built from a record
  bool kernel_records_off = false;          // kiln tune's whole-model check turned them down
  std::string records_note;                 // records of other devices, ignored (empty: none)
  int layer_choices = 0;                    // graph-level choice points met (pass/layer_choice.h)
  int tuned_layer_choices = 0;              // of which settled by a record (or layer_choices)
  std::string stale_note;                   // records of another search space, ignored (empty: none)
  std::vector<std::pair<std::string, double>> phase_seconds;  // import, passes, lower, codegen, write
  // The human-readable account `kiln compile` prints.
  std::string summary() const;
};

// Compiles `graph` into an artifact at `out_path`.
CompileReport compile_graph(const ir::Graph& graph, const std::string& out_path, const CompileOptions& options);

// The pass pipeline exactly as compile_graph runs it for `options` on `target` (shared with the
// auto-tuner's task extraction, tune/task.h).
pass::PipelineResult run_compile_passes(const ir::Graph& graph, const CompileOptions& options,
                                        const codegen::Target& target);

// The ONNX import exactly as compile_onnx does it (options.input_shapes, constant_inputs).
ir::Graph import_onnx_for_compile(const std::string& model_path, const CompileOptions& options);

// Imports the ONNX model at `model_path` (with options.input_shapes and options.constant_inputs)
// and compiles it.
CompileReport compile_onnx(const std::string& model_path, const std::string& out_path, const CompileOptions& options);

// Built-in example models (compile_example.cc), buildable without any file: "tiny-cnn" (a small
// CNN on f32[1, 3, 32, 32]: conv/batch-norm/relu, a residual add, pooling, matmul, softmax).
// UserError(kNotFound) listing the names for an unknown one.
ir::Graph example_model(const std::string& name);
std::vector<std::string> example_model_names();

// For `kiln doctor`: compiles a tiny graph (conv2d + bias + relu + global average pool) for this
// machine through the whole pipeline (compile_graph: passes, fused kernels, LLVM, artifact
// linked by the C compiler), loads and runs it through libkiln_runtime's C API and compares the
// output with the reference executor (rtol 1e-4). Never throws: failures go to `detail`.
struct CompileSelfTest {
  bool ok = false;
  std::string detail;  // what was done and how long it took, or which step failed and why
};
CompileSelfTest compile_self_test();

}  // namespace kiln::driver

#endif  // KILN_DRIVER_COMPILE_H_
