// EliminateCommonSubexpr: merges nodes that compute the same thing. Contract:
//   - two calls with the same operator (OpDef identity), equal attributes and the same (already
//     merged) argument values become one node; the first in topological order is kept;
//   - two constants with the same type and bytes become one (the first kept), so calls on equal
//     weights or shape constants merge too;
//   - inputs are never merged; values and output names are unchanged (exact: nothing is recomputed).
// Stats: "calls_merged", "constants_merged".
#include <algorithm>
#include <functional>
#include <string_view>
#include <unordered_map>

#include "kiln/ir/graph_visitor.h"
#include "kiln/pass/pass.h"

namespace kiln::pass {
namespace {

using ir::Value;

class Eliminator : public ir::GraphMutator {
 public:
  explicit Eliminator(PassContext& ctx) : GraphMutator("EliminateCommonSubexpr"), ctx_(ctx) {}

 protected:
  std::vector<Value> rewrite_constant(const ir::ConstantNode& node) override {
    const ir::NDArray& data = node.data();
    // Bucket by type and a prefix of the bytes (hashing whole weights costs seconds on ResNet-50);
    // candidates are then compared byte for byte.
    const size_t prefix = std::min<size_t>(data.nbytes(), 64);
    const std::string_view head(static_cast<const char*>(data.raw_data()), prefix);
    auto& bucket = constants_[std::hash<std::string_view>()(head) ^ std::hash<std::string>()(data.type().to_string())];
    for (const auto& seen : bucket) {
      if (seen->as_constant().data().bitwise_equal(data)) {
        ++ctx_.stat("constants_merged");
        return {seen->output()};
      }
    }
    bucket.push_back(node.shared_from_this());
    return {node.output()};
  }

  std::vector<Value> rewrite_call(const ir::CallNode& node, const std::vector<Value>& new_args) override {
    std::vector<Value> rebuilt = rebuild_call(node, new_args);
    const ir::CallNode& call = rebuilt[0].node->as_call();
    size_t h = std::hash<const void*>()(&call.op());
    for (const auto& a : call.args()) h = h * 1000003u ^ std::hash<const void*>()(a.node.get()) ^ static_cast<size_t>(a.index);
    auto& bucket = calls_[h];
    for (const auto& seen : bucket) {
      const ir::CallNode& s = seen->as_call();
      if (&s.op() == &call.op() && s.args() == call.args() && s.attrs() == call.attrs()) {
        ++ctx_.stat("calls_merged");
        std::vector<Value> outs;
        for (int i = 0; i < s.num_outputs(); ++i) outs.push_back(seen->output(i));
        return outs;
      }
    }
    bucket.push_back(rebuilt[0].node);
    return rebuilt;
  }

 private:
  PassContext& ctx_;
  std::unordered_map<uint64_t, std::vector<ir::NodePtr>> constants_;
  std::unordered_map<size_t, std::vector<ir::NodePtr>> calls_;
};

class EliminateCommonSubexpr final : public Pass {
 public:
  const char* name() const override { return "EliminateCommonSubexpr"; }
  ir::Graph run(const ir::Graph& graph, PassContext& ctx) const override { return Eliminator(ctx).mutate(graph); }
};

}  // namespace

std::unique_ptr<Pass> make_eliminate_common_subexpr() { return std::make_unique<EliminateCommonSubexpr>(); }

}  // namespace kiln::pass
