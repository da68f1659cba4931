#include "kiln/topi/build.h"

#include "kiln/ir/op.h"
#include "kiln/support/error.h"
#include "kiln/tir/lower.h"
#include "kiln/tir/schedule.h"
#include "topi/topi_util.h"

namespace kiln::topi {
namespace {

void check_input_count(const ir::OpDef& def, size_t n) {
  const bool too_few = static_cast<int>(n) < def.min_inputs;
  const bool too_many = def.max_inputs >= 0 && static_cast<int>(n) > def.max_inputs;
  if (too_few || too_many) {
    throw UserError(UserErrorKind::kInvalidArgument, "operator '" + def.name + "'",
                    "got " + std::to_string(n) + " inputs, expected " + std::to_string(def.min_inputs) +
                        (def.max_inputs < 0 ? " or more" : " to " + std::to_string(def.max_inputs)),
                    "");
  }
}

ComputeResult run_compute(const ir::OpDef& def, const std::vector<tir::Tensor>& inputs, const ir::Attrs& full,
                          const std::vector<ir::TensorType>& out_types, const LayoutHints& hints) {
  const ComputeDef& cdef = ComputeRegistry::global().get(def.name);
  ComputeResult r = cdef.compute(inputs, full, out_types, hints);
  KILN_ICHECK(r.outputs.size() == out_types.size())
      << def.name << ": compute gave " << r.outputs.size() << " outputs, type inference " << out_types.size();
  for (size_t i = 0; i < out_types.size(); ++i) {
    KILN_ICHECK(type_of(r.outputs[i]) == out_types[i])
        << def.name << " output " << i << ": compute gives " << type_of(r.outputs[i]).to_string() << ", inference "
        << out_types[i].to_string();
  }
  return r;
}

}  // namespace

ComputeResult compute_op(const std::string& op, const std::vector<tir::Tensor>& inputs, const ir::Attrs& attrs,
                         const LayoutHints& hints) {
  const ir::OpRegistry& reg = ir::OpRegistry::global();
  const ir::OpDef& def = reg.get(op);
  check_input_count(def, inputs.size());
  const ir::Attrs full = reg.validate_attrs(def, attrs);
  std::vector<ir::TensorType> in_types;
  for (const tir::Tensor& t : inputs) in_types.push_back(type_of(t));
  return run_compute(def, inputs, full, def.infer_type(in_types, full), hints);
}

tir::PrimFunc build_op_kernel(const std::string& op, const std::vector<ir::TensorType>& inputs, const ir::Attrs& attrs,
                              const codegen::Target& target, const OpKernelOptions& options) {
  const ir::OpRegistry& reg = ir::OpRegistry::global();
  const ir::OpDef& def = reg.get(op);
  check_input_count(def, inputs.size());
  const ir::Attrs full = reg.validate_attrs(def, attrs);
  const std::vector<ir::TensorType> out_types = def.infer_type(inputs, full);
  std::vector<tir::Tensor> placeholders;
  for (size_t i = 0; i < inputs.size(); ++i) {
    placeholders.push_back(tir::placeholder(inputs[i].shape, inputs[i].dtype, "in" + std::to_string(i)));
  }
  const ComputeResult r = run_compute(def, placeholders, full, out_types, layout_hints(target));
  const Knobs knobs = options.knobs ? *options.knobs : default_knobs(r, target);
  tir::Schedule s(r.outputs);
  apply_schedule(s, r, knobs);
  std::vector<tir::Tensor> args = placeholders;
  for (const tir::Tensor& t : r.outputs) {
    bool seen = false;
    for (const tir::Tensor& a : args) seen = seen || a.same_as(t);
    if (seen) {
      throw UserError(UserErrorKind::kUnsupported, "operator '" + op + "'",
                      "has an output that is one of its inputs or another output (a pure copy)",
                      "the graph compiler should forward such outputs instead of building a kernel");
    }
    args.push_back(t);
  }
  return tir::lower(s, args, options.kernel_name.empty() ? "topi_" + op : options.kernel_name);
}

GroupCompute group_compute(const std::vector<GroupMember>& members, const std::vector<ir::TensorType>& inputs,
                           const std::vector<ValueRef>& outputs, const codegen::Target& target, int anchor) {
  auto fail = [](const std::string& reason) {
    throw UserError(UserErrorKind::kInvalidArgument, "fused group", reason, "");
  };
  if (members.empty() || outputs.empty()) fail("has no members or no outputs");
  const LayoutHints hints = layout_hints(target);
  GroupCompute gc;
  std::vector<tir::Tensor>& placeholders = gc.placeholders;
  for (size_t i = 0; i < inputs.size(); ++i) {
    placeholders.push_back(tir::placeholder(inputs[i].shape, inputs[i].dtype, "in" + std::to_string(i)));
  }
  std::vector<ComputeResult> results;
  auto resolve = [&](const ValueRef& ref, size_t before) -> tir::Tensor {
    if (ref.kind == ValueRef::Kind::kGroupInput) {
      if (ref.index < 0 || static_cast<size_t>(ref.index) >= placeholders.size()) {
        fail("refers to group input " + std::to_string(ref.index) + " of " + std::to_string(placeholders.size()));
      }
      return placeholders[static_cast<size_t>(ref.index)];
    }
    if (ref.index < 0 || static_cast<size_t>(ref.index) >= before) {
      fail("refers to member " + std::to_string(ref.index) + " that is not an earlier member");
    }
    const ComputeResult& r = results[static_cast<size_t>(ref.index)];
    if (ref.output < 0 || static_cast<size_t>(ref.output) >= r.outputs.size()) {
      fail("refers to output " + std::to_string(ref.output) + " of member " + std::to_string(ref.index) + " ('" +
           members[static_cast<size_t>(ref.index)].op + "')");
    }
    return r.outputs[static_cast<size_t>(ref.output)];
  };
  for (size_t m = 0; m < members.size(); ++m) {
    std::vector<tir::Tensor> in;
    for (const ValueRef& ref : members[m].inputs) in.push_back(resolve(ref, m));
    results.push_back(compute_op(members[m].op, in, members[m].attrs, hints));
  }
  if (anchor < 0) {
    anchor = static_cast<int>(members.size()) - 1;
    for (size_t m = 0; m < members.size(); ++m) {
      if (results[m].schedule != ScheduleKind::kInjective) {
        anchor = static_cast<int>(m);
        break;
      }
    }
  }
  if (static_cast<size_t>(anchor) >= members.size()) fail("anchor " + std::to_string(anchor) + " is not a member");
  gc.anchor = anchor;
  gc.result = results[static_cast<size_t>(anchor)];
  gc.result.outputs.clear();
  for (const ValueRef& ref : outputs) gc.result.outputs.push_back(resolve(ref, members.size()));
  for (const tir::Tensor& t : gc.result.outputs) {
    for (const tir::Tensor& a : placeholders) {
      if (a.same_as(t)) fail("lists an output twice or a group input as an output");
    }
  }
  for (size_t i = 0; i < gc.result.outputs.size(); ++i) {
    for (size_t j = 0; j < i; ++j) {
      if (gc.result.outputs[i].same_as(gc.result.outputs[j])) fail("lists an output twice or a group input as an output");
    }
  }
  return gc;
}

tir::PrimFunc build_group_kernel(const std::vector<GroupMember>& members, const std::vector<ir::TensorType>& inputs,
                                 const std::vector<ValueRef>& outputs, const codegen::Target& target, int anchor,
                                 const OpKernelOptions& options) {
  const GroupCompute gc = group_compute(members, inputs, outputs, target, anchor);
  const Knobs knobs = options.knobs ? *options.knobs : default_knobs(gc.result, target);
  tir::Schedule s(gc.result.outputs);
  apply_schedule(s, gc.result, knobs);
  std::vector<tir::Tensor> args = gc.placeholders;
  for (const tir::Tensor& t : gc.result.outputs) args.push_back(t);
  std::string name = options.kernel_name;
  if (name.empty()) {
    name = "topi_fused";
    for (const GroupMember& m : members) name += "_" + m.op;
  }
  return tir::lower(s, args, name);
}

}  // namespace kiln::topi
