// Graph passes and the pass manager.
//
// Contract of a pass: `run(graph, ctx)` takes a well-formed graph and returns a well-formed graph
// that computes the same outputs (same names, types and values up to floating-point reassociation,
// which each pass's header states). A pass that changes nothing returns a graph whose outputs are
// the very same Values (pointer-identical nodes), which the manager reports as "(unchanged)".
// Passes never mutate nodes (the IR is immutable); they build new ones with ir::make_call and share
// the rest. Counters a pass wants to report (fused groups, layout transforms, folded nodes) go to
// `ctx.stat(name)`.
//
// The manager (run_pipeline) runs the passes of an opt level in order, times each, verifies the
// graph after each (PassOptions::verify_each_pass, on in debug builds), and prints the text IR
// after a named pass (or all) to a stream. Opt levels (docs/passes.md):
//   O0: nothing (types are inferred when nodes are built: make_call runs each op's inference).
//   O1: ComputeHalfInFloat (f16/bf16 graphs only), CancelTransposes, SimplifyInference, FoldConstant,
//       DeadCodeElimination.
//   O2: O1 + EliminateCommonSubexpr, FuseLayerNorm and FuseRmsNorm (after CSE, before DCE), then FuseOps.
//   O3: O2 with AlterOpLayout and PackMatmulWeights (+ FoldConstant to pre-transform the weights,
//       ConvertConvToWinograd,
//       CSE, DCE) before FuseOps.
#ifndef KILN_PASS_PASS_H_
#define KILN_PASS_PASS_H_

#include <cstdint>
#include <iosfwd>
#include <map>
#include <memory>
#include <string>
#include <utility>
#include <vector>

#include "kiln/ir/graph.h"
#include "kiln/pass/layer_choice.h"

namespace kiln::pass {

struct PassOptions {
  int opt_level = 2;  // 0..3
  // AlterOpLayout's channel block (NCHW{block}c): the target's f32 vector width in lanes
  // (8 for AVX2, 16 for AVX-512). Must be >= 1.
  int layout_block = 8;
  // FoldConstant does not fold a call whose result has more elements than
  // max(fold_growth_limit * (elements of its constant inputs), fold_small_limit). 1.6 lets the
  // zero padding of weights to whole channel blocks fold (AlterOpLayout pads each of O and I by
  // at most 1/4: 1.5625x) while broadcasts (expand of a scalar) stay unfolded.
  double fold_growth_limit = 1.6;
  int64_t fold_small_limit = 1024;
  // ConvertConvToWinograd: -1 = the tile from the shape rule (winograd_tile_for); 0 = convert
  // nothing; 2 or 4 = that tile for every candidate conv (tests, measurements).
  // ConvertInt8ConvToWinograd reads it too: 0 = none, 2 or 4 = every candidate (its tile is 2).
  int winograd_tile = -1;
  // Graph-level tuning choices (layer_choice.h): consulted by ConvertConvToWinograd (Winograd or
  // direct per conv) and AlterOpLayout (a conv's output-channel block); every point met is logged
  // there. Null: every pass uses its own rule.
  LayerChoices* layer_choices = nullptr;
  // Text-IR dump: "" (none), "all", or a pass name (e.g. "FuseOps"): the graph is printed after
  // every run of that pass, to `dump_stream` (std::cerr when null).
  std::string dump_ir_after;
  std::ostream* dump_stream = nullptr;
  // Passes to skip by name (e.g. {"FuseOps"}).
  std::vector<std::string> disabled_passes;
  // Run the verifier (ir::check_graph) after every pass that changed the graph: on by default in
  // debug builds (no NDEBUG), off in release builds; tests turn it on.
#ifdef NDEBUG
  bool verify_each_pass = false;
#else
  bool verify_each_pass = true;
#endif
};

class PassContext {
 public:
  explicit PassContext(const PassOptions& options) : options_(options) {}
  const PassOptions& options() const { return options_; }
  // A named counter of the pass now running.
  int64_t& stat(const std::string& name) { return stats_[name]; }
  const std::map<std::string, int64_t>& stats() const { return stats_; }
  std::map<std::string, int64_t> take_stats() { return std::exchange(stats_, {}); }

