// AlterInt8Matmul (src/pass/alter_int8_matmul.cc): quantized matmuls with constant s8 weights
// (qnn_matmul + requantize as RealizeQuantizedOps makes them from QDQ models; bare qnn_matmul with
// a run-time activation zero point as dynamic quantization imports) compiled at -O3 run on the fast
// int8 kernels (int8_matmul / int8_matmul_i32, no qnn_matmul kernel left) and their outputs equal
// the reference executor on the unrewritten graph EXACTLY (tolerance 0: the rounding rule of
// docs/int8.md): odd M/K/N, M = 1, batched activations [B, M, K], full-range (exact dot-product
// form) and [-64, 64] (narrow form) weights, per-column and per-tensor scales, bias, ReLU clamp,
// weight zero points given as zeros per column or one zero, static chains of u8 matmuls and the
// dynamic form (zero point and scale inputs at run time, i32 product and its f32 dequantization).
// And a QDQ Gemm (transB, per-row weight scales, i32 bias, ReLU) that RealizeQuantizedOps realizes
// and this pass puts on int8_matmul: within one unit of the float QDQ graph (docs/int8.md).
#include <gtest/gtest.h>
#include <unistd.h>

#include <cmath>
#include <cstring>
#include <filesystem>

#include "driver/compile_test_util.h"
#include "kiln/driver/compile.h"
#include "kiln/ir/graph.h"
#include "kiln/pass/pass.h"
#include "kiln/ref/executor.h"
#include "pass/pass_test_util.h"

