// Computes of the blocked-layout graph ops that AlterOpLayout (-O3) introduces
// (src/ir/ops/layout_transform.cc, conv2d_nchwc.cc):
//   layout_transform  out[dst index] = x[the same element's src index] (injective index map);
//   conv2d_nchwc      x [N, C/xb, H, W, xb], pre-packed w [M/ob, C/ib, kh, kw, ib, ob], bias [M]?
//                     -> [N, M/ob, OH, OW, ob]: topi's blocked convolution (conv2d_nchwc in nn.h,
//                     schedule template kConv2dNchwc) with the weights used as given (packed at
//                     compile time), the input read in place when xb == ib (copied only to pad
//                     or subsample; another blocking goes through an NCHW index map that the
//                     packing stage inlines), and the bias added in the output nest (applied to
//                     the register tile with the rest of a fused elementwise epilogue).
//                     Depthwise (groups == C, weights OIHW1i{b}o, f32/f64): the blocked depthwise
//                     compute of depthwise_nchwc.cc, no unblocking. Other groups and dtypes:
//                     conv2d's own compute on the unblocked input and weights, its output blocked
//                     in the output nest.
// Added by the driver helper so that -O3 can lower; owned by topi.
#include <map>

#include "ir/ops/layout.h"
#include "kiln/topi/build.h"
#include "kiln/topi/compute.h"
#include "kiln/topi/nn.h"
#include "topi/nchwc.h"
#include "topi/topi_util.h"

namespace kiln::topi {
namespace {

using ir::DType;
using tir::Expr;
using tir::Tensor;
using tir::Var;

// The src-layout index of the element at `dst_index` of the dst layout.
std::vector<Expr> map_layout_index(const std::vector<Expr>& dst_index, const ir::ops::Layout& src,
                                   const ir::ops::Layout& dst) {
  // Primal coordinate per axis letter.
  std::map<char, Expr> primal;
  for (size_t d = 0; d < dst.dims.size(); ++d) {
    const ir::ops::LayoutDim& dim = dst.dims[d];
    if (dim.factor == 0) {
      const int64_t block = dst.block_of(dim.axis);
      Expr outer = block > 1 ? dst_index[d] * Expr(block) : dst_index[d];
      primal[dim.axis] = primal.count(dim.axis) ? primal[dim.axis] + outer : outer;
    } else {
      primal[dim.axis] = primal.count(dim.axis) ? primal[dim.axis] + dst_index[d] : dst_index[d];
    }
  }
  std::vector<Expr> out;
  for (const ir::ops::LayoutDim& dim : src.dims) {
    const Expr p = primal.at(dim.axis);
    const int64_t block = src.block_of(dim.axis);
    if (dim.factor == 0) {
      out.push_back(block > 1 ? tir::floordiv(p, Expr(block)) : p);
    } else {
      out.push_back(tir::floormod(p, Expr(dim.factor)));
    }
  }
  return out;
}

ComputeResult layout_transform_compute(const std::vector<Tensor>& in, const ir::Attrs& attrs,
                                       const std::vector<ir::TensorType>& out, const LayoutHints&) {
  const ir::ops::Layout src = ir::ops::parse_layout(attrs.get_string("src_layout"), "layout_transform", "src_layout");
  const ir::ops::Layout dst = ir::ops::parse_layout(attrs.get_string("dst_layout"), "layout_transform", "dst_layout");
  const Tensor x = in[0];
  Tensor y = tir::compute(
      out[0].shape, [&](const std::vector<Var>& i) { return x(map_layout_index(as_exprs(i), src, dst)); },
      "layout_transform");
  return injective_result(y);
}
KILN_REGISTER_COMPUTE(layout_transform, "layout_transform", layout_transform_compute);

ComputeResult conv2d_nchwc_compute(const std::vector<Tensor>& in, const ir::Attrs& attrs,
                                   const std::vector<ir::TensorType>& out, const LayoutHints& hints) {
  const Conv2dParams p = conv2d_params(attrs);
  const DType dt = out[0].dtype;
  const Tensor xb = in[0], w = in[1];
  if (is_blocked_depthwise(xb, w, p, out[0])) {
    return depthwise_conv2d_nchwc(xb, w, in.size() > 2 ? std::optional<Tensor>(in[2]) : std::nullopt, p, out[0]);
  }
  const ir::Shape& xs = xb.shape();
  const int64_t xblock = xs[4];
  const ir::Shape& os = out[0].shape;
  const int64_t ob = os[4];
  // The input as NCHW (inlined into the kernel's packing stage).
  const Tensor x4 = tir::compute(
      {xs[0], xs[1] * xblock, xs[2], xs[3]},
      [&](const std::vector<Var>& i) {
        return xb(i[0], tir::floordiv(i[1], Expr(xblock)), i[2], i[3], tir::floormod(i[1], Expr(xblock)));
      },
      "unblock_x");
  // Grouped convs run the blocked kernel when every output block lies in one group (the input
  // blocks then do too: the weights hold (C/g)/ib of them).
  const bool blocks_in_groups = p.groups == 1 || (os[1] * ob) % (p.groups * ob) == 0;
  if (!blocks_in_groups || (dt != DType::kF32 && dt != DType::kF64)) {
    // Blocks straddling groups (or another dtype): conv2d's own compute (depthwise template, or the
    // generic reduction) on the unblocked input and weights, its output blocked in the output nest.
    const ir::Shape& wsh = w.shape();
    const int64_t ib = wsh[4], wob = wsh[5];
    const Tensor w4 = tir::compute(
        {wsh[0] * wob, wsh[1] * ib, wsh[2], wsh[3]},
        [&](const std::vector<Var>& i) {
          return w(tir::floordiv(i[0], Expr(wob)), tir::floordiv(i[1], Expr(ib)), i[2], i[3],
                   tir::floormod(i[1], Expr(ib)), tir::floormod(i[0], Expr(wob)));
        },
        "unpack_w");
    std::vector<Tensor> args = {x4, w4};
    if (in.size() > 2) args.push_back(in[2]);
    ComputeResult r = compute_op("conv2d", args, attrs, hints);
    const Tensor y4 = r.outputs[0];
    r.outputs = {tir::compute(
        os, [&](const std::vector<Var>& i) { return y4(i[0], i[1] * Expr(ob) + i[4], i[2], i[3]); }, "block_y")};
    return r;
  }
  const ir::TensorType nchw{dt, {os[0], os[1] * ob, os[2], os[3]}};
  // Input blocked as the weights expect (AlterOpLayout makes ib = the input's block): read as it
  // is; another blocking goes through the NCHW view.
  ComputeResult r = w.shape()[4] == xblock ? conv2d_nchwc_blocked(xb, w, p, nchw, ob, hints)
                                            : conv2d_nchwc(x4, w, p, nchw, ob, hints);
  if (in.size() > 2) {
    const Tensor acc = r.outputs[0];
    const Tensor bias = in[2];
    r.outputs = {tir::compute(
        os,
        [&](const std::vector<Var>& i) {
          return acc(as_exprs(i)) + bias(i[1] * Expr(ob) + i[4]);
        },
        "bias_add")};
  }
  return r;
}
KILN_REGISTER_COMPUTE(conv2d_nchwc, "conv2d_nchwc", conv2d_nchwc_compute);

}  // namespace
}  // namespace kiln::topi
