// FuseOps: partitions the calls of a graph into groups that each become one kernel, and replaces
// every group by one `fused` call holding its sub-graph (kiln/pass/fused_call.h). Decisions use
// only each operator's OpPattern from the registry (never op names). Contract:
//   - Anchored groups: every call whose pattern is kOutEWiseFusable (conv2d, matmul, gemm, pooling)
//     or kCommReduce (reductions, global pooling) anchors a group, in topological order. The group
//     takes (1) its injective producers: an argument computed by an elemwise/broadcast/injective
//     call, not yet grouped, whose only use is the group, recursively; and (2) its elementwise
//     consumers: while the group's result has exactly one use and that user is an elemwise or
//     broadcast call of the same output shape (bias add, residual add, activation, clip, ...), the
//     user joins and becomes the result. A consumer's other arguments (e.g. the residual) stay
//     arguments of the fused call.
//   - Injective chains: the remaining elemwise/broadcast/injective single-output calls form groups
//     along single-use edges (a call plus its only user, if that user is one too, and so on).
//   - Everything else (opaque ops such as softmax and layer_norm, multi-output calls) is a group of
//     one. So after FuseOps every call at the top level is `fused`; groups of one are kept so that
//     lowering handles one kind of node.
//   - Every internal value of a group has exactly one use, inside the group; only the group's
//     result leaves it. Hence groups are convex (no path leaves a group and comes back) and the
//     rewritten graph is acyclic, with the same outputs and values (the reference executor runs the
//     same reference implementations in the same order).
//   - Constants with at most 16 elements used by a group are copied into its body; larger ones
//     (weights) are arguments. `fused` calls already present are left alone.
// Stats: "groups" (fused calls made), "multi_op_groups" (groups of two or more calls),
// "ops_in_multi_op_groups".
#include <algorithm>
#include <unordered_map>
#include <unordered_set>

#include "kiln/pass/fused_call.h"
#include "kiln/pass/pass.h"
#include "pass/pass_util.h"

namespace kiln::pass {
namespace {

using ir::NodePtr;
using ir::OpPattern;
using ir::Value;

constexpr int64_t kInlineConstantLimit = 16;

struct Group {
  std::vector<const ir::Node*> members;  // any order while building; sorted by topo position later
  const ir::Node* result = nullptr;       // the node whose outputs leave the group
};

class Partitioner {
 public:
  Partitioner(const ir::Graph& graph) : graph_(graph), uses_(graph), order_(graph.topo_order()) {
    for (size_t i = 0; i < order_.size(); ++i) {
      position_[order_[i].get()] = static_cast<int>(i);
      if (order_[i]->kind() != ir::NodeKind::kCall) continue;
      for (const auto& a : order_[i]->as_call().args()) users_[a.node.get()].push_back(order_[i].get());
    }
  }

  std::vector<Group> partition() {
    for (const auto& node : order_) {
      if (!fusable_call(*node) || grouped(*node)) continue;
      const OpPattern p = node->as_call().op().pattern;
      if (p == OpPattern::kOutEWiseFusable || p == OpPattern::kCommReduce) anchor_group(*node);
    }
    for (const auto& node : order_) {
      if (!fusable_call(*node) || grouped(*node)) continue;
      if (node->as_call().op().pattern <= OpPattern::kInjective) chain_group(*node);
    }
    for (const auto& node : order_) {
      if (node->kind() != ir::NodeKind::kCall || grouped(*node) || is_fused_call(*node)) continue;
      new_group(*node);
    }
    for (auto& g : groups_) {
      std::sort(g.members.begin(), g.members.end(),
                [&](const ir::Node* a, const ir::Node* b) { return position_.at(a) < position_.at(b); });
    }
    return std::move(groups_);
  }

  const std::unordered_map<const ir::Node*, int>& group_of() const { return group_of_; }
  int position(const ir::Node* n) const { return position_.at(n); }

 private:
  static bool fusable_call(const ir::Node& n) {
    return n.kind() == ir::NodeKind::kCall && n.num_outputs() == 1 && !is_fused_call(n) &&
           n.as_call().op().pattern != OpPattern::kOpaque;
  }
  bool grouped(const ir::Node& n) const { return group_of_.count(&n) != 0; }

  int new_group(const ir::Node& n) {
    groups_.push_back({{&n}, &n});
    const int id = static_cast<int>(groups_.size()) - 1;
    group_of_[&n] = id;
    return id;
  }
  void add(int id, const ir::Node& n) {
    groups_[id].members.push_back(&n);
    group_of_[&n] = id;
  }
  // The single user of a single-output node with one use (nullptr otherwise, or when that use is a
  // graph output).
  const ir::Node* only_user(const ir::Node& n) const {
    if (uses_.of_node(&n) != 1) return nullptr;
    auto it = users_.find(&n);
    if (it == users_.end() || it->second.size() != 1) return nullptr;
    return it->second[0];
  }

  void absorb_producers(int id, const ir::Node& n) {
    for (const auto& a : n.as_call().args()) {
      const ir::Node& p = *a.node;
      if (!fusable_call(p) || grouped(p) || p.as_call().op().pattern > OpPattern::kInjective) continue;
      if (only_user(p) != &n) continue;
      add(id, p);
      absorb_producers(id, p);
    }
  }

  void anchor_group(const ir::Node& anchor) {
    const int id = new_group(anchor);
    absorb_producers(id, anchor);
    const ir::Node* tail = &anchor;
    while (const ir::Node* u = only_user(*tail)) {
      if (!fusable_call(*u) || grouped(*u) || u->as_call().op().pattern > OpPattern::kBroadcast) break;
      if (u->output_types()[0].shape != tail->output_types()[0].shape) break;
      add(id, *u);
      tail = u;
    }
    groups_[id].result = tail;
  }

