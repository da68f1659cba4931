// Seeded input data (seeded_fill.h).
#include "seeded_fill.h"

#include <cstring>

#include "kiln/support/splitmix64.h"

namespace kiln::tune {
namespace {

// DLPack's bool code (kDLBool = 6 in newer dlpack.h; Debian's header predates it).
constexpr uint8_t kDLBoolCode = 6;

// Uniform in [-1, 1) with 24 random bits: exactly representable in f32.
float unit(SplitMix64& rng) { return static_cast<float>(rng.next() >> 40) * (2.0f / 16777216.0f) - 1.0f; }

// IEEE binary16 bits of a float in [-1, 1) (round to nearest even; subnormals handled).
uint16_t half_bits(float f) {
  uint32_t x;
  std::memcpy(&x, &f, 4);
  const uint16_t sign = static_cast<uint16_t>((x >> 16) & 0x8000u);
  const int32_t exp = static_cast<int32_t>((x >> 23) & 0xFF) - 127 + 15;
  uint32_t mant = x & 0x7FFFFFu;
  if (exp <= 0) {  // subnormal or zero in f16
    if (exp < -10) return sign;
    mant |= 0x800000u;
    const int shift = 14 - exp;
    uint32_t h = mant >> shift;
    const uint32_t rem = mant & ((1u << shift) - 1), half = 1u << (shift - 1);
    if (rem > half || (rem == half && (h & 1u))) ++h;
    return static_cast<uint16_t>(sign | h);
  }
  uint32_t h = (static_cast<uint32_t>(exp) << 10) | (mant >> 13);
  const uint32_t rem = mant & 0x1FFFu;
  if (rem > 0x1000u || (rem == 0x1000u && (h & 1u))) ++h;
  return static_cast<uint16_t>(sign | h);
}

template <typename T>
void fill_ints(void* data, int64_t n, SplitMix64& rng, int64_t lo, int64_t span) {
  T* p = static_cast<T*>(data);
  for (int64_t i = 0; i < n; ++i) p[i] = static_cast<T>(lo + static_cast<int64_t>(rng.next() % span));
}

}  // namespace

bool fill_seeded(DLTensor* t, uint64_t seed, int32_t index) {
  int64_t n = 1;
  for (int32_t d = 0; d < t->ndim; ++d) n *= t->shape[d];
  SplitMix64 rng{seed * 0xD1B54A32D192ED03ull + static_cast<uint64_t>(index + 1) * 0x9E3779B97F4A7C15ull};
  const DLDataType dt = t->dtype;
  char* base = static_cast<char*>(t->data) + t->byte_offset;
  if (dt.lanes != 1) return false;
  switch (static_cast<uint8_t>(dt.code)) {
    case kDLFloat:
      if (dt.bits == 32) {
        auto* p = reinterpret_cast<float*>(base);
        for (int64_t i = 0; i < n; ++i) p[i] = unit(rng);
      } else if (dt.bits == 64) {
        auto* p = reinterpret_cast<double*>(base);
        for (int64_t i = 0; i < n; ++i) p[i] = unit(rng);
      } else if (dt.bits == 16) {
        auto* p = reinterpret_cast<uint16_t*>(base);
        for (int64_t i = 0; i < n; ++i) p[i] = half_bits(unit(rng));
      } else {
        return false;
      }
      return true;
    case kDLBfloat: {
      if (dt.bits != 16) return false;
      auto* p = reinterpret_cast<uint16_t*>(base);
      for (int64_t i = 0; i < n; ++i) {  // 24-bit values: the top 16 bits are exact after rounding down
        const float f = unit(rng);
        uint32_t x;
        std::memcpy(&x, &f, 4);
        p[i] = static_cast<uint16_t>(x >> 16);
      }
      return true;
    }
    case kDLInt:
    case kDLUInt: {
      const bool is_signed = dt.code == kDLInt;
      const int64_t lo = is_signed ? -8 : 0;
      switch (dt.bits) {
        case 8: is_signed ? fill_ints<int8_t>(base, n, rng, lo, 16) : fill_ints<uint8_t>(base, n, rng, lo, 16); return true;
        case 16: is_signed ? fill_ints<int16_t>(base, n, rng, lo, 16) : fill_ints<uint16_t>(base, n, rng, lo, 16); return true;
        case 32: is_signed ? fill_ints<int32_t>(base, n, rng, lo, 16) : fill_ints<uint32_t>(base, n, rng, lo, 16); return true;
        case 64: is_signed ? fill_ints<int64_t>(base, n, rng, lo, 16) : fill_ints<uint64_t>(base, n, rng, lo, 16); return true;
        default: return false;
      }
    }
    case kDLBoolCode:
      if (dt.bits != 8) return false;
      fill_ints<uint8_t>(base, n, rng, 0, 2);
      return true;
    default:
      return false;
  }
}

}  // namespace kiln::tune
