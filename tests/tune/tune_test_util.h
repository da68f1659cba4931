// Small graphs for the auto-tuner's tests (tests/tune/): an MLP and a CNN with every f32
// schedule template (direct NCHWc convolution, Winograd, depthwise, matmul, reductions,
// elementwise). Weights are a fixed sine pattern.
#ifndef KILN_TESTS_TUNE_TUNE_TEST_UTIL_H_
#define KILN_TESTS_TUNE_TUNE_TEST_UTIL_H_

#include <cmath>
#include <string>
#include <vector>

#include "kiln/ir/graph.h"
#include "kiln/ir/ndarray.h"

namespace kiln::testing {

inline ir::NDArray tune_pattern(const ir::Shape& shape, int seed, double scale = 0.3) {
  ir::NDArray a = ir::NDArray::empty(ir::DType::kF32, shape);
  for (int64_t i = 0; i < a.numel(); ++i) a.set_from_double(i, scale * std::sin(0.71 * i + 1.7 * seed));
  return a;
}

inline ir::Value tune_const(const std::string& name, const ir::Shape& shape, int seed, double scale = 0.3) {
  return ir::make_constant(name, tune_pattern(shape, seed, scale))->output();
}

inline ir::Value tune_call(const char* op, std::vector<ir::Value> args, const ir::Attrs& attrs = {}) {
  return ir::make_call(op, std::move(args), attrs)->output();
}

// x [4, 64] -> matmul 64x96 + bias -> relu -> matmul 96x32 + bias -> relu -> matmul 32x10 -> softmax.
inline ir::Graph tune_mlp() {
  ir::NodePtr x = ir::make_input("x", {ir::DType::kF32, {4, 64}});
  ir::Value h = x->output();
  int seed = 1;
  const std::vector<int64_t> widths = {64, 96, 32};
  for (size_t i = 0; i + 1 < widths.size(); ++i) {
    const std::string p = "fc" + std::to_string(i);
    h = tune_call("matmul", {h, tune_const(p + ".w", {widths[i], widths[i + 1]}, seed++, 0.15)});
    h = tune_call("relu", {tune_call("add", {h, tune_const(p + ".b", {widths[i + 1]}, seed++, 0.1)})});
  }
  h = tune_call("matmul", {h, tune_const("out.w", {32, 10}, seed++, 0.2)});
  h = tune_call("softmax", {h}, ir::Attrs().set("axis", int64_t{1}));
  return ir::Graph({x}, {h}, {"y"});
}

inline ir::Value tune_conv(const ir::Value& x, int64_t out_c, int64_t k, int64_t stride, int64_t groups, int& seed) {
  const int64_t in_c = x.type().shape[1];
  const std::string p = "conv" + std::to_string(seed);
  const double scale = 1.0 / std::sqrt(static_cast<double>(in_c / groups * k * k));
  ir::Value w = tune_const(p + ".w", {out_c, in_c / groups, k, k}, seed++, scale);
  ir::Value b = tune_const(p + ".b", {out_c}, seed++, 0.1);
  const int64_t pad = k / 2;
  return tune_call("relu", {tune_call("conv2d", {x, w, b},
                                      ir::Attrs()
                                          .set("pads", std::vector<int64_t>{pad, pad, pad, pad})
                                          .set("strides", std::vector<int64_t>{stride, stride})
                                          .set("groups", groups))});
}

// x [1, 8, 28, 28] -> conv3x3 32 -> conv3x3 32 (+ residual) -> depthwise 3x3 -> conv1x1 64 /2 ->
// global average pool -> matmul 64x10 -> softmax.
inline ir::Graph tune_cnn() {
  int seed = 1;
  ir::NodePtr x = ir::make_input("x", {ir::DType::kF32, {1, 8, 28, 28}});
  ir::Value a = tune_conv(x->output(), 32, 3, 1, 1, seed);
  ir::Value b = tune_conv(a, 32, 3, 1, 1, seed);
  ir::Value r = tune_call("add", {a, b});
  ir::Value d = tune_conv(r, 32, 3, 1, 32, seed);
  ir::Value c = tune_conv(d, 64, 1, 2, 1, seed);
  ir::Value g = tune_call("global_avg_pool", {c});
  ir::Value f = tune_call("reshape", {g}, ir::Attrs().set("shape", std::vector<int64_t>{1, 64}));
  ir::Value m = tune_call("matmul", {f, tune_const("fc.w", {64, 10}, seed++, 0.2)});
  ir::Value y = tune_call("softmax", {m}, ir::Attrs().set("axis", int64_t{1}));
  return ir::Graph({x}, {y}, {"y"});
}

}  // namespace kiln::testing

#endif  // KILN_TESTS_TUNE_TUNE_TEST_UTIL_H_
