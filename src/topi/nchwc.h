// Computes on the blocked NCHW{b}c layout shared between the files of src/topi/ that build them:
// the depthwise convolution (depthwise_nchwc.cc) that conv2d_nchwc dispatches to, and the pooling
// computes (pool_nchwc.cc).
#ifndef KILN_SRC_TOPI_NCHWC_H_
#define KILN_SRC_TOPI_NCHWC_H_

#include <optional>

#include "kiln/topi/nn.h"
#include "topi/topi_util.h"

namespace kiln::topi {

// Whether conv2d_nchwc with these operands is a depthwise convolution that depthwise_conv2d_nchwc
// takes: x [N, C/b, H, W, b], w [C/b, 1, kh, kw, 1, b] (OIHW1i{b}o, multiplier 1), groups == C,
// output block b, f32 or f64.
bool is_blocked_depthwise(const Tensor& x, const Tensor& w, const Conv2dParams& p, const ir::TensorType& out);

// Depthwise convolution directly on NCHW{b}c: y[n, cb, oh, ow, c] = bias[cb*b + c] +
// sum_{rh, rw} xpad[n, cb, oh*sh + rh*dh, ow*sw + rw*dw, c] * w[cb, 0, rh, rw, 0, c]. Parts:
// "anchor" (the window sum, [N, C/b, OH, OW, b]) and, with padding, "pad" (the zero-padded input,
// which the schedule computes per output row). Schedule template kDepthwise (rank-5 anchor).
ComputeResult depthwise_conv2d_nchwc(const Tensor& x, const Tensor& w, const std::optional<Tensor>& bias,
                                     const Conv2dParams& p, const ir::TensorType& out);

}  // namespace kiln::topi

#endif  // KILN_SRC_TOPI_NCHWC_H_
