// AlterInt8Layout (src/pass/alter_int8_layout.cc): a chain of quantized convolutions
// (qnn_conv2d + requantize, as RealizeQuantizedOps makes them from QDQ models) compiled at -O3
// runs on the fast int8 kernels (int8_conv2d, u8 NCHW[ob]c between consecutive convs, no
// qnn_conv2d kernel left) and its output equals the reference executor on the unrewritten graph
// EXACTLY (tolerance 0: the rounding rule of docs/int8.md), for full-range (exact dot-product
// form) and [-64, 64] (narrow form) weights, per-channel and per-tensor scales, bias, ReLU clamp,
// strides, asymmetric pads, ob = 16 and ob = 8 outputs, a convolution output that is also a
// graph output (its NCHW transform stays for that use), a u8 max pool and a QDQ residual chain
// (dequantize, add, relu, quantize) between int8 convolutions, which run on the blocked layout
// (the relu dropped before the quantize with zero point 0, the conv's dequantize folded into it).
// ConvertInt8ConvToWinograd (src/pass/convert_int8_conv_to_winograd.cc) on the same pipeline:
// 3x3 stride-1 int8 convolutions on blocked inputs run as exact integer Winograd F(2x2, 3x3)
// and still equal the reference on the unrewritten graph exactly.
#include <gtest/gtest.h>
#include <unistd.h>

#include <algorithm>
#include <filesystem>
#include <limits>
#include <random>

#include "driver/compile_test_util.h"
#include "kiln/driver/compile.h"
#include "kiln/ir/graph.h"
#include "kiln/pass/pass.h"
#include "kiln/ref/executor.h"

