// The profiler's report (Executor::profile_report, `kiln run --profile`): one row per kernel
// symbol (its call sites summed), slowest first, with time, GFLOP/s, % of the FMA peak, GB/s and a
// roofline check. A pure function of the plan, the measured times and the machine's two ceilings,
// so tests can inject times.
//
// Roofline: a kernel's floor time is max(flops / peak, bytes / bandwidth), with flops the
// compiler's count and bytes the sum of its argument buffers (a lower bound on the traffic: each
// argument read or written once). %roof = floor time / measured time. A kernel that takes a
// visible share of the run (>= kRooflineMinShare of it) at under kRooflineFlagPercent of its
// floor is far below BOTH ceilings: neither compute- nor bandwidth-bound, so its schedule (not
// the machine) is what limits it; its row is flagged "<< below roofline" and a line at the end
// explains the flag. %roof over 100 is possible: the data sat in cache, faster than DRAM.
// Int8 kernels (plan op kind kInt8: their count is int8 ops, 2 per u8 x s8 multiply-add) are rated
// in GOP/s against the int8 peak instead (%peak, %roof), marked "[int8]", and totalled on a line
// of their own.
#ifndef KILN_SRC_RUNTIME_PROFILE_REPORT_H_
#define KILN_SRC_RUNTIME_PROFILE_REPORT_H_

#include <cstdint>
#include <string>
#include <vector>

#include "kiln/runtime/artifact_format.h"

namespace kiln::runtime {

struct KernelProfile {  // per kernel call site
  int64_t calls = 0;
  double total_seconds = 0;
};

// The machine's ceilings for the threads the runs used; 0 = unknown (no %peak / %roof / flag).
struct MachineCeilings {
  double peak_gflops = 0;     // FMA peak
  double bandwidth_gbps = 0;  // memory bandwidth (streaming, past the caches)
  double int8_peak_gops = 0;  // int8 peak (codegen/int8_peak.h), for kernels whose op kind is int8
};

constexpr double kRooflineFlagPercent = 10.0;  // flag under this % of the roofline floor
constexpr double kRooflineMinShare = 0.01;     // ... when the kernel takes >= 1% of the run

// `profile` has one entry per plan.kernels entry; `runs` is how many runs it sums (>= 0).
std::string format_profile_report(const artifact::Plan& plan, const std::vector<KernelProfile>& profile,
                                  int64_t runs, const MachineCeilings& machine);

}  // namespace kiln::runtime

#endif  // KILN_SRC_RUNTIME_PROFILE_REPORT_H_
