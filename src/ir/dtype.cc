#include "kiln/ir/dtype.h"

#include "kiln/support/error.h"

namespace kiln::ir {
namespace {

struct DTypeInfo {
  DType dtype;
  const char* name;
  size_t size;
  bool is_float;
};

constexpr DTypeInfo kDTypes[] = {
    {DType::kF32, "f32", 4, true},   {DType::kF64, "f64", 8, true},   {DType::kF16, "f16", 2, true},
    {DType::kBF16, "bf16", 2, true}, {DType::kI8, "i8", 1, false},    {DType::kU8, "u8", 1, false},
    {DType::kI16, "i16", 2, false},  {DType::kI32, "i32", 4, false},  {DType::kI64, "i64", 8, false},
    {DType::kBool, "bool", 1, false}, {DType::kU16, "u16", 2, false},  {DType::kU32, "u32", 4, false},
    {DType::kU64, "u64", 8, false},
};

const DTypeInfo& info(DType dtype) {
  for (const auto& i : kDTypes) {
    if (i.dtype == dtype) return i;
  }
  KILN_IFAIL() << "unknown dtype value " << static_cast<int>(dtype);
}

}  // namespace

size_t dtype_size(DType dtype) { return info(dtype).size; }
const char* dtype_name(DType dtype) { return info(dtype).name; }
bool is_float(DType dtype) { return info(dtype).is_float; }

bool parse_dtype(std::string_view text, DType* out) {
  for (const auto& i : kDTypes) {
    if (text == i.name) {
      *out = i.dtype;
      return true;
    }
  }
  return false;
}

}  // namespace kiln::ir
