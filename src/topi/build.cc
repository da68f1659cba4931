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

}  // namespace kiln::topi
