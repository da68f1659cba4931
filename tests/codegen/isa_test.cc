// What the generated code looks like on each target: a vectorized f32 FMA loop becomes ymm FMAs
// for AVX2, zmm for AVX-512 (znver4, compiled only) and NEON fmla for AArch64 (object checked
// with readelf/llvm-objdump); KILN_LOG=codegen=debug dumps the loop IR and the LLVM IR before and
// after optimization.
#include <gtest/gtest.h>

#include <filesystem>

#include "kiln/codegen/llvm_module.h"
#include "kiln/codegen/target.h"
#include "kiln/support/logging.h"
#include "loop_builders.h"
#include "test_util.h"

namespace kiln::codegen {
namespace {

using namespace kiln::tir;  // NOLINT

PrimFunc fma_loop(const Target& t, const std::string& name) {
  return testing::elementwise(name, 1024, t.vector_lanes(32), 3,
                              [](const std::vector<Expr>& in) { return in[0] * in[1] + in[2]; });
}

std::string assembly_for(const std::string& target_string, const std::string& name) {
  const Target t = parse_target(target_string);
  LLVMModule module(t, name);
  module.add_prim_func(fma_loop(t, name));
  return module.assembly();
}

TEST(Isa, Avx2TargetEmitsYmmFma) {
  for (const char* target : {"llvm -mtriple=x86_64-linux-gnu -mcpu=znver3", "llvm -mattr=+avx2,+fma"}) {
    const std::string as = assembly_for(target, "fma_avx2");
    EXPECT_NE(as.find("vfmadd"), std::string::npos) << target << ":\n" << as;
    EXPECT_NE(as.find("ymm"), std::string::npos) << target;
    EXPECT_EQ(as.find("zmm"), std::string::npos) << target;
  }
}

TEST(Isa, Avx512TargetEmitsZmmFma) {
  // Compiled only: this machine may lack AVX-512.
  const std::string as = assembly_for("llvm -mtriple=x86_64-linux-gnu -mcpu=znver4", "fma_avx512");
  EXPECT_NE(as.find("vfmadd"), std::string::npos) << as;
  EXPECT_NE(as.find("zmm"), std::string::npos) << as;
}

TEST(Isa, HostTargetUsesTheHostWidth) {
  const Target& host = host_target();
  if (!host.is_x86_64() || !host.has_feature("avx2")) GTEST_SKIP() << "x86-64 AVX2 host";
  const std::string as = assembly_for("llvm", "fma_host");
  EXPECT_NE(as.find(host.vector_bits == 512 ? "zmm" : "ymm"), std::string::npos) << as;
  EXPECT_NE(as.find("vfmadd"), std::string::npos) << as;
}

TEST(Isa, AArch64ObjectFromLoopIr) {
  const Target t = parse_target("llvm -mtriple=aarch64-linux-gnu -mcpu=neoverse-v1");
  LLVMModule module(t, "aarch64_kernels");
  module.add_prim_func(fma_loop(t, "fma_neon"));
  module.add_prim_func(testing::matmul("mm_neon", 64, 64, 64, t.vector_lanes(32), 4, 2, /*parallel=*/true));
  const std::string as = module.assembly();
  EXPECT_NE(as.find("fmla"), std::string::npos) << as;
  EXPECT_NE(as.find(".4s"), std::string::npos) << as;
  const auto path = std::filesystem::temp_directory_path() / "kiln_isa_aarch64.o";
  module.write_object(path.string());
  int status = 0;
  const std::string header = testing::run_command("readelf -h " + path.string(), &status);
  ASSERT_EQ(status, 0) << header;
  EXPECT_NE(header.find("AArch64"), std::string::npos) << header;
  const std::string dis = testing::run_command("llvm-objdump-19 -d --no-show-raw-insn " + path.string(), &status);
  ASSERT_EQ(status, 0) << dis;
  EXPECT_NE(dis.find("<fma_neon>:"), std::string::npos) << dis;
  EXPECT_NE(dis.find("<mm_neon>:"), std::string::npos) << dis;
  EXPECT_NE(dis.find("fmla"), std::string::npos);
  const std::string syms = testing::run_command("readelf -s " + path.string(), &status);
  EXPECT_NE(syms.find("kiln_parallel_for"), std::string::npos) << syms;
  std::filesystem::remove(path);
}

TEST(Isa, DebugLogDumpsLoopIrAndLlvmIrBeforeAndAfter) {
  set_log_spec("codegen=debug");
  ::testing::internal::CaptureStderr();
  {
    LLVMModule module(host_target(), "logged");
    module.add_prim_func(fma_loop(host_target(), "logged_fma"));
    module.optimize();
  }
  const std::string err = ::testing::internal::GetCapturedStderr();
  set_log_spec("warning");
  EXPECT_NE(err.find("loop IR of kernel logged_fma"), std::string::npos) << err;
  EXPECT_NE(err.find("for (io, 0, "), std::string::npos) << err;
  EXPECT_NE(err.find("LLVM IR of logged_fma before optimization"), std::string::npos) << err;
  EXPECT_NE(err.find("LLVM IR of logged_fma after optimization"), std::string::npos) << err;
  EXPECT_NE(err.find("define i32 @logged_fma(ptr"), std::string::npos) << err;
}

}  // namespace
}  // namespace kiln::codegen
