// The int8 convolution ops' requantization attributes (x_zero_point, y_zero_point, clamp_min,
// clamp_max, dequantize*: src/ir/ops/int8_conv_common.h) as the kernels' Requantize
// (include/kiln/topi/int8.h). Shared by the computes of int8_conv2d, int8_depthwise_conv2d
// (int8_graph_ops.cc) and int8_conv2d_winograd (int8_winograd.cc).
#ifndef KILN_SRC_TOPI_INT8_ATTRS_H_
#define KILN_SRC_TOPI_INT8_ATTRS_H_

#include "kiln/ir/attrs.h"
#include "kiln/topi/int8.h"

namespace kiln::topi::int8 {

Requantize requantize_of(const ir::Attrs& attrs);

}  // namespace kiln::topi::int8

#endif  // KILN_SRC_TOPI_INT8_ATTRS_H_
