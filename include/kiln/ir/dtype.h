// Element types of Kiln's tensors and the tensor type (dtype + static shape) of a graph value.
#ifndef KILN_IR_DTYPE_H_
#define KILN_IR_DTYPE_H_

#include <cstddef>
#include <cstdint>
#include <string>
#include <string_view>
#include <vector>

namespace kiln::ir {

// Scalar element types. kBool is stored as one byte (0 or 1).
// New types are appended (the numeric values are stable).
enum class DType : uint8_t { kF32, kF64, kF16, kBF16, kI8, kU8, kI16, kI32, kI64, kBool, kU16, kU32, kU64 };

// Size of one element in bytes.
size_t dtype_size(DType dtype);
// Text name as in the IR's text form: "f32", "f64", "f16", "bf16", "i8", "u8", "i16", "i32", "i64", "bool",
// "u16", "u32", "u64".
const char* dtype_name(DType dtype);
// Parses a text name; returns false when `text` names no dtype.
bool parse_dtype(std::string_view text, DType* out);
bool is_float(DType dtype);

// Shape of a tensor: every dimension known and >= 0 (Kiln compiles static shapes).
using Shape = std::vector<int64_t>;

// Number of elements of a shape (1 for a scalar, shape {}).
int64_t shape_numel(const Shape& shape);
// "[1, 3, 224, 224]"
std::string shape_to_string(const Shape& shape);

struct TensorType {
  DType dtype = DType::kF32;
  Shape shape;

  int64_t numel() const { return shape_numel(shape); }
  size_t nbytes() const { return static_cast<size_t>(numel()) * dtype_size(dtype); }
  int rank() const { return static_cast<int>(shape.size()); }
  // "f32[1, 64, 112, 112]"
  std::string to_string() const;
  bool operator==(const TensorType&) const = default;
};

}  // namespace kiln::ir

#endif  // KILN_IR_DTYPE_H_
