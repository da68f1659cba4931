#include "kiln/ir/graph_visitor.h"

#include "kiln/ir/verifier.h"
#include "kiln/support/error.h"

namespace kiln::ir {

void GraphVisitor::visit(const Graph& graph) {
  for (const NodePtr& node : graph.topo_order()) {
    switch (node->kind()) {
      case NodeKind::kInput: visit_input(node->as_input()); break;
      case NodeKind::kConstant: visit_constant(node->as_constant()); break;
      case NodeKind::kCall: visit_call(node->as_call()); break;
    }
  }
}

std::vector<Value> GraphMutator::rewrite_input(const InputNode& node) { return {node.output(0)}; }

std::vector<Value> GraphMutator::rewrite_constant(const ConstantNode& node) { return {node.output(0)}; }

std::vector<Value> GraphMutator::rewrite_call(const CallNode& node, const std::vector<Value>& new_args) {
  return rebuild_call(node, new_args);
}

std::vector<Value> GraphMutator::rebuild_call(const CallNode& node, const std::vector<Value>& new_args) {
  NodePtr result;
  if (new_args == node.args()) {
    result = node.shared_from_this();
  } else {
    result = make_call(node.op(), new_args, node.attrs(), node.name());
  }
  std::vector<Value> outs;
  for (int i = 0; i < result->num_outputs(); ++i) outs.push_back(result->output(i));
  return outs;
}

Value GraphMutator::mapped(const Value& original) const {
  auto it = memo_.find(original.node.get());
  KILN_ICHECK(it != memo_.end()) << pass_name_ << ": value of '" << original.node->name() << "' not visited yet";
  KILN_ICHECK(original.index < static_cast<int>(it->second.size())) << pass_name_ << ": output index out of range";
  return it->second[original.index];
}

Graph GraphMutator::mutate(const Graph& graph) {
  memo_.clear();
  for (const NodePtr& node : graph.topo_order()) {
    std::vector<Value> outs;
    switch (node->kind()) {
      case NodeKind::kInput: outs = rewrite_input(node->as_input()); break;
      case NodeKind::kConstant: outs = rewrite_constant(node->as_constant()); break;
      case NodeKind::kCall: {
        std::vector<Value> args;
        for (const Value& a : node->as_call().args()) args.push_back(mapped(a));
        outs = rewrite_call(node->as_call(), args);
        break;
      }
    }
    KILN_ICHECK(static_cast<int>(outs.size()) == node->num_outputs())
        << pass_name_ << ": node '" << node->name() << "' replaced by " << outs.size() << " values for "
        << node->num_outputs() << " outputs";
    for (int i = 0; i < node->num_outputs(); ++i) {
      KILN_ICHECK(outs[i].type() == node->output_types()[i])
          << pass_name_ << ": replacement of '" << node->name() << "' output " << i << " has type "
          << outs[i].type().to_string() << ", expected " << node->output_types()[i].to_string();
    }
    memo_[node.get()] = std::move(outs);
  }
  std::vector<NodePtr> inputs;
  for (const NodePtr& in : graph.inputs()) {
    Value v = mapped(in->output(0));
    KILN_ICHECK(v.node->kind() == NodeKind::kInput) << pass_name_ << ": graph input '" << in->name() << "' replaced by a "
                                                    << node_kind_name(v.node->kind());
    inputs.push_back(v.node);
  }
  std::vector<Value> outputs;
  for (const Value& out : graph.outputs()) outputs.push_back(mapped(out));
  Graph result(std::move(inputs), std::move(outputs), graph.output_names(), graph.dim_vars());
  memo_.clear();
  verify_graph_in_debug(result, pass_name_);
  return result;
}

}  // namespace kiln::ir
