#include "pass/pass_util.h"

#include <algorithm>

#include "kiln/ir/op.h"
#include "kiln/support/error.h"

namespace kiln::pass {

const ir::OpDef* op_ptr(const char* name) {
  const ir::OpDef* op = ir::OpRegistry::global().find(name);
  KILN_ICHECK(op != nullptr) << "graph passes need the operator '" << name << "'";
  return op;
}

UseCounts::UseCounts(const ir::Graph& graph) {
  for (const auto& node : graph.topo_order()) {
    per_output[node.get()].assign(node->num_outputs(), 0);
    if (node->kind() != ir::NodeKind::kCall) continue;
    for (const auto& a : node->as_call().args()) ++per_output[a.node.get()][a.index];
  }
  for (const auto& out : graph.outputs()) ++per_output[out.node.get()][out.index];
}

int UseCounts::of(const ir::Value& v) const {
  auto it = per_output.find(v.node.get());
  return it == per_output.end() ? 0 : it->second[v.index];
}

int UseCounts::of_node(const ir::Node* node) const {
  auto it = per_output.find(node);
  int n = 0;
  if (it != per_output.end()) {
    for (int u : it->second) n += u;
  }
  return n;
}

NameSupply::NameSupply(const ir::Graph& graph) {
  for (const auto& node : graph.topo_order()) {
    if (node->kind() != ir::NodeKind::kCall) used_.insert(node->name());
  }
  for (const auto& in : graph.inputs()) used_.insert(in->name());
}

std::string NameSupply::fresh(const std::string& base) {
  std::string name = base.empty() ? "c" : base;
  for (int i = 1; used_.count(name); ++i) name = base + "." + std::to_string(i);
  used_.insert(name);
  return name;
}

ir::NodePtr scalar_constant(NameSupply& names, const std::string& base, ir::DType dtype, double value) {
  return ir::make_constant(names.fresh(base), ir::NDArray::scalar(dtype, value));
}

int64_t trailing_reduce_axis(const ir::CallNode& reduce) {
  if (reduce.attrs().get_int("keepdims") != 1) return -1;
  const int64_t rank = reduce.args()[0].type().rank();
  std::vector<int64_t> axes = reduce.attrs().get_ints("axes");
  if (axes.empty()) {
    for (int64_t a = 0; a < rank; ++a) axes.push_back(a);
  }
  std::sort(axes.begin(), axes.end());
  for (size_t i = 0; i < axes.size(); ++i) {
    if (axes[i] != rank - static_cast<int64_t>(axes.size()) + static_cast<int64_t>(i)) return -1;
  }
  return axes.empty() ? -1 : axes[0];
}

bool all_ints_equal(const std::vector<int64_t>& v, int64_t x) {
  for (int64_t e : v) {
    if (e != x) return false;
  }
  return true;
}

}  // namespace kiln::pass
