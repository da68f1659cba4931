// Deterministic input data for measurements: the same seed gives the same bytes on every
// machine (splitmix64, no library RNG whose sequence could differ between platforms).
//   floats (f16, bf16, f32, f64): uniform in [-1, 1)
//   signed integers: [-8, 7]; unsigned integers: [0, 15]; bool: 0 or 1
// Input `index` of an artifact gets its own stream, so inputs of equal shape differ.
#ifndef KILN_SRC_TUNE_MEASURE_SEEDED_FILL_H_
#define KILN_SRC_TUNE_MEASURE_SEEDED_FILL_H_

#include <dlpack/dlpack.h>

#include <cstdint>

namespace kiln::tune {

// Fills a C-contiguous CPU tensor. Returns false (and fills nothing) for a dtype it does not know.
bool fill_seeded(DLTensor* tensor, uint64_t seed, int32_t index);

}  // namespace kiln::tune

#endif  // KILN_SRC_TUNE_MEASURE_SEEDED_FILL_H_
