// The machine's own single-thread int8 peak, measured like the f32 FMA peak (fma_peak.h): a
// JIT-compiled kernel of independent accumulators, each updated by the byte dot product the int8
// kernels use (tir::dot4_u8s8, narrow form: vpdpbusd on VNNI, vpmaddubsw + vpmaddwd + vpaddd on
// AVX2, sdot on AArch64), at the target's full vector width, timed a few times, best run kept.
// One u8 x s8 multiply-add counts 2 ops (GOP/s = 2 x MAC/s, like GFLOP/s for FMAs).
#ifndef KILN_CODEGEN_INT8_PEAK_H_
#define KILN_CODEGEN_INT8_PEAK_H_

#include <string>

#include "kiln/codegen/target.h"

namespace kiln::codegen {

struct Int8Peak {
  double gops = 0;   // one thread, 2 ops per u8 x s8 multiply-add
  int lanes = 0;     // i32 accumulator lanes per vector
  int chains = 0;    // independent accumulators
  std::string cpu;   // the target CPU the probe was compiled for
  // "205.1 GOP/s int8 per core (znver3, 256-bit, 10 chains)"
  std::string describe() const;
};

// Times the probe `repeats` times (10 calls each) and returns the best rate; the host unless given.
Int8Peak measure_int8_peak(int repeats = 20);
Int8Peak measure_int8_peak(const Target& target, int repeats);

}  // namespace kiln::codegen

#endif  // KILN_CODEGEN_INT8_PEAK_H_
