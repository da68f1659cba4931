// Built-in example models (include/kiln/driver/compile.h: example_model): small graphs built with
// the graph IR's factories, so `kiln compile --example NAME` needs no ONNX file and no Python.
// Weights are a fixed deterministic pattern (not trained): the examples exercise the pipeline and
// measure latency, their outputs mean nothing.
#include <cmath>

#include "kiln/driver/compile.h"
#include "kiln/support/error.h"

namespace kiln::driver {
namespace {

using ir::Attrs;
using ir::DType;
using ir::Value;

ir::NDArray pattern(const ir::Shape& shape, int seed, double scale) {
  ir::NDArray a = ir::NDArray::empty(DType::kF32, shape);
  for (int64_t i = 0; i < a.numel(); ++i) {
    a.set_from_double(i, scale * std::sin(0.37 * static_cast<double>(i) + 1.3 * seed));
  }
  return a;
}

// conv3x3 (pad 1) + bias + batch norm + relu.
Value conv_bn_relu(const Value& x, int64_t out_c, int64_t stride, int& seed) {
  const int64_t in_c = x.type().shape[1];
  const std::string p = "conv" + std::to_string(seed);
  const double scale = 1.0 / std::sqrt(static_cast<double>(in_c * 9));
  Value w = ir::make_constant(p + ".weight", pattern({out_c, in_c, 3, 3}, seed++, scale))->output();
  Value b = ir::make_constant(p + ".bias", pattern({out_c}, seed++, 0.1))->output();
  Value c = ir::make_call("conv2d", {x, w, b},
                          Attrs()
                              .set("pads", std::vector<int64_t>{1, 1, 1, 1})
                              .set("strides", std::vector<int64_t>{stride, stride}))
                ->output();
  ir::NDArray var = pattern({out_c}, seed++, 0.2);
  for (int64_t i = 0; i < var.numel(); ++i) var.set_from_double(i, 1.0 + std::abs(var.get_as_double(i)));
  std::vector<Value> bn{c, ir::make_constant(p + ".gamma", pattern({out_c}, seed++, 0.5))->output(),
                        ir::make_constant(p + ".beta", pattern({out_c}, seed++, 0.1))->output(),
                        ir::make_constant(p + ".mean", pattern({out_c}, seed++, 0.1))->output(),
                        ir::make_constant(p + ".var", var)->output()};
  return ir::make_call("relu", {ir::make_call("batch_norm", bn, {})->output()}, {})->output();
}

// x [1, 3, 32, 32] -> conv16 -> conv16 (+residual) -> maxpool -> conv32/2 -> global avg pool ->
// flatten -> matmul 32x10 + bias -> softmax: y [1, 10].
ir::Graph tiny_cnn() {
  int seed = 1;
  ir::NodePtr x = ir::make_input("x", {DType::kF32, {1, 3, 32, 32}});
  Value a = conv_bn_relu(x->output(), 16, 1, seed);
  Value b = conv_bn_relu(a, 16, 1, seed);
  Value r = ir::make_call("add", {a, b}, {})->output();
  Value p = ir::make_call("max_pool2d", {r},
                          Attrs().set("kernel", std::vector<int64_t>{2, 2}).set("strides", std::vector<int64_t>{2, 2}))
                ->output();
  Value c = conv_bn_relu(p, 32, 2, seed);
  Value g = ir::make_call("global_avg_pool", {c}, {})->output();
  Value f = ir::make_call("reshape", {g}, Attrs().set("shape", std::vector<int64_t>{1, 32}))->output();
  Value w = ir::make_constant("fc.weight", pattern({32, 10}, seed++, 0.3))->output();
  Value bias = ir::make_constant("fc.bias", pattern({10}, seed++, 0.1))->output();
  Value m = ir::make_call("matmul", {f, w}, {})->output();
  Value logits = ir::make_call("add", {m, bias}, {})->output();
  Value y = ir::make_call("softmax", {logits}, Attrs().set("axis", int64_t{1}))->output();
  return ir::Graph({x}, {y}, {"y"});
}

}  // namespace

std::vector<std::string> example_model_names() { return {"tiny-cnn"}; }

ir::Graph example_model(const std::string& name) {
  if (name == "tiny-cnn") return tiny_cnn();
  std::string names;
  for (const auto& n : example_model_names()) names += (names.empty() ? "" : ", ") + n;
  throw UserError(UserErrorKind::kNotFound, "example model '" + name + "'", "there is no built-in example of that name",
                  "available: " + names);
}

}  // namespace kiln::driver
