// FoldConstant: evaluates every call whose arguments are all constants with its operator's
// reference implementation (ref::evaluate_call, the same oracle the executor uses) and replaces
// its outputs by constants. Contract:
//   - results are bit-identical to what the reference executor computes for the original graph;
//   - a call whose result would be much larger than its inputs is not folded (broadcasts such as
//     `expand` would otherwise turn a scalar into a huge weight): it is folded only when its
//     output elements <= max(fold_growth_limit * input elements, fold_small_limit) (PassOptions);
//   - ops without a reference implementation are left alone;
//   - new constants are named after the call ("<call name or op>.folded", made unique).
// Stats: "folded" (calls replaced), "skipped_growth" (calls left for size).
#include <algorithm>

#include "kiln/ir/graph_visitor.h"
#include "kiln/pass/pass.h"
#include "kiln/ref/executor.h"
#include "pass/pass_util.h"

namespace kiln::pass {
namespace {

class Folder : public ir::GraphMutator {
 public:
  Folder(const ir::Graph& graph, PassContext& ctx) : GraphMutator("FoldConstant"), ctx_(ctx), names_(graph) {}

 protected:
  std::vector<ir::Value> rewrite_call(const ir::CallNode& node, const std::vector<ir::Value>& new_args) override {
    int64_t in_elems = 0;
    std::vector<ir::NDArray> arrays;
    for (const auto& a : new_args) {
      if (a.node->kind() != ir::NodeKind::kConstant) return rebuild_call(node, new_args);
      arrays.push_back(a.node->as_constant().data());
      in_elems += arrays.back().numel();
    }
    if (!node.op().reference) return rebuild_call(node, new_args);
    int64_t out_elems = 0;
    for (const auto& t : node.output_types()) {
      if (!t.is_static()) return rebuild_call(node, new_args);  // sized at run time (an expand to a symbolic shape)
      out_elems += t.numel();
    }
    const auto& opt = ctx_.options();
    const double limit = std::max(opt.fold_growth_limit * static_cast<double>(in_elems),
                                  static_cast<double>(opt.fold_small_limit));
    if (static_cast<double>(out_elems) > limit) {
      ++ctx_.stat("skipped_growth");
      return rebuild_call(node, new_args);
    }
    // The arguments' types are unchanged (the mutator checks it), so the original call describes
    // the evaluation exactly.
    std::vector<ir::NDArray> outs = ref::evaluate_call(node, arrays);
    std::vector<ir::Value> result;
    const std::string base = (node.name().empty() ? node.op().name : node.name()) + ".folded";
    for (auto& o : outs) result.push_back(ir::make_constant(names_.fresh(base), std::move(o))->output());
    ++ctx_.stat("folded");
    return result;
  }

 private:
  PassContext& ctx_;
  NameSupply names_;
};

class FoldConstant final : public Pass {
 public:
  const char* name() const override { return "FoldConstant"; }
  ir::Graph run(const ir::Graph& graph, PassContext& ctx) const override { return Folder(graph, ctx).mutate(graph); }
};

}  // namespace

std::unique_ptr<Pass> make_fold_constant() { return std::make_unique<FoldConstant>(); }

}  // namespace kiln::pass
