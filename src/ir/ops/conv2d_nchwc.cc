// `conv2d_nchwc`: conv2d in the blocked layout that the CPU conv schedule prefers.
//   x    [N, C/xb, H, W, xb]            (layout NCHW{xb}c)
//   w    [M/ob, (C/g)/ib, kh, kw, ib, ob] (layout OIHW{ib}i{ob}o, from layout_transform of OIHW)
//   bias [M] (optional, plain: element m = mo * ob + mi)
//   y    [N, M/ob, OH, OW, ob]          (layout NCHW{ob}c)
// Attributes as conv2d (strides, pads, dilations, groups). Semantics: exactly conv2d on the
// unblocked tensors; the reference implementation converts x and w to NCHW/OIHW, runs conv2d's
// reference and blocks the result, so it agrees with conv2d bit for bit. Type inference checks
// the blocked dimensions and then runs conv2d's inference on the unblocked shapes.
#include "ir/ops/layout.h"
#include "ir/ops/conv2d_attrs.h"
#include "ir/ops/op_util.h"

namespace kiln::ir::ops {
namespace {

constexpr const char* kOp = "conv2d_nchwc";

const OpDef& conv2d_def() {
  static const OpDef& op = OpRegistry::global().get("conv2d");
  return op;
}

struct Blocking {
  int64_t xb, ib, ob;
};

Blocking blocking_of(const std::vector<TensorType>& in) {
  require_rank(kOp, 0, "x", in[0], 5, "[N, C/xb, H, W, xb]");
  require_rank(kOp, 1, "w", in[1], 6, "[M/ob, (C/groups)/ib, kh, kw, ib, ob]");
  return {in[0].shape[4], in[1].shape[4], in[1].shape[5]};
}

Layout data_layout(int64_t b) { return parse_layout(nchwc_layout(b), kOp, "x"); }
Layout weight_layout(const Blocking& b) {
  return parse_layout("OIHW" + std::to_string(b.ib) + "i" + std::to_string(b.ob) + "o", kOp, "w");
}

std::vector<TensorType> infer_conv2d_nchwc(const std::vector<TensorType>& in, const Attrs& attrs) {
  const Blocking b = blocking_of(in);
  if (b.xb < 1 || b.ib < 1 || b.ob < 1) fail_input(kOp, 0, "x", "has an empty block dimension");
  const Shape& x = in[0].shape;
  const Shape& w = in[1].shape;
  std::vector<TensorType> plain = {{in[0].dtype, {x[0], x[1] * b.xb, x[2], x[3]}},
                                   {in[1].dtype, {w[0] * b.ob, w[1] * b.ib, w[2], w[3]}}};
  if (in.size() > 2) plain.push_back(in[2]);
  const TensorType y = conv2d_def().infer_type(plain, attrs)[0];
  return {{y.dtype, {y.shape[0], y.shape[1] / b.ob, y.shape[2], y.shape[3], b.ob}}};
}

std::vector<NDArray> reference_conv2d_nchwc(const std::vector<NDArray>& in, const Attrs& attrs,
                                            const std::vector<TensorType>& out_types) {
  const Blocking b = blocking_of({in[0].type(), in[1].type()});
  const Layout nchw = parse_layout("NCHW", kOp, "x"), oihw = parse_layout("OIHW", kOp, "w");
  std::vector<NDArray> plain = {convert_layout(in[0], data_layout(b.xb), nchw),
                                convert_layout(in[1], weight_layout(b), oihw)};
  if (in.size() > 2) plain.push_back(in[2]);
  std::vector<TensorType> plain_types;
  for (const auto& a : plain) plain_types.push_back(a.type());
  const std::vector<TensorType> y_type = conv2d_def().infer_type(plain_types, attrs);
  const NDArray y = conv2d_def().reference(plain, attrs, y_type)[0];
  NDArray out = convert_layout(y, nchw, data_layout(b.ob));
  KILN_ICHECK(out.type() == out_types[0]) << kOp << ": blocked result " << out.type().to_string();
  return {out};
}

}  // namespace

KILN_REGISTER_OP(conv2d_nchwc) {
  OpDef d;
  d.name = kOp;
  d.doc = "conv2d on NCHW{xb}c data and OIHW{ib}i{ob}o weights, giving NCHW{ob}c";
  d.min_inputs = 2;
  d.max_inputs = 3;
  d.attrs = conv2d_attr_specs();
  d.infer_type = infer_conv2d_nchwc;
  d.reference = reference_conv2d_nchwc;
  d.pattern = OpPattern::kOutEWiseFusable;
  return with_arity_check(std::move(d));
}

}  // namespace kiln::ir::ops
