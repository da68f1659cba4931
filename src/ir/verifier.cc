#include "kiln/ir/verifier.h"

#include <cmath>
#include <set>
#include <unordered_map>
#include <unordered_set>

#include "kiln/support/error.h"

namespace kiln::ir {

namespace {

// Attribute equality in which NaN equals NaN: a NaN value (a Pad fill, a Clip bound) is a valid
// attribute, and its validated form is itself.
bool same_double(double a, double b) { return a == b || (std::isnan(a) && std::isnan(b)); }

bool same_attrs(const Attrs& a, const Attrs& b) {
  if (a.values().size() != b.values().size()) return false;
  for (auto ia = a.values().begin(), ib = b.values().begin(); ia != a.values().end(); ++ia, ++ib) {
    if (ia->first != ib->first || ia->second.index() != ib->second.index()) return false;
    if (const auto* da = std::get_if<double>(&ia->second)) {
      if (!same_double(*da, std::get<double>(ib->second))) return false;
    } else if (const auto* va = std::get_if<std::vector<double>>(&ia->second)) {
      const auto& vb = std::get<std::vector<double>>(ib->second);
      if (va->size() != vb.size()) return false;
      for (size_t k = 0; k < va->size(); ++k) {
        if (!same_double((*va)[k], vb[k])) return false;
      }
    } else if (!(ia->second == ib->second)) {
      return false;
    }
  }
  return true;
}

}  // namespace

std::vector<std::string> verify_graph(const Graph& graph) {
  std::vector<std::string> problems;
  std::unordered_set<const Node*> declared_inputs;
  for (const NodePtr& in : graph.inputs()) {
    if (!declared_inputs.insert(in.get()).second) problems.push_back("input '" + in->name() + "' is declared twice");
  }
  std::vector<NodePtr> order;
  try {
    order = graph.topo_order();
  } catch (const InternalError& e) {
    problems.push_back(std::string("no topological order: ") + e.what());
    return problems;
  }
  std::unordered_map<const Node*, size_t> position;
  for (size_t i = 0; i < order.size(); ++i) position[order[i].get()] = i;
  std::set<std::string> names;
  for (size_t i = 0; i < order.size(); ++i) {
    const Node& node = *order[i];
    const std::string label = std::string(node_kind_name(node.kind())) + " '" + node.name() + "'";
    if (node.kind() != NodeKind::kCall) {
      if (node.name().empty()) problems.push_back(label + " has no name");
      if (!names.insert(node.name()).second) problems.push_back("name '" + node.name() + "' is used twice");
    }
    if (node.kind() == NodeKind::kInput && !declared_inputs.count(&node)) {
      problems.push_back(label + " is used but is not a graph input (dangling value)");
    }
    if (node.kind() == NodeKind::kConstant && node.as_constant().data().type() != node.output_types()[0]) {
      problems.push_back(label + ": data type differs from the node type");
    }
    if (node.kind() != NodeKind::kCall) continue;
    const CallNode& call = node.as_call();
    const std::string where = "call of " + call.op().name + (call.name().empty() ? "" : " '" + call.name() + "'") +
                              " (#" + std::to_string(i) + ")";
    std::vector<TensorType> in_types;
    bool args_ok = true;
    for (size_t k = 0; k < call.args().size(); ++k) {
      const Value& a = call.args()[k];
      if (!a.defined() || a.index < 0 || a.index >= a.node->num_outputs()) {
        problems.push_back(where + ": argument " + std::to_string(k) + " is not a valid value");
        args_ok = false;
        continue;
      }
      auto p = position.find(a.node.get());
      if (p == position.end() || p->second >= i) {
        problems.push_back(where + ": argument " + std::to_string(k) + " does not come before its user");
      }
      in_types.push_back(a.type());
    }
    if (!args_ok) continue;
    try {
      Attrs attrs = OpRegistry::global().validate_attrs(call.op(), call.attrs());
      if (!same_attrs(attrs, call.attrs())) problems.push_back(where + ": attributes are not in validated form");
      auto types = call.op().infer_type(in_types, attrs);
      if (types != call.output_types()) {
        std::string got, want;
        for (const auto& t : call.output_types()) got += (got.empty() ? "" : ", ") + t.to_string();
        for (const auto& t : types) want += (want.empty() ? "" : ", ") + t.to_string();
        problems.push_back(where + ": stored types (" + got + ") differ from inferred types (" + want + ")");
      }
    } catch (const UserError& e) {
      problems.push_back(where + ": type inference fails: " + e.what());
    }
  }
  std::set<std::string> out_names;
  for (size_t i = 0; i < graph.outputs().size(); ++i) {
    const Value& v = graph.outputs()[i];
    if (v.index < 0 || v.index >= v.node->num_outputs()) problems.push_back("output " + std::to_string(i) + " index out of range");
    const std::string& name = graph.output_names()[i];
    if (name.empty()) problems.push_back("output " + std::to_string(i) + " has no name");
    if (!out_names.insert(name).second) problems.push_back("output name '" + name + "' is used twice");
  }
  return problems;
}

void check_graph(const Graph& graph, const std::string& context) {
  auto problems = verify_graph(graph);
  if (problems.empty()) return;
  std::string text;
  for (const auto& p : problems) text += "\n  " + p;
  KILN_IFAIL() << "graph verification failed after " << context << ":" << text;
}

void verify_graph_in_debug(const Graph& graph, const std::string& context) {
#ifndef NDEBUG
  check_graph(graph, context);
#else
  (void)graph;
  (void)context;
#endif
}

}  // namespace kiln::ir
