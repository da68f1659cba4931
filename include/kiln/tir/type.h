// The type of a loop-IR value: a scalar element type (kiln::ir::DType) and a number of vector lanes.
// Index arithmetic uses kIndexType (i64). u8 is the only unsigned type; bool is i1 in registers and
// one byte (0/1) in memory.
#ifndef KILN_TIR_TYPE_H_
#define KILN_TIR_TYPE_H_

#include <string>

#include "kiln/ir/dtype.h"

namespace kiln::tir {

using ir::DType;

struct Type {
  DType dtype = DType::kI64;
  int lanes = 1;

  constexpr Type() = default;
  constexpr Type(DType d, int l = 1) : dtype(d), lanes(l) {}  // NOLINT: implicit from a DType

  bool is_float() const;  // f16, bf16, f32, f64
  bool is_int() const;    // signed: i8, i16, i32, i64
  bool is_uint() const;   // u8
  bool is_bool() const { return dtype == DType::kBool; }
  bool is_int_or_uint() const { return is_int() || is_uint(); }
  bool is_scalar() const { return lanes == 1; }
  bool is_vector() const { return lanes > 1; }
  int bits() const;
  Type element_of() const { return Type(dtype, 1); }
  Type with_lanes(int n) const { return Type(dtype, n); }
  // "f32", "i64x8", "boolx4"
  std::string to_string() const;

  bool operator==(const Type&) const = default;
};

inline constexpr Type kIndexType{DType::kI64, 1};
inline constexpr Type kBoolType{DType::kBool, 1};

}  // namespace kiln::tir

#endif  // KILN_TIR_TYPE_H_
