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
  std::string rate, peak, roof;
  bool flagged = false;
  bool int8 = false;
};

// The row of `symbol`: its %roof column (the 10th) and whether it carries the flag.
ParsedRow row_of(const std::string& report, const std::string& symbol) {
  std::istringstream lines(report);
  std::string line;
  while (std::getline(lines, line)) {
    std::istringstream f(line);
    std::string rank, us, pct, cum, calls, us_call, gflops, peak, gbs, roof, sym;
    if (!(f >> rank >> us >> pct >> cum >> calls >> us_call >> gflops >> peak >> gbs >> roof >> sym)) continue;
    if (sym == symbol) {
      return {gflops, peak, roof, line.find("<< below roofline") != std::string::npos, line.find("[int8]") != std::string::npos};
    }
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

// Int8 kernels (op kind kInt8: the count is int8 ops) are rated in GOP/s against the int8 peak,
// marked [int8], and totalled on their own line; float kernels keep the FMA peak.
TEST(ProfileReport, Int8KernelsAreRatedAgainstTheInt8Peak) {
  artifact::Plan plan = test_plan();
  plan.kernels.push_back({"int8_conv", "int8_conv2d", {0, 1, 2}, 3000000000, artifact::OpKind::kInt8});
  std::vector<KernelProfile> times = two_runs(0.025, 0.025, 0.0005, 0.00005);
  times.push_back({2, 2 * 0.02});  // 3 GOP in 20 ms: 150 GOP/s
  const MachineCeilings machine{100.0, 20.0, 200.0};
  const std::string report = format_profile_report(plan, times, 2, machine);
  const ParsedRow conv = row_of(report, "int8_conv"), gemm = row_of(report, "fast_gemm");
  EXPECT_NEAR(std::stod(conv.rate), 150.0, 0.05) << report;
  EXPECT_NEAR(std::stod(conv.peak), 75.0, 0.05) << report;  // of the int8 peak, not the FMA peak
  EXPECT_NEAR(std::stod(conv.roof), 75.0, 0.05) << report;  // compute floor 15 ms of 20 ms
  EXPECT_TRUE(conv.int8) << report;
  EXPECT_NEAR(std::stod(gemm.peak), 80.0, 0.05) << report;  // 2 GFLOP in 25 ms of 100 GFLOP/s
  EXPECT_FALSE(gemm.int8) << report;
  EXPECT_NE(report.find("G(FL)OP/s"), std::string::npos) << report;
  EXPECT_NE(report.find("3.000 GOP per run in 20000.0 us, 150.0 GOP/s = 75.0% of 200.0 GOP/s"), std::string::npos) << report;
  // The float total leaves the int8 ops out: 4 GFLOP + 1 kFLOP per run.
  EXPECT_NE(report.find("4.000 GFLOP per run"), std::string::npos) << report;
  // Without the int8 peak: the rate, no %peak.
  const std::string unknown = format_profile_report(plan, times, 2, MachineCeilings{100.0, 20.0});
  EXPECT_EQ(row_of(unknown, "int8_conv").peak, "-") << unknown;
  EXPECT_NE(unknown.find("against the int8 peak (unknown)"), std::string::npos) << unknown;
}

}  // namespace
