#include "kiln/ir/ndarray.h"

#include <cmath>
#include <cstdlib>
#include <cstring>
#include <limits>
#include <new>

#include "kiln/support/error.h"

namespace kiln::ir {
namespace {

constexpr size_t kAlignment = 64;

// double -> integer without undefined behaviour: nan -> 0, truncation toward zero, saturation.
template <typename I>
I saturate(double v) {
  if (std::isnan(v)) return 0;
  constexpr double lo = static_cast<double>(std::numeric_limits<I>::lowest());
  constexpr double hi_excl = static_cast<double>(std::numeric_limits<I>::max()) + 1.0;
  if (v <= lo) return std::numeric_limits<I>::lowest();
  if (v >= hi_excl) return std::numeric_limits<I>::max();
  return static_cast<I>(v);
}

std::shared_ptr<void> aligned_storage(size_t nbytes) {
  const size_t padded = (nbytes + kAlignment - 1) / kAlignment * kAlignment + (nbytes == 0 ? kAlignment : 0);
  void* p = std::aligned_alloc(kAlignment, padded);
  if (p == nullptr) throw std::bad_alloc();
  std::memset(p, 0, padded);
  return std::shared_ptr<void>(p, [](void* q) { std::free(q); });
}

}  // namespace

NDArray NDArray::empty(DType dtype, Shape shape) {
  KILN_ICHECK(shape.is_static()) << "an array of the symbolic shape " << shape_to_string(shape);
  for (int64_t d : shape) KILN_ICHECK(d >= 0) << "negative dimension in " << shape_to_string(shape);
  NDArray a;
  a.sizes_ = shape;
  a.type_ = TensorType{dtype, std::move(shape)};
  auto storage = aligned_storage(a.type_.nbytes());
  a.data_ = storage.get();
  a.storage_ = std::move(storage);
  a.writable_ = true;
  return a;
}

NDArray NDArray::view(TensorType type, const void* data, std::shared_ptr<const void> keep_alive) {
  KILN_ICHECK(data != nullptr || type.nbytes() == 0) << "view of null data";
  KILN_ICHECK(type.is_static()) << "a view of the symbolic type " << type.to_string();
  NDArray a;
  a.sizes_ = type.shape;
  a.type_ = std::move(type);
  a.data_ = data;
  a.storage_ = keep_alive ? std::move(keep_alive) : std::shared_ptr<const void>(data, [](const void*) {});
  a.writable_ = false;
  return a;
}

NDArray NDArray::scalar(DType dtype, double value) {
  NDArray a = empty(dtype, {});
  a.set_from_double(0, value);
  return a;
}

void* NDArray::mutable_raw_data() {
  KILN_ICHECK(writable_) << "NDArray " << type_.to_string() << " is a read-only view";
  return const_cast<void*>(data_);
}

double NDArray::get_as_double(int64_t i) const {
  const auto* p = static_cast<const uint8_t*>(data_);
  switch (type_.dtype) {
    case DType::kF32: return reinterpret_cast<const float*>(p)[i];
    case DType::kF64: return reinterpret_cast<const double*>(p)[i];
    case DType::kF16: return f16_to_f32(reinterpret_cast<const uint16_t*>(p)[i]);
    case DType::kBF16: return bf16_to_f32(reinterpret_cast<const uint16_t*>(p)[i]);
    case DType::kI8: return reinterpret_cast<const int8_t*>(p)[i];
    case DType::kU8: return p[i];
    case DType::kI16: return reinterpret_cast<const int16_t*>(p)[i];
    case DType::kI32: return reinterpret_cast<const int32_t*>(p)[i];
    case DType::kI64: return static_cast<double>(reinterpret_cast<const int64_t*>(p)[i]);
    case DType::kBool: return p[i] != 0 ? 1.0 : 0.0;
    case DType::kU16: return reinterpret_cast<const uint16_t*>(p)[i];
    case DType::kU32: return reinterpret_cast<const uint32_t*>(p)[i];
    case DType::kU64: return static_cast<double>(reinterpret_cast<const uint64_t*>(p)[i]);
  }
  KILN_IFAIL() << "unknown dtype";
}

void NDArray::set_from_double(int64_t i, double v) {
  auto* p = static_cast<uint8_t*>(mutable_raw_data());
  switch (type_.dtype) {
    case DType::kF32: reinterpret_cast<float*>(p)[i] = static_cast<float>(v); return;
    case DType::kF64: reinterpret_cast<double*>(p)[i] = v; return;
    case DType::kF16: reinterpret_cast<uint16_t*>(p)[i] = f32_to_f16(static_cast<float>(v)); return;
    case DType::kBF16: reinterpret_cast<uint16_t*>(p)[i] = f32_to_bf16(static_cast<float>(v)); return;
    case DType::kI8: reinterpret_cast<int8_t*>(p)[i] = saturate<int8_t>(v); return;
    case DType::kU8: p[i] = saturate<uint8_t>(v); return;
    case DType::kI16: reinterpret_cast<int16_t*>(p)[i] = saturate<int16_t>(v); return;
    case DType::kI32: reinterpret_cast<int32_t*>(p)[i] = saturate<int32_t>(v); return;
    case DType::kI64: reinterpret_cast<int64_t*>(p)[i] = saturate<int64_t>(v); return;
    case DType::kBool: p[i] = v != 0.0 ? 1 : 0; return;
    case DType::kU16: reinterpret_cast<uint16_t*>(p)[i] = saturate<uint16_t>(v); return;
    case DType::kU32: reinterpret_cast<uint32_t*>(p)[i] = saturate<uint32_t>(v); return;
    case DType::kU64: reinterpret_cast<uint64_t*>(p)[i] = saturate<uint64_t>(v); return;
  }
  KILN_IFAIL() << "unknown dtype";
}

NDArray NDArray::copy() const {
  NDArray c = empty(type_.dtype, type_.shape);
  if (nbytes() > 0) std::memcpy(c.mutable_raw_data(), data_, nbytes());
  return c;
}

NDArray NDArray::reshaped(Shape shape) const {
  KILN_ICHECK(shape_numel(shape) == numel())
      << "reshape " << type_.to_string() << " to " << shape_to_string(shape);
  NDArray r = *this;
  r.sizes_ = shape;
  r.type_.shape = std::move(shape);
  return r;
}

bool NDArray::bitwise_equal(const NDArray& other) const {
  return type_ == other.type_ && (nbytes() == 0 || std::memcmp(data_, other.data_, nbytes()) == 0);
}

uint64_t NDArray::checksum() const {
  uint64_t h = 1469598103934665603ull;
  const auto* p = static_cast<const uint8_t*>(data_);
  for (size_t i = 0; i < nbytes(); ++i) {
    h ^= p[i];
    h *= 1099511628211ull;
  }
  return h;
}

float f16_to_f32(uint16_t h) {
  const uint32_t sign = (h & 0x8000u) << 16;
  uint32_t exp = (h >> 10) & 0x1f;
  uint32_t mant = h & 0x3ff;
  uint32_t bits;
  if (exp == 0) {
    if (mant == 0) {
      bits = sign;
    } else {  // subnormal: normalize
      exp = 127 - 15 + 1;
      while ((mant & 0x400) == 0) {
        mant <<= 1;
        --exp;
      }
      mant &= 0x3ff;
      bits = sign | (exp << 23) | (mant << 13);
    }
  } else if (exp == 0x1f) {
    bits = sign | 0x7f800000u | (mant << 13);
  } else {
    bits = sign | ((exp + 127 - 15) << 23) | (mant << 13);
  }
  float f;
  std::memcpy(&f, &bits, 4);
  return f;
}

uint16_t f32_to_f16(float f) {
  uint32_t x;
  std::memcpy(&x, &f, 4);
  const uint32_t sign = (x >> 16) & 0x8000u;
  const uint32_t exp = (x >> 23) & 0xff;
  uint32_t mant = x & 0x7fffff;
  if (exp == 0xff) return static_cast<uint16_t>(sign | 0x7c00u | (mant ? 0x200u : 0));
  int32_t e = static_cast<int32_t>(exp) - 127 + 15;
  if (e >= 0x1f) return static_cast<uint16_t>(sign | 0x7c00u);
  if (e <= 0) {
    if (e < -10) return static_cast<uint16_t>(sign);
    mant |= 0x800000u;
    const uint32_t shift = static_cast<uint32_t>(14 - e);
    uint32_t half = mant >> shift;
    const uint32_t rem = mant & ((1u << shift) - 1);
    const uint32_t halfway = 1u << (shift - 1);
    if (rem > halfway || (rem == halfway && (half & 1))) ++half;
    return static_cast<uint16_t>(sign | half);
  }
  uint32_t half = sign | (static_cast<uint32_t>(e) << 10) | (mant >> 13);
  const uint32_t rem = mant & 0x1fff;
  if (rem > 0x1000 || (rem == 0x1000 && (half & 1))) ++half;
  return static_cast<uint16_t>(half);
}

float bf16_to_f32(uint16_t b) {
  const uint32_t bits = static_cast<uint32_t>(b) << 16;
  float f;
  std::memcpy(&f, &bits, 4);
  return f;
}

uint16_t f32_to_bf16(float f) {
  uint32_t x;
  std::memcpy(&x, &f, 4);
  if (std::isnan(f)) return static_cast<uint16_t>((x >> 16) | 0x40);
  const uint32_t rounding = 0x7fff + ((x >> 16) & 1);
  return static_cast<uint16_t>((x + rounding) >> 16);
}

}  // namespace kiln::ir
