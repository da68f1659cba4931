// count_kernel_flops on hand-built loop IR, where the count is known independently (a blocked
// matmul with scalar remainders is exactly 2*M*N*K; an elementwise exp over n elements is n),
// and end to end: a compiled matmul's artifact carries 2*M*N*K for its kernel.
#include <gtest/gtest.h>
#include <unistd.h>

#include <filesystem>
#include <string>

#include "codegen/loop_builders.h"
#include "kiln/driver/compile.h"
#include "kiln/driver/kernel_flops.h"
#include "kiln/ir/op.h"
#include "kiln/runtime/kiln_runtime.hpp"
#include "kiln/tir/lower.h"
#include "kiln/tir/schedule.h"

namespace kiln::driver {
namespace {

using namespace kiln::tir;  // NOLINT

TEST(KernelFlops, BlockedMatmulWithRemaindersIsTwoMNK) {
  // 13 x 37 x 19 with 4-row, 2x8-column register blocks: vector blocks plus both scalar tails.
  const PrimFunc f = codegen::testing::matmul("mm", 13, 37, 19, 8, 4, 2, /*parallel=*/true);
  const KernelFlops k = count_kernel_flops(f);
  EXPECT_EQ(k.flops, 2u * 13 * 37 * 19);
  EXPECT_TRUE(k.exact);
}

TEST(KernelFlops, IntrinsicsCountOncePerLaneAndIndexMathNotAtAll) {
  // exp over 100 elements: 12 vectors of 8 lanes and a scalar tail of 4.
  const PrimFunc f = codegen::testing::elementwise("e", 100, 8, 1, [](const std::vector<Expr>& in) {
    return Call::make(CallOp::kExp, {in[0]});
  });
  EXPECT_EQ(count_kernel_flops(f).flops, 100u);
  // a * b + c as an fma intrinsic counts 2 per element.
  const PrimFunc g = codegen::testing::elementwise("fma", 64, 8, 3, [](const std::vector<Expr>& in) {
    return Call::make(CallOp::kFma, {in[0], in[1], in[2]});
  });
  EXPECT_EQ(count_kernel_flops(g).flops, 128u);
}

TEST(KernelFlops, PrefetchHintsCountNothing) {
  Tensor a = placeholder({8, 16}, DType::kF32, "A"), b = placeholder({16, 8}, DType::kF32, "B");
  IterVar k = reduce_axis(16, "k");
  Tensor c = compute({8, 8}, [&](const std::vector<Var>& i) { return sum(a(i[0], k) * b(k, i[1]), {k}); }, "C");
  Schedule s({c});
  s[c].prefetch(b, k, 16);
  EXPECT_EQ(count_kernel_flops(lower(s, {a, b, c}, "mm_prefetch")).flops, 2u * 8 * 8 * 16);
}

TEST(KernelFlops, IfCountsTheLargerBranchAndSymbolicLoopsAreALowerBound) {
  tir::Buffer a = tir::Buffer::make("a", DType::kF32, {16});
  tir::Buffer n_buf = tir::Buffer::make("n", DType::kI64, {1});
  Var i("i");
  Expr x = Load::make(a, i);
  Stmt branch = IfThenElse::make(LT::make(i, make_int(8)), Store::make(a, x * x + x, i), Store::make(a, x * 2.0f, i));
  const PrimFunc f = PrimFunc::make("f", {a}, For::make(i, 0, 16, ForKind::kSerial, branch));
  KernelFlops k = count_kernel_flops(f);
  EXPECT_EQ(k.flops, 32u);  // 16 iterations x max(2, 1)
  EXPECT_TRUE(k.exact);
  Var j("j");
  const PrimFunc g = PrimFunc::make(
      "g", {a, n_buf},
      For::make(j, 0, Load::make(n_buf, make_int(0)), ForKind::kSerial, Store::make(a, Load::make(a, j) + 1.0f, j)));
  k = count_kernel_flops(g);
  EXPECT_EQ(k.flops, 1u);
  EXPECT_FALSE(k.exact);
}

TEST(KernelFlops, CompiledMatmulCarriesItsCountInTheArtifact) {
  namespace fs = std::filesystem;
  const fs::path dir = fs::temp_directory_path() / ("kiln-flops-test-" + std::to_string(getpid()));
  fs::create_directories(dir);
  constexpr int64_t M = 32, K = 48, N = 64;
  ir::NodePtr x = ir::make_input("x", {ir::DType::kF32, {M, K}});
  ir::NDArray w = ir::NDArray::empty(ir::DType::kF32, {K, N});
  for (int64_t i = 0; i < w.numel(); ++i) w.set_from_double(i, 0.01 * static_cast<double>(i % 7));
  ir::Value y = ir::make_call("matmul", {x->output(), ir::make_constant("w", w)->output()}, {})->output();
  const std::string file = (dir / "mm.so").string();
  CompileOptions o;
  o.opt_level = 0;
  compile_graph(ir::Graph({x}, {y}, {"y"}), file, o);
  const std::string text = kiln::runtime::describe_artifact(file);
  fs::remove_all(dir);
  const std::string key = "flop per run:     ";
  const size_t at = text.find(key);
  ASSERT_NE(at, std::string::npos) << text;
  const uint64_t flops = std::stoull(text.substr(at + key.size()));
  // The kernel may do a little more than the textbook count (padding to the vector width), never
  // less.
  EXPECT_GE(flops, 2u * M * N * K) << text;
  EXPECT_LE(flops, 2u * M * N * K * 11 / 10) << text;
}

// The int8 kernels count int8 ops (2 per u8 x s8 multiply-add) and the plan marks them so: a
// 1x1 int8_conv2d (C = 16 channels, whole 4-byte words: its textbook count exactly) and a 3x3
// int8_depthwise_conv2d (pad 1) on u8 NCHW16c, which pairs horizontal taps (dot2_s16): 3 rows x
// 2 pairs of 2 multiply-adds per output, the third column's pair with a zero weight included
// (the count is the arithmetic the kernel executes: 24 ops per output, not the textbook 18).
TEST(KernelFlops, Int8KernelsCountInt8OpsInTheArtifact) {
  namespace fs = std::filesystem;
  const fs::path dir = fs::temp_directory_path() / ("kiln-int8-ops-test-" + std::to_string(getpid()));
  fs::create_directories(dir);
  constexpr int64_t C = 16, M = 32, H = 6, W = 5;
  auto ints = [](ir::DType dt, ir::Shape shape, int mod) {
    ir::NDArray a = ir::NDArray::empty(dt, std::move(shape));
    for (int64_t i = 0; i < a.numel(); ++i) a.set_from_double(i, static_cast<double>(i % mod) - mod / 2);
    return ir::make_constant("c" + std::to_string(a.numel()), a)->output();
  };
  auto vec = [](ir::DType dt, int64_t n, double v) {
    ir::NDArray a = ir::NDArray::empty(dt, {n});
    for (int64_t i = 0; i < n; ++i) a.set_from_double(i, v);
    return ir::make_constant("v", a)->output();
  };
  ir::NodePtr x = ir::make_input("x", {ir::DType::kU8, {1, C / 16, H, W, 16}});
  const ir::Value wd = ints(ir::DType::kI8, {C, 1, 3, 3}, 7);
  const ir::Value dw = ir::make_call("int8_depthwise_conv2d",
                                     {x->output(), ir::make_call("int8_pack_depthwise_weights", {wd}, ir::Attrs().set("b", int64_t{16}))->output(),
                                      ir::make_call("int8_conv_weight_sums", {wd}, {})->output(), vec(ir::DType::kI32, C, 3),
                                      vec(ir::DType::kF32, C, 0.01)},
                                     ir::Attrs().set("pads", std::vector<int64_t>{1, 1, 1, 1}))->output();
  const ir::Value wc = ints(ir::DType::kI8, {M, C, 1, 1}, 5);
  const ir::Value y = ir::make_call("int8_conv2d",
                                    {dw, ir::make_call("int8_pack_conv_weights", {wc}, ir::Attrs().set("ob", int64_t{16}))->output(),
                                     ir::make_call("int8_conv_weight_sums", {wc}, {})->output(), vec(ir::DType::kI32, M, -2),
                                     vec(ir::DType::kF32, M, 0.02)},
                                    ir::Attrs().set("channels", C))->output();
  const std::string file = (dir / "int8.so").string();
  compile_graph(ir::Graph({x}, {y}, {"y"}), file, CompileOptions{});
  const std::string text = kiln::runtime::describe_artifact(file);
  fs::remove_all(dir);
  const std::string key = "int8 op per run:  ";
  const size_t at = text.find(key);
  ASSERT_NE(at, std::string::npos) << text;
  EXPECT_EQ(std::stoull(text.substr(at + key.size())), 2u * (C * H * W * 12 + M * H * W * C)) << text;
  EXPECT_NE(text.find(std::to_string(2 * C * H * W * 12) + " int8 op"), std::string::npos) << text;
  EXPECT_NE(text.find(std::to_string(2 * M * H * W * C) + " int8 op"), std::string::npos) << text;
}

}  // namespace
}  // namespace kiln::driver
