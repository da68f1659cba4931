// Element-type dispatch for the reference implementations: one template per kernel, instantiated
// per dtype from here, so no kernel is copied per type.
//
//   visit_dtype(array.dtype(), [&]<typename T>() { ... array.data<T>() ... });
//
// T is the C++ storage type: float, double, Half (f16 bits), BFloat16 (bf16 bits), int8_t,
// uint8_t, int16_t, int32_t, int64_t, Bool (one byte), uint16_t, uint32_t, uint64_t. `to_double`/`from_double` convert through
// double (f16/bf16 decoded/encoded with round-to-nearest-even); `saturate_cast` converts a double to
// an integer type without undefined behaviour (NaN -> 0, out of range -> the nearest limit).
#ifndef KILN_IR_OPS_DTYPE_DISPATCH_H_
#define KILN_IR_OPS_DTYPE_DISPATCH_H_

#include <cmath>
#include <cstdint>
#include <limits>
#include <type_traits>

#include "kiln/ir/tensor_type.h"
#include "kiln/ir/ndarray.h"
#include "kiln/support/error.h"

namespace kiln::ir::ops {

struct Half {
  uint16_t bits;
};
struct BFloat16 {
  uint16_t bits;
};
struct Bool {
  uint8_t value;
};
static_assert(sizeof(Half) == 2 && sizeof(BFloat16) == 2 && sizeof(Bool) == 1);

template <typename T>
inline constexpr bool kIsFloatStorage =
    std::is_same_v<T, float> || std::is_same_v<T, double> || std::is_same_v<T, Half> || std::is_same_v<T, BFloat16>;
template <typename T>
inline constexpr bool kIsIntStorage = std::is_integral_v<T>;

// Integer conversion from a double without UB: NaN -> 0, truncation toward zero, saturation.
template <typename I>
inline I saturate_cast(double v) {
  if (std::isnan(v)) return 0;
  // Compare against the limits as doubles; 2^63 is exactly representable, INT64_MAX is not.
  constexpr double lo = static_cast<double>(std::numeric_limits<I>::lowest());
  constexpr double hi_excl = static_cast<double>(std::numeric_limits<I>::max()) + 1.0;
  if (v <= lo) return std::numeric_limits<I>::lowest();
  if (v >= hi_excl) return std::numeric_limits<I>::max();
  return static_cast<I>(v);
}

template <typename T>
inline double to_double(T v) {
  if constexpr (std::is_same_v<T, Half>) {
    return f16_to_f32(v.bits);
  } else if constexpr (std::is_same_v<T, BFloat16>) {
    return bf16_to_f32(v.bits);
  } else if constexpr (std::is_same_v<T, Bool>) {
    return v.value != 0 ? 1.0 : 0.0;
  } else {
    return static_cast<double>(v);
  }
}

template <typename T>
inline T from_double(double v) {
  if constexpr (std::is_same_v<T, Half>) {
    return Half{f32_to_f16(static_cast<float>(v))};
  } else if constexpr (std::is_same_v<T, BFloat16>) {
    return BFloat16{f32_to_bf16(static_cast<float>(v))};
  } else if constexpr (std::is_same_v<T, Bool>) {
    return Bool{static_cast<uint8_t>(v != 0.0 ? 1 : 0)};
  } else if constexpr (std::is_floating_point_v<T>) {
    return static_cast<T>(v);
  } else {
    return saturate_cast<T>(v);
  }
}

// Integer values go through int64_t (exact for every integer dtype Kiln has; u64 values from 2^63
// up keep their bits, wrapped, so modular arithmetic stays exact).
template <typename T>
inline int64_t to_int64(T v) {
  if constexpr (std::is_same_v<T, Bool>) {
    return v.value != 0;
  } else {
    static_assert(std::is_integral_v<T>);
    return static_cast<int64_t>(v);
  }
}
// Wraps modulo 2^bits like numpy's integer arithmetic (C++20 conversions are modular).
template <typename T>
inline T from_int64(int64_t v) {
  if constexpr (std::is_same_v<T, Bool>) {
    return Bool{static_cast<uint8_t>(v != 0)};
  } else {
    return static_cast<T>(v);
  }
}

// Calls fn.template operator()<T>() with T the storage type of `dtype`.
template <typename Fn>
decltype(auto) visit_dtype(DType dtype, Fn&& fn) {
  switch (dtype) {
    case DType::kF32: return fn.template operator()<float>();
    case DType::kF64: return fn.template operator()<double>();
    case DType::kF16: return fn.template operator()<Half>();
    case DType::kBF16: return fn.template operator()<BFloat16>();
    case DType::kI8: return fn.template operator()<int8_t>();
    case DType::kU8: return fn.template operator()<uint8_t>();
    case DType::kI16: return fn.template operator()<int16_t>();
    case DType::kI32: return fn.template operator()<int32_t>();
    case DType::kI64: return fn.template operator()<int64_t>();
    case DType::kBool: return fn.template operator()<Bool>();
    case DType::kU16: return fn.template operator()<uint16_t>();
    case DType::kU32: return fn.template operator()<uint32_t>();
    case DType::kU64: return fn.template operator()<uint64_t>();
  }
  KILN_IFAIL() << "unknown dtype " << static_cast<int>(dtype);
}

// For heavy float kernels written for float and double only: calls fn<float> or fn<double>.
// f16/bf16 operands are handled by the caller converting to f32 (see cast_array in cast.h).
template <typename Fn>
decltype(auto) visit_f32_f64(DType dtype, Fn&& fn) {
  if (dtype == DType::kF64) return fn.template operator()<double>();
  KILN_ICHECK(dtype == DType::kF32) << "kernel instantiated for f32/f64 only, got " << dtype_name(dtype);
  return fn.template operator()<float>();
}

}  // namespace kiln::ir::ops

#endif  // KILN_IR_OPS_DTYPE_DISPATCH_H_
