// What the fast int8 convolution ops share (int8_conv.cc: int8_conv2d, int8_depthwise_conv2d;
// int8_winograd.cc: int8_conv2d_winograd): their geometry and requantization attributes, the
// checks of the `dequantize` attributes, and the reference requantize / dequantize of one value.
#ifndef KILN_SRC_IR_OPS_INT8_CONV_COMMON_H_
#define KILN_SRC_IR_OPS_INT8_CONV_COMMON_H_

#include <algorithm>
#include <cmath>
#include <string>
#include <vector>

#include "ir/ops/op_util.h"
#include "ir/ops/quantize_params.h"

namespace kiln::ir::ops::int8_conv {

// strides, pads, dilations, x_zero_point, y_zero_point, clamp_min, clamp_max.
inline std::vector<AttrSpec> requantize_attrs() {
  return {
      {"strides", AttrKind::kInts, AttrValue(std::vector<int64_t>{1, 1}), "[sh, sw]"},
      {"pads", AttrKind::kInts, AttrValue(std::vector<int64_t>{0, 0, 0, 0}), "[top, left, bottom, right]"},
      {"dilations", AttrKind::kInts, AttrValue(std::vector<int64_t>{1, 1}), "[dh, dw]"},
      {"x_zero_point", AttrKind::kInt, AttrValue(int64_t{0}), "u8 input zero point"},
      {"y_zero_point", AttrKind::kInt, AttrValue(int64_t{0}), "u8 output zero point"},
      {"clamp_min", AttrKind::kInt, AttrValue(int64_t{0}), "lowest output value"},
      {"clamp_max", AttrKind::kInt, AttrValue(int64_t{255}), "highest output value"},
  };
}

// dequantize, dequantize_scale, dequantize_zero_point: a u8 result's dequantized f32 output.
inline void add_dequantize_attrs(std::vector<AttrSpec>& attrs) {
  attrs.push_back({"dequantize", AttrKind::kInt, AttrValue(int64_t{0}), "1: f32 output, the u8 result dequantized"});
  attrs.push_back({"dequantize_scale", AttrKind::kFloat, AttrValue(1.0), "f32 scale of that dequantize"});
  attrs.push_back({"dequantize_zero_point", AttrKind::kInt, AttrValue(int64_t{0}), "u8 zero point of that dequantize"});
}

// The output dtype (f32 with dequantize = 1, else u8), after checking the dequantize attributes.
inline DType output_dtype(const std::string& op, const Attrs& attrs) {
  if (attrs.get_int("dequantize") == 0) return DType::kU8;
  const double ds = attrs.get_float("dequantize_scale");
  const int64_t dzp = attrs.get_int("dequantize_zero_point");
  if (!(ds > 0) || !std::isfinite(ds) || static_cast<double>(static_cast<float>(ds)) != ds) {
    fail_attr(op, "dequantize_scale", "is " + std::to_string(ds) + ": it must be a positive finite f32 value");
  }
  if (dzp < 0 || dzp > 255) fail_attr(op, "dequantize_zero_point", "is " + std::to_string(dzp) + ": it must be a u8 value");
  return DType::kF32;
}

// clamp(R(f32(acc + bias) * scale) + y_zp, lo, hi) with the i32 sum wrapping modulo 2^32.
inline uint8_t requantize_one(int64_t acc, int32_t bias, float scale, const Attrs& attrs) {
  const int64_t lo = std::max<int64_t>(0, attrs.get_int("clamp_min")), hi = std::min<int64_t>(255, attrs.get_int("clamp_max"));
  const auto sum = static_cast<int32_t>(static_cast<uint32_t>(acc) + static_cast<uint32_t>(bias));
  return static_cast<uint8_t>(clamp_int(round_quant(static_cast<float>(sum) * scale) + attrs.get_int("y_zero_point"), lo, hi));
}

// The op's output: the u8 result q itself, or (dequantize = 1) dequantize_linear's reference
// formula on it, f32(q - dequantize_zero_point) * dequantize_scale.
inline NDArray finish_output(NDArray q, const Attrs& attrs) {
  if (attrs.get_int("dequantize") == 0) return q;
  const auto ds = static_cast<float>(attrs.get_float("dequantize_scale"));
  const auto dzp = static_cast<int32_t>(attrs.get_int("dequantize_zero_point"));
  NDArray f = NDArray::empty(DType::kF32, q.shape());
  auto qo = q.data<uint8_t>();
  auto fo = f.mutable_data<float>();
  for (int64_t i = 0; i < f.numel(); ++i) fo[i] = static_cast<float>(static_cast<int32_t>(qo[i]) - dzp) * ds;
  return f;
}

}  // namespace kiln::ir::ops::int8_conv

#endif  // KILN_SRC_IR_OPS_INT8_CONV_COMMON_H_
