// Kernel-ready groups of top-level calls (include/kiln/driver/kernel_group.h).
#include "kiln/driver/kernel_group.h"

#include <cstdio>
#include <unordered_map>

#include "kiln/pass/fused_call.h"
#include "kiln/support/error.h"
#include "kiln/topi/schedule.h"

namespace kiln::driver {

KernelGroup make_kernel_group(const ir::CallNode& call) {
  KernelGroup g;
  g.output_types = call.output_types();
  for (const ir::Value& a : call.args()) g.input_types.push_back(a.type());
  if (!pass::is_fused_call(call)) {
    topi::GroupMember m{call.op().name, {}, call.attrs()};
    for (size_t i = 0; i < call.args().size(); ++i) m.inputs.push_back(topi::ValueRef::input(static_cast<int>(i)));
    g.members.push_back(std::move(m));
    g.member_types.push_back(call.output_types());
    for (int k = 0; k < call.num_outputs(); ++k) g.outputs.push_back(topi::ValueRef::member(0, k));
    g.label = call.op().name;
    return g;
  }
  std::shared_ptr<const ir::Graph> body = pass::fused_body(call);
  std::unordered_map<const ir::Node*, topi::ValueRef> refs;  // node -> ref of its output 0
  std::unordered_map<const ir::Node*, int> member_index;
  for (size_t i = 0; i < body->inputs().size(); ++i) refs[body->inputs()[i].get()] = topi::ValueRef::input(static_cast<int>(i));
  auto ref_of = [&](const ir::Value& v) -> topi::ValueRef {
    auto it = member_index.find(v.node.get());
    if (it != member_index.end()) return topi::ValueRef::member(it->second, v.index);
    auto r = refs.find(v.node.get());
    KILN_ICHECK(r != refs.end()) << "fused body value not defined before use";
    return r->second;
  };
  for (const ir::NodePtr& node : body->topo_order()) {
    switch (node->kind()) {
      case ir::NodeKind::kInput:
        break;
      case ir::NodeKind::kConstant: {
        const int index = static_cast<int>(g.input_types.size());
        g.input_types.push_back(node->as_constant().type());
        g.body_constants.push_back(node);
        refs[node.get()] = topi::ValueRef::input(index);
        break;
      }
      case ir::NodeKind::kCall: {
        const ir::CallNode& c = node->as_call();
        topi::GroupMember m{c.op().name, {}, c.attrs()};
        for (const ir::Value& a : c.args()) m.inputs.push_back(ref_of(a));
        member_index[node.get()] = static_cast<int>(g.members.size());
        g.members.push_back(std::move(m));
        g.member_types.push_back(c.output_types());
        break;
      }
    }
  }
  for (const ir::Value& v : body->outputs()) g.outputs.push_back(ref_of(v));
  const ir::AttrValue* label = call.attrs().find("label");
  g.label = label != nullptr ? call.attrs().get_string("label") : "fused";
  return g;
}

std::string join_member_ops(const KernelGroup& g) {
  std::string s;
  for (const auto& m : g.members) s += (s.empty() ? "" : "+") + m.op;
  return s;
}

std::string kernel_group_key(const ir::CallNode& call) {
  if (pass::is_fused_call(call)) return call.attrs().get_string("body");
  std::string key = call.op().name + "(";
  for (const ir::Value& a : call.args()) key += a.type().to_string() + ",";
  key += ")";
  for (const auto& [name, value] : call.attrs().values()) key += " " + name + "=" + ir::attr_value_to_string(value);
  return key;
}

std::string kernel_group_signature(const ir::CallNode& call, const codegen::Target& target) {
  const topi::LayoutHints hints = topi::layout_hints(target);
  const std::string arch = target.triple.substr(0, target.triple.find('-'));
  const std::string text = kernel_group_key(call) + "|arch=" + arch + "|lanes=" +
                           std::to_string(hints.vector_lanes_f32) + "|regs=" + std::to_string(hints.num_vector_regs) +
                           "|vbits=" + std::to_string(target.vector_bits);
  uint64_t h = 1469598103934665603ull;  // FNV-1a, 64 bits
  for (unsigned char c : text) {
    h ^= c;
    h *= 1099511628211ull;
  }
  char buf[17];
  std::snprintf(buf, sizeof buf, "%016llx", static_cast<unsigned long long>(h));
  return buf;
}

}  // namespace kiln::driver
