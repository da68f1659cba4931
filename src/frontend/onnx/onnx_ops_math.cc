// ONNX -> graph IR converters for elementwise math (Mod -> mod/fmod, Not -> equal to false),
// comparisons, Cast and reductions.
#include <algorithm>
#include <cmath>
#include <limits>

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

// Variadic Min/Max: chained binary calls; one input is the identity.
Converter variadic(const std::string& op) {
  return [op](ImportContext& ctx) {
    Value acc = ctx.input(0);
    for (size_t i = 1; i < ctx.node().inputs.size(); ++i) acc = ctx.call1(op, {acc, ctx.input(i)});
    return std::vector<Value>{acc};
  };
}

// Clip bounds given as run-time tensors (scalars computed by the graph or fed as graph inputs):
// min(max(x, lo), hi) with the broadcasting max/min ops, as ONNX defines Clip.
std::vector<Value> convert_clip_run_time(ImportContext& ctx) {
  Value y = ctx.input(0);
  for (size_t k : {size_t{1}, size_t{2}}) {
    if (!ctx.has_input(k)) continue;
    const Value bound = ctx.input(k);
    if (bound.type().numel() != 1) ctx.fail_invalid(std::string(k == 1 ? "min" : "max") + " must be a scalar");
    if (bound.type().dtype != y.type().dtype) ctx.fail_invalid(std::string(k == 1 ? "min" : "max") + " must have the input's type");
    y = ctx.call1(k == 1 ? "max" : "min", {y, bound});
  }
  return {y};
}

std::vector<Value> convert_clip(ImportContext& ctx) {
  for (size_t k : {size_t{1}, size_t{2}}) {
    if (ctx.has_input(k) && ctx.input(k).node->kind() != ir::NodeKind::kConstant) return convert_clip_run_time(ctx);
  }
  const double inf = std::numeric_limits<double>::infinity();
  double lo = -inf, hi = inf;
  if (ctx.has_input(1)) {
    auto v = ctx.constant_floats(1, "min");
    if (v.size() != 1) ctx.fail_invalid("min must be a scalar");
    lo = v[0];
  }
  if (ctx.has_input(2)) {
    auto v = ctx.constant_floats(2, "max");
    if (v.size() != 1) ctx.fail_invalid("max must be a scalar");
    hi = v[0];
  }
  return {ctx.call1("clip", {ctx.input(0)}, Attrs().set("min", lo).set("max", hi))};
}

std::vector<Value> convert_leaky_relu(ImportContext& ctx) {
  return {ctx.call1("leaky_relu", {ctx.input(0)}, Attrs().set("alpha", ctx.attr_float("alpha", 0.01)))};
}

std::vector<Value> convert_hard_sigmoid(ImportContext& ctx) {
  return {ctx.call1("hard_sigmoid", {ctx.input(0)},
                    Attrs().set("alpha", ctx.attr_float("alpha", 0.2)).set("beta", ctx.attr_float("beta", 0.5)))};
}

std::vector<Value> convert_gelu(ImportContext& ctx) {
  std::string approx = ctx.attr_string("approximate", "none");
  if (approx != "none" && approx != "tanh") ctx.fail_attr("approximate", "is '" + approx + "'; expected 'none' or 'tanh'");
  return {ctx.call1("gelu", {ctx.input(0)}, Attrs().set("approximate", approx))};
}

bool cast_target(int64_t onnx_type, ir::DType* out) {
  switch (onnx_type) {
    case 1: *out = ir::DType::kF32; return true;
    case 2: *out = ir::DType::kU8; return true;
    case 3: *out = ir::DType::kI8; return true;
    case 5: *out = ir::DType::kI16; return true;
    case 6: *out = ir::DType::kI32; return true;
    case 7: *out = ir::DType::kI64; return true;
    case 9: *out = ir::DType::kBool; return true;
    case 10: *out = ir::DType::kF16; return true;
    case 11: *out = ir::DType::kF64; return true;
    case 16: *out = ir::DType::kBF16; return true;
    case 4: *out = ir::DType::kU16; return true;
    case 12: *out = ir::DType::kU32; return true;
    case 13: *out = ir::DType::kU64; return true;
    default: return false;
  }
}

std::vector<Value> convert_cast(ImportContext& ctx) {
  int64_t to = ctx.attr_int("to", -1);
  ir::DType dtype;
  if (!cast_target(to, &dtype)) {
    ctx.fail_attr("to", "= " + std::to_string(to) + " (" + onnx_type_name(static_cast<int>(to)) +
                            ") names an element type Kiln does not support",
                  "supported: FLOAT, DOUBLE, FLOAT16, BFLOAT16, INT8, UINT8, INT16, UINT16, INT32, UINT32, INT64, UINT64, BOOL");
  }
  if (ctx.input(0).type().dtype == dtype) return {ctx.input(0)};
  return {ctx.call1("cast", {ctx.input(0)}, Attrs().set("dtype", dtype))};
}

