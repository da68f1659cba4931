// The LLVM infrastructure without the loop IR: kernels written in LLVM assembly that follow the
// calling convention (docs/codegen.md) are optimized at O3, JIT-compiled and compared with plain
// C++; a parallel loop goes through the runtime's kiln_parallel_for; errors surface with the
// kernel's message; the same module emits x86-64 assembly and AArch64 objects.
#include <gtest/gtest.h>

#include <cmath>
#include <cstdio>
#include <filesystem>
#include <fstream>

#include "kiln/codegen/llvm_module.h"
#include "kiln/codegen/target.h"
#include "kiln/runtime/c_api.h"
#include "kiln/support/error.h"
#include "test_util.h"

namespace kiln::codegen {
namespace {

using testing::Buffer;
using testing::f32_type;

// c[i] = a[i] + b[i] over n = 1000 f32, through the convention: args[k].data + byte_offset.
constexpr const char* kVectorAdd = R"(
%DLTensor = type { ptr, { i32, i32 }, i32, { i8, i8, i16 }, ptr, ptr, i64 }
@msg = private constant [34 x i8] c"vadd: expected 3 tensor arguments\00"
declare void @kiln_set_last_error(ptr)

define internal ptr @tensor_data(ptr %args, i64 %k) {
  %t = getelementptr %DLTensor, ptr %args, i64 %k
  %d = load ptr, ptr %t, align 8
  %off.p = getelementptr %DLTensor, ptr %args, i64 %k, i32 6
  %off = load i64, ptr %off.p, align 8
  %p = getelementptr i8, ptr %d, i64 %off
  ret ptr %p
}

define i32 @vadd(ptr noalias %args, i32 %num_args) {
entry:
  %ok = icmp eq i32 %num_args, 3
  br i1 %ok, label %body, label %fail
fail:
  call void @kiln_set_last_error(ptr @msg)
  ret i32 -1
body:
  %a = call ptr @tensor_data(ptr %args, i64 0)
  %b = call ptr @tensor_data(ptr %args, i64 1)
  %c = call ptr @tensor_data(ptr %args, i64 2)
  br label %loop
loop:
  %i = phi i64 [ 0, %body ], [ %i.next, %loop ]
  %pa = getelementptr float, ptr %a, i64 %i
  %pb = getelementptr float, ptr %b, i64 %i
  %pc = getelementptr float, ptr %c, i64 %i
  %va = load float, ptr %pa, align 4
  %vb = load float, ptr %pb, align 4
  %s = fadd float %va, %vb
  store float %s, ptr %pc, align 4
  %i.next = add i64 %i, 1
  %done = icmp eq i64 %i.next, 1000
  br i1 %done, label %exit, label %loop
exit:
  ret i32 0
}
)";

// y[i] = 2 * x[i] + 1 over n = 4099, the loop outlined into @body and run by kiln_parallel_for
// with the captured pointers packed in a stack struct.
constexpr const char* kParallelAffine = R"(
%DLTensor = type { ptr, { i32, i32 }, i32, { i8, i8, i16 }, ptr, ptr, i64 }
%closure = type { ptr, ptr }
declare i32 @kiln_parallel_for(ptr, ptr, i64)

define internal i32 @body(i64 %begin, i64 %end, ptr %cl) {
entry:
  %xp = getelementptr %closure, ptr %cl, i32 0, i32 0
  %x = load ptr, ptr %xp, align 8
  %yp = getelementptr %closure, ptr %cl, i32 0, i32 1
  %y = load ptr, ptr %yp, align 8
  %empty = icmp sge i64 %begin, %end
  br i1 %empty, label %exit, label %loop
loop:
  %i = phi i64 [ %begin, %entry ], [ %i.next, %loop ]
  %px = getelementptr float, ptr %x, i64 %i
  %v = load float, ptr %px, align 4
  %m = fmul contract float %v, 2.0
  %r = fadd contract float %m, 1.0
  %py = getelementptr float, ptr %y, i64 %i
  store float %r, ptr %py, align 4
  %i.next = add i64 %i, 1
  %done = icmp eq i64 %i.next, %end
  br i1 %done, label %exit, label %loop
exit:
  ret i32 0
}

define i32 @affine_parallel(ptr noalias %args, i32 %num_args) {
entry:
  %cl = alloca %closure, align 8
  %x = load ptr, ptr %args, align 8
  %t1 = getelementptr %DLTensor, ptr %args, i64 1
  %y = load ptr, ptr %t1, align 8
  %f0 = getelementptr %closure, ptr %cl, i32 0, i32 0
  store ptr %x, ptr %f0, align 8
  %f1 = getelementptr %closure, ptr %cl, i32 0, i32 1
  store ptr %y, ptr %f1, align 8
  %rc = call i32 @kiln_parallel_for(ptr @body, ptr %cl, i64 4099)
  ret i32 %rc
}
)";

