// One entry point from a graph-level operator to a lowered kernel: the op's compute (compute.h)
// on placeholders of the input types, its default schedule for the target (schedule.h), lowered
// with tir::lower. Used by the tests now and by the graph compiler's driver later.
//
//   tir::PrimFunc f = topi::build_op_kernel("conv2d", {x_type, w_type}, attrs, host_target());
//   codegen::LLVMModule m(host_target()); m.add_prim_func(f); codegen::JitModule jit(std::move(m));
//
// Kernel parameters: the inputs in order ("in0", "in1", ...), then the outputs ("out0", ...),
// each C-contiguous with the op's inferred type.
#ifndef KILN_TOPI_BUILD_H_
#define KILN_TOPI_BUILD_H_

#include <optional>
#include <string>
#include <vector>

#include "kiln/codegen/target.h"
#include "kiln/ir/attrs.h"
#include "kiln/ir/tensor_type.h"
#include "kiln/tir/stmt.h"
#include "kiln/topi/compute.h"
#include "kiln/topi/schedule.h"

namespace kiln::topi {

struct OpKernelOptions {
  // empty: "topi_<op>" (a bare op name such as "exp" or "tanh" would clash with libm in the JIT)
  std::string kernel_name;
  std::optional<Knobs> knobs;    // empty: default_knobs for the target
};

// Validates attrs against the op's schema (defaults filled), infers the output types, builds the
// compute and the default schedule, and lowers. UserError: unknown op (kNotFound), bad
// inputs/attributes (kInvalidArgument, from the op's type inference), an op or dtype without a
// compute (kUnsupported).
tir::PrimFunc build_op_kernel(const std::string& op, const std::vector<ir::TensorType>& inputs, const ir::Attrs& attrs,
                              const codegen::Target& target, const OpKernelOptions& options = {});

// The compute of one op on given tensors (attrs validated, output types inferred from the
// tensors' types): the building block of fused kernels.
ComputeResult compute_op(const std::string& op, const std::vector<tir::Tensor>& inputs, const ir::Attrs& attrs,
                         const LayoutHints& hints);

// A fused group (what FuseOps will produce): member ops in topological order, each reading group
// inputs or earlier members' outputs, built as ONE kernel. The members' computes are chained on
// tensor expressions; the anchor's schedule template (its ComputeResult's parts and kind) is
// applied with the group's outputs, so every other member's stages (injective producers,
// elementwise consumers) are inlined. Kernel parameters: the group inputs, then `outputs`.
struct ValueRef {
  enum class Kind : uint8_t { kGroupInput, kMember } kind = Kind::kGroupInput;
  int index = 0;   // group input index, or member index
  int output = 0;  // which output of the member
  static ValueRef input(int i) { return {Kind::kGroupInput, i, 0}; }
  static ValueRef member(int m, int out = 0) { return {Kind::kMember, m, out}; }
};

struct GroupMember {
  std::string op;
  std::vector<ValueRef> inputs;
  ir::Attrs attrs;
};

// The group's computes chained, without a schedule: the anchor's ComputeResult (its parts,
// template and layout) with the group's outputs as its outputs, the placeholders of the group
// inputs, and the anchor's member index. What build_group_kernel schedules; what the auto-tuner
// derives a search space from (knob_space.h). Same UserErrors as build_group_kernel.
struct GroupCompute {
  ComputeResult result;
  std::vector<tir::Tensor> placeholders;
  int anchor = 0;
};
GroupCompute group_compute(const std::vector<GroupMember>& members, const std::vector<ir::TensorType>& inputs,
                           const std::vector<ValueRef>& outputs, const codegen::Target& target, int anchor = -1);

// anchor: the member whose schedule template the kernel uses; -1 picks the first member whose
// template is not injective (or the last member when all are injective). UserError
// (kInvalidArgument) for references to later members, unknown outputs, or an empty group.
tir::PrimFunc build_group_kernel(const std::vector<GroupMember>& members, const std::vector<ir::TensorType>& inputs,
                                 const std::vector<ValueRef>& outputs, const codegen::Target& target,
                                 int anchor = -1, const OpKernelOptions& options = {});

}  // namespace kiln::topi

#endif  // KILN_TOPI_BUILD_H_
