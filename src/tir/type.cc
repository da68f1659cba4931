#include "kiln/tir/type.h"

namespace kiln::tir {

bool Type::is_float() const { return ir::is_float(dtype); }

bool Type::is_int() const {
  return dtype == DType::kI8 || dtype == DType::kI16 || dtype == DType::kI32 || dtype == DType::kI64;
}

bool Type::is_uint() const {
  return dtype == DType::kU8 || dtype == DType::kU16 || dtype == DType::kU32 || dtype == DType::kU64;
}

int Type::bits() const { return dtype == DType::kBool ? 1 : static_cast<int>(ir::dtype_size(dtype)) * 8; }

std::string Type::to_string() const {
  std::string s = ir::dtype_name(dtype);
  if (lanes != 1) {
    s += 'x';
    s += std::to_string(lanes);
  }
  return s;
}

}  // namespace kiln::tir
