// The profiler's roofline check (src/runtime/profile_report.h) on injected times: a kernel far
// below both the FMA peak and the memory bandwidth for its arithmetic intensity is flagged and
// explained; kernels near either ceiling, tiny kernels and reports without known ceilings are not.
// Pure function of plan + times + ceilings, so no timing flakiness.
#include "runtime/profile_report.h"

#include <gtest/gtest.h>

#include <sstream>
#include <string>

namespace {

using kiln::runtime::format_profile_report;
using kiln::runtime::KernelProfile;
using kiln::runtime::MachineCeilings;
namespace artifact = kiln::artifact;

constexpr uint64_t kMiB = uint64_t{1} << 20;

// Tensors: 0, 1 (4 MiB each), 2 (4 MiB), 3 (4 KiB). Kernels: two matmul-like kernels with 2 GFLOP
// per call over 12 MiB of arguments (compute-bound: floor 20 ms at 100 GFLOP/s), a copy with no
// flops over 8 MiB (bandwidth-bound: 0.42 ms at 20 GB/s) and a tiny kernel.
artifact::Plan test_plan() {
  artifact::Plan plan;
  for (uint64_t bytes : {4 * kMiB, 4 * kMiB, 4 * kMiB, uint64_t{4096}}) {
    artifact::PlanTensor t;
    t.name = "t" + std::to_string(plan.tensors.size());
    t.nbytes = bytes;
    plan.tensors.push_back(t);
  }
  plan.kernels.push_back({"fast_gemm", "matmul", {0, 1, 2}, 2000000000});
  plan.kernels.push_back({"slow_gemm", "matmul+add", {0, 1, 2}, 2000000000});
  plan.kernels.push_back({"copy", "copy", {0, 1}, 0});
  plan.kernels.push_back({"tiny", "relu", {3, 3}, 1024});
  return plan;
}

struct ParsedRow {
  std::string roof;
  bool flagged = false;
};

// The row of `symbol`: its %roof column (the 10th) and whether it carries the flag.
ParsedRow row_of(const std::string& report, const std::string& symbol) {
  std::istringstream lines(report);
  std::string line;
  while (std::getline(lines, line)) {
    std::istringstream f(line);
    std::string rank, us, pct, cum, calls, us_call, gflops, peak, gbs, roof, sym;
    if (!(f >> rank >> us >> pct >> cum >> calls >> us_call >> gflops >> peak >> gbs >> roof >> sym)) continue;
    if (sym == symbol) return {roof, line.find("<< below roofline") != std::string::npos};
  }
  ADD_FAILURE() << symbol << " has no row in\n" << report;
  return {};
}

// Two runs; seconds per call as given.
std::vector<KernelProfile> two_runs(double fast, double slow, double copy, double tiny) {
  return {{2, 2 * fast}, {2, 2 * slow}, {2, 2 * copy}, {2, 2 * tiny}};
}

const MachineCeilings kMachine{/*peak_gflops=*/100.0, /*bandwidth_gbps=*/20.0};

TEST(ProfileReport, FlagsTheKernelFarBelowBothCeilingsOnly) {
  // fast_gemm 25 ms (80% of its 20 ms floor), slow_gemm 1 s (2%), copy 0.5 ms (84%), tiny 50 us
  // (far below its floor but < 1% of the run).
  const std::string report = format_profile_report(test_plan(), two_runs(0.025, 1.0, 0.0005, 0.00005), 2, kMachine);
  const ParsedRow fast = row_of(report, "fast_gemm"), slow = row_of(report, "slow_gemm");
  const ParsedRow copy = row_of(report, "copy"), tiny = row_of(report, "tiny");
  EXPECT_NEAR(std::stod(fast.roof), 80.0, 0.05) << report;
  EXPECT_NEAR(std::stod(slow.roof), 2.0, 0.05) << report;
  // copy: 8 MiB / 20 GB/s = 0.419 ms of 0.5 ms.
  EXPECT_NEAR(std::stod(copy.roof), 8.0 * kMiB / 20e9 / 0.0005 * 100.0, 0.05) << report;
  EXPECT_FALSE(fast.flagged) << report;
  EXPECT_TRUE(slow.flagged) << report;
  EXPECT_FALSE(copy.flagged) << report;
  EXPECT_FALSE(tiny.flagged) << report;
  EXPECT_NE(report.find("<< below roofline: 1 kernel(s) ran under 10% of max(flops / 100.0 GFLOP/s, "
                        "bytes / 20.0 GB/s)"),
            std::string::npos)
      << report;
}

TEST(ProfileReport, BandwidthBoundKernelIsJudgedByBandwidth) {
  // The copy at 20 ms for 8 MiB is 2% of its bandwidth floor: flagged, though it has no flops.
  const std::string report = format_profile_report(test_plan(), two_runs(0.025, 0.025, 0.020, 0.00005), 2, kMachine);
  EXPECT_TRUE(row_of(report, "copy").flagged) << report;
  EXPECT_FALSE(row_of(report, "slow_gemm").flagged) << report;
}

TEST(ProfileReport, NoCheckWithoutBothCeilings) {
  const auto times = two_runs(0.025, 1.0, 0.0005, 0.00005);
  for (const MachineCeilings& m : {MachineCeilings{0, 0}, MachineCeilings{100.0, 0}, MachineCeilings{0, 20.0}}) {
    const std::string report = format_profile_report(test_plan(), times, 2, m);
    EXPECT_EQ(row_of(report, "slow_gemm").roof, "-") << report;
    EXPECT_EQ(report.find("below roofline"), std::string::npos) << report;
  }
}

TEST(ProfileReport, CallSitesOfOneSymbolAreOneRow) {
  artifact::Plan plan = test_plan();
  plan.kernels.push_back(plan.kernels[1]);  // slow_gemm called twice per run
  std::vector<KernelProfile> times = two_runs(0.025, 0.5, 0.0005, 0.00005);
  times.push_back({2, 1.0});
  const std::string report = format_profile_report(plan, times, 2, kMachine);
  // 4 calls of 2 GFLOP in 2 s: floor 80 ms of 2 s = 4%.
  EXPECT_NEAR(std::stod(row_of(report, "slow_gemm").roof), 4.0, 0.05) << report;
  EXPECT_NE(report.find("5 kernel calls per run (4 distinct)"), std::string::npos) << report;
}

}  // namespace
