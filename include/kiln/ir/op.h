// The operator registry: one OpDef per graph-level operator, declared in one place (one file per
// operator family under src/ir/ops/), holding everything the compiler needs to know about it:
//   - its attribute schema (typed, with defaults),
//   - its type/shape inference,
//   - its reference implementation (plain C++ loops: the correctness oracle),
//   - its fusion pattern (used by FuseOps, never op names).
// Later layers add their own per-op tables keyed by the same name (lowering to tensor
// expressions lives in src/topi/).
//
// Graph-level operators have static, attribute-driven semantics: inputs that ONNX passes as
// tensors but that must be known at compile time (Reshape's shape, Slice's starts, Pad's pads,
// Resize's scales, ...) are attributes here; the importer folds them from constants.
#ifndef KILN_IR_OP_H_
#define KILN_IR_OP_H_

#include <deque>
#include <functional>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "kiln/ir/attrs.h"
#include "kiln/ir/tensor_type.h"
#include "kiln/ir/ndarray.h"

namespace kiln::ir {

// How an operator may fuse with its neighbours (after TVM's TOpPattern); ordered from most to
// least fusable.
enum class OpPattern : uint8_t {
  kElemwise,         // out[i] = f(in[i]) for same-shaped inputs
  kBroadcast,        // elementwise with numpy broadcasting
  kInjective,        // each output element reads a computable set of input elements (reshape, transpose, ...)
  kCommReduce,       // reduction over axes (sum, max, mean, softmax's parts)
  kOutEWiseFusable,  // heavy op whose output can take elementwise consumers (conv2d, matmul, pooling)
  kOpaque,           // never fused
};

const char* op_pattern_name(OpPattern pattern);

struct AttrSpec {
  std::string name;
  AttrKind kind;
  std::optional<AttrValue> default_value;  // nullopt: required
  std::string doc;
};

// Type inference: given the input types and the (validated, defaults-filled) attributes, returns
// the output types. Throws UserError (kInvalidArgument/kUnsupported) when the inputs don't fit,
// with a reason that names the offending input or attribute; the caller adds the node's name.
using InferTypeFn = std::function<std::vector<TensorType>(const std::vector<TensorType>& inputs, const Attrs& attrs)>;

// Reference implementation: computes the outputs (whose types `infer_type` gave) from the inputs.
using ReferenceFn = std::function<std::vector<NDArray>(const std::vector<NDArray>& inputs, const Attrs& attrs,
                                                       const std::vector<TensorType>& output_types)>;

struct OpDef {
  std::string name;            // graph-level name, snake_case: "conv2d", "add", "reshape"
  std::string doc;             // one line: what it computes
  int min_inputs = 1;
  int max_inputs = 1;          // -1: variadic
  std::vector<AttrSpec> attrs;
  InferTypeFn infer_type;
  ReferenceFn reference;
  OpPattern pattern = OpPattern::kOpaque;
};

class OpRegistry {
 public:
  static OpRegistry& global();

  // Adds an operator; a second definition of the same name is an InternalError.
  void add(OpDef def);
  // nullptr when no operator has that name.
  const OpDef* find(std::string_view name) const;
  // Throws UserError(kNotFound) naming the op and listing what exists.
  const OpDef& get(std::string_view name) const;
  // Sorted names of every registered operator.
  std::vector<std::string> names() const;

  // Checks `attrs` against the schema of `op` (unknown names, wrong kinds, missing required ones)
  // and returns them with defaults filled in. Throws UserError(kInvalidArgument) naming the op and
  // attribute.
  Attrs validate_attrs(const OpDef& op, const Attrs& attrs) const;

 private:
  OpRegistry() = default;
  // A deque: add() never moves the OpDefs already handed out (graphs keep OpDef pointers, and a
  // test or plugin may register an operator after graphs exist).
  std::deque<OpDef> ops_;
};

namespace detail {
struct OpRegistration {
  explicit OpRegistration(OpDef (*make)()) { OpRegistry::global().add(make()); }
};
}  // namespace detail

}  // namespace kiln::ir

// Registers the OpDef returned by a function, at library load time:
//   KILN_REGISTER_OP(relu) { OpDef d; d.name = "relu"; ...; return d; }
#define KILN_REGISTER_OP(id)                                                        \
  static ::kiln::ir::OpDef kiln_make_op_##id();                                     \
  static const ::kiln::ir::detail::OpRegistration kiln_op_registration_##id(&kiln_make_op_##id); \
  static ::kiln::ir::OpDef kiln_make_op_##id()

#endif  // KILN_IR_OP_H_
