// The floating-point work of a lowered kernel, for the profiler's GFLOP/s and % of peak
// (`kiln run --profile`). The compile driver records it per kernel in the artifact's plan.
//
// Counted from the loop IR that codegen compiles, so it is the arithmetic the kernel actually
// executes (a Winograd or a padded kernel reports its own work, not a textbook count): every
// floating-point add, sub, mul, div, min and max counts 1 per lane, a fused multiply-add 2, any
// other math intrinsic (exp, tanh, ...) 1; each is multiplied by the extents of the loops around
// it. Integer (index) arithmetic is not counted. Loops whose extent is not a constant count once
// and make the result a lower bound (`exact` false); an if counts its larger branch.
// Integer kernels: `int8_ops` counts 2 per u8 x s8 multiply-add (GOP/s, like GFLOP/s for FMAs):
// 8 per i32 lane of a byte dot product (tir::dot4_u8s8), 4 per lane of a 16-bit one (tir::dot2_s16,
// int8 Winograd's product of transformed values), 2 per lane of a 16-bit multiply (the
// widened 8-bit product of the int8 depthwise kernel). A kernel with int8_ops > 0 is an int8
// kernel: the profiler rates it in GOP/s against the int8 peak.
#ifndef KILN_DRIVER_KERNEL_FLOPS_H_
#define KILN_DRIVER_KERNEL_FLOPS_H_

#include <cstdint>

#include "kiln/tir/stmt.h"

namespace kiln::driver {

struct KernelFlops {
  uint64_t flops = 0;
  uint64_t int8_ops = 0;
  bool exact = true;
};

KernelFlops count_kernel_flops(const tir::PrimFunc& func);

}  // namespace kiln::driver

#endif  // KILN_DRIVER_KERNEL_FLOPS_H_
