// Byte dot products (tir::dot4_u8s8, CallOp kDot4U8S8 / kDot4U8S8Narrow): the generated code
// equals the loop-IR interpreter exactly (random full-range bytes; the narrow form with s8 bytes
// in [-64, 64], its guarantee) on the host (AVX2: vpmaddubsw paths) and on a generic SSE target
// (widening multiplies), for 1, 4, 8, 13 and 16 lanes (chunk tails), both as `acc + dot` in a
// reduction and alone; and each target gets its instruction: vpmaddubsw + vpmaddwd (AVX2),
// vpdpbusd (AVX-VNNI, AVX-512 VNNI on zmm), sdot (AArch64 +dotprod), usdot (+i8mm). The 16-bit
// dot product (tir::dot2_s16, CallOp kDot2S16) the same way: random full-range halves, host
// (vpmaddwd) and generic code equal the interpreter, and vpmaddwd / vpdpwssd per target.
#include <gtest/gtest.h>

#include <cstdio>
#include <cstring>
#include <random>

#include "kiln/codegen/fma_peak.h"
#include "kiln/codegen/int8_peak.h"
#include "kiln/codegen/llvm_module.h"
#include "kiln/codegen/target.h"
#include "kiln/ir/ndarray.h"
#include "kiln/support/error.h"
#include "kiln/tir/interpreter.h"
#include "kiln/tir/lower.h"
#include "kiln/tir/printer.h"
#include "kiln/tir/schedule.h"
#include "topi/topi_test_util.h"

