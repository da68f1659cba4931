// Element types of Kiln's tensors. The tensor type of a graph value (dtype + shape) is in
// kiln/ir/tensor_type.h.
#ifndef KILN_IR_DTYPE_H_
#define KILN_IR_DTYPE_H_

#include <cstddef>
#include <cstdint>
#include <string_view>

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

}  // namespace kiln::ir

#endif  // KILN_IR_DTYPE_H_
