// `max_pool2d_nchwc`, `avg_pool2d_nchwc`: max_pool2d / avg_pool2d on the blocked layout NCHW{b}c
// that AlterOpLayout keeps between convolutions, so a pool between two convs needs no layout
// transform around it.
//   x [N, C/b, H, W, b] (NCHW{b}c)  ->  y [N, C/b, OH, OW, b] (the same block)
// Attributes and dtypes exactly those of the plain op. Semantics: the plain op on the unblocked
// tensor; type inference unblocks the shape, runs the plain op's inference and blocks the result;
// the reference converts x to NCHW, runs the plain op's reference and blocks the result, so it
// agrees with the plain op bit for bit.
#include "ir/ops/layout.h"
#include "ir/ops/op_util.h"
#include "ir/ops/pool_attrs.h"

namespace kiln::ir::ops {
namespace {

struct BlockedPool {
  std::string name, plain;
  bool average;
};

Layout data_layout(const std::string& op, int64_t b) { return parse_layout(nchwc_layout(b), op, "x"); }

std::vector<TensorType> infer_blocked(const BlockedPool& p, const std::vector<TensorType>& in, const Attrs& attrs) {
  require_rank(p.name, 0, "x", in[0], 5, "[N, C/b, H, W, b]");
  const Shape& x = in[0].shape;
  if (x[4] < 1) fail_input(p.name, 0, "x", "has an empty block dimension");
  const OpDef& plain = OpRegistry::global().get(p.plain);
  const TensorType y = plain.infer_type({{in[0].dtype, {x[0], x[1] * x[4], x[2], x[3]}}}, attrs)[0];
  return {{y.dtype, {y.shape[0], x[1], y.shape[2], y.shape[3], x[4]}}};
}

std::vector<NDArray> reference_blocked(const BlockedPool& p, const std::vector<NDArray>& in, const Attrs& attrs,
                                       const std::vector<TensorType>& out_types) {
  const int64_t b = in[0].shape()[4];
  const Layout nchw = parse_layout("NCHW", p.name, "x");
  const NDArray x = convert_layout(in[0], data_layout(p.name, b), nchw);
  const OpDef& plain = OpRegistry::global().get(p.plain);
  const NDArray y = plain.reference({x}, attrs, plain.infer_type({x.type()}, attrs))[0];
  NDArray out = convert_layout(y, nchw, data_layout(p.name, b));
  KILN_ICHECK(out.type() == out_types[0]) << p.name << ": blocked result " << out.type().to_string();
  return {out};
}

OpDef make_blocked_pool(const BlockedPool& p) {
  OpDef d;
  d.name = p.name;
  d.doc = p.plain + " on NCHW{b}c data, giving NCHW{b}c (same block)";
  d.min_inputs = 1;
  d.max_inputs = 1;
  d.attrs = pool2d_attr_specs(p.average);
  d.infer_type = [p](const std::vector<TensorType>& in, const Attrs& attrs) { return infer_blocked(p, in, attrs); };
  d.reference = [p](const std::vector<NDArray>& in, const Attrs& attrs, const std::vector<TensorType>& out) {
    return reference_blocked(p, in, attrs, out);
  };
  d.pattern = OpPattern::kOutEWiseFusable;  // as the plain pools
  return with_arity_check(std::move(d));
}

}  // namespace

KILN_REGISTER_OP(max_pool2d_nchwc) { return make_blocked_pool({"max_pool2d_nchwc", "max_pool2d", false}); }
KILN_REGISTER_OP(avg_pool2d_nchwc) { return make_blocked_pool({"avg_pool2d_nchwc", "avg_pool2d", true}); }

}  // namespace kiln::ir::ops
