// ONNX -> graph IR converters for neural-network operators: BatchNormalization, global pooling,
// Softmax/LogSoftmax, MatMul, Gemm, LayerNormalization, Resize. Also the converter table.
#include <cmath>

#include "import_limits.h"
#include "kiln/support/error.h"
#include "onnx_node.h"

namespace kiln::frontend::onnx_import {
namespace {

using ir::Attrs;
using ir::Shape;
using ir::Value;

std::vector<Value> convert_batch_norm(ImportContext& ctx) {
  if (ctx.attr_int("training_mode", 0) != 0) ctx.fail_attr("training_mode", "= 1 is not supported (inference only)");
  for (size_t k = 1; k < ctx.node().outputs.size(); ++k) {
    if (!ctx.node().outputs[k].empty()) ctx.fail_unsupported("training outputs (running mean/var) are not supported");
  }
  std::vector<Value> args;
  for (size_t i = 0; i < 5; ++i) args.push_back(ctx.input(i));
  return {ctx.call1("batch_norm", args, Attrs().set("epsilon", ctx.attr_float("epsilon", 1e-5)))};
}

Converter global_pool(const std::string& op) {
  return [op](ImportContext& ctx) {
    Value x = ctx.input(0);
    if (x.type().rank() < 3) ctx.fail_invalid("input must be [N, C, spatial...], got " + x.type().to_string());
    return std::vector<Value>{ctx.call1(op, {x})};
  };
}

// Softmax/LogSoftmax. Before opset 13 the input is coerced to 2-D [prod(:axis), prod(axis:)]
// (default axis 1) and normalized over the second dimension.
Converter softmax(const std::string& op) {
  return [op](ImportContext& ctx) {
    Value x = ctx.input(0);
    const Shape in = x.type().shape;
    const int64_t rank = static_cast<int64_t>(in.size());
    if (ctx.opset() >= 13) {
      const int64_t axis = ctx.normalize_axis(ctx.attr_int("axis", -1), rank, "axis");
      return std::vector<Value>{ctx.call1(op, {x}, Attrs().set("axis", axis))};
    }
    int64_t axis = ctx.attr_int("axis", 1);
    if (axis < -rank || axis > rank) ctx.fail_invalid("axis " + std::to_string(axis) + " is out of range");
    if (axis < 0) axis += rank;
    if (axis == rank - 1) return std::vector<Value>{ctx.call1(op, {x}, Attrs().set("axis", axis))};
    int64_t outer = 1, inner = 1;
    for (int64_t i = 0; i < rank; ++i) (i < axis ? outer : inner) *= in[i];
    Value flat = ctx.call1("reshape", {x}, Attrs().set("shape", std::vector<int64_t>{outer, inner}));
    Value y = ctx.call1(op, {flat}, Attrs().set("axis", int64_t{1}));
    return std::vector<Value>{ctx.call1("reshape", {y}, Attrs().set("shape", in))};
  };
}

std::vector<Value> convert_gemm(ImportContext& ctx) {
  std::vector<Value> args{ctx.input(0), ctx.input(1)};
  if (ctx.has_input(2)) args.push_back(ctx.input(2));
  Attrs attrs;
  attrs.set("alpha", ctx.attr_float("alpha", 1.0)).set("beta", ctx.attr_float("beta", 1.0))
      .set("trans_a", ctx.attr_int("transA", 0)).set("trans_b", ctx.attr_int("transB", 0));
  return {ctx.call1("gemm", args, attrs)};
}

// LayerNormalization. Output 0 is `layer_norm`; the optional Mean and InvStdDev outputs (shape
// [d0, ..., d(axis-1), 1, ..., 1], computed in float32 per stash_type) are built from
// reduce_mean / sub / mul / add / sqrt / reciprocal.
std::vector<Value> convert_layer_norm(ImportContext& ctx) {
  Value x = ctx.input(0);
  const int64_t rank = x.type().rank();
  const int64_t axis = ctx.normalize_axis(ctx.attr_int("axis", -1), rank, "axis");
  const double epsilon = ctx.attr_float("epsilon", 1e-5);
  std::vector<Value> args{x, ctx.input(1)};
  if (ctx.has_input(2)) args.push_back(ctx.input(2));
  std::vector<Value> outs{ctx.call1("layer_norm", args, Attrs().set("axis", axis).set("epsilon", epsilon))};
  const auto& names = ctx.node().outputs;
  const bool want_stats = (names.size() > 1 && !names[1].empty()) || (names.size() > 2 && !names[2].empty());
  if (!want_stats) return outs;
  if (ctx.attr_int("stash_type", 1) != 1) ctx.fail_attr("stash_type", "other than 1 (float32) is not supported");
  Value xf = x.type().dtype == ir::DType::kF32 ? x : ctx.call1("cast", {x}, Attrs().set("dtype", ir::DType::kF32));
  std::vector<int64_t> axes;
  for (int64_t i = axis; i < rank; ++i) axes.push_back(i);
  Attrs reduce = Attrs().set("axes", axes).set("keepdims", int64_t{1});
  Value mean = ctx.call1("reduce_mean", {xf}, reduce);
  Value centered = ctx.call1("sub", {xf, mean});
  Value var = ctx.call1("reduce_mean", {ctx.call1("mul", {centered, centered})}, reduce);
  Value eps = ctx.constant(ir::NDArray::scalar(ir::DType::kF32, epsilon), "layer_norm_epsilon");
  Value inv_std = ctx.call1("reciprocal", {ctx.call1("sqrt", {ctx.call1("add", {var, eps})})});
  outs.push_back(mean);
  outs.push_back(inv_std);
  return outs;
}

std::vector<Value> convert_resize(ImportContext& ctx) {
  Value x = ctx.input(0);
  const Shape in = x.type().shape;
  const int64_t rank = static_cast<int64_t>(in.size());
  const std::string mode = ctx.attr_string("mode", "nearest");
  if (mode != "nearest" && mode != "linear" && mode != "cubic") ctx.fail_attr("mode", "is '" + mode + "'; expected nearest, linear or cubic");
  const std::string ctm = ctx.attr_string("coordinate_transformation_mode", "half_pixel");
  const std::string policy = ctx.attr_string("keep_aspect_ratio_policy", "stretch");
  std::vector<int64_t> axes = ctx.attr_ints("axes", {});
  for (auto& a : axes) a = ctx.normalize_axis(a, rank, "axis");
  if (axes.empty()) {
    for (int64_t i = 0; i < rank; ++i) axes.push_back(i);
  }
  Shape out = in;
  std::vector<double> scales;  // full rank; empty when sizes were given with the stretch policy
  if (ctx.has_input(3)) {
    std::vector<int64_t> sizes = ctx.constant_ints(3, "sizes");
    if (sizes.size() != axes.size()) ctx.fail_invalid("sizes has " + std::to_string(sizes.size()) + " entries for " + std::to_string(axes.size()) + " axes");
    if (policy == "stretch") {
      for (size_t i = 0; i < axes.size(); ++i) out[axes[i]] = sizes[i];
    } else if (policy == "not_larger" || policy == "not_smaller") {
      double scale = policy == "not_larger" ? INFINITY : 0.0;
      for (size_t i = 0; i < axes.size(); ++i) {
        double s = static_cast<double>(sizes[i]) / static_cast<double>(in[axes[i]]);
        scale = policy == "not_larger" ? std::min(scale, s) : std::max(scale, s);
      }
      scales.assign(rank, 1.0);
      for (size_t i = 0; i < axes.size(); ++i) {
        out[axes[i]] = checked_dimension(std::round(scale * static_cast<double>(in[axes[i]])), ctx.node_subject() + ": sizes");
        scales[axes[i]] = scale;
      }
    } else {
      ctx.fail_attr("keep_aspect_ratio_policy", "is '" + policy + "'; expected stretch, not_larger or not_smaller");
    }
  } else if (ctx.has_input(2)) {
    std::vector<double> given = ctx.constant_floats(2, "scales");
    if (given.size() != axes.size()) ctx.fail_invalid("scales has " + std::to_string(given.size()) + " entries for " + std::to_string(axes.size()) + " axes");
    scales.assign(rank, 1.0);
    for (size_t i = 0; i < axes.size(); ++i) {
      if (!(given[i] > 0)) ctx.fail_invalid("scales must be positive");
      scales[axes[i]] = given[i];
      out[axes[i]] = checked_dimension(std::floor(static_cast<double>(in[axes[i]]) * given[i]), ctx.node_subject() + ": scales");
    }
  } else {
    ctx.fail_invalid("needs scales or sizes");
  }
  std::vector<double> roi;
  if (ctm == "tf_crop_and_resize") {
    if (!ctx.has_input(1)) ctx.fail_invalid("tf_crop_and_resize needs the roi input");
    std::vector<double> given = ctx.constant_floats(1, "roi");
    if (given.size() != 2 * axes.size()) ctx.fail_invalid("roi has " + std::to_string(given.size()) + " entries for " + std::to_string(axes.size()) + " axes");
    roi.assign(2 * rank, 0.0);
    for (int64_t d = 0; d < rank; ++d) roi[rank + d] = 1.0;
    for (size_t i = 0; i < axes.size(); ++i) {
      roi[axes[i]] = given[i];
      roi[rank + axes[i]] = given[i + axes.size()];
    }
  }
  Attrs attrs;
  attrs.set("sizes", out).set("mode", mode).set("coordinate_transformation_mode", ctm)
      .set("nearest_mode", ctx.attr_string("nearest_mode", "round_prefer_floor"))
      .set("cubic_coeff_a", ctx.attr_float("cubic_coeff_a", -0.75))
      .set("exclude_outside", ctx.attr_int("exclude_outside", 0))
      .set("extrapolation_value", ctx.attr_float("extrapolation_value", 0.0))
      .set("scales", scales)
      .set("roi", roi);
  if (ctx.attr_int("antialias", 0) != 0) attrs.set("antialias", int64_t{1});
  return {ctx.call1("resize", {x}, attrs)};
}

}  // namespace

void add_nn_converters(std::map<std::string, Converter>& table) {
  table["BatchNormalization"] = convert_batch_norm;
  table["GlobalAveragePool"] = global_pool("global_avg_pool");
  table["GlobalMaxPool"] = global_pool("global_max_pool");
  table["Softmax"] = softmax("softmax");
  table["LogSoftmax"] = softmax("log_softmax");
  table["MatMul"] = [](ImportContext& ctx) { return std::vector<Value>{ctx.call1("matmul", {ctx.input(0), ctx.input(1)})}; };
  table["Gemm"] = convert_gemm;
  table["LayerNormalization"] = convert_layer_norm;
  table["Resize"] = convert_resize;
}

const std::map<std::string, Converter>& converters() {
  static const std::map<std::string, Converter> table = [] {
    std::map<std::string, Converter> t;
    add_nn_converters(t);
    add_tensor_converters(t);
    add_math_converters(t);
    add_conv_converters(t);
    add_recurrent_converters(t);
    add_tensorops_converters(t);
    add_einsum_converters(t);
    add_attention_converters(t);
    add_transformer_converters(t);
    add_loss_converters(t);
    add_elementwise_ext_converters(t);
    add_reduce_norm_converters(t);
    add_control_flow_converters(t);
    add_quant_converters(t);
    add_legacy_converters(t);  // last: wraps the converters above
    return t;
  }();
  return table;
}

}  // namespace kiln::frontend::onnx_import
