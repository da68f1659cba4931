// NEON schedules for AArch64 targets: every AArch64 CPU Kiln is deployed on gets 128-bit vectors
// (4 f32 lanes) and AArch64's 32 vector registers in the schedule hints the default templates
// read (topi::layout_hints), and the CPU's or -mattr's dotprod/fp16/SVE flags reach the target
// (enabled_features, the canonical string) and the artifact's required features (make_metadata).
#include <gtest/gtest.h>

#include <algorithm>
#include <string>

#include "driver/cross_linker.h"
#include "kiln/driver/doctor.h"
#include "kiln/codegen/target.h"
#include "kiln/driver/artifact.h"
#include "kiln/topi/schedule.h"

namespace kiln {
namespace {

bool has(const std::vector<std::string>& list, const std::string& item) {
  return std::find(list.begin(), list.end(), item) != list.end();
}

TEST(NeonTarget, EveryAarch64CpuGets128BitVectorsAnd32Registers) {
  for (const char* cpu : {"generic", "cortex-a72", "cortex-a76", "neoverse-n1", "neoverse-v1"}) {
    const codegen::Target t =
        codegen::parse_target(std::string("llvm -mtriple=aarch64-linux-gnu -mcpu=") + cpu);
    EXPECT_TRUE(t.is_aarch64()) << cpu;
    EXPECT_EQ(t.vector_bits, 128) << cpu;
    EXPECT_EQ(t.num_vector_regs, 32) << cpu;
    EXPECT_TRUE(t.has_feature("neon")) << cpu;
    const topi::LayoutHints hints = topi::layout_hints(t);
    EXPECT_EQ(hints.vector_lanes_f32, 4) << cpu;
    EXPECT_EQ(hints.num_vector_regs, 32) << cpu;
  }
}

TEST(NeonTarget, CpuFeatureFlagsReachTheTargetAndTheArtifact) {
  const codegen::Target n1 = codegen::parse_target("llvm -mtriple=aarch64-linux-gnu -mcpu=neoverse-n1");
  EXPECT_TRUE(n1.has_feature("dotprod"));
  EXPECT_TRUE(n1.has_feature("fullfp16"));
  EXPECT_FALSE(n1.has_feature("sve"));
  const codegen::Target a72 = codegen::parse_target("llvm -mtriple=aarch64-linux-gnu -mcpu=cortex-a72");
  EXPECT_FALSE(a72.has_feature("dotprod"));
  const codegen::Target v1 = codegen::parse_target("llvm -mtriple=aarch64-linux-gnu -mcpu=neoverse-v1");
  EXPECT_TRUE(v1.has_feature("sve"));
  EXPECT_EQ(v1.vector_bits, 128);  // SVE code is not generated: NEON width

  const codegen::Target t =
      codegen::parse_target("llvm -mtriple=aarch64-linux-gnu -mcpu=cortex-a72 -mattr=+dotprod,+fullfp16");
  EXPECT_TRUE(t.has_feature("dotprod"));
  EXPECT_TRUE(t.has_feature("fullfp16"));
  EXPECT_NE(t.str().find("+dotprod"), std::string::npos) << t.str();
  EXPECT_EQ(codegen::parse_target(t.str()).enabled_features, t.enabled_features);
  const artifact::Metadata meta = driver::make_metadata(t);
  EXPECT_EQ(meta.arch, "aarch64");
  EXPECT_TRUE(has(meta.required_features, "dotprod"));
  EXPECT_TRUE(has(meta.required_features, "fullfp16"));
  EXPECT_TRUE(has(meta.required_features, "neon"));
}

TEST(CrossLinker, GnuTripleDropsTheVendor) {
  EXPECT_EQ(driver::gnu_triple("aarch64-unknown-linux-gnu"), "aarch64-linux-gnu");
  EXPECT_EQ(driver::gnu_triple("aarch64-linux-gnu"), "aarch64-linux-gnu");
  EXPECT_EQ(driver::gnu_triple("arm64-unknown-linux-gnu"), "aarch64-linux-gnu");
  EXPECT_EQ(driver::gnu_triple("x86_64-pc-linux-gnu"), "x86_64-linux-gnu");
}

TEST(CrossLinker, LinksAarch64SharedObjectsWhenACrossLinkerIsInstalled) {
  const driver::CrossLinker linker = driver::find_cross_linker("aarch64-unknown-linux-gnu");
  if (linker.command.empty()) {
    GTEST_SKIP() << "no AArch64 linker: " << driver::cross_link_hint("aarch64-unknown-linux-gnu");
  }
  EXPECT_EQ(driver::probe_cross_link(linker), "") << linker.command << linker.flags;
}

TEST(CrossLinker, DoctorJudgesOnlyRequestedTriples) {
  driver::DoctorFacts f;
  f.runtime_library_path = f.compiler_library_path = "/x";
  f.cpu_name = "znver3";
  f.default_triple = "x86_64-unknown-linux-gnu";
  f.cc = {"cc", "default", "/usr/bin/cc", "cc 12", "/usr/bin/ld", "GNU ld", true, ""};
  f.cross_links.push_back({"aarch64-unknown-linux-gnu", false, "", false, "no linker found", "install it"});
  EXPECT_TRUE(driver::judge_doctor_facts(f).empty());  // reported, not judged
  f.cross_links[0].requested = true;
  const auto problems = driver::judge_doctor_facts(f);
  ASSERT_EQ(problems.size(), 1u);
  EXPECT_NE(problems[0].what.find("cannot link artifacts for aarch64-unknown-linux-gnu"), std::string::npos);
  EXPECT_EQ(problems[0].fix, "install it");
}

}  // namespace
}  // namespace kiln
