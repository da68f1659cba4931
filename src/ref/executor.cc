#include "kiln/ref/executor.h"

#include <unordered_map>

#include "kiln/ir/specialize.h"
#include "kiln/support/error.h"
#include "kiln/support/logging.h"

namespace kiln::ref {

using ir::NDArray;
using ir::Node;
using ir::NodeKind;

std::vector<NDArray> evaluate_call(const ir::CallNode& call, const std::vector<NDArray>& args) {
  const ir::OpDef& op = call.op();
  if (!op.reference) {
    throw UserError(UserErrorKind::kUnsupported, "operator '" + op.name + "'", "has no reference implementation");
  }
  std::vector<NDArray> outs = op.reference(args, call.attrs(), call.output_types());
  KILN_ICHECK(static_cast<int>(outs.size()) == call.num_outputs())
      << op.name << ": reference gave " << outs.size() << " outputs, expected " << call.num_outputs();
  for (int i = 0; i < call.num_outputs(); ++i) {
    KILN_ICHECK(outs[i].defined() && outs[i].type() == call.output_types()[i])
        << op.name << ": reference output " << i << " has type "
        << (outs[i].defined() ? outs[i].type().to_string() : "undefined") << ", inferred "
        << call.output_types()[i].to_string();
  }
  return outs;
}

std::vector<NDArray> run_graph(const ir::Graph& graph, const std::vector<NDArray>& inputs) {
  if (inputs.size() != graph.inputs().size()) {
    throw UserError(UserErrorKind::kInvalidArgument, "graph inputs",
                    "got " + std::to_string(inputs.size()) + " arrays for " + std::to_string(graph.inputs().size()) + " inputs");
  }
  if (!graph.dim_vars().empty()) {
    // A graph with size variables runs at the sizes its inputs give (kiln/ir/specialize.h).
    std::vector<std::vector<int64_t>> shapes;
    for (size_t i = 0; i < inputs.size(); ++i) {
      if (!inputs[i].defined()) {
        throw UserError(UserErrorKind::kInvalidArgument, "input '" + graph.inputs()[i]->name() + "'", "got nothing");
      }
      shapes.push_back(inputs[i].sizes());
    }
    return run_graph(ir::specialize_dims(graph, ir::bind_dim_vars(graph, shapes)), inputs);
  }
  const auto order = graph.topo_order();
  // Remaining uses of each node (by arguments and graph outputs), to free values after their last use.
  std::unordered_map<const Node*, int> uses;
  for (const auto& node : order) {
    if (node->kind() != NodeKind::kCall) continue;
    for (const auto& a : node->as_call().args()) ++uses[a.node.get()];
  }
  for (const auto& out : graph.outputs()) ++uses[out.node.get()];

  std::unordered_map<const Node*, std::vector<NDArray>> values;
  for (size_t i = 0; i < inputs.size(); ++i) {
    const auto& in = graph.inputs()[i]->as_input();
    if (!inputs[i].defined() || inputs[i].type() != in.type()) {
      throw UserError(UserErrorKind::kInvalidArgument, "input '" + in.name() + "'",
                      "expected " + in.type().to_string() + ", got " +
                          (inputs[i].defined() ? inputs[i].type().to_string() : "nothing"),
                      "pass an array of exactly the input's dtype and shape");
    }
    values[&in] = {inputs[i]};
  }
  auto release = [&](const Node* node) {
    auto it = uses.find(node);
    if (it != uses.end() && --it->second == 0) values.erase(node);
  };
  for (const auto& node : order) {
    switch (node->kind()) {
      case NodeKind::kInput: break;
      case NodeKind::kConstant: values[node.get()] = {node->as_constant().data()}; break;
      case NodeKind::kCall: {
        const auto& call = node->as_call();
        std::vector<NDArray> args;
        for (const auto& a : call.args()) args.push_back(values.at(a.node.get()).at(a.index));
        KILN_LOG(ref, kTrace) << "running " << call.op().name << " " << call.name();
        values[node.get()] = evaluate_call(call, args);
        args.clear();
        for (const auto& a : call.args()) release(a.node.get());
        break;
      }
    }
  }
  std::vector<NDArray> outs;
  for (const auto& out : graph.outputs()) outs.push_back(values.at(out.node.get()).at(out.index));
  return outs;
}

std::vector<NDArray> run_graph(const ir::Graph& graph, const std::map<std::string, NDArray>& inputs) {
  std::string names;
  for (const auto& in : graph.inputs()) names += (names.empty() ? "" : ", ") + in->name();
  for (const auto& [name, array] : inputs) {
    bool found = false;
    for (const auto& in : graph.inputs()) found = found || in->name() == name;
    if (!found) {
      throw UserError(UserErrorKind::kNotFound, "input '" + name + "'", "the graph has no input of that name",
                      "its inputs: " + names);
    }
  }
  std::vector<NDArray> ordered;
  for (const auto& in : graph.inputs()) {
    auto it = inputs.find(in->name());
    if (it == inputs.end()) {
      throw UserError(UserErrorKind::kNotFound, "input '" + in->name() + "'", "no array given for it",
                      "the graph's inputs: " + names);
    }
    ordered.push_back(it->second);
  }
  return run_graph(graph, ordered);
}

}  // namespace kiln::ref
