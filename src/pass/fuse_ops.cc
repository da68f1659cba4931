// FuseOps: partitions the calls of a graph into groups that each become one kernel, and replaces
// every group by one `fused` call holding its sub-graph (kiln/pass/fused_call.h). Decisions use
// only each operator's OpPattern from the registry (never op names). Contract:
//   - Anchored groups: every call whose pattern is kOutEWiseFusable (conv2d, matmul, gemm, pooling)
//     or kCommReduce (reductions, global pooling) anchors a group, in topological order. The group
//     takes (1) its producers: an argument computed by a call not yet grouped whose only use is the
//     group, recursively: injective calls only (reshape, transpose, pad: index arithmetic) for a
//     kOutEWiseFusable anchor, which reads each input element many times, so that an inlined
//     elementwise producer would be recomputed per output (an elementwise producer becomes its own
//     kernel or the epilogue of the group before), and of those only ones that read one computed
//     tensor (an inlined concat would pick its source on every one of those reads); any
//     elemwise/broadcast/injective call for a reduction, which reads each input once; and (2) its elementwise consumers: the smallest set
//     of ungrouped elemwise/broadcast calls of the result's output shape through which every path
//     from the group's result reaches one node (a post-dominator): a chain (bias add, residual add,
//     activation, clip, ...) or a diamond (GELU: x * 0.5 * (1 + erf(x / sqrt 2)) where x has two
//     users); that node becomes the result and the search repeats from it. Consumers' other
//     arguments (e.g. the residual) stay arguments of the fused call, except (3) below.
//   - (3) Operand producers of elementwise members: an elemwise/broadcast member of a group
//     (a consumer joined in (2), or a member of an injective chain) takes an argument's producer
//     when that producer is an ungrouped elemwise/broadcast call of the member's output shape
//     whose only use is the member, recursively: it is evaluated once per output element
//     either way, so inlining it only saves the tensor it would write (e.g. the dequantize of a
//     QDQ residual's shortcut operand, read as u8 instead of f32).
//   - Injective chains: the remaining elemwise/broadcast/injective single-output calls form groups
//     along single-use edges (a call plus its only user, if that user is one too, and so on), then
//     take elementwise consumers as in (2).
//   - Everything else (opaque ops such as softmax and layer_norm, multi-output calls) is a group of
//     one. So after FuseOps every call at the top level is `fused`; groups of one are kept so that
//     lowering handles one kind of node.
//   - Every internal value of a group has all its uses inside the group (one, or several in a
//     diamond); only the group's result leaves it. Hence groups are convex (no path leaves a group and comes back) and the
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

  // Arguments of `n` computed at run time (not constants).
  static int computed_args(const ir::Node& n) {
    int count = 0;
    for (const auto& a : n.as_call().args()) count += a.node->kind() == ir::NodeKind::kConstant ? 0 : 1;
    return count;
  }

  // Producers that join a group: injective calls only when the group's anchor reads its inputs many
  // times (kOutEWiseFusable: an inlined elementwise producer would be recomputed for every output
  // it feeds, e.g. a GELU recomputed per matmul output column); any elemwise/broadcast/injective
  // call otherwise (reductions and injective groups read each input element once).
  void absorb_producers(int id, const ir::Node& n, bool index_only) {
    for (const auto& a : n.as_call().args()) {
      const ir::Node& p = *a.node;
      if (!fusable_call(p) || grouped(p)) continue;
      const OpPattern pattern = p.as_call().op().pattern;
      if (pattern > OpPattern::kInjective || (index_only && pattern != OpPattern::kInjective)) continue;
      if (index_only && computed_args(p) > 1) continue;
      if (only_user(p) != &n) continue;
      add(id, p);
      absorb_producers(id, p, index_only);
    }
  }

  // Elementwise consumers of `tail` (a single-output group member whose result would leave the
  // group): the smallest set R of ungrouped elemwise/broadcast calls with tail's output shape such
  // that every use of tail and of every member of R except one node `d` is in R, i.e. `d`
  // post-dominates tail through same-shaped elementwise calls (a chain, or a diamond such as
  // x * 0.5 * (1 + erf(x / sqrt 2)) where x has two users). Returns R in topological order with
  // `d` last, or empty when no such node exists within kMaxRegion calls. Visiting the candidates
  // in topological order makes every producer inside R visited before its user.
  std::vector<const ir::Node*> elementwise_region(const ir::Node& tail) const {
    constexpr size_t kMaxRegion = 32;
    const ir::Shape& shape = tail.output_types()[0].shape;
    auto by_position = [&](const ir::Node* a, const ir::Node* b) { return position_.at(a) > position_.at(b); };
    std::vector<const ir::Node*> frontier;  // min-heap on topological position
    std::unordered_set<const ir::Node*> seen;
    auto push_users = [&](const ir::Node& n) -> int64_t {
      auto it = users_.find(&n);
      if (it == users_.end()) return 0;
      for (const ir::Node* u : it->second) {
        if (seen.insert(u).second) {
          frontier.push_back(u);
          std::push_heap(frontier.begin(), frontier.end(), by_position);
        }
      }
      return static_cast<int64_t>(it->second.size());
    };
    // A graph output among the uses has no user node: such a value cannot be internal.
    auto has_outer_use = [&](const ir::Node& n) {
      auto it = users_.find(&n);
      return uses_.of_node(&n) != (it == users_.end() ? 0 : static_cast<int64_t>(it->second.size()));
    };
    if (has_outer_use(tail)) return {};
    std::unordered_set<const ir::Node*> inside = {&tail};
    std::vector<const ir::Node*> region;
    int64_t open = push_users(tail);  // edges from tail or R to calls not yet in R
    while (!frontier.empty() && region.size() < kMaxRegion) {
      std::pop_heap(frontier.begin(), frontier.end(), by_position);
      const ir::Node* n = frontier.back();
      frontier.pop_back();
      if (!fusable_call(*n) || grouped(*n) || n->as_call().op().pattern > OpPattern::kBroadcast) return {};
      if (n->output_types()[0].shape != shape) return {};
      for (const auto& a : n->as_call().args()) {
        if (inside.count(a.node.get())) --open;
      }
      region.push_back(n);
      inside.insert(n);
      if (open == 0) return region;  // every path from tail so far ends in n: n post-dominates
      if (has_outer_use(*n)) return {};
      open += push_users(*n);
    }
    return {};
  }

  // (3) in the contract: the single-use elemwise/broadcast producers of an elementwise member's
  // operands, of the member's output shape (each of their elements is read once, by the member).
  void absorb_operand_producers(int id, const ir::Node& member) {
    if (member.as_call().op().pattern > OpPattern::kBroadcast) return;
    const ir::Shape& shape = member.output_types()[0].shape;
    for (const auto& a : member.as_call().args()) {
      const ir::Node& p = *a.node;
      if (!fusable_call(p) || grouped(p) || p.as_call().op().pattern > OpPattern::kBroadcast) continue;
      if (p.output_types()[0].shape != shape || only_user(p) != &member) continue;
      add(id, p);
      absorb_operand_producers(id, p);
    }
  }

  // Grows the group from its result through elementwise consumers (chains and diamonds).
  const ir::Node* absorb_consumers(int id, const ir::Node* tail) {
    for (;;) {
      std::vector<const ir::Node*> region = elementwise_region(*tail);
      if (region.empty()) return tail;
      for (const ir::Node* n : region) add(id, *n);
      for (const ir::Node* n : region) absorb_operand_producers(id, *n);
      tail = region.back();
    }
  }

  void anchor_group(const ir::Node& anchor) {
    const int id = new_group(anchor);
    const bool reads_many = anchor.as_call().op().pattern == OpPattern::kOutEWiseFusable;
    absorb_producers(id, anchor, reads_many);
    groups_[id].result = absorb_consumers(id, &anchor);
  }

  void chain_group(const ir::Node& start) {
    const int id = new_group(start);
    const ir::Node* tail = &start;
    while (const ir::Node* u = only_user(*tail)) {
      if (!fusable_call(*u) || grouped(*u) || u->as_call().op().pattern > OpPattern::kInjective) break;
      add(id, *u);
      absorb_operand_producers(id, *u);
      tail = u;
    }
    groups_[id].result = absorb_consumers(id, tail);
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
    return ir::Graph(graph.inputs(), outputs, graph.output_names(), graph.dim_vars());
  }
};

}  // namespace

std::unique_ptr<Pass> make_fuse_ops() { return std::make_unique<FuseOps>(); }

}  // namespace kiln::pass
