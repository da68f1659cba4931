// DeadCodeElimination. In Kiln's graph IR liveness is reachability: a Graph holds exactly the
// nodes reachable from its outputs, so a node that a rewrite disconnects is gone as soon as the
// last reference to it drops (no pass has to sweep it). What remains dead is work inside live
// nodes: outputs of a multi-output call that nobody reads. Contract:
//   - a `split` with unused outputs is replaced by one `strided_slice` per used piece (the unused
//     pieces are never computed); a split whose outputs are all used is kept;
//   - values are unchanged (slices copy the same elements exactly);
//   - graph inputs are never removed, even when unused (they are the model's interface).
// Stats: "unused_outputs_removed" (split pieces no longer computed).
#include "kiln/ir/graph_visitor.h"
#include "kiln/pass/pass.h"
#include "pass/pass_util.h"

namespace kiln::pass {
namespace {

using ir::Value;

class Eliminator : public ir::GraphMutator {
 public:
  Eliminator(const ir::Graph& graph, PassContext& ctx) : GraphMutator("DeadCodeElimination"), ctx_(ctx), uses_(graph) {}

 protected:
  std::vector<Value> rewrite_call(const ir::CallNode& node, const std::vector<Value>& new_args) override {
    if (&node.op() != split_) return rebuild_call(node, new_args);
    int unused = 0;
    for (int i = 0; i < node.num_outputs(); ++i) unused += uses_.of(node.output(i)) == 0 ? 1 : 0;
    if (unused == 0) return rebuild_call(node, new_args);
    const int64_t axis = node.attrs().get_int("axis");
    const auto& sizes = node.attrs().get_ints("sizes");
    std::vector<Value> outs;
    int64_t offset = 0;
    for (int i = 0; i < node.num_outputs(); ++i) {
      // Unused pieces get a slice too (the mutator needs a value per output); nothing references
      // it, so it is not part of the result graph.
      ir::Attrs attrs;
      attrs.set("begins", std::vector<int64_t>{offset})
          .set("ends", std::vector<int64_t>{offset + sizes[i]})
          .set("axes", std::vector<int64_t>{axis});
      outs.push_back(ir::make_call("strided_slice", {new_args[0]}, attrs, node.name())->output());
      offset += sizes[i];
    }
    ctx_.stat("unused_outputs_removed") += unused;
    return outs;
  }

 private:
  PassContext& ctx_;
  UseCounts uses_;
  const ir::OpDef* split_ = op_ptr("split");
};

class DeadCodeElimination final : public Pass {
 public:
  const char* name() const override { return "DeadCodeElimination"; }
  ir::Graph run(const ir::Graph& graph, PassContext& ctx) const override {
    return Eliminator(graph, ctx).mutate(graph);
  }
};

}  // namespace

std::unique_ptr<Pass> make_dead_code_elimination() { return std::make_unique<DeadCodeElimination>(); }

}  // namespace kiln::pass
