// AlterInt8Layout (src/pass/alter_int8_layout.cc): a chain of quantized convolutions
// (qnn_conv2d + requantize, as RealizeQuantizedOps makes them from QDQ models) compiled at -O3
// runs on the fast int8 kernels (int8_conv2d, u8 NCHW[ob]c between consecutive convs, no
// qnn_conv2d kernel left) and its output equals the reference executor on the unrewritten graph
// EXACTLY (tolerance 0: the rounding rule of docs/int8.md), for full-range (exact dot-product
// form) and [-64, 64] (narrow form) weights, per-channel and per-tensor scales, bias, ReLU clamp,
// strides, asymmetric pads, ob = 16 and ob = 8 outputs, a convolution output that is also a
// graph output (its NCHW transform stays for that use), a u8 max pool and a QDQ residual chain
// (dequantize, add, relu, quantize) between int8 convolutions, which run on the blocked layout.
#include <gtest/gtest.h>
#include <unistd.h>

#include <filesystem>
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
};

Value quantized_conv(const std::string& name, const Value& x, const ConvSpec& s) {
  const int64_t c = x.type().shape[1];
  const Value w = constant(name + "_w", random_ints(DType::kI8, {s.m, c, s.k, s.k}, s.wlo, s.whi));
  const Value wzp = s.per_channel ? constant(name + "_wzp", random_ints(DType::kI8, {s.m}, 0, 0)) : scalar(name + "_wzp", DType::kI8, 0);
  Attrs ca;
  ca.set("strides", s.strides).set("pads", s.pads);
  const Value acc = make_call("qnn_conv2d", {x, w, scalar(name + "_xzp", DType::kU8, double(s.x_zp)), wzp}, ca, name)->output();
  const Value xs = s.per_channel ? constant(name + "_xs", random_floats({s.m}, 1e-4f, 4e-4f)) : scalar(name + "_xs", DType::kF32, 2.5e-4);
  std::vector<Value> args = {acc, xs, scalar(name + "_ys", DType::kF32, 0.07), scalar(name + "_yzp", DType::kU8, double(s.y_zp))};
  if (s.bias) args.push_back(constant(name + "_b", random_ints(DType::kI32, {s.m}, -3000, 3000)));
  Attrs ra;
  if (s.relu) ra.set("clamp_min", s.y_zp);
  return make_call("requantize", args, ra)->output();
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

  const std::filesystem::path so =
      std::filesystem::temp_directory_path() / ("kiln-int8-layout-" + std::to_string(getpid()) + ".so");
  const driver::CompileReport report = driver::compile_graph(graph, so.string(), driver::CompileOptions{});
  EXPECT_EQ(report.pipeline.stat("AlterInt8Layout", "int8_conv2d"), 4);
  EXPECT_EQ(report.pipeline.stat("AlterInt8Layout", "narrow"), 1);
  EXPECT_EQ(report.pipeline.stat("AlterInt8Layout", "transforms_skipped"), 3);
  EXPECT_EQ(report.pipeline.stat("AlterInt8Layout", "pools_blocked"), 1);
  EXPECT_EQ(report.pipeline.stat("AlterInt8Layout", "blocked_elementwise"), 5);
  int transforms = 0;
  for (const auto& k : report.kernel_calls) transforms += k.fused_ops.find("layout_transform") != std::string::npos;
  EXPECT_EQ(transforms, 2);  // only the NCHW views of the two graph outputs
  int int8_kernels = 0;
  for (const auto& k : report.kernel_calls) {
    EXPECT_EQ(k.fused_ops.find("qnn_conv2d"), std::string::npos) << k.symbol << ": " << k.fused_ops;
    int8_kernels += k.fused_ops == "int8_conv2d";
  }
  EXPECT_EQ(int8_kernels, 4);

  const std::vector<NDArray> inputs = {random_ints(DType::kU8, {2, 12, 9, 11}, 0, 255)};
  const std::vector<NDArray> want = ref::run_graph(graph, inputs);
  const std::vector<NDArray> got = testing::run_compiled(so.string(), inputs);
  std::filesystem::remove(so);
  ASSERT_EQ(got.size(), want.size());
  for (size_t o = 0; o < got.size(); ++o) {
    ASSERT_EQ(got[o].type(), want[o].type()) << "output " << o;
    int64_t differ = 0, distinct = 0;
    for (int64_t i = 0; i < got[o].numel(); ++i) {
      differ += got[o].data<uint8_t>()[i] != want[o].data<uint8_t>()[i];
      distinct += want[o].data<uint8_t>()[i] != want[o].data<uint8_t>()[0];
    }
    EXPECT_EQ(differ, 0) << "output " << o << ": " << differ << " of " << got[o].numel() << " bytes differ";
    EXPECT_GT(distinct, got[o].numel() / 4) << "output " << o << " is nearly constant: the test would prove little";
  }
}

}  // namespace
}  // namespace kiln::pass