namespace kiln::pass {
namespace {

using namespace kiln::ir;

uint64_t seed = 1313;

// Random integers in [lo, hi] / floats in [lo, hi) (pass_test_util.h's generator, a new seed each).
NDArray random_ints(DType dt, Shape shape, int lo, int hi) {
  return pass::testing::random_array({dt, std::move(shape)}, ++seed, lo, hi);
}
NDArray random_floats(Shape shape, float lo, float hi) {
  return pass::testing::random_array({DType::kF32, std::move(shape)}, ++seed, lo, hi);
}

Value constant(const std::string& name, NDArray a) { return make_constant(name, std::move(a))->output(); }
Value scalar(const std::string& name, DType dt, double v) { return constant(name, NDArray::scalar(dt, v)); }

struct MatmulSpec {
  int64_t n;
  int wlo, whi;  // weight range
  bool per_column, bias;
  int64_t a_zp, y_zp;
  bool relu;
};

// requantize(qnn_matmul(a, w, a_zp, 0), x_scale, y_scale, y_zp, bias?) with a constant w [K, N].
Value quantized_matmul(const std::string& name, const Value& a, const MatmulSpec& s) {
  const int64_t k = a.type().shape.back();
  const Value w = constant(name + "_w", random_ints(DType::kI8, {k, s.n}, s.wlo, s.whi));
  const Value wzp = s.per_column ? constant(name + "_wzp", random_ints(DType::kI8, {s.n}, 0, 0)) : scalar(name + "_wzp", DType::kI8, 0);
  const Value acc = make_call("qnn_matmul", {a, w, scalar(name + "_azp", DType::kU8, double(s.a_zp)), wzp}, {}, name)->output();
  const Value xs = s.per_column ? constant(name + "_xs", random_floats({s.n}, 1e-4f, 4e-4f)) : scalar(name + "_xs", DType::kF32, 2.5e-4);
  std::vector<Value> args = {acc, xs, scalar(name + "_ys", DType::kF32, 0.07), scalar(name + "_yzp", DType::kU8, double(s.y_zp))};
  if (s.bias) args.push_back(constant(name + "_b", random_ints(DType::kI32, {s.n}, -3000, 3000)));
  Attrs ra;
  ra.set("axis", a.type().rank() - 1);
  if (s.relu) ra.set("clamp_min", s.y_zp);
  return make_call("requantize", args, ra)->output();
}

// Compiles `graph` at -O3, checks the pass's stats and that no qnn_matmul kernel is left, and
// compares every output with the reference executor on the unrewritten graph, byte for byte.
void expect_fast_and_exact(const Graph& graph, const std::vector<NDArray>& inputs, int requantized, int i32_products,
                           int narrow) {
  const std::filesystem::path so =
      std::filesystem::temp_directory_path() / ("kiln-int8-matmul-" + std::to_string(getpid()) + ".so");
  const driver::CompileReport report = driver::compile_graph(graph, so.string(), driver::CompileOptions{});
  EXPECT_EQ(report.pipeline.stat("AlterInt8Matmul", "int8_matmul"), requantized);
  EXPECT_EQ(report.pipeline.stat("AlterInt8Matmul", "int8_matmul_i32"), i32_products);
  EXPECT_EQ(report.pipeline.stat("AlterInt8Matmul", "narrow"), narrow);
  int fast = 0;
  for (const auto& k : report.kernel_calls) {
    EXPECT_EQ(k.fused_ops.find("qnn_matmul"), std::string::npos) << k.symbol << ": " << k.fused_ops;
    fast += k.fused_ops == "int8_matmul" || k.fused_ops == "int8_matmul_i32";
  }
  EXPECT_EQ(fast, requantized + i32_products);

  const std::vector<NDArray> want = ref::run_graph(graph, inputs);
  const std::vector<NDArray> got = kiln::testing::run_compiled(so.string(), inputs);
  std::filesystem::remove(so);
  ASSERT_EQ(got.size(), want.size());
  for (size_t o = 0; o < got.size(); ++o) {
    ASSERT_EQ(got[o].type(), want[o].type()) << "output " << o;
    const size_t bytes = got[o].nbytes();
    const auto* g = reinterpret_cast<const uint8_t*>(got[o].raw_data());
    const auto* w = reinterpret_cast<const uint8_t*>(want[o].raw_data());
    int64_t differ = 0, distinct = 0;
    for (int64_t i = 0; i < got[o].numel(); ++i) {
      differ += got[o].get_as_double(i) != want[o].get_as_double(i);
      distinct += want[o].get_as_double(i) != want[o].get_as_double(0);
    }
    EXPECT_EQ(differ, 0) << "output " << o << ": " << differ << " of " << got[o].numel() << " values differ";
    EXPECT_EQ(std::memcmp(g, w, bytes), 0) << "output " << o << " is not bit-identical";
    EXPECT_GT(distinct, got[o].numel() / 4) << "output " << o << " is nearly constant: the test would prove little";
  }
}

TEST(AlterInt8Matmul, StaticQuantizedMatmulsRunTheInt8KernelAndEqualTheReference) {
  // a [2, 5, 13] (batched rows, odd K) -> N 7 -> N 33 (narrow weights, ReLU) -> N 16; and a
  // one-row product [1, 37] x [37, 20] (M = 1) with a per-tensor scale.
  const NodePtr x = make_input("x", {DType::kU8, {2, 5, 13}});
  const Value h1 = quantized_matmul("m1", x->output(), {7, -128, 127, true, true, 100, 7, false});
  const Value h2 = quantized_matmul("m2", h1, {33, -64, 64, true, false, 7, 128, true});
  const Value h3 = quantized_matmul("m3", h2, {16, -128, 127, false, true, 128, 90, false});
  const NodePtr v = make_input("v", {DType::kU8, {1, 37}});
  const Value r = quantized_matmul("m4", v->output(), {20, -128, 127, false, false, 3, 120, false});
  const Graph graph({x, v}, {h3, h1, r}, {"y", "h1", "r"});
  expect_fast_and_exact(graph, {random_ints(DType::kU8, {2, 5, 13}, 0, 255), random_ints(DType::kU8, {1, 37}, 0, 255)},
                        4, 0, 1);
}

TEST(AlterInt8Matmul, DynamicQuantizedMatmulRunsTheInt8KernelAndEqualsTheReference) {
  // The dynamic form: the activation zero point and scale are run-time values; the i32 product
  // is dequantized in f32 (cast, times a_scale * w_scale[n]) as MatMulInteger + Cast + Mul import.
  const NodePtr x = make_input("x", {DType::kU8, {3, 29}});
  const NodePtr zp = make_input("x_zero_point", {DType::kU8, {}});
  const NodePtr xs = make_input("x_scale", {DType::kF32, {}});
  const Value w = constant("w", random_ints(DType::kI8, {29, 45}, -128, 127));
  const Value acc = make_call("qnn_matmul", {x->output(), w, zp->output(), constant("wzp", random_ints(DType::kI8, {45}, 0, 0))}, {})->output();
  const Value f = make_call("cast", {acc}, Attrs().set("dtype", DType::kF32))->output();
  const Value s = make_call("mul", {xs->output(), constant("w_scale", random_floats({45}, 1e-3f, 3e-3f))}, {})->output();
  const Value y = make_call("mul", {f, s}, {})->output();
  // A batched one (B = 2, M = 1) with narrow weights, whose product is a graph output itself.
  const NodePtr b = make_input("b", {DType::kU8, {2, 1, 64}});
  const Value w2 = constant("w2", random_ints(DType::kI8, {64, 19}, -64, 64));
  const Value acc2 = make_call("qnn_matmul", {b->output(), w2, zp->output(), scalar("w2zp", DType::kI8, 0)}, {})->output();
  const Graph graph({x, zp, xs, b}, {y, acc, acc2}, {"y", "acc", "acc2"});
  expect_fast_and_exact(graph,
                        {random_ints(DType::kU8, {3, 29}, 0, 255), NDArray::scalar(DType::kU8, 117),
                         NDArray::scalar(DType::kF32, 0.0123), random_ints(DType::kU8, {2, 1, 64}, 0, 255)},
                        0, 2, 1);
}

TEST(AlterInt8Matmul, QdqGemmWithTransposedWeightsIsRealizedAndRunsTheInt8Kernel) {
  // q(relu(gemm(dq(a), dq(w [N, K]), dq(bias i32)))) with transB = 1, w per row (= per output column).
  const int64_t m = 6, k = 21, n = 19;
  const NodePtr a = make_input("a", {DType::kU8, {m, k}});
  auto dq = [](const Value& v, const Value& s, const Value& z, int64_t axis) {
    return make_call("dequantize_linear", {v, s, z}, Attrs().set("axis", axis))->output();
  };
  const NDArray ws = random_floats({n}, 2e-3f, 6e-3f);
  const float as = 0.02f;
  NDArray bs = NDArray::empty(DType::kF32, {n});
  for (int64_t i = 0; i < n; ++i) bs.mutable_data<float>()[i] = ws.data<float>()[i] * as;
  const Value w = dq(constant("w", random_ints(DType::kI8, {n, k}, -128, 127)), constant("w_s", ws),
                     constant("w_z", random_ints(DType::kI8, {n}, 0, 0)), 0);
  const Value bias = dq(constant("b", random_ints(DType::kI32, {n}, -2000, 2000)), constant("b_s", bs),
                        constant("b_z", random_ints(DType::kI32, {n}, 0, 0)), 0);
  const Value x = dq(a->output(), scalar("a_s", DType::kF32, as), scalar("a_z", DType::kU8, 110), 1);
  const Attrs ga = Attrs().set("alpha", 1.0).set("beta", 1.0).set("trans_a", int64_t{0}).set("trans_b", int64_t{1});
  const Value g = make_call("gemm", {x, w, bias}, ga)->output();
  const Value y = make_call("quantize_linear", {make_call("relu", {g}, {})->output(), scalar("y_s", DType::kF32, 0.05),
                                                scalar("y_z", DType::kU8, 20)}, Attrs().set("axis", int64_t{1}))->output();
  const Graph graph({a}, {y}, {"y"});
  const std::filesystem::path so =
      std::filesystem::temp_directory_path() / ("kiln-int8-gemm-" + std::to_string(getpid()) + ".so");
  const driver::CompileReport report = driver::compile_graph(graph, so.string(), driver::CompileOptions{});
  EXPECT_EQ(report.pipeline.stat("RealizeQuantizedOps", "qnn_matmuls"), 1);
  EXPECT_EQ(report.pipeline.stat("AlterInt8Matmul", "int8_matmul"), 1);
  const std::vector<NDArray> inputs = {random_ints(DType::kU8, {m, k}, 0, 255)};
  const NDArray want = ref::run_graph(graph, inputs)[0];
  const NDArray got = kiln::testing::run_compiled(so.string(), inputs)[0];
  std::filesystem::remove(so);
  ASSERT_EQ(got.type(), want.type());
  int64_t off_by_one = 0, distinct = 0;
  for (int64_t i = 0; i < got.numel(); ++i) {
    const double d = std::abs(got.get_as_double(i) - want.get_as_double(i));
    EXPECT_LE(d, 1) << "element " << i;
    off_by_one += d == 1;
    distinct += want.get_as_double(i) != want.get_as_double(0);
  }
  EXPECT_LE(off_by_one, got.numel() / 10) << "the integer path should differ from the float graph only in rare ties";
  EXPECT_GT(distinct, got.numel() / 4);
}

}  // namespace
}  // namespace kiln::pass