 private:
  PassOptions options_;
  std::map<std::string, int64_t> stats_;
};

class Pass {
 public:
  virtual ~Pass() = default;
  virtual const char* name() const = 0;
  virtual ir::Graph run(const ir::Graph& graph, PassContext& ctx) const = 0;
};

// The passes (one file pair each under src/pass/).
std::unique_ptr<Pass> make_fold_constant();
std::unique_ptr<Pass> make_simplify_inference();
std::unique_ptr<Pass> make_eliminate_common_subexpr();
std::unique_ptr<Pass> make_dead_code_elimination();
std::unique_ptr<Pass> make_fuse_ops();
std::unique_ptr<Pass> make_alter_op_layout();
std::unique_ptr<Pass> make_fuse_layer_norm();
std::unique_ptr<Pass> make_fuse_rms_norm();
std::unique_ptr<Pass> make_realize_quantized_ops();  // QDQ patterns -> integer ops (docs/int8.md)
std::unique_ptr<Pass> make_alter_int8_matmul();      // integer matmuls with constant weights -> the fast int8 kernel
std::unique_ptr<Pass> make_alter_int8_layout();      // integer convs -> the fast int8 kernels (docs/int8.md)
std::unique_ptr<Pass> make_pack_matmul_weights();
std::unique_ptr<Pass> make_convert_conv_to_winograd();
std::unique_ptr<Pass> make_convert_int8_conv_to_winograd();  // 3x3 int8 convs -> exact integer Winograd F(2x2)
std::unique_ptr<Pass> make_narrow_conv_to_matmul();  // 1x1 convs with < one vector of outputs -> matmul
std::unique_ptr<Pass> make_cancel_transposes();
std::unique_ptr<Pass> make_compute_half_in_float();

// ConvertConvToWinograd's rule: the Winograd output tile (2 or 4) for a stride-1 3x3 conv of
// batch n, c -> m channels and an oh x ow output, or 0 when the direct convolution is faster.
int winograd_tile_for(int64_t n, int64_t c, int64_t m, int64_t oh, int64_t ow);
// ConvertInt8ConvToWinograd's rule: true when int8 Winograd F(2x2, 3x3) is estimated faster than
// the direct int8 kernel for that conv.
bool int8_winograd_pays(int64_t n, int64_t c, int64_t m, int64_t oh, int64_t ow);

// A pass by name ("FoldConstant", ...); UserError(kNotFound) listing the names otherwise.
std::unique_ptr<Pass> make_pass(const std::string& name);
std::vector<std::string> pass_names();

// The pass names an opt level runs, in order. UserError(kInvalidArgument) outside 0..3.
std::vector<std::string> passes_for_level(int opt_level);

// True when `after` is `before` itself: same input nodes, same output Values and names.
bool same_graph(const ir::Graph& before, const ir::Graph& after);

struct PassRecord {
  std::string name;
  double seconds = 0;
  bool changed = false;
  int calls_before = 0, calls_after = 0;
  std::map<std::string, int64_t> stats;
};

struct PipelineResult {
  ir::Graph graph;
  std::vector<PassRecord> records;
  double total_seconds = 0;
  // "FoldConstant  0.012 s  calls 320 -> 250  folded=70" lines, one per pass.
  std::string summary() const;
  // The stat `name` of the last run of pass `pass` (0 when absent).
  int64_t stat(const std::string& pass, const std::string& name) const;
};

// Runs `passes` (names) in order with the manager's timing, dumping and verification.
PipelineResult run_passes(const ir::Graph& graph, const std::vector<std::string>& passes, const PassOptions& options);
// Runs passes_for_level(options.opt_level).
PipelineResult run_pipeline(const ir::Graph& graph, const PassOptions& options);

}  // namespace kiln::pass

#endif  // KILN_PASS_PASS_H_