namespace kiln::pass {
namespace {

using namespace kiln::ir;

std::mt19937_64 rng(13);

NDArray random_ints(DType dt, Shape shape, int lo, int hi) {
  NDArray a = NDArray::empty(dt, std::move(shape));
  std::uniform_int_distribution<int> d(lo, hi);
  for (int64_t i = 0; i < a.numel(); ++i) a.set_from_double(i, d(rng));
  return a;
}

NDArray random_floats(Shape shape, float lo, float hi) {
  NDArray a = NDArray::empty(DType::kF32, std::move(shape));
  std::uniform_real_distribution<float> d(lo, hi);
  for (auto& v : a.mutable_data<float>()) v = d(rng);
  return a;
}

Value constant(const std::string& name, NDArray a) { return make_constant(name, std::move(a))->output(); }
Value scalar(const std::string& name, DType dt, double v) { return constant(name, NDArray::scalar(dt, v)); }

struct ConvSpec {
  int64_t m, k;
  std::vector<int64_t> strides, pads;
  int wlo, whi;             // weight range
  bool per_channel, bias;
  int64_t x_zp, y_zp;
  bool relu;
  int64_t groups = 1;
  int64_t relu6_max = 0;  // > 0: clamp_max (ReLU6 folded into requantize)
};

Value quantized_conv(const std::string& name, const Value& x, const ConvSpec& s) {
  const int64_t c = x.type().shape[1];
  const Value w = constant(name + "_w", random_ints(DType::kI8, {s.m, c / s.groups, s.k, s.k}, s.wlo, s.whi));
  const Value wzp = s.per_channel ? constant(name + "_wzp", random_ints(DType::kI8, {s.m}, 0, 0)) : scalar(name + "_wzp", DType::kI8, 0);
  Attrs ca;
  ca.set("strides", s.strides).set("pads", s.pads).set("groups", s.groups);
  const Value acc = make_call("qnn_conv2d", {x, w, scalar(name + "_xzp", DType::kU8, double(s.x_zp)), wzp}, ca, name)->output();
  const Value xs = s.per_channel ? constant(name + "_xs", random_floats({s.m}, 1e-4f, 4e-4f)) : scalar(name + "_xs", DType::kF32, 2.5e-4);
  std::vector<Value> args = {acc, xs, scalar(name + "_ys", DType::kF32, 0.07), scalar(name + "_yzp", DType::kU8, double(s.y_zp))};
  if (s.bias) args.push_back(constant(name + "_b", random_ints(DType::kI32, {s.m}, -3000, 3000)));
  Attrs ra;
  if (s.relu) ra.set("clamp_min", s.y_zp);
  if (s.relu6_max > 0) ra.set("clamp_max", s.relu6_max);
  return make_call("requantize", args, ra)->output();
}

// Compiles `graph` at -O3, runs it on `inputs` and expects every u8 output to equal the reference
// executor's EXACTLY (and not to be nearly constant, which would prove little), other outputs bit
// for bit.
driver::CompileReport expect_compiled_equals_reference(const Graph& graph, const std::vector<NDArray>& inputs) {
  const std::filesystem::path so =
      std::filesystem::temp_directory_path() / ("kiln-int8-layout-" + std::to_string(getpid()) + ".so");
  const driver::CompileReport report = driver::compile_graph(graph, so.string(), driver::CompileOptions{});
  const std::vector<NDArray> want = ref::run_graph(graph, inputs);
  const std::vector<NDArray> got = testing::run_compiled(so.string(), inputs);
  std::filesystem::remove(so);
  EXPECT_EQ(got.size(), want.size());
  for (size_t o = 0; o < got.size() && o < want.size(); ++o) {
    EXPECT_EQ(got[o].type(), want[o].type()) << "output " << o;
    if (got[o].type() != want[o].type()) continue;
    if (got[o].dtype() != DType::kU8) {  // f32 (a folded dequantize): bit for bit
      EXPECT_TRUE(got[o].bitwise_equal(want[o])) << "output " << o << " differs from the reference";
      continue;
    }
    int64_t differ = 0, distinct = 0;
    for (int64_t i = 0; i < got[o].numel(); ++i) {
      differ += got[o].data<uint8_t>()[i] != want[o].data<uint8_t>()[i];
      distinct += want[o].data<uint8_t>()[i] != want[o].data<uint8_t>()[0];
    }
    EXPECT_EQ(differ, 0) << "output " << o << ": " << differ << " of " << got[o].numel() << " bytes differ";
    EXPECT_GT(distinct, got[o].numel() / 4) << "output " << o << " is nearly constant: the test would prove little";
  }
  return report;
}

int count_kernels(const driver::CompileReport& report, const std::string& fused_ops) {
  int n = 0;
  for (const auto& k : report.kernel_calls) n += k.fused_ops == fused_ops;
  return n;
}

TEST(AlterInt8Layout, QuantizedConvChainRunsTheInt8KernelsAndEqualsTheReference) {
  const NodePtr x = make_input("x", {DType::kU8, {2, 12, 9, 11}});
  const Value h1 = quantized_conv("c1", x->output(), {32, 3, {1, 1}, {1, 1, 1, 0}, -128, 127, true, true, 100, 7, true});
  const Value pool = make_call("max_pool2d", {h1}, Attrs().set("kernel", std::vector<int64_t>{3, 3}).set("pads", std::vector<int64_t>{1, 1, 1, 1}))->output();
  const Value h2 = quantized_conv("c2", pool, {16, 3, {2, 2}, {0, 1, 1, 0}, -64, 64, false, false, 7, 128, false});
  const Value h2b = quantized_conv("c2b", h2, {16, 3, {1, 1}, {1, 1, 1, 1}, -128, 127, true, true, 128, 90, false});
  // The QDQ residual: q(relu(dq(h2b) + dq(h2))) in f32, as RealizeQuantizedOps leaves it.
  auto dq = [](const Value& v, const std::string& n, double scale, double zp) {
    return make_call("dequantize_linear", {v, scalar(n + "_s", DType::kF32, scale), scalar(n + "_z", DType::kU8, zp)}, {})->output();
  };
  const Value sum = make_call("add", {dq(h2b, "dqa", 0.07, 90), dq(h2, "dqb", 0.07, 128)}, {})->output();
  const Value res = make_call("quantize_linear", {make_call("relu", {sum}, {})->output(), scalar("q_s", DType::kF32, 0.05),
                                                  scalar("q_z", DType::kU8, 0)}, {})->output();
  const Value h3 = quantized_conv("c3", res, {8, 1, {1, 1}, {0, 0, 0, 0}, -100, 90, true, true, 0, 3, false});
  const Graph graph({x}, {h3, h1}, {"y", "h1"});

  const driver::CompileReport report = expect_compiled_equals_reference(graph, {random_ints(DType::kU8, {2, 12, 9, 11}, 0, 255)});
  EXPECT_EQ(report.pipeline.stat("AlterInt8Layout", "int8_conv2d"), 4);
  EXPECT_EQ(report.pipeline.stat("AlterInt8Layout", "narrow"), 1);
  EXPECT_EQ(report.pipeline.stat("AlterInt8Layout", "transforms_skipped"), 3);
  EXPECT_EQ(report.pipeline.stat("AlterInt8Layout", "pools_blocked"), 1);
  EXPECT_EQ(report.pipeline.stat("AlterInt8Layout", "blocked_elementwise"), 4);
  int transforms = 0;
  for (const auto& k : report.kernel_calls) transforms += k.fused_ops.find("layout_transform") != std::string::npos;
  EXPECT_EQ(transforms, 2);  // only the NCHW views of the two graph outputs
  int int8_kernels = 0;
  for (const auto& k : report.kernel_calls) {
    EXPECT_EQ(k.fused_ops.find("qnn_conv2d"), std::string::npos) << k.symbol << ": " << k.fused_ops;
    int8_kernels += k.fused_ops.rfind("int8_conv2d", 0) == 0;
  }
  EXPECT_EQ(int8_kernels, 4);
  // The QDQ residual (the add, relu, quantize) is c2b's epilogue: no kernel of its own, c2b's
  // dequantize folded into it (f32 output), the shortcut read as u8 and dequantized there; the
  // relu before the quantize to u8 with zero point 0 dropped (the sums are often negative).
  EXPECT_EQ(report.pipeline.stat("AlterInt8Layout", "dequantize_folded"), 1);
  EXPECT_EQ(report.pipeline.stat("AlterInt8Layout", "relu_before_quantize_dropped"), 1);
  EXPECT_EQ(count_kernels(report, "int8_conv2d+dequantize_linear+add+quantize_linear"), 1);
}

// The QDQ residual q(dq(a) + dq(b)) in f32, as RealizeQuantizedOps leaves it. Power-of-two
// scales: the f32 products and their sum are exact, so the compiled kernel (where LLVM may
// contract dq(a) + dq(b) into one FMA) rounds exactly like the reference; with other scales the
// float add can differ from the reference by one unit in ties, whatever the layout.
Value qdq_add(const Value& a, const Value& b, const std::string& n, double zp_a, double zp_b) {
  auto dq = [&](const Value& v, const std::string& k, double zp) {
    return make_call("dequantize_linear", {v, scalar(n + k + "_s", DType::kF32, 0.0625), scalar(n + k + "_z", DType::kU8, zp)}, {})->output();
  };
  const Value sum = make_call("add", {dq(a, "a", zp_a), dq(b, "b", zp_b)}, {})->output();
  return make_call("quantize_linear", {sum, scalar(n + "_qs", DType::kF32, 0.125), scalar(n + "_qz", DType::kU8, 120)}, {})->output();
}

// ResNet's downsampling block: q(relu(dq(main 1x1) + dq(shortcut stride-2 1x1))) (the quantize's
// zero point 3: the relu stays), both
// convolutions' only use their dequantize. Only the first in topological order (main) gets its
// dequantize folded (f32 output; the residual kernel is its epilogue), the shortcut keeps its u8
// output, read as u8 by that kernel; then a conv whose dequantize is a graph output (f32, folded:
// a zero point unlike the conv's and a ReLU6 clamp) and one whose u8 value also feeds another
// conv (two uses: not folded). Odd sizes (C = 12, 7 x 9 pixels, M = 24: ob = 8). Outputs equal the
// reference exactly (the f32 output bit for bit).
TEST(AlterInt8Layout, DequantizeOfAConvFoldsIntoItsKernel) {
  const NodePtr x = make_input("x", {DType::kU8, {1, 12, 14, 18}});
  const Value a = quantized_conv("a", x->output(), {24, 3, {2, 2}, {1, 1, 1, 1}, -128, 127, true, true, 9, 4, true});
  const Value main = quantized_conv("main", a, {24, 1, {1, 1}, {0, 0, 0, 0}, -128, 127, true, true, 4, 120, false});
  const Value shortcut = quantized_conv("sc", x->output(), {24, 1, {2, 2}, {0, 0, 0, 0}, -128, 127, true, true, 9, 130, false});
  auto dq = [](const Value& v, const std::string& n, double scale, double zp) {
    return make_call("dequantize_linear", {v, scalar(n + "_s", DType::kF32, scale), scalar(n + "_z", DType::kU8, zp)}, {})->output();
  };
  const Value sum = make_call("add", {dq(main, "dqm", 0.0625, 120), dq(shortcut, "dqs", 0.0625, 130)}, {})->output();
  const Value res = make_call("quantize_linear", {make_call("relu", {sum}, {})->output(), scalar("q_s", DType::kF32, 0.125),
                                                  scalar("q_z", DType::kU8, 3)}, {})->output();
  const Value b = quantized_conv("b", res, {16, 3, {1, 1}, {1, 1, 1, 1}, -128, 127, true, true, 0, 11, true, 1, 190});
  const Value b_f32 = dq(b, "dqb", 0.043, 25);
  const Value c = quantized_conv("c", res, {16, 1, {1, 1}, {0, 0, 0, 0}, -64, 64, true, true, 11, 3, false});
  const Value c_f32 = dq(c, "dqc", 0.021, 3);
  const Value d = quantized_conv("d", c, {16, 1, {1, 1}, {0, 0, 0, 0}, -128, 127, true, true, 3, 60, false});
  const Graph graph({x}, {res, b_f32, c_f32, d}, {"res", "b_f32", "c_f32", "d"});
  const driver::CompileReport report = expect_compiled_equals_reference(graph, {random_ints(DType::kU8, {1, 12, 14, 18}, 0, 255)});
  // main and b are folded (c's u8 value also feeds d), the shortcut is not (its add already
  // takes main's folded dequantize).
  EXPECT_EQ(report.pipeline.stat("AlterInt8Layout", "int8_conv2d"), 6);
  EXPECT_EQ(report.pipeline.stat("AlterInt8Layout", "dequantize_folded"), 2);
  // The quantize's zero point is 3: relu(x) < 0 and x < 0 quantize differently, the relu stays.
  EXPECT_EQ(report.pipeline.stat("AlterInt8Layout", "relu_before_quantize_dropped"), 0);
  EXPECT_EQ(count_kernels(report, "int8_conv2d+dequantize_linear+add+relu+quantize_linear"), 1);
  int int8_kernels = 0;
  for (const auto& k : report.kernel_calls) int8_kernels += k.fused_ops.rfind("int8_conv2d", 0) == 0;
  EXPECT_EQ(int8_kernels, 6);
}

// The identity behind "relu_before_quantize_dropped", on the reference executor: quantize_linear
// to u8 with zero point 0 (i8 with -128) of relu(x) and of x agree for every x, -0, +-inf, nan,
// tiny and huge values and ties included.
TEST(AlterInt8Layout, ReluBeforeAQuantizeToTheLowestZeroPointChangesNothing) {
  const float inf = std::numeric_limits<float>::infinity(), nan = std::numeric_limits<float>::quiet_NaN();
  const std::vector<float> xs = {-inf, -3e38f, -1e6f, -2.5f, -0.5f, -1e-30f, -0.0f, 0.0f, 1e-30f, 0.4999f,
                                 0.5f, 1.5f, 2.5f, 31.75f, 32.0f, 1e6f, 3e38f, inf, nan, -nan};
  NDArray x = NDArray::empty(DType::kF32, {static_cast<int64_t>(xs.size())});
  std::copy(xs.begin(), xs.end(), x.mutable_data<float>().begin());
  for (DType dt : {DType::kU8, DType::kI8}) {
    const double lowest = dt == DType::kU8 ? 0 : -128;
    const NodePtr in = make_input("x", {DType::kF32, {static_cast<int64_t>(xs.size())}});
    auto q = [&](const Value& v, const std::string& n) {
      return make_call("quantize_linear", {v, scalar(n + "_s", DType::kF32, 0.125), scalar(n + "_z", dt, lowest)}, {})->output();
    };
    const Graph graph({in}, {q(make_call("relu", {in->output()}, {})->output(), "a"), q(in->output(), "b")}, {"with", "without"});
    const std::vector<NDArray> out = ref::run_graph(graph, {x});
    EXPECT_TRUE(out[0].bitwise_equal(out[1])) << ir::dtype_name(dt);
  }
}

// MobileNetV2's inverted residual: 1x1 expand + ReLU6 -> 3x3 depthwise + ReLU6 -> 1x1 project,
// + the QDQ residual add; then a stride-2 depthwise with asymmetric pads, a 5x5 depthwise on a
// block of 8 channels (C = 24), and a depthwise whose input is a graph input (plain NCHW: moved
// to NCHW16c). Every depthwise becomes int8_depthwise_conv2d, the chain stays blocked, and the
// output equals the reference on the unrewritten graph exactly.
TEST(AlterInt8Layout, DepthwiseInvertedResidualRunsTheInt8KernelsAndEqualsTheReference) {
  const NodePtr x = make_input("x", {DType::kU8, {1, 16, 13, 11}});
  const NodePtr x2 = make_input("x2", {DType::kU8, {1, 32, 6, 6}});
  const Value stem = quantized_conv("stem", x->output(), {16, 3, {1, 1}, {1, 1, 1, 1}, -128, 127, true, true, 110, 5, true});
  const Value ex = quantized_conv("ex", stem, {96, 1, {1, 1}, {0, 0, 0, 0}, -128, 127, true, true, 5, 0, true, 1, 200});
  const Value dw = quantized_conv("dw", ex, {96, 3, {1, 1}, {1, 1, 1, 1}, -128, 127, true, true, 0, 0, true, 96, 180});
  const Value pr = quantized_conv("pr", dw, {16, 1, {1, 1}, {0, 0, 0, 0}, -90, 100, true, true, 0, 128, false});
  const Value res = qdq_add(pr, stem, "res", 128, 5);
  const Value ex2 = quantized_conv("ex2", res, {24, 1, {1, 1}, {0, 0, 0, 0}, -64, 64, false, true, 120, 3, true});
  const Value dw2 = quantized_conv("dw2", ex2, {24, 5, {2, 2}, {2, 1, 1, 2}, -128, 127, true, false, 3, 9, true, 24});
  const Value dw3 = quantized_conv("dw3", dw2, {24, 3, {2, 1}, {0, 1, 1, 0}, -128, 127, false, true, 9, 77, false, 24});
  const Value dw4 = quantized_conv("dw4", x2->output(), {32, 3, {1, 1}, {1, 1, 1, 1}, -128, 127, true, true, 60, 100, false, 32});
  const Graph graph({x, x2}, {dw3, dw4}, {"y", "y2"});

  const driver::CompileReport report = expect_compiled_equals_reference(
      graph, {random_ints(DType::kU8, {1, 16, 13, 11}, 0, 255), random_ints(DType::kU8, {1, 32, 6, 6}, 0, 255)});
  EXPECT_EQ(report.pipeline.stat("AlterInt8Layout", "int8_depthwise_conv2d"), 4);
  EXPECT_EQ(report.pipeline.stat("AlterInt8Layout", "int8_conv2d"), 4);
  EXPECT_EQ(report.pipeline.stat("AlterInt8Layout", "transforms_skipped"), 6);
  EXPECT_EQ(count_kernels(report, "int8_depthwise_conv2d"), 4);
  int transforms = 0;
  for (const auto& k : report.kernel_calls) {
    EXPECT_EQ(k.fused_ops.find("qnn_conv2d"), std::string::npos) << k.symbol << ": " << k.fused_ops;
    transforms += k.fused_ops.find("layout_transform") != std::string::npos;
  }
  EXPECT_EQ(transforms, 3);  // x2 to NCHW16c, the two outputs back to NCHW
}

// Grouped convolutions with 1 < groups < C (and channel multipliers) keep the generic integer
// kernel; the graph still compiles and equals the reference.
TEST(AlterInt8Layout, GroupedConvKeepsTheGenericKernelAndEqualsTheReference) {
  const NodePtr x = make_input("x", {DType::kU8, {1, 16, 7, 9}});
  const Value g = quantized_conv("g", x->output(), {32, 3, {1, 1}, {1, 1, 1, 1}, -128, 127, true, true, 30, 40, false, 4});
  const Value mult = quantized_conv("mult", g, {64, 3, {2, 2}, {1, 1, 1, 1}, -128, 127, true, true, 40, 50, false, 32});
  const Graph graph({x}, {mult}, {"y"});
  const driver::CompileReport report = expect_compiled_equals_reference(graph, {random_ints(DType::kU8, {1, 16, 7, 9}, 0, 255)});
  EXPECT_EQ(report.pipeline.stat("AlterInt8Layout", "int8_depthwise_conv2d"), 0);
  EXPECT_EQ(report.pipeline.stat("AlterInt8Layout", "int8_conv2d"), 0);
}

// Integer Winograd F(2x2, 3x3) (ConvertInt8ConvToWinograd): 3x3 stride-1 convs on blocked u8
// inputs, big enough for the rule: full-range weights with per-channel scales, bias and ReLU on
// an odd 19x21 output (a partial last tile row and column) with pads 1; narrow weights, pads 0
// and 48 outputs (ob 16); a third whose dequantize is folded into it, with the QDQ residual add
// of the second as its epilogue. Every result equals the reference executor on
// the unrewritten graph exactly; with the pass disabled the same graph runs the direct kernels.
TEST(ConvertInt8ConvToWinograd, ThreeByThreeConvsRunWinogradAndEqualTheReferenceExactly) {
  const NodePtr x = make_input("x", {DType::kU8, {1, 16, 19, 21}});
  const Value a = quantized_conv("a", x->output(), {32, 1, {1, 1}, {0, 0, 0, 0}, -128, 127, true, true, 30, 6, true});
  const Value b = quantized_conv("b", a, {32, 3, {1, 1}, {1, 1, 1, 1}, -128, 127, true, true, 6, 20, true});
  const Value c = quantized_conv("c", b, {48, 3, {1, 1}, {0, 0, 0, 0}, -64, 64, false, false, 20, 128, false});
  const Value d = quantized_conv("d", c, {48, 3, {1, 1}, {1, 1, 1, 1}, -128, 127, true, true, 128, 100, false});
  const Value res = qdq_add(d, c, "res", 100, 128);
  const Graph graph({x}, {res, b}, {"res", "b"});
  const std::vector<NDArray> inputs = {random_ints(DType::kU8, {1, 16, 19, 21}, 0, 255)};
  const driver::CompileReport report = expect_compiled_equals_reference(graph, inputs);
  EXPECT_EQ(report.pipeline.stat("ConvertInt8ConvToWinograd", "candidates"), 3);
  EXPECT_EQ(report.pipeline.stat("ConvertInt8ConvToWinograd", "convs_converted"), 3);
  EXPECT_EQ(report.pipeline.stat("AlterInt8Layout", "dequantize_folded"), 1);
  int winograd = 0;
  for (const auto& k : report.kernel_calls) winograd += k.fused_ops.rfind("int8_conv2d_winograd", 0) == 0;
  EXPECT_EQ(winograd, 3);
  EXPECT_EQ(count_kernels(report, "int8_conv2d_winograd+dequantize_linear+add+quantize_linear"), 1);

  // The same graph without the pass: the direct int8 kernels.
  const std::filesystem::path so = std::filesystem::temp_directory_path() / ("kiln-int8-wino-" + std::to_string(getpid()) + ".so");
  driver::CompileOptions off;
  off.disabled_passes = {"ConvertInt8ConvToWinograd"};
  const driver::CompileReport direct = driver::compile_graph(graph, so.string(), off);
  const std::vector<NDArray> got = testing::run_compiled(so.string(), inputs);
  std::filesystem::remove(so);
  for (const auto& k : direct.kernel_calls) EXPECT_EQ(k.fused_ops.find("winograd"), std::string::npos) << k.fused_ops;
  const std::vector<NDArray> want = ref::run_graph(graph, inputs);
  for (size_t o = 0; o < got.size(); ++o) EXPECT_TRUE(got[o].bitwise_equal(want[o])) << "output " << o;
}

}  // namespace
}  // namespace kiln::pass
