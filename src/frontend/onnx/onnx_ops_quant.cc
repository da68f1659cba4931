// ONNX -> graph IR converters for pre-quantized models (docs/int8.md, "Import"):
//   QuantizeLinear / DequantizeLinear (opsets 10-21: per tensor or per axis, 8/16-bit, optional
//     zero point, output_dtype) -> quantize_linear / dequantize_linear (f16/bf16 scales via f32);
//   ConvInteger / MatMulInteger -> qnn_conv2d / qnn_matmul (i32);
//   QLinearConv / QLinearMatMul -> qnn_conv2d / qnn_matmul + requantize (input scale x_scale * w_scale);
//   DynamicQuantizeLinear -> reduce_min/max, the u8 scale and zero point, quantize_linear;
//   com.microsoft: QLinearAdd/Mul/Sigmoid/LeakyRelu/GlobalAveragePool/Concat as dequantize ->
//     float op -> quantize (the contrib ops' definition: ONNX Runtime computes them in float),
//     MatMulIntegerToFloat and DynamicQuantizeMatMul as qnn_matmul + a dequantizing scale + bias,
//     QuantizeLinear/DequantizeLinear; the other quantized contrib ops are refused by name.
// Constant scales must be positive and finite, zero points of the tensor's type and of the scale's
// length (0 for int32, which ONNX defines without a zero point): a UserError names the node and
// input otherwise. Blocked quantization (block_size) is computed elementwise in f32 (no integer
// kernel uses it); 4-bit and float8 types are refused.
#include <cmath>
#include <set>
#include <string>
#include <utility>
#include <vector>

#include "kiln/support/error.h"
#include "onnx_node.h"