namespace kiln::codegen {
namespace {

using namespace kiln::tir;  // NOLINT

// i32 words of 4 random bytes; with `narrow`, bytes in [-64, 64] (as s8).
ir::NDArray random_words(const ir::Shape& shape, unsigned seed, bool narrow) {
  ir::NDArray a = ir::NDArray::empty(DType::kI32, shape);
  std::mt19937 rng(seed);
  std::uniform_int_distribution<int> byte(0, 255), small(-64, 64);
  auto* p = static_cast<uint8_t*>(a.mutable_raw_data());
  for (int64_t i = 0; i < 4 * a.numel(); ++i) p[i] = static_cast<uint8_t>(narrow ? small(rng) : byte(rng));
  return a;
}

// The dot product under test: dot4_u8s8 (exact or narrow) or dot2_s16 (halves).
enum class Form { kBytes, kNarrowBytes, kHalves };

Expr dot_of(Form form, Expr a, Expr b) {
  return form == Form::kHalves ? dot2_s16(std::move(a), std::move(b)) : dot4_u8s8(std::move(a), std::move(b), form == Form::kNarrowBytes);
}

// C[i] = sum_k dot(A[k, i], B[k, i]) (accumulate: the `acc + dot` form) or C[i] = dot(A[0, i],
// B[0, i]) (alone), i split by `lanes` and vectorized.
PrimFunc dot_kernel(int64_t n, int64_t k, int lanes, Form form, bool accumulate) {
  const bool narrow = form == Form::kNarrowBytes;
  Tensor A = placeholder({k, n}, DType::kI32, "A");
  Tensor B = placeholder({k, n}, DType::kI32, "B");
  Tensor C;
  if (accumulate) {
    IterVar r = reduce_axis(k, "r");
    C = compute({n}, [&](const std::vector<Var>& i) { return sum(dot_of(form, A(r, i[0]), B(r, i[0])), {r}); }, "C", {"i"});
  } else {
    C = compute({n}, [&](const std::vector<Var>& i) { return dot_of(form, A(make_int(0), i[0]), B(make_int(0), i[0])); }, "C",
                {"i"});
  }
  Schedule s({C});
  if (lanes > 1) {
    auto [io, ii] = s[C].split(s[C].axis(0), lanes);
    if (accumulate) s[C].reorder({io, s[C].reduce_axis(0), ii});
    s[C].vectorize(ii);
  }
  return lower(s, {A, B, C}, "dot_n" + std::to_string(n) + "_l" + std::to_string(lanes) + (narrow ? "_narrow" : "") +
                                 (form == Form::kHalves ? "_halves" : "") + (accumulate ? "_acc" : ""));
}

void expect_exact(const std::string& target, int64_t n, int lanes, Form form, bool accumulate) {
  const int64_t k = 3;
  PrimFunc f = dot_kernel(n, k, lanes, form, accumulate);
  ir::NDArray a = random_words({k, n}, 7, false), b = random_words({k, n}, 11, form == Form::kNarrowBytes);
  ir::NDArray want = ir::NDArray::empty(DType::kI32, {n}), got = ir::NDArray::empty(DType::kI32, {n});
  interpret(f, {a, b, want});
  // An independent check of the interpreter on the first element.
  int64_t first = 0;
  for (int64_t r = 0; r < (accumulate ? k : 1); ++r) {
    if (form == Form::kHalves) {
      const auto* pa = static_cast<const int16_t*>(a.raw_data()) + 2 * r * n;
      const auto* pb = static_cast<const int16_t*>(b.raw_data()) + 2 * r * n;
      for (int j = 0; j < 2; ++j) first += int64_t{pa[j]} * int64_t{pb[j]};
      continue;
    }
    const auto* pa = static_cast<const uint8_t*>(a.raw_data()) + 4 * r * n;
    const auto* pb = static_cast<const int8_t*>(b.raw_data()) + 4 * r * n;
    for (int j = 0; j < 4; ++j) first += int64_t{pa[j]} * int64_t{pb[j]};
  }
  ASSERT_EQ(want.data<int32_t>()[0], static_cast<int32_t>(static_cast<uint32_t>(first)));
  LLVMModule module(parse_target(target), f->name);
  module.add_prim_func(f);
  JitModule jit(std::move(module));
  std::vector<std::vector<int64_t>> shapes(3);
  std::vector<DLTensor> args = {topi::testing::dl_view(a, shapes[0]), topi::testing::dl_view(b, shapes[1]),
                                topi::testing::dl_view(got, shapes[2])};
  jit.run(f->name, args);
  for (int64_t i = 0; i < n; ++i) {
    ASSERT_EQ(got.data<int32_t>()[i], want.data<int32_t>()[i]) << target << " " << f->name << " lane " << i << "\n" << to_string(f);
  }
}

TEST(Dot4, HostCodeEqualsInterpreter) {
  for (Form form : {Form::kBytes, Form::kNarrowBytes, Form::kHalves}) {
    for (bool accumulate : {false, true}) {
      for (auto [n, lanes] : std::vector<std::pair<int64_t, int>>{{1, 1}, {4, 4}, {16, 8}, {13, 8}, {32, 16}, {7, 1}}) {
        expect_exact("llvm", n, lanes, form, accumulate);
      }
    }
  }
}

TEST(Dot4, GenericWideningCodeEqualsInterpreter) {
  // An x86 target without AVX2: the widening-multiply lowering, run on this machine.
  for (Form form : {Form::kBytes, Form::kHalves}) {
    for (bool accumulate : {false, true}) {
      for (auto [n, lanes] : std::vector<std::pair<int64_t, int>>{{1, 1}, {16, 8}, {13, 4}}) {
        expect_exact("llvm -mattr=+sse4.2", n, lanes, form, accumulate);
      }
    }
  }
}

TEST(Dot4, NarrowFormChecksItsGuaranteeInTheInterpreter) {
  PrimFunc f = dot_kernel(8, 1, 8, Form::kNarrowBytes, /*accumulate=*/false);
  ir::NDArray a = ir::NDArray::empty(DType::kI32, {1, 8}), b = ir::NDArray::empty(DType::kI32, {1, 8});
  ir::NDArray c = ir::NDArray::empty(DType::kI32, {8});
  std::memset(a.mutable_raw_data(), 0xFF, 32);  // 255
  std::memset(b.mutable_raw_data(), 0x80, 32);  // -128: 2 * 255 * -128 leaves i16
  EXPECT_THROW(interpret(f, {a, b, c}), InternalError);
}

std::string assembly(const std::string& target, Form form, int lanes) {
  PrimFunc f = dot_kernel(64, 4, lanes, form, true);
  LLVMModule module(parse_target(target), "dot_isa");
  module.add_prim_func(f);
  return module.assembly();
}

TEST(Dot4, EachTargetGetsItsInstruction) {
  struct Case {
    const char* target;
    Form form;
    int lanes;
    std::vector<const char*> want;
  };
  const std::vector<Case> cases = {
      {"llvm -mtriple=x86_64-linux-gnu -mattr=+avx2", Form::kNarrowBytes, 8, {"vpmaddubsw", "vpmaddwd"}},
      {"llvm -mtriple=x86_64-linux-gnu -mattr=+avx2", Form::kBytes, 8, {"vpmaddubsw", "vpmaddwd"}},
      {"llvm -mtriple=x86_64-linux-gnu -mattr=+avx2,+avxvnni", Form::kBytes, 8, {"vpdpbusd", "ymm"}},
      {"llvm -mtriple=x86_64-linux-gnu -mcpu=icelake-server", Form::kBytes, 16, {"vpdpbusd", "zmm"}},
      {"llvm -mtriple=aarch64-linux-gnu -mattr=+dotprod", Form::kBytes, 4, {"sdot"}},
      {"llvm -mtriple=aarch64-linux-gnu -mattr=+dotprod,+i8mm", Form::kBytes, 4, {"usdot"}},
      {"llvm -mtriple=x86_64-linux-gnu -mattr=+avx2", Form::kHalves, 8, {"vpmaddwd", "ymm"}},
      {"llvm -mtriple=x86_64-linux-gnu -mattr=+avx2,+avxvnni", Form::kHalves, 8, {"vpdpwssd", "ymm"}},
      {"llvm -mtriple=x86_64-linux-gnu -mcpu=icelake-server", Form::kHalves, 16, {"vpdpwssd", "zmm"}},
      {"llvm -mtriple=x86_64-linux-gnu -mcpu=skylake-avx512", Form::kHalves, 16, {"vpmaddwd", "zmm"}},
      {"llvm -mtriple=aarch64-linux-gnu", Form::kHalves, 4, {"smull"}},
  };
  for (const Case& c : cases) {
    const std::string as = assembly(c.target, c.form, c.lanes);
    for (const char* w : c.want) EXPECT_NE(as.find(w), std::string::npos) << c.target << " lacks " << w << ":\n" << as;
  }
  // That the exact AVX2 form does not saturate is checked by HostCodeEqualsInterpreter: its random
  // full-range bytes give pairs of products far outside i16 (up to 2 * 255 * 128).
}

TEST(Dot4, Int8PeakIsMeasured) {
  const Int8Peak peak = measure_int8_peak(host_target(), 3);
  const FmaPeak fma = measure_fma_peak(host_target(), 3);
  std::printf("int8 peak: %s\nf32 peak:  %s (int8 / f32 = %.2f)\n", peak.describe().c_str(), fma.describe().c_str(),
              peak.gops / fma.gflops);
  EXPECT_GT(peak.gops, 0);
  EXPECT_EQ(peak.lanes, host_target().vector_lanes(32));
}

}  // namespace
}  // namespace kiln::codegen
