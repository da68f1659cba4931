// Generic computes of the integer operators qnn_conv2d and qnn_matmul (docs/int8.md): each
// operand becomes an i32 stage minus its zero point (inlined into the packing stages), and the
// product is the f32 convolution/matmul template instantiated on i32 — the blocked NCHW[x]c
// register-tiled conv2d (groups 1), the depthwise window sum (groups == C == M), the generic
// reduction otherwise; the packed-panel matmul — so the sums are exact i32 (wrapping like the
// reference's int64 sum modulo 2^32) and vectorized over output channels / columns. Padding reads
// 0 in the shifted domain, i.e. the zero point. Fast u8 x s8 dot-product kernels replace these
// for the common shapes (issue 13, i8kern).
#include "kiln/topi/compute.h"
#include "topi/quantize_util.h"
#include "topi/topi_util.h"

namespace kiln::topi {
namespace {

using ir::DType;

ComputeResult qnn_conv2d_compute(const std::vector<Tensor>& in, const ir::Attrs& attrs,
                                 const std::vector<ir::TensorType>& out, const LayoutHints& hints) {
  const Tensor xs = shifted_i32(in[0], in[2], 0, "x_shift");
  const Tensor ws = shifted_i32(in[1], in[3], 0, "w_shift");
  return ComputeRegistry::global().get("conv2d").compute({xs, ws}, attrs, out, hints);
}
KILN_REGISTER_COMPUTE(qnn_conv2d, "qnn_conv2d", qnn_conv2d_compute);

ComputeResult qnn_matmul_compute(const std::vector<Tensor>& in, const ir::Attrs& attrs,
                                 const std::vector<ir::TensorType>& out, const LayoutHints& hints) {
  const auto ra = static_cast<int64_t>(in[0].shape().size()), rb = static_cast<int64_t>(in[1].shape().size());
  const Tensor as = shifted_i32(in[0], in[2], ra - 2, "a_shift");
  const Tensor bs = shifted_i32(in[1], in[3], rb - 1, "b_shift");
  return ComputeRegistry::global().get("matmul").compute({as, bs}, attrs, out, hints);
}
KILN_REGISTER_COMPUTE(qnn_matmul, "qnn_matmul", qnn_matmul_compute);

}  // namespace
}  // namespace kiln::topi
