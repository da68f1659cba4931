// Shared helpers for the operator definitions in src/ir/ops/: user-error construction naming an
// operator's input or attribute, input/attribute validation, and numpy broadcasting (shapes and
// index iteration). Element-type dispatch lives in dtype_dispatch.h.
#ifndef KILN_IR_OPS_OP_UTIL_H_
#define KILN_IR_OPS_OP_UTIL_H_

#include <cstdint>
#include <string>
#include <vector>

#include "kiln/ir/attrs.h"
#include "kiln/ir/tensor_type.h"
#include "kiln/ir/ndarray.h"
#include "kiln/ir/op.h"
#include "kiln/support/error.h"

namespace kiln::ir::ops {

// "conv2d input 1 (w)"
std::string input_subject(const std::string& op, int index, const std::string& name);
// "conv2d attribute 'strides'"
std::string attr_subject(const std::string& op, const std::string& attr);

[[noreturn]] void fail_input(const std::string& op, int index, const std::string& name, const std::string& reason,
                             const std::string& hint = "");
[[noreturn]] void fail_attr(const std::string& op, const std::string& attr, const std::string& reason,
                            const std::string& hint = "");
[[noreturn]] void fail_unsupported_dtype(const std::string& op, int index, const std::string& name, DType dtype,
                                         const std::string& allowed);

// Returns `def` with its type inference first checking the number of inputs against
// min_inputs/max_inputs (UserError naming the operator), so that a hand-written graph with a wrong
// count fails cleanly. Every operator's registration ends with it.
OpDef with_arity_check(OpDef def);

// Sets of element types an operator accepts.
enum class DTypeSet : uint8_t {
  kFloat,          // f32 f64 f16 bf16
  kSignedNumeric,  // floats and i8 i16 i32 i64
  kNumeric,        // floats and every integer type
  kAny,            // numeric and bool
  kIndex,          // i32 i64
};
bool dtype_in(DType dtype, DTypeSet set);
const char* dtype_set_name(DTypeSet set);
void require_dtype(const std::string& op, int index, const std::string& name, DType dtype, DTypeSet set);
void require_rank(const std::string& op, int index, const std::string& name, const TensorType& type, int rank,
                  const std::string& layout);
void require_same_dtype(const std::string& op, const std::vector<TensorType>& inputs,
                        const std::vector<std::string>& names);

// Integer-list attribute checks.
const std::vector<int64_t>& ints_of_size(const std::string& op, const Attrs& attrs, const std::string& name,
                                         size_t size);
void require_all_at_least(const std::string& op, const std::string& name, const std::vector<int64_t>& values,
                          int64_t min);
// An axis attribute in [0, rank).
int64_t axis_attr(const std::string& op, const Attrs& attrs, const std::string& name, int rank);

// numpy's multidirectional broadcast of the shapes; throws naming `op` and the inputs that clash.
Shape broadcast_shapes(const std::string& op, const std::vector<Shape>& shapes, const std::vector<std::string>& names);
// Checks that dimensions `a` and `b` are equal. When they provably differ: UserError
// (kInvalidArgument) "<subject>: <what> are <a> and <b>"; when only run time could tell (a symbolic
// dimension not provably equal to the other): UserError(kUnsupported) saying so.
void require_same_dim(const std::string& subject, const Dim& a, const Dim& b, const std::string& what);
// True when `from` broadcasts (unidirectionally) to `to`.
bool broadcasts_to(const Shape& from, const Shape& to);

// Element strides of `shape` (C order), aligned to the right of `out_rank` dimensions, with 0 for
// the dimensions `shape` broadcasts along (size 1 or missing).
std::vector<int64_t> broadcast_strides(const Shape& shape, const Shape& out_shape);
std::vector<int64_t> contiguous_strides(const Shape& shape);

// Calls fn(out_index, offsets) for every element of `out_shape` in C order, where offsets[k] is the
// flat element offset in operand k given by `strides[k]` (e.g. from broadcast_strides).
template <size_t K, typename Fn>
void for_each_strided(const Shape& out_shape, const std::vector<int64_t> (&strides)[K], Fn&& fn) {
  const int rank = static_cast<int>(out_shape.size());
  const int64_t total = shape_numel(out_shape);
  if (total == 0) return;
  std::vector<int64_t> counter(rank, 0);
  int64_t offsets[K] = {};
  const int64_t inner = rank == 0 ? 1 : static_cast<int64_t>(out_shape[rank - 1]);
  int64_t inner_strides[K];
  for (size_t k = 0; k < K; ++k) inner_strides[k] = rank == 0 ? 0 : strides[k][rank - 1];
  for (int64_t i = 0; i < total; i += inner) {
    int64_t off[K];
    for (size_t k = 0; k < K; ++k) off[k] = offsets[k];
    for (int64_t j = 0; j < inner; ++j) {
      fn(i + j, static_cast<const int64_t*>(off));
      for (size_t k = 0; k < K; ++k) off[k] += inner_strides[k];
    }
    // Advance the counter over the outer dimensions.
    for (int d = rank - 2; d >= 0; --d) {
      ++counter[d];
      for (size_t k = 0; k < K; ++k) offsets[k] += strides[k][d];
      if (counter[d] < out_shape[d]) break;
      for (size_t k = 0; k < K; ++k) offsets[k] -= strides[k][d] * out_shape[d];
      counter[d] = 0;
    }
  }
}

// Splits a shape around `axis` into (outer, axis size, inner) element counts.
struct AxisSplit {
  int64_t outer = 1, size = 1, inner = 1;
};
AxisSplit split_at_axis(const Shape& shape, int axis);

// Output size of one spatial dimension of a sliding window (conv2d, pooling; defined in
// conv2d.cc). Throws naming `op` when the dilated kernel does not fit in the padded input. With
// ceil_mode, a last window that would start in the end padding is dropped (PyTorch, ONNX >= 19).
// A symbolic `in` gives the symbolic size (the fit check then waits for run time).
Dim sliding_output_size(const std::string& op, int dim, const Dim& in, int64_t kernel, int64_t stride,
                        int64_t dilation, int64_t pad_begin, int64_t pad_end, bool ceil_mode);

// out[i] = in[base + sum_d counter_d * in_strides[d]] over out's shape, moving element bytes (any
// dtype; defined in shape_ops.cc).
void copy_strided(const NDArray& in, NDArray& out, const std::vector<int64_t>& in_strides, int64_t base = 0);

// Reads an input NDArray as a vector<double> (any dtype).
std::vector<double> to_doubles(const NDArray& a);

}  // namespace kiln::ir::ops

#endif  // KILN_IR_OPS_OP_UTIL_H_
