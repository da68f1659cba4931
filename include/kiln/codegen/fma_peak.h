// The machine's own single-thread f32 FMA peak, measured (never assumed): a JIT-compiled kernel
// of independent FMA chains at the target's full vector width (AVX-512 where the host has it,
// else AVX2; NEON on AArch64), timed a few times, best run kept. `kiln run --profile` prints it
// as the reference of its % of peak column; bench/kiln_bench_kernels reports kernels against it.
#ifndef KILN_CODEGEN_FMA_PEAK_H_
#define KILN_CODEGEN_FMA_PEAK_H_

#include <string>

#include "kiln/codegen/target.h"

namespace kiln::codegen {

// The probe kernel: call() runs flops_per_call() floating-point operations.
class FmaPeakKernel {
 public:
  explicit FmaPeakKernel(const Target& target);
  ~FmaPeakKernel();
  FmaPeakKernel(const FmaPeakKernel&) = delete;
  FmaPeakKernel& operator=(const FmaPeakKernel&) = delete;

  int lanes() const { return lanes_; }
  int chains() const { return chains_; }
  double flops_per_call() const;
  void call();

 private:
  struct Impl;
  int lanes_ = 0;
  int chains_ = 0;
  Impl* impl_ = nullptr;
};

struct FmaPeak {
  double gflops = 0;         // one thread: the best timed window
  double median_gflops = 0;  // the median window: below `gflops` when the core is shared now
  int windows = 0;           // timed windows (10 calls each)
  int lanes = 0;             // f32 lanes per vector
  int chains = 0;            // independent accumulators
  std::string cpu;           // the target CPU the probe was compiled for
  // "102.3 GFLOP/s per core (znver3, 256-bit FMA, 12 chains)"
  std::string describe() const;
  // The probe alone: "znver3, 256-bit FMA, 12 chains"
  std::string probe() const;
};

// Times the probe `repeats` times (10 calls each, about 1 ms per call on a 100 GFLOP/s core)
// and returns the best rate (what the core can do) and the median one (what it did, most of the
// time, just now). The host target unless given.
FmaPeak measure_fma_peak(int repeats = 20);
FmaPeak measure_fma_peak(const Target& target, int repeats);

}  // namespace kiln::codegen

#endif  // KILN_CODEGEN_FMA_PEAK_H_
