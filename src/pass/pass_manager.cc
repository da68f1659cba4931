// The pass manager: opt levels, per-pass timing, verification after each pass (debug builds),
// "(unchanged)" detection and the text-IR dump after a named pass or all. Contract: kiln/pass/pass.h.
#include <algorithm>
#include <chrono>
#include <cstdio>
#include <functional>
#include <iostream>

#include "kiln/ir/text.h"
#include "kiln/ir/verifier.h"
#include "kiln/pass/pass.h"
#include "kiln/support/error.h"

namespace kiln::pass {
namespace {

struct PassEntry {
  const char* name;
  std::unique_ptr<Pass> (*make)();
};

const std::vector<PassEntry>& pass_table() {
  static const std::vector<PassEntry> table = {
      {"SimplifyInference", make_simplify_inference}, {"FoldConstant", make_fold_constant},
      {"EliminateCommonSubexpr", make_eliminate_common_subexpr}, {"DeadCodeElimination", make_dead_code_elimination},
      {"AlterOpLayout", make_alter_op_layout}, {"FuseOps", make_fuse_ops},
      {"FuseLayerNorm", make_fuse_layer_norm}, {"FuseRmsNorm", make_fuse_rms_norm}, {"PackMatmulWeights", make_pack_matmul_weights},
      {"ConvertConvToWinograd", make_convert_conv_to_winograd},
      {"ConvertInt8ConvToWinograd", make_convert_int8_conv_to_winograd}, {"CancelTransposes", make_cancel_transposes},
      {"ComputeHalfInFloat", make_compute_half_in_float}, {"RealizeQuantizedOps", make_realize_quantized_ops},
      {"AlterInt8Layout", make_alter_int8_layout}, {"AlterInt8Matmul", make_alter_int8_matmul},
      {"NarrowConvToMatmul", make_narrow_conv_to_matmul},
  };
  return table;
}

}  // namespace

std::vector<std::string> pass_names() {
  std::vector<std::string> out;
  for (const auto& e : pass_table()) out.push_back(e.name);
  return out;
}

std::unique_ptr<Pass> make_pass(const std::string& name) {
  for (const auto& e : pass_table()) {
    if (name == e.name) return e.make();
  }
  std::string known;
  for (const auto& n : pass_names()) known += (known.empty() ? "" : ", ") + n;
  throw UserError(UserErrorKind::kNotFound, "pass '" + name + "'", "no such graph pass", "known passes: " + known);
}

std::vector<std::string> passes_for_level(int opt_level) {
  switch (opt_level) {
    case 0: return {};
    case 1: return {"ComputeHalfInFloat", "CancelTransposes", "SimplifyInference", "FoldConstant", "DeadCodeElimination"};
    case 2:
      return {"ComputeHalfInFloat", "CancelTransposes", "SimplifyInference", "RealizeQuantizedOps", "FoldConstant",
              "EliminateCommonSubexpr", "FuseLayerNorm", "FuseRmsNorm", "DeadCodeElimination", "FuseOps"};
    case 3:
      return {"ComputeHalfInFloat", "CancelTransposes",      "SimplifyInference",     "RealizeQuantizedOps", "FoldConstant",        "EliminateCommonSubexpr", "FuseLayerNorm",
              "FuseRmsNorm", "DeadCodeElimination",   "NarrowConvToMatmul", "AlterOpLayout",       "PackMatmulWeights",      "AlterInt8Layout",        "AlterInt8Matmul", "FoldConstant",
              "ConvertConvToWinograd", "ConvertInt8ConvToWinograd", "EliminateCommonSubexpr", "DeadCodeElimination", "FuseOps"};
    default:
      throw UserError(UserErrorKind::kInvalidArgument, "opt level " + std::to_string(opt_level),
                      "is not one of 0, 1, 2, 3", "use -O0 .. -O3");
  }
}

bool same_graph(const ir::Graph& before, const ir::Graph& after) {
  return before.inputs() == after.inputs() && before.outputs() == after.outputs() &&
         before.output_names() == after.output_names();
}

std::string PipelineResult::summary() const {
  std::string out;
  char line[256];
  for (const auto& r : records) {
    std::snprintf(line, sizeof line, "%-24s %8.3f s  calls %5d -> %5d", r.name.c_str(), r.seconds, r.calls_before,
                  r.calls_after);
    out += line;
    if (!r.changed) out += "  (unchanged)";
    for (const auto& [k, v] : r.stats) out += "  " + k + "=" + std::to_string(v);
    out += "\n";
  }
  std::snprintf(line, sizeof line, "%-24s %8.3f s\n", "total", total_seconds);
  return out + line;
}

int64_t PipelineResult::stat(const std::string& pass, const std::string& name) const {
  for (auto it = records.rbegin(); it != records.rend(); ++it) {
    if (it->name != pass) continue;
    auto s = it->stats.find(name);
    return s == it->stats.end() ? 0 : s->second;
  }
  return 0;
}

PipelineResult run_passes(const ir::Graph& graph, const std::vector<std::string>& passes, const PassOptions& options) {
  if (options.layout_block < 1) {
    throw UserError(UserErrorKind::kInvalidArgument, "layout block " + std::to_string(options.layout_block),
                    "must be at least 1", "use the target's f32 vector width (8 for AVX2, 16 for AVX-512)");
  }
  if (!options.dump_ir_after.empty() && options.dump_ir_after != "all") {
    const auto names = pass_names();
    if (std::find(names.begin(), names.end(), options.dump_ir_after) == names.end()) make_pass(options.dump_ir_after);
  }
  for (const auto& name : options.disabled_passes) make_pass(name);  // validates the name
  std::ostream& dump = options.dump_stream ? *options.dump_stream : std::cerr;
  PipelineResult result;
  result.graph = graph;
  PassContext ctx(options);
  const auto start_all = std::chrono::steady_clock::now();
  for (const auto& name : passes) {
    if (std::find(options.disabled_passes.begin(), options.disabled_passes.end(), name) !=
        options.disabled_passes.end()) {
      continue;
    }
    std::unique_ptr<Pass> pass = make_pass(name);
    PassRecord record;
    record.name = name;
    record.calls_before = result.graph.num_calls();
    const auto start = std::chrono::steady_clock::now();
    ir::Graph next = pass->run(result.graph, ctx);
    record.seconds = std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
    record.changed = !same_graph(result.graph, next);
    record.calls_after = next.num_calls();
    record.stats = ctx.take_stats();
    if (record.changed && options.verify_each_pass) ir::check_graph(next, "after pass " + name);
    if (options.dump_ir_after == "all" || options.dump_ir_after == name) {
      dump << "// IR after " << name << (record.changed ? "" : " (unchanged)") << "\n";
      dump << ir::graph_to_text(next);
    }
    result.graph = std::move(next);
    result.records.push_back(std::move(record));
  }
  result.total_seconds = std::chrono::duration<double>(std::chrono::steady_clock::now() - start_all).count();
  return result;
}

PipelineResult run_pipeline(const ir::Graph& graph, const PassOptions& options) {
  return run_passes(graph, passes_for_level(options.opt_level), options);
}

}  // namespace kiln::pass
