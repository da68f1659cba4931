// The tensor type of a graph value: an element type and a shape whose dimensions are static sizes
// or symbolic expressions over the graph's size variables (kiln/ir/dim.h).
#ifndef KILN_IR_TENSOR_TYPE_H_
#define KILN_IR_TENSOR_TYPE_H_

#include <cstdint>
#include <initializer_list>
#include <string>
#include <vector>

#include "kiln/ir/dim.h"
#include "kiln/ir/dtype.h"

namespace kiln::ir {

// A shape: one Dim per axis. Converts from and (the static-size bridge, kiln/ir/dim.h) to
// std::vector<int64_t>, so code that works on concrete sizes keeps doing so; the conversion of a
// shape with a symbolic dimension throws UserError(kUnsupported).
class Shape;
// The sizes of a static shape; the bridge's UserError for a symbolic one.
std::vector<int64_t> static_sizes(const Shape& shape);

class Shape : public std::vector<Dim> {
 public:
  using std::vector<Dim>::vector;
  Shape() = default;
  Shape(const std::vector<int64_t>& dims);  // NOLINT: a static shape
  // NOLINT: the static-size bridge (inline: the linker's export map does not match a conversion
  // operator's demangled name).
  operator std::vector<int64_t>() const { return static_sizes(*this); }  // NOLINT

  // True when every dimension is static.
  bool is_static() const;
};

// Number of elements of a static shape (1 for a scalar, shape {}); the bridge's error for a
// symbolic one.
int64_t shape_numel(const Shape& shape);
// The number of elements as a dimension (symbolic when the shape is).
Dim shape_numel_dim(const Shape& shape);
// "[1, 3, 224, 224]", "[batch, seq, 768]"
std::string shape_to_string(const Shape& shape);

struct TensorType {
  DType dtype = DType::kF32;
  Shape shape;

  int64_t numel() const { return shape_numel(shape); }
  size_t nbytes() const { return static_cast<size_t>(numel()) * dtype_size(dtype); }
  int rank() const { return static_cast<int>(shape.size()); }
  bool is_static() const { return shape.is_static(); }
  // "f32[1, 64, 112, 112]"
  std::string to_string() const;
  bool operator==(const TensorType&) const = default;
};

}  // namespace kiln::ir

#endif  // KILN_IR_TENSOR_TYPE_H_
