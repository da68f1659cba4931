// ONNX -> graph IR converters for the elementwise operators beyond wave 1: trigonometric and
// hyperbolic functions, rounding, Sign, the activations (Elu, Selu, Celu, Softplus, Softsign,
// Mish, ThresholdedRelu, Shrink, Swish, PRelu), IsNaN/IsInf, comparisons (Less, Greater,
// LessOrEqual, GreaterOrEqual), logical (And, Or, Xor) and bitwise operators (BitwiseAnd/Or/Xor/
// Not, BitShift), the variadic Sum and Mean, CastLike and Size. One graph op each, except Sum and
// Mean (chained add, then a division by the count) and Size (a constant: shapes are static).
#include <string>

#include "kiln/support/error.h"
#include "onnx_node.h"

namespace kiln::frontend::onnx_import {
namespace {

using ir::Attrs;
using ir::Value;

Converter unary(const std::string& op) {
  return [op](ImportContext& ctx) { return std::vector<Value>{ctx.call1(op, {ctx.input(0)})}; };
}

Converter binary(const std::string& op) {
  return [op](ImportContext& ctx) { return std::vector<Value>{ctx.call1(op, {ctx.input(0), ctx.input(1)})}; };
}

// A unary op whose float attributes are read from the ONNX node with their ONNX defaults.
Converter unary_with_floats(const std::string& op, std::vector<std::pair<std::string, double>> attrs) {
  return [op, attrs](ImportContext& ctx) {
    Attrs a;
    for (const auto& [name, fallback] : attrs) a.set(name, ctx.attr_float(name, fallback));
    return std::vector<Value>{ctx.call1(op, {ctx.input(0)}, a)};
  };
}

std::vector<Value> convert_celu(ImportContext& ctx) {
  const double alpha = ctx.attr_float("alpha", 1.0);
  if (alpha == 0) ctx.fail_attr("alpha", "is 0", "Celu divides by alpha; use a non-zero alpha");
  return {ctx.call1("celu", {ctx.input(0)}, Attrs().set("alpha", alpha))};
}

std::vector<Value> convert_is_inf(ImportContext& ctx) {
  return {ctx.call1("is_inf", {ctx.input(0)},
                    Attrs()
                        .set("detect_positive", ctx.attr_int("detect_positive", 1) ? int64_t{1} : int64_t{0})
                        .set("detect_negative", ctx.attr_int("detect_negative", 1) ? int64_t{1} : int64_t{0}))};
}

std::vector<Value> convert_bit_shift(ImportContext& ctx) {
  const std::string dir = ctx.attr_string("direction", "");
  if (dir != "LEFT" && dir != "RIGHT") ctx.fail_attr("direction", "is '" + dir + "'", "expected 'LEFT' or 'RIGHT'");
  return {ctx.call1("bit_shift", {ctx.input(0), ctx.input(1)}, Attrs().set("direction", std::string(dir == "LEFT" ? "left" : "right")))};
}

Value variadic_sum(ImportContext& ctx) {
  Value acc = ctx.input(0);
  for (size_t i = 1; i < ctx.node().inputs.size(); ++i) acc = ctx.call1("add", {acc, ctx.input(i)});
  return acc;
}

std::vector<Value> convert_mean(ImportContext& ctx) {
  Value sum = variadic_sum(ctx);
  const size_t n = ctx.node().inputs.size();
  if (n == 1) return {sum};
  const ir::DType dt = sum.type().dtype;
  if (!ir::is_float(dt)) ctx.fail_unsupported(std::string("Mean of ") + ir::dtype_name(dt) + " inputs", "Mean takes float tensors");
  return {ctx.call1("div", {sum, ctx.constant(ir::NDArray::scalar(dt, static_cast<double>(n)), "count")})};
}

std::vector<Value> convert_cast_like(ImportContext& ctx) {
  const ir::DType to = ctx.input(1).type().dtype;
  if (ctx.input(0).type().dtype == to) return {ctx.input(0)};
  return {ctx.call1("cast", {ctx.input(0)}, Attrs().set("dtype", to))};
}

std::vector<Value> convert_size(ImportContext& ctx) {
  const int64_t n = ir::shape_numel(ctx.input(0).type().shape);
  return {ctx.constant(ir::NDArray::scalar(ir::DType::kI64, static_cast<double>(n)), "size")};
}

}  // namespace

void add_elementwise_ext_converters(std::map<std::string, Converter>& table) {
  const std::pair<const char*, const char*> unaries[] = {
      {"Sin", "sin"},     {"Cos", "cos"},           {"Tan", "tan"},         {"Asin", "asin"},
      {"Acos", "acos"},   {"Atan", "atan"},         {"Sinh", "sinh"},       {"Cosh", "cosh"},
      {"Asinh", "asinh"}, {"Acosh", "acosh"},       {"Atanh", "atanh"},     {"Floor", "floor"},
      {"Ceil", "ceil"},   {"Round", "round"},       {"Sign", "sign"},       {"Softplus", "softplus"},
      {"Softsign", "softsign"}, {"Mish", "mish"},   {"IsNaN", "is_nan"},    {"BitwiseNot", "bitwise_not"},
  };
  for (const auto& [onnx, op] : unaries) table[onnx] = unary(op);
  table["Elu"] = unary_with_floats("elu", {{"alpha", 1.0}});
  table["Selu"] = unary_with_floats("selu", {{"alpha", 1.67326319217681884765625}, {"gamma", 1.05070102214813232421875}});
  table["Celu"] = convert_celu;
  table["ThresholdedRelu"] = unary_with_floats("thresholded_relu", {{"alpha", 1.0}});
  table["Shrink"] = unary_with_floats("shrink", {{"lambd", 0.5}, {"bias", 0.0}});
  table["Swish"] = unary_with_floats("swish", {{"alpha", 1.0}});
  table["IsInf"] = convert_is_inf;
  const std::pair<const char*, const char*> binaries[] = {
      {"Less", "less"},
      {"Greater", "greater"},
      {"LessOrEqual", "less_equal"},
      {"GreaterOrEqual", "greater_equal"},
      {"And", "logical_and"},
      {"Or", "logical_or"},
      {"Xor", "logical_xor"},
      {"BitwiseAnd", "bitwise_and"},
      {"BitwiseOr", "bitwise_or"},
      {"BitwiseXor", "bitwise_xor"},
      {"PRelu", "prelu"},
  };
  for (const auto& [onnx, op] : binaries) table[onnx] = binary(op);
  table["BitShift"] = convert_bit_shift;
  table["Sum"] = [](ImportContext& ctx) { return std::vector<Value>{variadic_sum(ctx)}; };
  table["Mean"] = convert_mean;
  table["CastLike"] = convert_cast_like;
  table["Size"] = convert_size;
}

}  // namespace kiln::frontend::onnx_import
