// splitmix64 (Steele, Lea and Flood, 2014): a small 64-bit generator that is fully specified, so
// a seed means the same numbers on every machine and standard library (the C++ library's
// distributions are not). Kiln's made-up data uses it: the tuner's measurement inputs and
// `kiln run --fill random`. Not for security.
#ifndef KILN_SUPPORT_SPLITMIX64_H_
#define KILN_SUPPORT_SPLITMIX64_H_

#include <cstdint>

namespace kiln {

struct SplitMix64 {
  uint64_t state;
  uint64_t next() {
    uint64_t z = (state += 0x9E3779B97F4A7C15ull);
    z = (z ^ (z >> 30)) * 0xBF58476D1CE4E5B9ull;
    z = (z ^ (z >> 27)) * 0x94D049BB133111EBull;
    return z ^ (z >> 31);
  }
};

}  // namespace kiln

#endif  // KILN_SUPPORT_SPLITMIX64_H_