// ReduceMean/ReduceSum/ReduceMax: axes from the attribute (older opsets) or the second input.
// `axes_input_since`: the opset from which axes is an input.
Converter reduce(const std::string& op, int axes_input_since) {
  return [op, axes_input_since](ImportContext& ctx) {
    Value x = ctx.input(0);
    const int64_t rank = x.type().rank();
    std::vector<int64_t> axes;
    if (ctx.opset() >= axes_input_since) {
      if (ctx.has_input(1)) axes = ctx.constant_ints(1, "axes");
    } else {
      axes = ctx.attr_ints("axes", {});
    }
    const int64_t keepdims = ctx.attr_int("keepdims", 1);
    const int64_t noop = ctx.attr_int("noop_with_empty_axes", 0);
    if (axes.empty() && noop) return std::vector<Value>{x};
    std::vector<int64_t> resolved;
    for (int64_t a : axes) {
      int64_t n = ctx.normalize_axis(a, rank, "axis");
      for (int64_t r : resolved) {
        if (r == n) ctx.fail_invalid("axis " + std::to_string(a) + " is repeated");
      }
      resolved.push_back(n);
    }
    std::sort(resolved.begin(), resolved.end());
    if (resolved.empty()) {
      for (int64_t i = 0; i < rank; ++i) resolved.push_back(i);
    }
    return std::vector<Value>{ctx.call1(op, {x}, Attrs().set("axes", resolved).set("keepdims", keepdims ? int64_t{1} : int64_t{0}))};
  };
}

// Mod: fmod=0 is the floored remainder (integers only in ONNX), fmod=1 the truncated one.
std::vector<Value> convert_mod(ImportContext& ctx) {
  const int64_t fmod = ctx.attr_int("fmod", 0);
  if (fmod != 0 && fmod != 1) ctx.fail_attr("fmod", "is " + std::to_string(fmod) + "; expected 0 or 1");
  if (fmod == 0 && ir::is_float(ctx.input(0).type().dtype)) {
    ctx.fail_attr("fmod", "is 0 on floating-point inputs", "ONNX requires fmod=1 for floating-point Mod");
  }
  return {ctx.call1(fmod ? "fmod" : "mod", {ctx.input(0), ctx.input(1)})};
}

// Not: x == false (x must be bool).
std::vector<Value> convert_not(ImportContext& ctx) {
  const Value x = ctx.input(0);
  if (x.type().dtype != ir::DType::kBool) ctx.fail_invalid("input is not bool");
  return {ctx.call1("equal", {x, ctx.constant(ir::NDArray::scalar(ir::DType::kBool, 0), "false")})};
}

}  // namespace

void add_math_converters(std::map<std::string, Converter>& table) {
  const std::pair<const char*, const char*> unaries[] = {
      {"Relu", "relu"}, {"Sigmoid", "sigmoid"}, {"Tanh", "tanh"},     {"Erf", "erf"},
      {"Exp", "exp"},   {"Log", "log"},         {"Sqrt", "sqrt"},     {"Neg", "neg"},
      {"Abs", "abs"},   {"Reciprocal", "reciprocal"}, {"HardSwish", "hard_swish"},
  };
  for (const auto& [onnx, op] : unaries) table[onnx] = unary(op);
  const std::pair<const char*, const char*> binaries[] = {
      {"Add", "add"}, {"Sub", "sub"}, {"Mul", "mul"}, {"Div", "div"}, {"Pow", "pow"}, {"Equal", "equal"},
  };
  for (const auto& [onnx, op] : binaries) table[onnx] = binary(op);
  table["Min"] = variadic("min");
  table["Max"] = variadic("max");
  table["Where"] = [](ImportContext& ctx) {
    return std::vector<Value>{ctx.call1("where", {ctx.input(0), ctx.input(1), ctx.input(2)})};
  };
  table["Clip"] = convert_clip;
  table["LeakyRelu"] = convert_leaky_relu;
  table["HardSigmoid"] = convert_hard_sigmoid;
  table["Gelu"] = convert_gelu;
  table["Cast"] = convert_cast;
  table["Mod"] = convert_mod;
  table["Not"] = convert_not;
  table["ReduceMean"] = reduce("reduce_mean", 18);
  table["ReduceMax"] = reduce("reduce_max", 18);
  table["ReduceSum"] = reduce("reduce_sum", 13);
}

}  // namespace kiln::frontend::onnx_import
