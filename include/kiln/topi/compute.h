// Operator compute definitions: for each graph-level operator (docs/ops.md), a function from the
// op's inputs as tensor expressions, its validated attributes and its output types to the output
// tensor expressions. Computes compose: a fused group's kernel (issue 5) is built by calling each
// member's compute on the previous member's output tensors.
//
// A compute also names the stages a schedule needs to find (`parts`: "anchor", "pack_b",
// "pad", ...) and the schedule template that fits it (`schedule`), so schedules never search the
// expression graph by names. Stages not named in `parts` are injective helpers (padding reads,
// broadcasts, unpacking) that a schedule inlines or computes at the root.
//
// Registration is by graph op name (KILN_REGISTER_COMPUTE below); one file per operator family in
// src/topi/. The computed values match the op's reference implementation (ir::OpDef::reference)
// within floating-point rounding: sums accumulate in the output type (f32 for f16/bf16).
#ifndef KILN_TOPI_COMPUTE_H_
#define KILN_TOPI_COMPUTE_H_

#include <functional>
#include <map>
#include <string>
#include <string_view>
#include <vector>

#include "kiln/ir/attrs.h"
#include "kiln/ir/tensor_type.h"
#include "kiln/tir/tensor.h"

namespace kiln::topi {

// Which schedule template (schedule.h) a compute's result wants.
enum class ScheduleKind : uint8_t {
  kInjective,   // every output element independent, no reduction: fuse, vectorize, parallelize
  kReduction,   // one or more reduction stages (reduce_*, softmax, layer_norm, pooling, generic conv)
  kMatmul,      // parts: "anchor" (the [.., M, N] product, reduction over K), optional "pack_b" (panels of B packed in the kernel)
  kConv2dNchwc, // parts: "anchor" (blocked output), "pack_w" (packed weights), optional "pad"
  kDepthwise,   // parts: "anchor" (depthwise conv, NCHW), optional "pad"
  kConv2dWinograd,  // parts: "anchor" (batched product), "input" (transform)
  kInt8Conv2d,      // parts: "anchor" (u8 NCHW[ob]c output), "acc" (i32 tile), "x_words" (input staging: word repack or padded u8 copy; absent when the input is read in place), or "pad" instead of "x_words" for int8_depthwise_conv2d; topi/int8.h
  kInt8Matmul,      // parts: "anchor" (u8 or i32 [M, N] output), "acc" (i32 tile), "a_words" (repacked A); topi/int8.h
};

const char* schedule_kind_name(ScheduleKind kind);

struct ComputeResult {
  std::vector<tir::Tensor> outputs;
  std::map<std::string, tir::Tensor> parts;  // stages a schedule template addresses by role
  ScheduleKind schedule = ScheduleKind::kInjective;
  // Values the compute chose that its schedule must agree with (e.g. "oc_block" of a packed
  // weight layout, "n_block" of packed B panels). Derived from the target by the compute's caller.
  std::map<std::string, int64_t> layout;
};

// Facts a compute may use to choose a data layout (block sizes). Kept small and target-derived.
struct LayoutHints {
  int vector_lanes_f32 = 8;   // f32 lanes of one native vector
  int num_vector_regs = 16;   // architectural vector registers
};

using ComputeFn = std::function<ComputeResult(const std::vector<tir::Tensor>& inputs, const ir::Attrs& attrs,
                                              const std::vector<ir::TensorType>& output_types,
                                              const LayoutHints& hints)>;

struct ComputeDef {
  std::string op;  // graph-level op name, as in ir::OpRegistry
  ComputeFn compute;
};

class ComputeRegistry {
 public:
  static ComputeRegistry& global();
  // A second definition of the same op is an InternalError.
  void add(ComputeDef def);
  const ComputeDef* find(std::string_view op) const;
  // UserError(kUnsupported) naming the op when it has no compute.
  const ComputeDef& get(std::string_view op) const;
  std::vector<std::string> names() const;

 private:
  ComputeRegistry() = default;
  std::map<std::string, ComputeDef, std::less<>> defs_;
};

namespace detail {
struct ComputeRegistration {
  ComputeRegistration(const char* op, ComputeFn fn) { ComputeRegistry::global().add({op, std::move(fn)}); }
};
}  // namespace detail

}  // namespace kiln::topi

// KILN_REGISTER_COMPUTE(id, "op_name", fn): registers fn for op_name at library load time.
#define KILN_REGISTER_COMPUTE(id, op, fn) \
  static const ::kiln::topi::detail::ComputeRegistration kiln_compute_registration_##id(op, fn)

#endif  // KILN_TOPI_COMPUTE_H_
