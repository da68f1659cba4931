// Pieces of the conv2d computes that callers other than the op's registered compute need: the
// benchmark (and, later, a layout pass that packs constant weights at compile time) builds the
// blocked convolution on already-packed weights.
#ifndef KILN_TOPI_NN_H_
#define KILN_TOPI_NN_H_

#include <cstdint>

#include "kiln/ir/attrs.h"
#include "kiln/ir/tensor_type.h"
#include "kiln/tir/tensor.h"
#include "kiln/topi/compute.h"

namespace kiln::topi {

struct Conv2dParams {
  int64_t stride_h = 1, stride_w = 1;
  int64_t pad_top = 0, pad_left = 0, pad_bottom = 0, pad_right = 0;
  int64_t dilation_h = 1, dilation_w = 1;
  int64_t groups = 1;
};

// From conv2d's validated attributes.
Conv2dParams conv2d_params(const ir::Attrs& attrs);

// The output-channel block of the packed weight layout for this target: two f32 vectors when
// they divide out_channels, else one, else the largest power of two dividing out_channels.
// (out_width is reserved for shape-dependent rules.)
int64_t conv2d_oc_block(int64_t out_channels, int64_t out_width, const LayoutHints& hints);

// The input-channel block of the packed input NCHW[icb]c: the largest power of two <= the f32
// vector lanes dividing in_channels.
int64_t conv2d_ic_block(int64_t in_channels, const LayoutHints& hints);

// wp[M/ob, C/icb, kh, kw, icb, ob] = w[mo*ob + mi, ci*icb + cj, kh, kw] (the blocks must divide).
tir::Tensor pack_conv2d_weights(const tir::Tensor& w, int64_t oc_block, int64_t ic_block);

// The blocked convolution: outputs = {y[N, M/ob, OH, OW, ob]} (no bias, no unpacking) from the
// NCHW input (packed to NCHW[icb]c with its padding inside the kernel) and packed weights; parts
// "anchor" and "pack_x", schedule kConv2dNchwc. `out` is conv2d's NCHW output type. The anchor
// is the output itself, except where register tiles over the output pixels numbered as one axis
// beat rows x columns (conv2d_flatten_pixels on `hints`'s registers: small outputs such as 7x7):
// then the anchor is acc[N, M/ob, P, ob], P = OH*OW, padded to a multiple of the flat tile (layout
// "pixel_tile", the default tile_ow; pixel p >= OH*OW recomputes the last one) unless the conv is
// an unpadded 1x1 (contiguous pixels), and the output the
// part "unflatten" = acc[n, mo, oh*OW + ow, o]. Readers of the convolution read outputs[0].
ComputeResult conv2d_nchwc(const tir::Tensor& x, const tir::Tensor& w_packed, const Conv2dParams& p,
                           const ir::TensorType& out, int64_t oc_block, const LayoutHints& hints);

// The same on an input already blocked as NCHW[icb]c (xb[N, C/icb, H, W, icb], icb = the packed
// weights' input block): "pack_x" only pads (or subsamples a strided 1x1) from it; without
// padding or subsampling there is no pack_x part and the kernel reads xb itself.
ComputeResult conv2d_nchwc_blocked(const tir::Tensor& xb, const tir::Tensor& w_packed, const Conv2dParams& p,
                                   const ir::TensorType& out, int64_t oc_block, const LayoutHints& hints);

}  // namespace kiln::topi

#endif  // KILN_TOPI_NN_H_