TEST(Jit, VectorAddThroughTheCallingConvention) {
  LLVMModule module(host_target(), "vadd_module");
  module.add_llvm_ir(kVectorAdd, "vadd.ll");
  ASSERT_EQ(module.kernel_names(), std::vector<std::string>{"vadd"});
  JitModule jit(std::move(module));
  Buffer<float> a({1000}, f32_type()), b({1000}, f32_type()), c({1000}, f32_type());
  for (size_t i = 0; i < 1000; ++i) {
    a[i] = 0.5f * static_cast<float>(i);
    b[i] = std::sin(static_cast<float>(i));
  }
  jit.run("vadd", {a.tensor(), b.tensor(), c.tensor()});
  for (size_t i = 0; i < 1000; ++i) {
    ASSERT_EQ(c[i], a[i] + b[i]) << "index " << i;  // one rounding, exact
  }
}

TEST(Jit, ByteOffsetIsHonoured) {
  LLVMModule module(host_target());
  module.add_llvm_ir(kVectorAdd, "vadd.ll");
  JitModule jit(std::move(module));
  Buffer<float> a({1016}, f32_type()), b({1000}, f32_type()), c({1000}, f32_type());
  for (size_t i = 0; i < 1016; ++i) a[i] = static_cast<float>(i);
  DLTensor shifted = a.tensor();
  shifted.byte_offset = 16 * sizeof(float);
  jit.run("vadd", {shifted, b.tensor(), c.tensor()});
  for (size_t i = 0; i < 1000; ++i) ASSERT_EQ(c[i], static_cast<float>(i + 16)) << i;
}

TEST(Jit, KernelErrorSurfacesWithItsMessage) {
  LLVMModule module(host_target());
  module.add_llvm_ir(kVectorAdd, "vadd.ll");
  JitModule jit(std::move(module));
  Buffer<float> a({1000}, f32_type());
  KernelFunction fn = jit.kernel("vadd");
  EXPECT_NE(fn(&a.tensor(), 1), 0);
  EXPECT_STREQ(kiln_get_last_error(), "vadd: expected 3 tensor arguments");
  try {
    jit.run("vadd", {a.tensor()});
    ADD_FAILURE() << "no error";
  } catch (const Error& e) {
    EXPECT_NE(std::string(e.what()).find("expected 3 tensor arguments"), std::string::npos)
        << e.what();
  }
}

TEST(Jit, ParallelLoopRunsThroughKilnParallelFor) {
  ASSERT_EQ(kiln_set_num_threads(2), 0);
  LLVMModule module(host_target());
  module.add_llvm_ir(kParallelAffine, "affine.ll");
  JitModule jit(std::move(module));
  Buffer<float> x({4099}, f32_type()), y({4099}, f32_type());
  for (size_t i = 0; i < 4099; ++i) x[i] = static_cast<float>(i) * 0.25f - 100.0f;
  jit.run("affine_parallel", {x.tensor(), y.tensor()});
  for (size_t i = 0; i < 4099; ++i) {
    const float expected = std::fma(x[i], 2.0f, 1.0f);  // contraction allowed: exact here anyway
    ASSERT_EQ(y[i], expected) << "index " << i;
  }
}

TEST(Jit, ManyKernelsPerModuleAndUnknownNames) {
  LLVMModule module(host_target());
  module.add_llvm_ir(kVectorAdd, "vadd.ll");
  module.add_llvm_ir(kParallelAffine, "affine.ll");
  EXPECT_EQ(module.kernel_names(), (std::vector<std::string>{"vadd", "affine_parallel"}));
  JitModule jit(std::move(module));
  EXPECT_NE(jit.kernel("vadd"), nullptr);
  EXPECT_NE(jit.kernel("affine_parallel"), nullptr);
  try {
    jit.kernel("nope");
    ADD_FAILURE() << "no error";
  } catch (const UserError& e) {
    EXPECT_EQ(e.kind(), UserErrorKind::kNotFound);
    EXPECT_NE(std::string(e.what()).find("vadd, affine_parallel"), std::string::npos) << e.what();
  }
}

TEST(Jit, DuplicateKernelNameIsAnError) {
  LLVMModule module(host_target());
  module.add_llvm_ir(kVectorAdd, "vadd.ll");
  EXPECT_THROW(module.add_llvm_ir(kVectorAdd, "again.ll"), UserError);
}

