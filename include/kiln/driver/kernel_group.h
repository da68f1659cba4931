// One top-level call of an optimized graph as a kernel-ready group: what the compile driver
// (compile.cc) builds into one kernel and what the auto-tuner (tune/task.h) extracts as a tuning
// task. Shared so that both see the same members, input types and signature.
//
//   KernelGroup g = make_kernel_group(call);           // a `fused` call: its body; else the op alone
//   std::string sig = kernel_group_signature(call, target);
//
// Contract:
//   - members refer to group inputs or earlier members; input_types are the call's arguments,
//     then the body's own (small) constants, in order (body_constants lists those nodes).
//   - kernel_group_signature is stable: the same for the same body (its text: ops, attributes,
//     input types, inline constants) and the same target layout facts (architecture, f32 vector
//     lanes, vector registers), on every run and machine. 16 hex digits of a 64-bit FNV-1a hash.
//     The CPU itself is not part of it: records are keyed by (signature, tune::DeviceKey).
#ifndef KILN_DRIVER_KERNEL_GROUP_H_
#define KILN_DRIVER_KERNEL_GROUP_H_

#include <string>
#include <vector>

#include "kiln/codegen/target.h"
#include "kiln/ir/graph.h"
#include "kiln/topi/build.h"

namespace kiln::driver {

struct KernelGroup {
  std::vector<topi::GroupMember> members;
  std::vector<std::vector<ir::TensorType>> member_types;  // per member, its output types
  std::vector<ir::TensorType> input_types;
  std::vector<ir::NodePtr> body_constants;  // appended group inputs, in order
  std::vector<topi::ValueRef> outputs;
  std::vector<ir::TensorType> output_types;
  std::string label;
};

// The group of a `fused` call (its body) or of any other call (the op alone).
KernelGroup make_kernel_group(const ir::CallNode& call);

// Member ops joined by '+': "conv2d+add+relu".
std::string join_member_ops(const KernelGroup& g);

// The text a kernel is identified by: a fused call's body text, else the op, its attributes and
// its argument types (the same text means the same kernel).
std::string kernel_group_key(const ir::CallNode& call);

// The stable signature of the kernel of `call` on `target` (see the contract above).
std::string kernel_group_signature(const ir::CallNode& call, const codegen::Target& target);

}  // namespace kiln::driver

#endif  // KILN_DRIVER_KERNEL_GROUP_H_