namespace kiln::frontend::onnx_import {
namespace {

using ir::Attrs;
using ir::DType;
using ir::NDArray;
using ir::Shape;
using ir::Value;

bool is_constant(const Value& v) { return v.node->kind() == ir::NodeKind::kConstant; }

std::string input_name(ImportContext& ctx, size_t i, const std::string& what) {
  return "input " + std::to_string(i) + " (" + what + ", '" + ctx.node().inputs[i] + "')";
}

// A constant scale `s` (input `i`) must hold positive, finite values.
void require_positive_scales(ImportContext& ctx, size_t i, const std::string& what, const Value& s) {
  if (!is_constant(s)) return;
  const NDArray a = s.node->as_constant().data();
  for (int64_t k = 0; k < a.numel(); ++k) {
    const double v = a.get_as_double(k);
    if (!(v > 0) || !std::isfinite(v)) {
      ctx.fail_invalid(input_name(ctx, i, what) + " holds " + std::to_string(v) + " at index " + std::to_string(k),
                       "quantization scales must be positive and finite");
    }
  }
}

// Input `i`, a scale: f32 (f16/bf16 converted), positive and finite when constant, a scalar or
// one value per element of `axis` of `data`.
Value scale_input(ImportContext& ctx, size_t i, const std::string& what, const Shape& data, int64_t axis) {
  Value s = ctx.input(i);
  const DType dt = s.type().dtype;
  if (dt == DType::kF16 || dt == DType::kBF16) {
    s = ctx.call1("cast", {s}, Attrs().set("dtype", DType::kF32));
  } else if (dt != DType::kF32) {
    ctx.fail_invalid(input_name(ctx, i, what) + " is " + ir::dtype_name(dt), "a scale is a float tensor");
  }
  const int64_t n = ir::shape_numel(s.type().shape);
  if (s.type().rank() > 1 || (n != 1 && (axis < 0 || axis >= static_cast<int64_t>(data.size()) || n != data[axis]))) {
    ctx.fail_invalid(input_name(ctx, i, what) + " has shape " + ir::shape_to_string(s.type().shape) +
                         ", which is neither a scalar nor one value per element of axis " + std::to_string(axis) +
                         " of " + ir::shape_to_string(data),
                     "use a per-tensor scale or a 1-D scale of the axis' length");
  }
  require_positive_scales(ctx, i, what, s);
  return s;
}

// Input `i`, a zero point of element type `dt` with `count` values (1: per tensor), or a zero of
// that type when the input is absent.
Value zero_point_input(ImportContext& ctx, size_t i, const std::string& what, DType dt, int64_t count) {
  if (!ctx.has_input(i)) return ctx.constant(NDArray::scalar(dt, 0), what);
  Value z = ctx.input(i);
  if (z.type().dtype != dt) {
    ctx.fail_invalid(input_name(ctx, i, what) + " is " + ir::dtype_name(z.type().dtype) + ", expected " +
                         ir::dtype_name(dt),
                     "a zero point has the quantized tensor's element type");
  }
  const int64_t n = ir::shape_numel(z.type().shape);
  if (z.type().rank() > 1 || (n != 1 && n != count)) {
    ctx.fail_invalid(input_name(ctx, i, what) + " has shape " + ir::shape_to_string(z.type().shape) + " but its scale has " +
                         std::to_string(count) + " value(s)",
                     "give the zero point the scale's shape");
  }
  return z;
}

void require_8bit(ImportContext& ctx, size_t i, const std::string& what) {
  const DType dt = ctx.input(i).type().dtype;
  if (dt != DType::kI8 && dt != DType::kU8) {
    ctx.fail_unsupported(input_name(ctx, i, what) + " is " + ir::dtype_name(dt), "Kiln's integer kernels take int8 and uint8");
  }
}

// ---- blocked quantization (opset 21: block_size along axis) ----
// The scale (and zero point) has x's shape except ceil(D / block_size) along `axis`; it is expanded
// to x's shape (a unit axis after `axis` broadcast over the block, merged, sliced to D) and the
// ONNX definition is computed elementwise: DequantizeLinear f32(x) - f32(zp), times the scale;
// QuantizeLinear clip(round_half_even(x / scale) + zp) cast to the 8/16-bit type.

// Input `i` (a blocked scale or zero point of element type `dt`) expanded to x's shape.
Value blocked_param(ImportContext& ctx, size_t i, const std::string& what, const Shape& x, int64_t axis, int64_t block) {
  Value p = ctx.input(i);
  Shape s = p.type().shape;
  const auto d = static_cast<size_t>(axis);
  bool ok = s.size() == x.size() && x[d] > 0;
  for (size_t k = 0; ok && k < s.size(); ++k) ok = k == d ? s[k] == (x[d] + block - 1) / block : s[k] == x[k];
  if (!ok) {
    ctx.fail_invalid(input_name(ctx, i, what) + " has shape " + ir::shape_to_string(s) + ", x " + ir::shape_to_string(x) +
                         ", block_size " + std::to_string(block) + " along axis " + std::to_string(axis),
                     "a blocked scale / zero point has x's shape with ceil(x.shape[axis] / block_size) along axis");
  }
  Shape with_block = s;
  with_block.insert(with_block.begin() + axis + 1, 1);
  p = ctx.call1("reshape", {p}, Attrs().set("shape", with_block));
  with_block[d + 1] = block;
  p = ctx.call1("expand", {p}, Attrs().set("shape", with_block));
  Shape merged = s;
  merged[d] = s[d] * block;
  p = ctx.call1("reshape", {p}, Attrs().set("shape", merged));
  if (merged[d] != x[d]) {
    using Ints = std::vector<int64_t>;
    p = ctx.call1("strided_slice", {p}, Attrs().set("begins", Ints{0}).set("ends", Ints{x[d]}).set("axes", Ints{axis}).set("steps", Ints{1}));
  }
  return p;
}

void require_dtype(ImportContext& ctx, size_t i, const std::string& what, DType dt) {
  if (ctx.input(i).type().dtype != dt) {
    ctx.fail_invalid(input_name(ctx, i, what) + " is " + ir::dtype_name(ctx.input(i).type().dtype) + ", expected " +
                         ir::dtype_name(dt),
                     "a zero point has the quantized tensor's element type");
  }
}

// (axis, block_size) of a blocked Q/DQ node; block_size 0: not blocked.
std::pair<int64_t, int64_t> blocking(ImportContext& ctx, const Value& x) {
  const int64_t block = ctx.attr_int("block_size", 0);
  if (block == 0) return {0, 0};
  if (block < 0) ctx.fail_attr("block_size", "is " + std::to_string(block), "block_size is positive (or 0: not blocked)");
  const int64_t axis = ctx.normalize_axis(ctx.attr_int("axis", 1), static_cast<int64_t>(x.type().rank()), "axis");
  if (x.type().shape[static_cast<size_t>(axis)] <= 0) {
    ctx.fail_unsupported("blocked quantization along a dimension of unknown size", "give the model a static shape there");
  }
  return {axis, block};
}

Value f32_scale(ImportContext& ctx, size_t i, const std::string& what, const Value& s) {
  const DType dt = s.type().dtype;
  if (dt != DType::kF32 && dt != DType::kF16 && dt != DType::kBF16) {
    ctx.fail_invalid(input_name(ctx, i, what) + " is " + ir::dtype_name(dt), "a scale is a float tensor");
  }
  require_positive_scales(ctx, i, what, ctx.input(i));
  return dt == DType::kF32 ? s : ctx.call1("cast", {s}, Attrs().set("dtype", DType::kF32));
}

Value to_f32(ImportContext& ctx, const Value& v) {
  return v.type().dtype == DType::kF32 ? v : ctx.call1("cast", {v}, Attrs().set("dtype", DType::kF32));
}

Value blocked_dequantize(ImportContext& ctx, const Value& x, int64_t axis, int64_t block) {
  const Shape& shape = x.type().shape;
  const Value s = f32_scale(ctx, 1, "x_scale", blocked_param(ctx, 1, "x_scale", shape, axis, block));
  Value v = to_f32(ctx, x);
  if (ctx.has_input(2)) {
    require_dtype(ctx, 2, "x_zero_point", x.type().dtype);
    v = ctx.call1("sub", {v, to_f32(ctx, blocked_param(ctx, 2, "x_zero_point", shape, axis, block))});
  }
  return ctx.call1("mul", {v, s});
}

Value blocked_quantize(ImportContext& ctx, const Value& x, DType dt, int64_t axis, int64_t block) {
  const Shape& shape = x.type().shape;
  const Value s = f32_scale(ctx, 1, "y_scale", blocked_param(ctx, 1, "y_scale", shape, axis, block));
  Value v = ctx.call1("round", {ctx.call1("div", {to_f32(ctx, x), s})});
  if (ctx.has_input(2)) {
    require_dtype(ctx, 2, "y_zero_point", dt);
    v = ctx.call1("add", {v, to_f32(ctx, blocked_param(ctx, 2, "y_zero_point", shape, axis, block))});
  }
  const double lo = dt == DType::kU8 || dt == DType::kU16 ? 0 : dt == DType::kI8 ? -128 : -32768;
  const double hi = dt == DType::kU8 ? 255 : dt == DType::kI8 ? 127 : dt == DType::kU16 ? 65535 : 32767;
  v = ctx.call1("clip", {v}, Attrs().set("min", lo).set("max", hi));
  return ctx.call1("cast", {v}, Attrs().set("dtype", dt));
}

// The quantization axis of the current Q/DQ node (0, unused, for a per-tensor scale at input 1).
int64_t quant_axis(ImportContext& ctx, const Value& x) {
  const auto rank = static_cast<int64_t>(x.type().rank());
  if (rank == 0 || ir::shape_numel(ctx.input(1).type().shape) == 1) return 0;
  return ctx.normalize_axis(ctx.attr_int("axis", 1), rank, "axis");
}

Value quantize(ImportContext& ctx, const Value& x, const Value& scale, const Value& zp, int64_t axis) {
  Value xf = x.type().dtype == DType::kF32 ? x : ctx.call1("cast", {x}, Attrs().set("dtype", DType::kF32));
  return ctx.call1("quantize_linear", {xf, scale, zp}, Attrs().set("axis", axis));
}

// Not folded when its operands are constants: RealizeQuantizedOps (src/pass/) needs to see the
// integer weights behind a dequantize, and keeps them in 8 bits; FoldConstant folds the ones it
// leaves in float.
Value dequantize(ImportContext& ctx, const Value& x, const Value& scale, const Value& zp, int64_t axis) {
  const Attrs a = Attrs().set("axis", axis);
  if (!(is_constant(x) && is_constant(scale) && is_constant(zp))) return ctx.call1("dequantize_linear", {x, scale, zp}, a);
  try {
    return ir::make_call("dequantize_linear", {x, scale, zp}, a, ctx.node().name)->output();
  } catch (const UserError& e) {
    throw UserError(e.kind(), ctx.node_subject(), e.reason() + " [as dequantize_linear]", e.hint());
  }
}

// (value, scale, zero point) triple starting at input `i`, dequantized per tensor.
Value dequantize_triple(ImportContext& ctx, size_t i, const std::string& what) {
  const Value x = ctx.input(i);
  require_8bit(ctx, i, what);
  const Value s = scale_input(ctx, i + 1, what + "_scale", x.type().shape, 0);
  const Value z = zero_point_input(ctx, i + 2, what + "_zero_point", x.type().dtype, 1);
  return dequantize(ctx, x, s, z, 0);
}

// ---- QuantizeLinear / DequantizeLinear ----

DType quantize_output_dtype(ImportContext& ctx) {
  if (ctx.has_input(2)) return ctx.input(2).type().dtype;
  const int64_t t = ctx.attr_int("output_dtype", 0);
  if (t == 0) return DType::kU8;
  DType dt;
  if (!onnx_dtype(t, &dt) || (dt != DType::kU8 && dt != DType::kI8 && dt != DType::kU16 && dt != DType::kI16)) {
    ctx.fail_attr("output_dtype", std::string("is ") + onnx_type_name(static_cast<int>(t)),
                  "Kiln quantizes to UINT8, INT8, UINT16 or INT16 (4-bit and float8 are not supported)");
  }
  return dt;
}

std::vector<Value> convert_quantize_linear(ImportContext& ctx) {
  const Value x = ctx.input(0);
  if (!ir::is_float(x.type().dtype)) ctx.fail_invalid(input_name(ctx, 0, "x") + " is not a float tensor");
  const DType dt = quantize_output_dtype(ctx);
  if (dt != DType::kU8 && dt != DType::kI8 && dt != DType::kU16 && dt != DType::kI16) {
    ctx.fail_unsupported(std::string("quantization to ") + ir::dtype_name(dt),
                         "Kiln quantizes to uint8, int8, uint16 or int16");
  }
  if (const auto [baxis, block] = blocking(ctx, x); block > 0) return {blocked_quantize(ctx, x, dt, baxis, block)};
  const int64_t axis = quant_axis(ctx, x);
  const Value s = scale_input(ctx, 1, "y_scale", x.type().shape, axis);
  const Value z = zero_point_input(ctx, 2, "y_zero_point", dt, ir::shape_numel(s.type().shape));
  return {quantize(ctx, x, s, z, axis)};
}

std::vector<Value> convert_dequantize_linear(ImportContext& ctx) {
  const Value x = ctx.input(0);
  const DType dt = x.type().dtype;
  if (dt != DType::kU8 && dt != DType::kI8 && dt != DType::kU16 && dt != DType::kI16 && dt != DType::kI32) {
    ctx.fail_unsupported(input_name(ctx, 0, "x") + " is " + ir::dtype_name(dt),
                         "Kiln dequantizes int8, uint8, int16, uint16 and int32 (4-bit and float8 are not supported)");
  }
  if (const auto [baxis, block] = blocking(ctx, x); block > 0) {
    Value y = blocked_dequantize(ctx, x, baxis, block);
    const DType scale_dt = ctx.input(1).type().dtype;
    return {scale_dt == DType::kF32 ? y : ctx.call1("cast", {y}, Attrs().set("dtype", scale_dt))};
  }
  const int64_t axis = quant_axis(ctx, x);
  const DType scale_dt = ctx.input(1).type().dtype;
  const Value s = scale_input(ctx, 1, "x_scale", x.type().shape, axis);
  const Value z = zero_point_input(ctx, 2, "x_zero_point", dt, ir::shape_numel(s.type().shape));
  if (dt == DType::kI32 && is_constant(z)) {  // ONNX: an int32 tensor has no zero point (0)
    const NDArray a = z.node->as_constant().data();
    for (int64_t k = 0; k < a.numel(); ++k) {
      if (a.get_as_double(k) != 0) {
        ctx.fail_invalid(input_name(ctx, 2, "x_zero_point") + " holds " + std::to_string(static_cast<int64_t>(a.get_as_double(k))) +
                             " at index " + std::to_string(k) + " for an int32 x",
                         "int32 values (biases, accumulators) are dequantized with zero point 0: drop the zero point");
      }
    }
  }
  Value y = dequantize(ctx, x, s, z, axis);
  if (scale_dt != DType::kF32) y = ctx.call1("cast", {y}, Attrs().set("dtype", scale_dt));
  return {y};
}

// ---- integer convolution and matmul ----

// conv2d attributes of the current Conv-like node on a 2-D (or 1-D as H = 1) input of spatial
// shape `in`, kernel `k`: strides, dilations, explicit pads (auto_pad resolved), groups.
Attrs conv_attrs(ImportContext& ctx, const Shape& in, const Shape& k) {
  const size_t r = in.size();
  auto ints = [&](const std::string& name, int64_t fallback) {
    std::vector<int64_t> v = ctx.attr_ints(name, std::vector<int64_t>(r, fallback));
    if (v.size() != r) ctx.fail_attr(name, "has " + std::to_string(v.size()) + " values for " + std::to_string(r) + " spatial axes");
    return v;
  };
  const std::vector<int64_t> strides = ints("strides", 1), dil = ints("dilations", 1);
  std::vector<int64_t> pads = ctx.attr_ints("pads", std::vector<int64_t>(2 * r, 0));
  if (pads.size() != 2 * r) ctx.fail_attr("pads", "has " + std::to_string(pads.size()) + " values");
  const std::string auto_pad = ctx.attr_string("auto_pad", "NOTSET");
  if (auto_pad == "VALID") {
    pads.assign(2 * r, 0);
  } else if (auto_pad == "SAME_UPPER" || auto_pad == "SAME_LOWER") {
    for (size_t d = 0; d < r; ++d) {
      const int64_t out = (in[d] + strides[d] - 1) / strides[d];
      const int64_t total = std::max<int64_t>(0, (out - 1) * strides[d] + (k[d] - 1) * dil[d] + 1 - in[d]);
      const int64_t small = total / 2, big = total - small;
      pads[d] = auto_pad == "SAME_UPPER" ? small : big;
      pads[d + r] = auto_pad == "SAME_UPPER" ? big : small;
    }
  } else if (auto_pad != "NOTSET") {
    ctx.fail_attr("auto_pad", "is '" + auto_pad + "'", "expected NOTSET, VALID, SAME_UPPER or SAME_LOWER");
  }
  if (r == 1) {
    return Attrs().set("strides", std::vector<int64_t>{1, strides[0]}).set("dilations", std::vector<int64_t>{1, dil[0]})
        .set("pads", std::vector<int64_t>{0, pads[0], 0, pads[1]}).set("groups", ctx.attr_int("group", 1));
  }
  return Attrs().set("strides", strides).set("dilations", dil).set("pads", pads).set("groups", ctx.attr_int("group", 1));
}

Value reshape(ImportContext& ctx, const Value& v, const Shape& shape) {
  if (v.type().shape == shape) return v;
  return ctx.call1("reshape", {v}, Attrs().set("shape", shape));
}

// qnn_conv2d of x (input 0) and w (input `wi`) with the given zero points; 1-D convolutions as H = 1.
Value integer_conv(ImportContext& ctx, size_t wi, const Value& xzp, const Value& wzp) {
  Value x = ctx.input(0), w = ctx.input(wi);
  require_8bit(ctx, 0, "x");
  require_8bit(ctx, wi, "w");
  const size_t rank = x.type().rank();
  if (rank != 3 && rank != 4) {
    ctx.fail_unsupported("a " + std::to_string(rank - 2) + "-D integer convolution", "Kiln's integer convolutions are 1-D and 2-D");
  }
  if (w.type().rank() != rank) ctx.fail_invalid(input_name(ctx, wi, "w") + " has rank " + std::to_string(w.type().rank()));
  const Shape xs = x.type().shape, ws = w.type().shape;
  const Attrs a = conv_attrs(ctx, Shape(xs.begin() + 2, xs.end()), Shape(ws.begin() + 2, ws.end()));
  if (rank == 3) {
    x = reshape(ctx, x, {xs[0], xs[1], 1, xs[2]});
    w = reshape(ctx, w, {ws[0], ws[1], 1, ws[2]});
  }
  Value y = ctx.call1("qnn_conv2d", {x, w, xzp, wzp}, a);
  if (rank == 3) {
    const Shape ys = y.type().shape;
    y = reshape(ctx, y, {ys[0], ys[1], ys[3]});
  }
  return y;
}

std::vector<Value> convert_conv_integer(ImportContext& ctx) {
  const Value x = ctx.input(0), w = ctx.input(1);
  if (w.type().rank() == 0) ctx.fail_invalid(input_name(ctx, 1, "w") + " is a scalar, not a 3-D or 4-D weight");
  const Value xzp = zero_point_input(ctx, 2, "x_zero_point", x.type().dtype, 1);
  const Value wzp = zero_point_input(ctx, 3, "w_zero_point", w.type().dtype, w.type().shape.at(0));
  return {integer_conv(ctx, 1, xzp, wzp)};
}

// requantize(acc, x_scale * w_scale, y_scale, y_zero_point, bias) along `axis`.
Value requantize(ImportContext& ctx, const Value& acc, const Value& in_scale, size_t y_scale_i, size_t y_zp_i,
                 const Value& bias, int64_t axis) {
  const Value ys = scale_input(ctx, y_scale_i, "y_scale", acc.type().shape, axis);
  if (ir::shape_numel(ys.type().shape) != 1) ctx.fail_unsupported(input_name(ctx, y_scale_i, "y_scale") + " is per axis", "the output scale is per tensor");
  const DType yt = ctx.has_input(y_zp_i) ? ctx.input(y_zp_i).type().dtype : DType::kU8;
  const Value yzp = zero_point_input(ctx, y_zp_i, "y_zero_point", yt, 1);
  std::vector<Value> args = {acc, in_scale, ys, yzp};
  if (bias.defined()) args.push_back(bias);
  return ctx.call1("requantize", args, Attrs().set("axis", axis));
}

std::vector<Value> convert_qlinear_conv(ImportContext& ctx) {
  const Value x = ctx.input(0), w = ctx.input(3);
  require_8bit(ctx, 0, "x");
  require_8bit(ctx, 3, "w");
  if (w.type().rank() < 3) ctx.fail_invalid(input_name(ctx, 3, "w") + " is " + w.type().to_string() + ", not a 3-D or 4-D weight");
  const int64_t m = w.type().shape.at(0);
  const Value xs = scale_input(ctx, 1, "x_scale", x.type().shape, 1);
  if (ir::shape_numel(xs.type().shape) != 1) ctx.fail_unsupported(input_name(ctx, 1, "x_scale") + " is per axis", "the input scale is per tensor");
  const Value xzp = zero_point_input(ctx, 2, "x_zero_point", x.type().dtype, 1);
  const Value wsc = scale_input(ctx, 4, "w_scale", w.type().shape, 0);
  const Value wzp = zero_point_input(ctx, 5, "w_zero_point", w.type().dtype, ir::shape_numel(wsc.type().shape));
  const Value acc = integer_conv(ctx, 3, xzp, wzp);
  Value bias;
  if (ctx.has_input(8)) {
    bias = ctx.input(8);
    if (bias.type().dtype != DType::kI32 || bias.type().shape != Shape{m}) {
      ctx.fail_invalid(input_name(ctx, 8, "B") + " is " + bias.type().to_string() + ", expected i32 [" + std::to_string(m) + "]");
    }
  }
  const Value in_scale = ctx.call1("mul", {wsc, xs});
  return {requantize(ctx, acc, in_scale, 6, 7, bias, 1)};
}

// qnn_matmul of inputs a and b (1-D operands promoted as numpy does, and the result squeezed back).
Value integer_matmul(ImportContext& ctx, size_t ai, size_t bi, const Value& azp, const Value& bzp) {
  require_8bit(ctx, ai, "A");
  require_8bit(ctx, bi, "B");
  Value a = ctx.input(ai), b = ctx.input(bi);
  const Shape as = a.type().shape, bs = b.type().shape;
  if (as.empty() || bs.empty()) ctx.fail_invalid("a scalar matmul operand");
  if (as.size() == 1) a = reshape(ctx, a, {1, as[0]});
  if (bs.size() == 1) b = reshape(ctx, b, {bs[0], 1});
  Value y = ctx.call1("qnn_matmul", {a, b, azp, bzp});
  if (as.size() == 1 || bs.size() == 1) {
    Shape ys = y.type().shape;
    if (bs.size() == 1) ys.pop_back();
    if (as.size() == 1) ys.erase(ys.end() - (bs.size() == 1 ? 1 : 2));
    y = reshape(ctx, y, ys);
  }
  return y;
}

int64_t rows_of(const Value& a) { return a.type().rank() >= 2 ? static_cast<int64_t>(a.type().shape[a.type().rank() - 2]) : 1; }

std::vector<Value> convert_matmul_integer(ImportContext& ctx) {
  const Value a = ctx.input(0), b = ctx.input(1);
  if (a.type().rank() == 0 || b.type().rank() == 0) {
    ctx.fail_invalid(input_name(ctx, a.type().rank() == 0 ? 0 : 1, a.type().rank() == 0 ? "a" : "b") + " is a scalar; MatMulInteger needs rank 1 or more");
  }
  const Value azp = zero_point_input(ctx, 2, "a_zero_point", a.type().dtype, rows_of(a));
  const Value bzp = zero_point_input(ctx, 3, "b_zero_point", b.type().dtype, b.type().shape.back());
  return {integer_matmul(ctx, 0, 1, azp, bzp)};
}

std::vector<Value> convert_qlinear_matmul(ImportContext& ctx) {
  const Value a = ctx.input(0), b = ctx.input(3);
  const Value as = scale_input(ctx, 1, "a_scale", a.type().shape, 0);
  if (ir::shape_numel(as.type().shape) != 1) ctx.fail_unsupported(input_name(ctx, 1, "a_scale") + " is per axis", "the A scale is per tensor");
  const Value azp = zero_point_input(ctx, 2, "a_zero_point", a.type().dtype, 1);
  const int64_t b_axis = static_cast<int64_t>(b.type().rank()) - 1;
  const Value bsc = scale_input(ctx, 4, "b_scale", b.type().shape, b_axis);
  const Value bzp = zero_point_input(ctx, 5, "b_zero_point", b.type().dtype, ir::shape_numel(bsc.type().shape));
  const Value acc = integer_matmul(ctx, 0, 3, azp, bzp);
  const Value in_scale = ctx.call1("mul", {bsc, as});
  return {requantize(ctx, acc, in_scale, 6, 7, Value(), static_cast<int64_t>(acc.type().rank()) - 1)};
}

// ---- dynamic quantization ----

// DynamicQuantizeLinear's u8 (y, scale, zero point) of f32 x (ONNX's definition: the range
// includes 0, scale = (max - min) / 255, zero point = saturate(round(-min / scale))).
std::vector<Value> dynamic_quantize(ImportContext& ctx, const Value& x) {
  if (x.type().dtype != DType::kF32) ctx.fail_invalid(input_name(ctx, 0, "x") + " is not f32");
  const Attrs all = Attrs().set("axes", std::vector<int64_t>{}).set("keepdims", int64_t{0});
  const Value zero = ctx.constant(NDArray::scalar(DType::kF32, 0), "zero");
  const Value lo = ctx.call1("min", {ctx.call1("reduce_min", {x}, all), zero});
  const Value hi = ctx.call1("max", {ctx.call1("reduce_max", {x}, all), zero});
  const Value scale = ctx.call1("div", {ctx.call1("sub", {hi, lo}), ctx.constant(NDArray::scalar(DType::kF32, 255), "qrange")});
  const Value zp_f = ctx.call1("round", {ctx.call1("div", {ctx.call1("neg", {lo}), scale})});
  const Value zp = ctx.call1("cast", {ctx.call1("clip", {zp_f}, Attrs().set("min", 0.0).set("max", 255.0))},
                             Attrs().set("dtype", DType::kU8));
  return {ctx.call1("quantize_linear", {x, scale, zp}, Attrs().set("axis", int64_t{0})), scale, zp};
}

std::vector<Value> convert_dynamic_quantize_linear(ImportContext& ctx) { return dynamic_quantize(ctx, ctx.input(0)); }

// f32(acc) * (a_scale * b_scale) (+ bias): the matmul's float result.
Value dequantize_product(ImportContext& ctx, const Value& acc, const Value& a_scale, const Value& b_scale, size_t bias_i) {
  const int64_t axis = static_cast<int64_t>(acc.type().rank()) - 1;
  const Value s = ctx.call1("mul", {b_scale, a_scale});
  Value y = dequantize(ctx, acc, s, ctx.constant(NDArray::scalar(DType::kI32, 0), "zero"), axis);
  if (ctx.has_input(bias_i)) y = ctx.call1("add", {y, ctx.input(bias_i)});
  return y;
}

std::vector<Value> convert_matmul_integer_to_float(ImportContext& ctx) {
  const Value a = ctx.input(0), b = ctx.input(1);
  const Value as = scale_input(ctx, 2, "a_scale", a.type().shape, 0);
  if (ir::shape_numel(as.type().shape) != 1) ctx.fail_unsupported(input_name(ctx, 2, "a_scale") + " is per axis", "the A scale is per tensor");
  const Value bsc = scale_input(ctx, 3, "b_scale", b.type().shape, static_cast<int64_t>(b.type().rank()) - 1);
  const Value azp = zero_point_input(ctx, 4, "a_zero_point", a.type().dtype, 1);
  const Value bzp = zero_point_input(ctx, 5, "b_zero_point", b.type().dtype, ir::shape_numel(bsc.type().shape));
  return {dequantize_product(ctx, integer_matmul(ctx, 0, 1, azp, bzp), as, bsc, 6)};
}

std::vector<Value> convert_dynamic_quantize_matmul(ImportContext& ctx) {
  const Value b = ctx.input(1);
  require_8bit(ctx, 1, "B");
  const std::vector<Value> q = dynamic_quantize(ctx, ctx.input(0));
  const Value bsc = scale_input(ctx, 2, "b_scale", b.type().shape, static_cast<int64_t>(b.type().rank()) - 1);
  const Value bzp = zero_point_input(ctx, 3, "b_zero_point", b.type().dtype, ir::shape_numel(bsc.type().shape));
  const Value acc = ctx.call1("qnn_matmul", {q[0], b, q[2], bzp});
  return {dequantize_product(ctx, acc, q[1], bsc, 4)};
}

// ---- com.microsoft QLinear* elementwise/pooling/concat: dequantize -> float op -> quantize ----

Value quantize_output(ImportContext& ctx, const Value& y, size_t scale_i, size_t zp_i) {
  const Value s = scale_input(ctx, scale_i, "y_scale", y.type().shape, 0);
  const DType dt = ctx.has_input(zp_i) ? ctx.input(zp_i).type().dtype : ctx.input(0).type().dtype;
  return quantize(ctx, y, s, zero_point_input(ctx, zp_i, "y_zero_point", dt, 1), 0);
}

Converter qlinear_binary(const std::string& op) {
  return [op](ImportContext& ctx) {
    const Value y = ctx.call1(op, {dequantize_triple(ctx, 0, "A"), dequantize_triple(ctx, 3, "B")});
    return std::vector<Value>{quantize_output(ctx, y, 6, 7)};
  };
}

Converter qlinear_unary(const std::string& op, bool alpha) {
  return [op, alpha](ImportContext& ctx) {
    Attrs a;
    if (alpha) a.set("alpha", ctx.attr_float("alpha", 0.01));
    const Value y = ctx.call1(op, {dequantize_triple(ctx, 0, "X")}, a);
    return std::vector<Value>{quantize_output(ctx, y, 3, 4)};
  };
}

std::vector<Value> convert_qlinear_global_average_pool(ImportContext& ctx) {
  if (ctx.attr_int("channels_last", 0) != 0) ctx.fail_attr("channels_last", "is 1", "Kiln takes NCHW (channels_last 0)");
  const Value y = ctx.call1("global_avg_pool", {dequantize_triple(ctx, 0, "X")});
  return {quantize_output(ctx, y, 3, 4)};
}

std::vector<Value> convert_qlinear_concat(ImportContext& ctx) {
  const size_t n = ctx.node().inputs.size();
  if (n < 5 || (n - 2) % 3 != 0) ctx.fail_invalid("QLinearConcat takes Y_scale, Y_zero_point and (X, X_scale, X_zero_point) triples");
  std::vector<Value> parts;
  for (size_t i = 2; i < n; i += 3) parts.push_back(dequantize_triple(ctx, i, "X" + std::to_string((i - 2) / 3)));
  const int64_t axis = ctx.normalize_axis(ctx.attr_int("axis", 0), static_cast<int64_t>(parts[0].type().rank()), "axis");
  const Value y = ctx.call1("concat", parts, Attrs().set("axis", axis));
  const Value s = scale_input(ctx, 0, "Y_scale", y.type().shape, 0);
  return {quantize(ctx, y, s, zero_point_input(ctx, 1, "Y_zero_point", ctx.input(2).type().dtype, 1), 0)};
}

Converter refuse(const std::string& why) {
  return [why](ImportContext& ctx) -> std::vector<Value> {
    ctx.fail_unsupported("the quantized contrib operator com.microsoft." + ctx.node().op_type + " is not supported",
                         why);
  };
}

}  // namespace

void add_quant_converters(std::map<std::string, Converter>& table) {
  table["QuantizeLinear"] = convert_quantize_linear;
  table["DequantizeLinear"] = convert_dequantize_linear;
  table["ConvInteger"] = convert_conv_integer;
  table["MatMulInteger"] = convert_matmul_integer;
  table["QLinearConv"] = convert_qlinear_conv;
  table["QLinearMatMul"] = convert_qlinear_matmul;
  table["DynamicQuantizeLinear"] = convert_dynamic_quantize_linear;
}

const std::map<std::string, Converter>& contrib_converters() {
  static const std::map<std::string, Converter> table = [] {
    std::map<std::string, Converter> t;
    t["QuantizeLinear"] = convert_quantize_linear;
    t["DequantizeLinear"] = convert_dequantize_linear;
    t["QLinearAdd"] = qlinear_binary("add");
    t["QLinearMul"] = qlinear_binary("mul");
    t["QLinearSigmoid"] = qlinear_unary("sigmoid", false);
    t["QLinearLeakyRelu"] = qlinear_unary("leaky_relu", true);
    t["QLinearGlobalAveragePool"] = convert_qlinear_global_average_pool;
    t["QLinearConcat"] = convert_qlinear_concat;
    t["MatMulIntegerToFloat"] = convert_matmul_integer_to_float;
    t["DynamicQuantizeMatMul"] = convert_dynamic_quantize_matmul;
    const std::string hint = "quantize the model in QDQ format (QuantizeLinear/DequantizeLinear pairs, "
                             "onnxruntime.quantization with quant_format=QDQ), which Kiln imports";
    for (const char* op : {"QGemm", "QLinearAveragePool", "QLinearSoftmax", "QLinearReduceMean", "QLinearWhere",
                           "QAttention", "QEmbedLayerNormalization", "QOrderedMatMul", "QOrderedLayerNormalization",
                           "QOrderedGelu", "QOrderedAttention", "DynamicQuantizeLSTM", "QLinearConvTranspose",
                           "QuantizeWithOrder", "DequantizeWithOrder", "MatMulNBits", "MatMulBnb4", "GatherBlockQuantized"}) {
      t[op] = refuse(hint);
    }
    return t;
  }();
  return table;
}

}  // namespace kiln::frontend::onnx_import
