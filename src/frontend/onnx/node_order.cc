// Unique node names and a stable topological order for the decoded nodes of an ONNX graph
// (contract in node_order.h).
#include "node_order.h"

#include <map>
#include <queue>
#include <unordered_map>

#include "kiln/support/error.h"

namespace kiln::frontend::onnx_import {
namespace {

std::string node_label(const OnnxNode& n) { return "'" + n.name + "' (" + n.op_type + ")"; }

void name_nodes(std::vector<OnnxNode>& nodes) {
  std::set<std::string> taken;
  for (const OnnxNode& n : nodes) {
    if (!n.name.empty()) taken.insert(n.name);
  }
  std::set<std::string> used;
  for (size_t i = 0; i < nodes.size(); ++i) {
    OnnxNode& n = nodes[i];
    const bool generated = n.name.empty();
    const std::string base = generated ? n.op_type + "_" + std::to_string(i) : n.name;
    std::string name = base;
    // A generated name must not take a name the file gives another node either.
    for (int k = 2; used.count(name) || (generated && taken.count(name)); ++k) name = base + "_" + std::to_string(k);
    used.insert(name);
    n.name = name;
  }
}

}  // namespace

void prepare_nodes(std::vector<OnnxNode>& nodes, const std::set<std::string>& defined, const std::string& model_name) {
  name_nodes(nodes);
  const size_t n = nodes.size();
  std::unordered_map<std::string, size_t> producer;
  for (size_t i = 0; i < n; ++i) {
    for (const std::string& out : nodes[i].outputs) {
      if (out.empty()) continue;
      if (defined.count(out)) {
        throw UserError(UserErrorKind::kInvalidArgument, model_name + ": node " + node_label(nodes[i]),
                        "output '" + out + "' is also a graph input or initializer, so the graph is ambiguous",
                        "give the node's output another name");
      }
      auto [it, fresh] = producer.emplace(out, i);
      if (!fresh && it->second != i) {
        throw UserError(UserErrorKind::kInvalidArgument, model_name + ": node " + node_label(nodes[i]),
                        "output '" + out + "' is also produced by node " + node_label(nodes[it->second]) +
                            "; ONNX values must have one producer",
                        "rename one of the two outputs");
      }
    }
  }
  // Kahn's algorithm; the ready node earliest in the file goes first.
  std::vector<std::vector<size_t>> users(n);
  std::vector<int> pending(n, 0);
  for (size_t i = 0; i < n; ++i) {
    std::set<size_t> deps;
    for (const auto* names : {&nodes[i].inputs, &nodes[i].implicit_inputs}) {
      for (const std::string& in : *names) {
        if (in.empty()) continue;
        auto it = producer.find(in);
        if (it != producer.end()) deps.insert(it->second);
      }
    }
    for (size_t d : deps) {
      users[d].push_back(i);
      ++pending[i];
    }
  }
  std::priority_queue<size_t, std::vector<size_t>, std::greater<>> ready;
  for (size_t i = 0; i < n; ++i) {
    if (pending[i] == 0) ready.push(i);
  }
  std::vector<size_t> order;
  order.reserve(n);
  while (!ready.empty()) {
    size_t i = ready.top();
    ready.pop();
    order.push_back(i);
    for (size_t u : users[i]) {
      if (--pending[u] == 0) ready.push(u);
    }
  }
  if (order.size() != n) {
    std::string cycle;
    int listed = 0;
    for (size_t i = 0; i < n && listed < 8; ++i) {
      if (pending[i] > 0) {
        cycle += (cycle.empty() ? "" : ", ") + node_label(nodes[i]);
        ++listed;
      }
    }
    throw UserError(UserErrorKind::kInvalidArgument, model_name,
                    "the graph has a cycle: " + std::to_string(n - order.size()) +
                        " nodes are on it or read its values (" + cycle + (n - order.size() > 8 ? ", ..." : "") + ")",
                    "a model must be a directed acyclic graph; check the exporter");
  }
  bool sorted = true;
  for (size_t i = 0; i < n; ++i) sorted = sorted && order[i] == i;
  if (sorted) return;
  std::vector<OnnxNode> out;
  out.reserve(n);
  for (size_t i : order) out.push_back(std::move(nodes[i]));
  nodes = std::move(out);
}

}  // namespace kiln::frontend::onnx_import
