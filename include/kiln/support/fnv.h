// FNV-1a (64 bits): the stable, platform-independent hash of Kiln's text signatures (tuning
// task and layer-choice keys, knob-space fingerprints). Not for security.
#ifndef KILN_SUPPORT_FNV_H_
#define KILN_SUPPORT_FNV_H_

#include <cstdint>
#include <cstdio>
#include <string>
#include <string_view>

namespace kiln {

inline uint64_t fnv1a64(std::string_view text) {
  uint64_t h = 1469598103934665603ull;
  for (unsigned char c : text) {
    h ^= c;
    h *= 1099511628211ull;
  }
  return h;
}

// 16 lowercase hex digits.
inline std::string fnv1a64_hex(std::string_view text) {
  char buf[17];
  std::snprintf(buf, sizeof buf, "%016llx", static_cast<unsigned long long>(fnv1a64(text)));
  return buf;
}

}  // namespace kiln

#endif  // KILN_SUPPORT_FNV_H_
