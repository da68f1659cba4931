// Target strings: host resolution (CPU name AND feature string), named CPUs, -mattr, cross
// triples, the derived vector facts, and every malformed-string error.
#include "kiln/codegen/target.h"

#include <gtest/gtest.h>

#include "kiln/codegen/host_info.h"
#include "kiln/support/error.h"

namespace kiln::codegen {
namespace {

TEST(Target, PlainLlvmIsTheHostWithItsFeatureString) {
  const Target t = parse_target("llvm");
  const HostInfo& host = host_info();
  EXPECT_EQ(t.cpu, host.cpu_name);
  EXPECT_FALSE(t.features.empty()) << "a CPU name without features gives SSE-only code";
  // Every feature the host reports as present is enabled in the target.
  for (const std::string& f : host.features) {
    EXPECT_NE(t.features.find("+" + f), std::string::npos) << "host feature " << f;
  }
  EXPECT_TRUE(t.is_x86_64() || t.is_aarch64());
  EXPECT_TRUE(missing_host_features(t).empty());
  const Target native = parse_target("llvm -mcpu=native");
  EXPECT_EQ(native.str(), t.str());
  EXPECT_EQ(host_target().str(), t.str());
}

TEST(Target, HostVectorFactsFollowTheHostFeatures) {
  const Target& t = host_target();
  if (!t.is_x86_64()) GTEST_SKIP() << "x86-64 host facts";
  const HostInfo& host = host_info();
  if (host.has_feature("avx512f")) {
    EXPECT_EQ(t.vector_bits, 512);
    EXPECT_EQ(t.num_vector_regs, 32);
    EXPECT_EQ(t.vector_lanes(32), 16);
  } else if (host.has_feature("avx2")) {
    EXPECT_EQ(t.vector_bits, 256);
    EXPECT_EQ(t.num_vector_regs, 16);
    EXPECT_EQ(t.vector_lanes(32), 8);
  }
  EXPECT_EQ(t.has_feature("fma"), host.has_feature("fma"));
}

TEST(Target, NamedCpuImpliesItsFeatures) {
  const Target t = parse_target("llvm -mcpu=znver4 -mtriple=x86_64-linux-gnu");
  EXPECT_EQ(t.cpu, "znver4");
  EXPECT_EQ(t.triple, "x86_64-unknown-linux-gnu");
  EXPECT_TRUE(t.has_feature("avx512f"));
  EXPECT_TRUE(t.has_feature("fma"));
  EXPECT_EQ(t.vector_bits, 512);
  EXPECT_EQ(t.num_vector_regs, 32);
  const Target z3 = parse_target("llvm -mcpu=znver3");
  EXPECT_TRUE(z3.has_feature("avx2"));
  EXPECT_FALSE(z3.has_feature("avx512f"));
  EXPECT_EQ(z3.vector_bits, 256);
  EXPECT_EQ(z3.num_vector_regs, 16);
}

TEST(Target, MattrOnGenericCpu) {
  const Target t = parse_target("llvm -mattr=+avx2,+fma");
  EXPECT_EQ(t.cpu, "generic");
  EXPECT_EQ(t.features, "+avx2,+fma");
  EXPECT_TRUE(t.has_feature("avx2"));
  EXPECT_TRUE(t.has_feature("avx"));  // implied by avx2
  EXPECT_FALSE(t.has_feature("avx512f"));
  EXPECT_EQ(t.vector_bits, 256);
  const Target off = parse_target("llvm -mcpu=znver4 -mattr=-avx512f");
  EXPECT_FALSE(off.has_feature("avx512f"));
  EXPECT_EQ(off.vector_bits, 256);
}

TEST(Target, AArch64CrossTarget) {
  const Target t = parse_target("llvm -mtriple=aarch64-linux-gnu -mcpu=neoverse-v1");
  EXPECT_EQ(t.triple, "aarch64-unknown-linux-gnu");
  EXPECT_TRUE(t.is_aarch64());
  EXPECT_TRUE(t.has_feature("neon"));
  EXPECT_TRUE(t.has_feature("sve"));
  EXPECT_EQ(t.vector_bits, 128);
  EXPECT_EQ(t.num_vector_regs, 32);
  const auto missing = missing_host_features(t);
  if (!host_target().is_aarch64()) {
    ASSERT_EQ(missing.size(), 1u);
    EXPECT_EQ(missing[0], t.triple);
  }
}

TEST(Target, StrRoundTrips) {
  for (const char* s : {"llvm", "llvm -mcpu=znver4", "llvm -mattr=+avx2,+fma",
                        "llvm -mtriple=aarch64-linux-gnu -mcpu=neoverse-v1"}) {
    const Target t = parse_target(s);
    const Target again = parse_target(t.str());
    EXPECT_EQ(again.str(), t.str()) << s;
    EXPECT_EQ(again.enabled_features, t.enabled_features) << s;
    EXPECT_EQ(again.vector_bits, t.vector_bits) << s;
  }
}

TEST(Target, VectorWidthOption) {
  // Below the native width: AVX-512 instructions on 256-bit vectors, still 32 registers.
  const Target narrow = parse_target("llvm -mcpu=znver4 -vector-width=256");
  EXPECT_TRUE(narrow.has_feature("avx512f"));
  EXPECT_EQ(narrow.native_vector_bits, 512);
  EXPECT_EQ(narrow.vector_bits, 256);
  EXPECT_EQ(narrow.vector_lanes(32), 8);
  EXPECT_EQ(narrow.num_vector_regs, 32);
  // Above it: AVX-512's schedules (16 lanes, 32 registers) on AVX2 instructions.
  const Target wide = parse_target("llvm -mcpu=znver3 -vector-width=512");
  EXPECT_FALSE(wide.has_feature("avx512f"));
  EXPECT_EQ(wide.native_vector_bits, 256);
  EXPECT_EQ(wide.vector_lanes(32), 16);
  EXPECT_EQ(wide.num_vector_regs, 32);
  // The native width is the default and is not spelled out by str(); another one is.
  EXPECT_EQ(parse_target("llvm -mcpu=znver3 -vector-width=256").str(), parse_target("llvm -mcpu=znver3").str());
  EXPECT_NE(wide.str().find("-vector-width=512"), std::string::npos) << wide.str();
  for (const Target& t : {narrow, wide}) {
    const Target again = parse_target(t.str());
    EXPECT_EQ(again.str(), t.str());
    EXPECT_EQ(again.vector_bits, t.vector_bits);
    EXPECT_EQ(again.num_vector_regs, t.num_vector_regs);
  }
  // The host at another width runs here (no feature is added).
  EXPECT_TRUE(missing_host_features(parse_target("llvm -vector-width=512")).empty());
}

TEST(Target, MissingFeaturesOfABiggerCpu) {
  if (!host_target().is_x86_64() || host_info().has_feature("avx512f")) {
    GTEST_SKIP() << "needs an x86-64 host without AVX-512";
  }
  const auto missing = missing_host_features(parse_target("llvm -mcpu=znver4"));
  EXPECT_NE(std::find(missing.begin(), missing.end(), "avx512f"), missing.end());
}

void expect_error(const char* text, const char* fragment) {
  try {
    parse_target(text);
    ADD_FAILURE() << "no error for '" << text << "'";
  } catch (const UserError& e) {
    EXPECT_EQ(e.kind() == UserErrorKind::kInvalidArgument || e.kind() == UserErrorKind::kUnsupported,
              true);
    EXPECT_NE(std::string(e.what()).find(fragment), std::string::npos)
        << "'" << text << "': " << e.what();
    EXPECT_FALSE(e.hint().empty()) << text;
  }
}

TEST(Target, MalformedStringsAreUserErrors) {
  expect_error("", "starts with the target kind 'llvm'");
  expect_error("cuda", "starts with the target kind 'llvm'");
  expect_error("llvm -mcpu", "is not of the form -name=value");
  expect_error("llvm mcpu=znver3", "is not of the form -name=value");
  expect_error("llvm -march=x86-64", "unknown option '-march'");
  expect_error("llvm -mcpu=", "empty value");
  expect_error("llvm -mcpu=znver3 -mcpu=znver4", "given twice");
  expect_error("llvm -mcpu=znver99", "'znver99' is not a CPU LLVM knows");
  expect_error("llvm -mattr=avx2", "must start with '+' or '-'");
  expect_error("llvm -mattr=+avx3", "'avx3' is not a feature LLVM knows");
  expect_error("llvm -mtriple=riscv64-linux-gnu", "no code generator for triple");
  expect_error("llvm -mtriple=nonsense-foo-bar", "no code generator for triple");
  expect_error("llvm -vector-width=1024", "is not one of 128, 256 and 512");
  expect_error("llvm -vector-width=wide", "is not one of 128, 256 and 512");
}

TEST(Target, NativeCpuForAForeignArchitectureIsAnError) {
  if (host_target().is_aarch64()) GTEST_SKIP() << "host is AArch64";
  expect_error("llvm -mtriple=aarch64-linux-gnu -mcpu=native", "cannot run");
}

}  // namespace
}  // namespace kiln::codegen