TEST(Jit, InvalidLlvmIrIsAParseError) {
  LLVMModule module(host_target());
  try {
    module.add_llvm_ir("define i32 @f( {", "broken.ll");
    ADD_FAILURE() << "no error";
  } catch (const UserError& e) {
    EXPECT_EQ(e.kind(), UserErrorKind::kParse);
    EXPECT_NE(std::string(e.what()).find("broken.ll"), std::string::npos) << e.what();
  }
}

TEST(Jit, RefusesATargetThisMachineCannotRun) {
  LLVMModule module(parse_target("llvm -mtriple=aarch64-linux-gnu -mcpu=neoverse-v1"));
  module.add_llvm_ir(kVectorAdd, "vadd.ll");
  if (host_target().is_aarch64()) GTEST_SKIP() << "AArch64 host";
  try {
    JitModule jit(std::move(module));
    ADD_FAILURE() << "no error";
  } catch (const UserError& e) {
    EXPECT_EQ(e.kind(), UserErrorKind::kIncompatible);
    EXPECT_NE(std::string(e.what()).find("aarch64"), std::string::npos) << e.what();
  }
}

TEST(Jit, OptimizationVectorizesForTheHost) {
  LLVMModule module(host_target());
  module.add_llvm_ir(kVectorAdd, "vadd.ll");
  EXPECT_EQ(module.llvm_ir().find("x float>"), std::string::npos);
  module.optimize();
  EXPECT_TRUE(module.optimized());
  const std::string ir = module.llvm_ir();
  EXPECT_NE(ir.find("x float>"), std::string::npos) << "O3 should vectorize the loop:\n" << ir;
  if (host_target().has_feature("avx")) {
    const std::string as = module.assembly();
    EXPECT_TRUE(as.find("ymm") != std::string::npos || as.find("zmm") != std::string::npos) << as;
  }
}

TEST(Object, AArch64ObjectPassesReadelfAndObjdump) {
  LLVMModule module(parse_target("llvm -mtriple=aarch64-linux-gnu -mcpu=neoverse-v1"));
  module.add_llvm_ir(kVectorAdd, "vadd.ll");
  module.add_llvm_ir(kParallelAffine, "affine.ll");
  const auto path = std::filesystem::temp_directory_path() / "kiln_codegen_aarch64_test.o";
  module.write_object(path.string());
  int status = 0;
  const std::string header = testing::run_command("readelf -h " + path.string(), &status);
  ASSERT_EQ(status, 0) << header;
  EXPECT_NE(header.find("AArch64"), std::string::npos) << header;
  EXPECT_NE(header.find("REL (Relocatable file)"), std::string::npos) << header;
  const std::string dis = testing::run_command("llvm-objdump-19 -d " + path.string(), &status);
  ASSERT_EQ(status, 0) << dis;
  EXPECT_NE(dis.find("<vadd>:"), std::string::npos) << dis;
  EXPECT_NE(dis.find("<affine_parallel>:"), std::string::npos) << dis;
  EXPECT_NE(dis.find("bl\t"), std::string::npos) << "calls kiln_parallel_for:\n" << dis;
  const std::string syms = testing::run_command("readelf -s " + path.string(), &status);
  EXPECT_NE(syms.find("kiln_parallel_for"), std::string::npos) << syms;
  std::filesystem::remove(path);
}

TEST(Object, X86ObjectIsElfX8664) {
  LLVMModule module(parse_target("llvm -mtriple=x86_64-linux-gnu -mcpu=znver3"));
  module.add_llvm_ir(kVectorAdd, "vadd.ll");
  const std::vector<char> bytes = module.object_code();
  ASSERT_GT(bytes.size(), 64u);
  EXPECT_EQ(std::string(bytes.data() + 1, 3), "ELF");
  const auto path = std::filesystem::temp_directory_path() / "kiln_codegen_x86_test.o";
  module.write_object(path.string());
  int status = 0;
  const std::string header = testing::run_command("readelf -h " + path.string(), &status);
  EXPECT_NE(header.find("X86-64"), std::string::npos) << header;
  std::filesystem::remove(path);
}

TEST(Object, UnwritablePathIsAnIoError) {
  LLVMModule module(host_target());
  module.add_llvm_ir(kVectorAdd, "vadd.ll");
  try {
    module.write_object("/nonexistent-dir/x.o");
    ADD_FAILURE() << "no error";
  } catch (const UserError& e) {
    EXPECT_EQ(e.kind(), UserErrorKind::kIO);
  }
}

}  // namespace
}  // namespace kiln::codegen
