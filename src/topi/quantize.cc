// Computes of the quantization operators (docs/int8.md): quantize_linear, dequantize_linear and
// requantize as injective kernels, each float step one f32 operation in the order of the reference
// (src/ir/ops/quantize.cc) so the kernels reproduce it exactly: a division or a multiplication,
// round half to even, a clamp to +-2^30 before the conversion to i32, the zero point added and the
// result clamped in i32. Also the zero-point-shifted i32 operands the integer computes
// (quantize_qnn.cc) read.
#include "topi/quantize_util.h"

#include <algorithm>
#include <cstdint>

#include "ir/ops/quantize_params.h"
#include "kiln/topi/compute.h"
#include "topi/topi_util.h"

namespace kiln::topi {

using ir::DType;

Expr quant_param_at(const Tensor& param, const std::vector<Var>& i, int64_t axis) {
  if (param.shape().empty()) return param(std::vector<Expr>{});
  if (ir::shape_numel(param.shape()) == 1) return param(Expr(0));
  return param(Expr(i[axis]));
}

Expr round_to_i32(const Expr& v) {
  const Expr limit = constant(DType::kF32, 1073741824.0);
  const Expr r = tir::min(tir::max(tir::round(v), constant(DType::kF32, -1073741824.0)), limit);
  return cast_to(DType::kI32, r);
}

Expr clamp_to(DType dt, const Expr& v, int64_t lo, int64_t hi) {
  const int64_t tlo = ir::ops::dtype_min_int(dt), thi = ir::ops::dtype_max_int(dt);
  lo = std::max(lo, tlo);
  hi = std::min(hi, thi);
  return cast_to(dt, tir::min(tir::max(v, constant(DType::kI32, static_cast<double>(lo))),
                              constant(DType::kI32, static_cast<double>(hi))));
}

Tensor shifted_i32(const Tensor& t, const Tensor& zero_point, int64_t axis, const std::string& name) {
  return tir::compute(
      t.shape(),
      [&](const std::vector<Var>& i) {
        return cast_to(DType::kI32, t(as_exprs(i))) - cast_to(DType::kI32, quant_param_at(zero_point, i, axis));
      },
      name);
}

namespace {

ComputeResult quantize_compute(const std::vector<Tensor>& in, const ir::Attrs& attrs,
                               const std::vector<ir::TensorType>& out, const LayoutHints&) {
  const Tensor x = in[0], scale = in[1], zp = in[2];
  const int64_t axis = attrs.get_int("axis");
  const DType dt = out[0].dtype;
  return injective_result(tir::compute(
      x.shape(),
      [&](const std::vector<Var>& i) {
        const Expr q = round_to_i32(x(as_exprs(i)) / quant_param_at(scale, i, axis));
        return clamp_to(dt, q + cast_to(DType::kI32, quant_param_at(zp, i, axis)), INT64_MIN, INT64_MAX);
      },
      "quantize_linear"));
}
KILN_REGISTER_COMPUTE(quantize_linear, "quantize_linear", quantize_compute);

ComputeResult dequantize_compute(const std::vector<Tensor>& in, const ir::Attrs& attrs,
                                 const std::vector<ir::TensorType>&, const LayoutHints&) {
  const Tensor x = in[0], scale = in[1], zp = in[2];
  const int64_t axis = attrs.get_int("axis");
  return injective_result(tir::compute(
      x.shape(),
      [&](const std::vector<Var>& i) {
        const Expr d = cast_to(DType::kI32, x(as_exprs(i))) - cast_to(DType::kI32, quant_param_at(zp, i, axis));
        return cast_to(DType::kF32, d) * quant_param_at(scale, i, axis);
      },
      "dequantize_linear"));
}
KILN_REGISTER_COMPUTE(dequantize_linear, "dequantize_linear", dequantize_compute);

ComputeResult requantize_compute(const std::vector<Tensor>& in, const ir::Attrs& attrs,
                                 const std::vector<ir::TensorType>& out, const LayoutHints&) {
  const Tensor x = in[0], x_scale = in[1], y_scale = in[2], zp = in[3];
  const int64_t axis = attrs.get_int("axis");
  const DType dt = out[0].dtype;
  const int64_t lo = attrs.get_int("clamp_min"), hi = attrs.get_int("clamp_max");
  return injective_result(tir::compute(
      x.shape(),
      [&](const std::vector<Var>& i) {
        Expr acc = x(as_exprs(i));
        if (in.size() > 4) acc = acc + quant_param_at(in[4], i, axis);
        const Expr multiplier = quant_param_at(x_scale, i, axis) / quant_param_at(y_scale, i, 0);
        const Expr q = round_to_i32(cast_to(DType::kF32, acc) * multiplier);
        return clamp_to(dt, q + cast_to(DType::kI32, quant_param_at(zp, i, 0)), lo, hi);
      },
      "requantize"));
}
KILN_REGISTER_COMPUTE(requantize, "requantize", requantize_compute);

}  // namespace
}  // namespace kiln::topi
