// Resource limits of the ONNX importer: what a model may ask for before Kiln allocates it.
//
// A model file is untrusted input. Its shapes can overflow int64 element counts or ask for more
// memory than the machine has; its graphs can nest subgraphs without end. These checks run before
// the corresponding allocation or recursion and turn each into a UserError naming the tensor or
// node, the size asked for and the limit, instead of std::bad_alloc, an OOM kill or a stack
// overflow.
#ifndef KILN_SRC_FRONTEND_ONNX_IMPORT_LIMITS_H_
#define KILN_SRC_FRONTEND_ONNX_IMPORT_LIMITS_H_

#include <cstddef>
#include <cstdint>
#include <string>

#include "kiln/ir/tensor_type.h"
#include "kiln/ir/ndarray.h"

namespace kiln::frontend::onnx_import {

// Subgraphs (If/Loop/Scan bodies) nested deeper than this are refused.
inline constexpr int kMaxSubgraphDepth = 64;

struct TensorSize {
  int64_t numel = 0;
  size_t nbytes = 0;
};

// Bytes one tensor may take: the machine's physical memory, or $KILN_MAX_TENSOR_BYTES when set
// (tests and servers lower it).
uint64_t max_tensor_bytes();

// numel and bytes of a tensor of `dtype` and `shape`: refuses negative dimensions, element counts
// that overflow and sizes above max_tensor_bytes(), naming `subject`.
TensorSize checked_tensor_size(ir::DType dtype, const ir::Shape& shape, const std::string& subject);

// A dimension computed in floating point (an output size from scales, a Range's length): NaN and
// values outside [0, 2^62] are refused, naming `subject`, before the cast to int64 (which would be
// undefined behaviour).
int64_t checked_dimension(double value, const std::string& subject);

// Element k of an integer tensor as int64: exact for i64; other integer dtypes (read through
// double) outside int64's range (a u64 above 2^63 - 1) are refused, naming `subject`, before a cast
// that would be undefined behaviour.
int64_t checked_integer_element(const ir::NDArray& a, int64_t k, const std::string& subject);

}  // namespace kiln::frontend::onnx_import

#endif  // KILN_SRC_FRONTEND_ONNX_IMPORT_LIMITS_H_