  void chain_group(const ir::Node& start) {
    const int id = new_group(start);
    const ir::Node* tail = &start;
    while (const ir::Node* u = only_user(*tail)) {
      if (!fusable_call(*u) || grouped(*u) || u->as_call().op().pattern > OpPattern::kInjective) break;
      add(id, *u);
      tail = u;
    }
    groups_[id].result = tail;
  }

  const ir::Graph& graph_;
  UseCounts uses_;
  std::vector<NodePtr> order_;
  std::unordered_map<const ir::Node*, int> position_;
  std::unordered_map<const ir::Node*, std::vector<const ir::Node*>> users_;
  std::vector<Group> groups_;
  std::unordered_map<const ir::Node*, int> group_of_;
};

// Builds the `fused` call of one group over already-rewritten outer values.
class GroupBuilder {
 public:
  GroupBuilder(const Group& group, const std::unordered_map<const ir::Node*, std::vector<Value>>& outer)
      : group_(group), outer_(outer) {}

  NodePtr build() {
    std::unordered_set<const ir::Node*> members(group_.members.begin(), group_.members.end());
    std::unordered_map<const ir::Node*, std::vector<Value>> inner;
    std::string label;
    for (const ir::Node* m : group_.members) {
      const ir::CallNode& call = m->as_call();
      std::vector<Value> args;
      for (const Value& a : call.args()) {
        if (members.count(a.node.get())) {
          args.push_back(inner.at(a.node.get()).at(a.index));
        } else {
          args.push_back(external(a));
        }
      }
      NodePtr n = ir::make_call(call.op(), args, call.attrs(), call.name());
      auto& outs = inner[m];
      for (int i = 0; i < n->num_outputs(); ++i) outs.push_back(n->output(i));
      label += (label.empty() ? "" : "_") + call.op().name;
    }
    std::vector<Value> results = inner.at(group_.result);
    std::vector<std::string> names;
    for (size_t i = 0; i < results.size(); ++i) names.push_back("out" + std::to_string(i));
    ir::Graph body(params_, results, names);
    return make_fused_call(body, args_, label);
  }

 private:
  // The body value of an argument from outside the group: an inline copy of a small constant, or
  // a parameter (one per distinct outer value).
  Value external(const Value& original) {
    const Value outer = outer_.at(original.node.get()).at(original.index);
    for (size_t i = 0; i < args_.size(); ++i) {
      if (args_[i] == outer) return params_[i]->output();
    }
    if (outer.node->kind() == ir::NodeKind::kConstant && outer.type().numel() <= kInlineConstantLimit) {
      auto it = constants_.find(outer.node.get());
      if (it != constants_.end()) return it->second;
      Value c = ir::make_constant("c" + std::to_string(constants_.size()), outer.node->as_constant().data())->output();
      constants_[outer.node.get()] = c;
      return c;
    }
    params_.push_back(ir::make_input("p" + std::to_string(params_.size()), outer.type()));
    args_.push_back(outer);
    return params_.back()->output();
  }

  const Group& group_;
  const std::unordered_map<const ir::Node*, std::vector<Value>>& outer_;
  std::vector<NodePtr> params_;
  std::vector<Value> args_;
  std::unordered_map<const ir::Node*, Value> constants_;
};

class FuseOps final : public Pass {
 public:
  const char* name() const override { return "FuseOps"; }

  ir::Graph run(const ir::Graph& graph, PassContext& ctx) const override {
    Partitioner partitioner(graph);
    const std::vector<Group> groups = partitioner.partition();
    if (groups.empty()) return graph;
    const auto& group_of = partitioner.group_of();
    // Outer values in topological order; a group is built when its result node is reached (it
    // comes after every member, since each member is an ancestor of the result).
    std::unordered_map<const ir::Node*, std::vector<Value>> outer;
    for (const NodePtr& node : graph.topo_order()) {
      auto g = group_of.find(node.get());
      if (g == group_of.end()) {
        if (node->kind() == ir::NodeKind::kCall) {
          // An existing fused call (the only ungrouped kind of call): rebuild on mapped arguments.
          std::vector<Value> args;
          for (const auto& a : node->as_call().args()) args.push_back(outer.at(a.node.get()).at(a.index));
          NodePtr n = args == node->as_call().args()
                          ? node
                          : ir::make_call(node->as_call().op(), args, node->as_call().attrs(), node->name());
          for (int i = 0; i < n->num_outputs(); ++i) outer[node.get()].push_back(n->output(i));
        } else {
          outer[node.get()] = {node->output(0)};
        }
        continue;
      }
      const Group& group = groups[g->second];
      if (group.result != node.get()) continue;
      NodePtr fused = GroupBuilder(group, outer).build();
      for (int i = 0; i < fused->num_outputs(); ++i) outer[node.get()].push_back(fused->output(i));
      ++ctx.stat("groups");
      if (group.members.size() > 1) {
        ++ctx.stat("multi_op_groups");
        ctx.stat("ops_in_multi_op_groups") += static_cast<int64_t>(group.members.size());
      }
    }
    std::vector<Value> outputs;
    for (const auto& out : graph.outputs()) outputs.push_back(outer.at(out.node.get()).at(out.index));
    return ir::Graph(graph.inputs(), outputs, graph.output_names());
  }
};

}  // namespace

std::unique_ptr<Pass> make_fuse_ops() { return std::make_unique<FuseOps>(); }

}  // namespace kiln::pass
