// The elementwise quantization operators (docs/int8.md, "Ops and rounding rule"):
//   quantize_linear(x f32, scale f32, zero_point q)        -> q:   clamp(round(x / scale) + zp)
//   dequantize_linear(x q|i32, scale f32, zero_point q|i32) -> f32: f32(x - zp) * scale
//   requantize(x i32, x_scale f32, y_scale f32, y_zero_point q, bias i32?)
//                                                          -> q:   clamp(round(f32(x + bias) * (x_scale / y_scale)) + zp)
// Scales and zero points are per tensor (scalar) or per axis (1-D, `axis`). round is f32 round
// half to even (quantize_params.h); every float step is one IEEE f32 operation (a division or a
// multiplication, never a multiply-add), so the compiled kernels reproduce the reference exactly.
#include "ir/ops/dtype_dispatch.h"
#include "ir/ops/op_util.h"
#include "ir/ops/quantize_params.h"

namespace kiln::ir::ops {

bool is_quantized_dtype(DType dtype) {
  return dtype == DType::kI8 || dtype == DType::kU8 || dtype == DType::kI16 || dtype == DType::kU16;
}

int64_t dtype_min_int(DType dtype) {
  switch (dtype) {
    case DType::kI8: return -128;
    case DType::kI16: return -32768;
    case DType::kI32: return std::numeric_limits<int32_t>::min();
    case DType::kI64: return std::numeric_limits<int64_t>::min();
    default: return 0;
  }
}

int64_t dtype_max_int(DType dtype) {
  switch (dtype) {
    case DType::kI8: return 127;
    case DType::kU8: return 255;
    case DType::kI16: return 32767;
    case DType::kU16: return 65535;
    case DType::kI32: return std::numeric_limits<int32_t>::max();
    case DType::kU32: return std::numeric_limits<uint32_t>::max();
    default: return std::numeric_limits<int64_t>::max();
  }
}

int64_t check_quant_param(const std::string& op, int index, const std::string& name, const TensorType& param,
                          const Shape& data, int64_t axis) {
  const int64_t n = shape_numel(param.shape);
  if (param.rank() == 0 || (param.rank() == 1 && n == 1)) return 1;
  if (param.rank() != 1) {
    fail_input(op, index, name, "has shape " + shape_to_string(param.shape) + ": expected a scalar or a 1-D tensor",
               "per-axis parameters are 1-D, one value per element of the quantization axis");
  }
  if (axis < 0 || axis >= static_cast<int64_t>(data.size())) {
    fail_attr(op, "axis", "is " + std::to_string(axis) + ", outside the data's rank " + std::to_string(data.size()));
  }
  if (n != data[axis]) {
    fail_input(op, index, name,
               "has " + std::to_string(n) + " values but axis " + std::to_string(axis) + " of the data " +
                   shape_to_string(data) + " has " + std::to_string(data[axis]),
               "give one value per element of the quantization axis, or a scalar");
  }
  return n;
}

ParamIndexer::ParamIndexer(const Shape& data, int64_t axis, int64_t count) : per_axis(count > 1) {
  if (!per_axis) return;
  size = data[axis];
  for (size_t d = axis + 1; d < data.size(); ++d) inner *= data[d];
}

namespace {

std::vector<int64_t> ints_of(const NDArray& a) {
  std::vector<int64_t> out(a.numel());
  visit_dtype(a.dtype(), [&]<typename T>() {
    if constexpr (kIsIntStorage<T>) {
      auto d = a.data<T>();
      for (size_t i = 0; i < d.size(); ++i) out[i] = static_cast<int64_t>(d[i]);
    } else {
      KILN_IFAIL() << "integer parameter of dtype " << dtype_name(a.dtype());
    }
  });
  return out;
}

std::vector<float> floats_of(const NDArray& a) {
  KILN_ICHECK(a.dtype() == DType::kF32) << "scale of dtype " << dtype_name(a.dtype());
  auto d = a.data<float>();
  return {d.begin(), d.end()};
}

NDArray ints_to_array(const std::vector<int64_t>& v, DType dtype, const Shape& shape) {
  NDArray out = NDArray::empty(dtype, shape);
  visit_dtype(dtype, [&]<typename T>() {
    if constexpr (kIsIntStorage<T>) {
      auto o = out.mutable_data<T>();
      for (size_t i = 0; i < v.size(); ++i) o[i] = static_cast<T>(v[i]);
    }
  });
  return out;
}

void require_scale(const std::string& op, int index, const std::string& name, const TensorType& t) {
  if (t.dtype != DType::kF32) fail_unsupported_dtype(op, index, name, t.dtype, "f32");
}

// ---- quantize_linear -------------------------------------------------------------------------

std::vector<TensorType> infer_quantize(const std::vector<TensorType>& in, const Attrs& attrs) {
  const std::string op = "quantize_linear";
  require_scale(op, 0, "x", in[0]);
  require_scale(op, 1, "scale", in[1]);
  if (!is_quantized_dtype(in[2].dtype)) fail_unsupported_dtype(op, 2, "zero_point", in[2].dtype, "i8 u8 i16 u16");
  const int64_t axis = attrs.get_int("axis");
  const int64_t ns = check_quant_param(op, 1, "scale", in[1], in[0].shape, axis);
  const int64_t nz = check_quant_param(op, 2, "zero_point", in[2], in[0].shape, axis);
  if (ns != nz) fail_input(op, 2, "zero_point", "has " + std::to_string(nz) + " values, scale has " + std::to_string(ns));
  return {{in[2].dtype, in[0].shape}};
}

std::vector<NDArray> reference_quantize(const std::vector<NDArray>& in, const Attrs& attrs,
                                        const std::vector<TensorType>& out) {
  const std::vector<float> scale = floats_of(in[1]);
  const std::vector<int64_t> zp = ints_of(in[2]);
  const ParamIndexer pi(in[0].shape(), attrs.get_int("axis"), static_cast<int64_t>(scale.size()));
  const DType dt = out[0].dtype;
  const int64_t lo = dtype_min_int(dt), hi = dtype_max_int(dt);
  auto x = in[0].data<float>();
  std::vector<int64_t> q(x.size());
  for (size_t i = 0; i < x.size(); ++i) {
    const int64_t c = pi(static_cast<int64_t>(i));
    q[i] = clamp_int(round_quant(x[i] / scale[c]) + zp[c], lo, hi);
  }
  return {ints_to_array(q, dt, out[0].shape)};
}

// ---- dequantize_linear -----------------------------------------------------------------------

std::vector<TensorType> infer_dequantize(const std::vector<TensorType>& in, const Attrs& attrs) {
  const std::string op = "dequantize_linear";
  if (!is_quantized_dtype(in[0].dtype) && in[0].dtype != DType::kI32) {
    fail_unsupported_dtype(op, 0, "x", in[0].dtype, "i8 u8 i16 u16 i32");
  }
  require_scale(op, 1, "scale", in[1]);
  if (in[2].dtype != in[0].dtype) {
    fail_input(op, 2, "zero_point",
               std::string("is ") + dtype_name(in[2].dtype) + " but x is " + dtype_name(in[0].dtype),
               "the zero point has the quantized tensor's element type");
  }
  const int64_t axis = attrs.get_int("axis");
  const int64_t ns = check_quant_param(op, 1, "scale", in[1], in[0].shape, axis);
  const int64_t nz = check_quant_param(op, 2, "zero_point", in[2], in[0].shape, axis);
  if (ns != nz) fail_input(op, 2, "zero_point", "has " + std::to_string(nz) + " values, scale has " + std::to_string(ns));
  return {{DType::kF32, in[0].shape}};
}

std::vector<NDArray> reference_dequantize(const std::vector<NDArray>& in, const Attrs& attrs,
                                          const std::vector<TensorType>& out) {
  const std::vector<float> scale = floats_of(in[1]);
  const std::vector<int64_t> zp = ints_of(in[2]), x = ints_of(in[0]);
  const ParamIndexer pi(in[0].shape(), attrs.get_int("axis"), static_cast<int64_t>(scale.size()));
  NDArray y = NDArray::empty(DType::kF32, out[0].shape);
  auto o = y.mutable_data<float>();
  for (size_t i = 0; i < x.size(); ++i) {
    const int64_t c = pi(static_cast<int64_t>(i));
    // The difference in i32 (wrapping, as the kernels), then one f32 conversion and one multiply.
    const auto d = static_cast<int32_t>(static_cast<uint32_t>(x[i]) - static_cast<uint32_t>(zp[c]));
    o[i] = static_cast<float>(d) * scale[c];
  }
  return {y};
}

// ---- requantize ------------------------------------------------------------------------------

std::vector<TensorType> infer_requantize(const std::vector<TensorType>& in, const Attrs& attrs) {
  const std::string op = "requantize";
  if (in[0].dtype != DType::kI32) fail_unsupported_dtype(op, 0, "x", in[0].dtype, "i32");
  require_scale(op, 1, "x_scale", in[1]);
  require_scale(op, 2, "y_scale", in[2]);
  if (!is_quantized_dtype(in[3].dtype)) fail_unsupported_dtype(op, 3, "y_zero_point", in[3].dtype, "i8 u8 i16 u16");
  const int64_t axis = attrs.get_int("axis");
  check_quant_param(op, 1, "x_scale", in[1], in[0].shape, axis);
  if (shape_numel(in[2].shape) != 1) fail_input(op, 2, "y_scale", "must be a scalar (per-tensor output scale)");
  if (shape_numel(in[3].shape) != 1) fail_input(op, 3, "y_zero_point", "must be a scalar (per-tensor output)");
  if (in.size() > 4) {
    if (in[4].dtype != DType::kI32) fail_unsupported_dtype(op, 4, "bias", in[4].dtype, "i32");
    check_quant_param(op, 4, "bias", in[4], in[0].shape, axis);
  }
  if (attrs.get_int("clamp_min") > attrs.get_int("clamp_max")) fail_attr(op, "clamp_min", "is above clamp_max");
  return {{in[3].dtype, in[0].shape}};
}

std::vector<NDArray> reference_requantize(const std::vector<NDArray>& in, const Attrs& attrs,
                                          const std::vector<TensorType>& out) {
  const std::vector<int64_t> x = ints_of(in[0]);
  const std::vector<float> xs = floats_of(in[1]);
  const float ys = floats_of(in[2])[0];
  const int64_t zp = ints_of(in[3])[0];
  const std::vector<int64_t> bias = in.size() > 4 ? ints_of(in[4]) : std::vector<int64_t>{0};
  const int64_t axis = attrs.get_int("axis");
  const ParamIndexer ps(in[0].shape(), axis, static_cast<int64_t>(xs.size()));
  const ParamIndexer pb(in[0].shape(), axis, static_cast<int64_t>(bias.size()));
  const DType dt = out[0].dtype;
  const int64_t lo = std::max(dtype_min_int(dt), attrs.get_int("clamp_min"));
  const int64_t hi = std::min(dtype_max_int(dt), attrs.get_int("clamp_max"));
  std::vector<int64_t> q(x.size());
  for (size_t i = 0; i < x.size(); ++i) {
    const auto flat = static_cast<int64_t>(i);
    const auto acc = static_cast<int32_t>(static_cast<uint32_t>(x[i]) + static_cast<uint32_t>(bias[pb(flat)]));
    const float multiplier = xs[ps(flat)] / ys;
    q[i] = clamp_int(round_quant(static_cast<float>(acc) * multiplier) + zp, lo, hi);
  }
  return {ints_to_array(q, dt, out[0].shape)};
}

}  // namespace

KILN_REGISTER_OP(quantize_linear) {
  OpDef d;
  d.name = "quantize_linear";
  d.doc = "f32 -> i8/u8/i16/u16: clamp(round_half_even(x / scale) + zero_point), per tensor or per axis";
  d.min_inputs = d.max_inputs = 3;
  d.attrs = {{"axis", AttrKind::kInt, AttrValue(int64_t{1}), "axis of per-axis scale/zero point (resolved)"}};
  d.infer_type = infer_quantize;
  d.reference = reference_quantize;
  d.pattern = OpPattern::kBroadcast;
  return with_arity_check(std::move(d));
}

KILN_REGISTER_OP(dequantize_linear) {
  OpDef d;
  d.name = "dequantize_linear";
  d.doc = "i8/u8/i16/u16/i32 -> f32: f32(x - zero_point) * scale, per tensor or per axis";
  d.min_inputs = d.max_inputs = 3;
  d.attrs = {{"axis", AttrKind::kInt, AttrValue(int64_t{1}), "axis of per-axis scale/zero point (resolved)"}};
  d.infer_type = infer_dequantize;
  d.reference = reference_dequantize;
  d.pattern = OpPattern::kBroadcast;
  return with_arity_check(std::move(d));
}

KILN_REGISTER_OP(requantize) {
  OpDef d;
  d.name = "requantize";
  d.doc = "i32 accumulator -> i8/u8: clamp(round_half_even(f32(x + bias) * (x_scale / y_scale)) + y_zero_point)";
  d.min_inputs = 4;
  d.max_inputs = 5;
  d.attrs = {
      {"axis", AttrKind::kInt, AttrValue(int64_t{1}), "axis of per-axis x_scale and bias (resolved)"},
      {"clamp_min", AttrKind::kInt, AttrValue(int64_t{std::numeric_limits<int32_t>::min()}),
       "lower bound in the quantized domain (fused Relu/Clip), besides the dtype's"},
      {"clamp_max", AttrKind::kInt, AttrValue(int64_t{std::numeric_limits<int32_t>::max()}),
       "upper bound in the quantized domain, besides the dtype's"},
  };
  d.infer_type = infer_requantize;
  d.reference = reference_requantize;
  d.pattern = OpPattern::kBroadcast;
  return with_arity_check(std::move(d));
}

}  // namespace kiln::ir::ops
