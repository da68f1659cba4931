// AlterInt8Layout: puts quantized convolutions on the fast int8 kernels (docs/int8.md, "Graph
// wiring"; the kernels: include/kiln/topi/int8.h). Contract:
//   - requantize(qnn_conv2d(x, w, x_zp, w_zp), x_scale, y_scale, y_zp, bias?) becomes
//     layout_transform(int8_conv2d(x', int8_pack_conv_weights(w), int8_conv_weight_sums(w),
//     bias, scale), NCHW{ob}c -> NCHW) when: x is u8, w an s8 constant with groups 1 and M a
//     multiple of ob = 16 (else 8), w_zp constant zeros, x_zp, x_scale, y_scale, y_zp (u8) and bias
//     constants, per tensor or per output channel (requantize axis 1). scale[m] = x_scale[m] /
//     y_scale is the same f32 division requantize does; the clamps and zero points become
//     attributes. The packing and the weight sums are folded by the FoldConstant that follows.
//   - x' = x, or, when x is layout_transform(NCHW{b}c -> NCHW) of a blocked u8 value (the output
//     of another int8_conv2d), that blocked value: consecutive int8 convolutions pass u8 NCHW16c
//     without transforms (the unused transform is then dead code).
//   - elementwise/broadcast ops on such NCHW views (all tensor operands views of the output's
//     shape with one block, the rest single values) and max_pool2d of a view run on the blocked
//     values (max_pool2d_nchwc), their result viewed as NCHW again: the QDQ residual chain
//     (dequantize, add, relu, quantize) stays blocked between int8 convolutions.
//   - dequantize_linear(view of such an int8_conv2d y, per-tensor constant scale and u8 zero
//     point), when the requantize y replaced had no other use, becomes the view of
//     int8_conv2d(...; dequantize = 1, dequantize_scale, dequantize_zero_point): the same f32
//     values, produced by the kernel from the f32 requantize without the u8 round trip (the QDQ
//     residual chain's dequantize of the conv's result). When the dequantize's only user also
//     takes another such dequantize (a residual add of two convolutions: the downsampling block),
//     only the first in topological order is folded: FuseOps makes that convolution the kernel
//     the add joins, and the other one keeps its u8 output (read as u8 by that kernel rather than
//     written as an f32 tensor). Stat "dequantize_folded".
//   - quantize_linear(relu(v)) on the blocks, with constant scales > 0 and every zero point the
//     lowest value of its dtype (u8 0, i8 -128, ...), reads v: quantize_linear already maps every
//     x <= 0 (and nan) to that zero point, which is what relu's 0 quantizes to, so the relu's max
//     is dropped from the residual kernel's epilogue. Stat "relu_before_quantize_dropped".
//   - narrow = 1 when every weight is in [-64, 64] (topi::int8::weights_fit_narrow): the AVX2
//     single-vpmaddubsw form; otherwise the exact two-step form. Results are identical.
// Numerics: bit-exact to the rewritten ops (the op reference in src/ir/ops/int8_conv.cc).
//   - depthwise convolutions (groups = C = M, weights [C, 1, KH, KW]) under the same conditions
//     become int8_depthwise_conv2d(x', int8_pack_depthwise_weights(w), sums, bias, scale) on
//     u8 NCHW{b}c (b = 16, else 8, dividing C): x' is the producer's blocked value when its block
//     is b, else layout_transform(x, NCHW -> NCHW{b}c). MobileNet's expand -> depthwise ->
//     project chain thus stays blocked.
// Anything else (grouped with 1 < groups < C, channel multipliers, i8 activations, weight zero
// points, i8/i16 outputs) is left to the generic integer kernels. Stats: "int8_conv2d",
// "int8_depthwise_conv2d", "narrow", "transforms_skipped", "blocked_elementwise", "pools_blocked",
// "dequantize_folded", "relu_before_quantize_dropped".
#include <cmath>
#include <optional>
#include <unordered_map>
#include <unordered_set>

#include "ir/ops/quantize_params.h"
#include "kiln/ir/graph_visitor.h"
#include "kiln/pass/pass.h"
#include "kiln/topi/int8.h"
#include "pass/pass_util.h"

namespace kiln::pass {
namespace {

using ir::Attrs;
using ir::DType;
using ir::Value;

// Output channels per block: two i32 vectors (AVX2) when they divide M, else one.
int64_t out_block(int64_t m) { return m % 16 == 0 ? 16 : (m % 8 == 0 ? 8 : 0); }

const ir::NDArray* constant_of(const Value& v) {
  return v.node->kind() == ir::NodeKind::kConstant ? &v.node->as_constant().data() : nullptr;
}

// Per-tensor (1 value) or per-channel (m values) f32 -> m values; empty when neither.
std::vector<float> per_channel_f32(const ir::NDArray& a, int64_t m) {
  if (a.dtype() != DType::kF32 || (a.numel() != 1 && a.numel() != m)) return {};
  auto d = a.data<float>();
  std::vector<float> out(static_cast<size_t>(m));
  for (int64_t i = 0; i < m; ++i) out[i] = d[a.numel() == 1 ? 0 : i];
  return out;
}

class Int8Rewriter : public ir::GraphMutator {
 public:
  Int8Rewriter(const ir::Graph& graph, PassContext& ctx)
      : GraphMutator("AlterInt8Layout"), ctx_(ctx), names_(graph), uses_(graph) {
    for (const ir::NodePtr& n : graph.topo_order()) {
      if (n->kind() != ir::NodeKind::kCall) continue;
      for (const Value& a : n->as_call().args()) users_[a.node.get()].push_back(n.get());
    }
  }

 protected:
  std::vector<Value> rewrite_call(const ir::CallNode& node, const std::vector<Value>& args) override {
    if (auto blocked = rewrite_on_blocks(node, args)) return {*blocked};
    if (&node.op() != requantize_ || args[0].node->kind() != ir::NodeKind::kCall ||
        &args[0].node->as_call().op() != qnn_conv2d_) {
      return rebuild_call(node, args);
    }
    const ir::CallNode& conv = args[0].node->as_call();
    const std::vector<Value>& ca = conv.args();
    const Value x = ca[0], w = ca[1];
    const ir::NDArray *wc = constant_of(w), *xzp = constant_of(ca[2]), *wzp = constant_of(ca[3]);
    const ir::NDArray *xs = constant_of(args[1]), *ys = constant_of(args[2]), *yzp = constant_of(args[3]);
    const ir::NDArray* bias = args.size() > 4 ? constant_of(args[4]) : nullptr;
    const int64_t m = w.type().shape[0], c = x.type().shape[1], groups = conv.attrs().get_int("groups");
    const bool depthwise = groups == c && groups == m && groups > 1 && w.type().shape[1] == 1;
    if (!wc || !xzp || !wzp || !xs || !ys || !yzp || (args.size() > 4 && !bias) || x.type().dtype != DType::kU8 ||
        w.type().dtype != DType::kI8 || yzp->dtype() != DType::kU8 || (groups != 1 && !depthwise) ||
        out_block(m) == 0 || ys->numel() != 1 || yzp->numel() != 1) {
      return rebuild_call(node, args);
    }
    for (int8_t z : wzp->data<int8_t>()) {
      if (z != 0) return rebuild_call(node, args);
    }
    const bool per_channel = xs->numel() > 1 || (bias && bias->numel() > 1);
    if (per_channel && node.attrs().get_int("axis") != 1) return rebuild_call(node, args);
    const std::vector<float> x_scale = per_channel_f32(*xs, m);
    if (x_scale.empty() || ys->dtype() != DType::kF32 || (bias && (bias->dtype() != DType::kI32 ||
                                                                   (bias->numel() != 1 && bias->numel() != m)))) {
      return rebuild_call(node, args);
    }
    // scale[m] = x_scale[m] / y_scale: requantize's own f32 division.
    const float y_scale = ys->data<float>()[0];
    ir::NDArray scale = ir::NDArray::empty(DType::kF32, {m});
    ir::NDArray b = ir::NDArray::empty(DType::kI32, {m});
    for (int64_t i = 0; i < m; ++i) {
      scale.mutable_data<float>()[i] = x_scale[i] / y_scale;
      b.mutable_data<int32_t>()[i] = bias ? bias->data<int32_t>()[bias->numel() == 1 ? 0 : i] : 0;
    }
    const Value sums = ir::make_call("int8_conv_weight_sums", {w}, {})->output();
    const Value bias_c = ir::make_constant(names_.fresh("int8_bias"), b)->output();
    const Value scale_c = ir::make_constant(names_.fresh("int8_scale"), scale)->output();
    Attrs attrs;
    attrs.set("strides", conv.attrs().get_ints("strides"))
        .set("pads", conv.attrs().get_ints("pads"))
        .set("dilations", conv.attrs().get_ints("dilations"))
        .set("x_zero_point", int64_t{xzp->data<uint8_t>()[0]})
        .set("y_zero_point", int64_t{yzp->data<uint8_t>()[0]})
        .set("clamp_min", node.attrs().get_int("clamp_min"))
        .set("clamp_max", node.attrs().get_int("clamp_max"));
    if (depthwise) return {rewrite_depthwise(conv, x, w, sums, bias_c, scale_c, attrs)};
    // Consecutive int8 convolutions: read the producer's blocked output in place.
    Value xin = x;
    if (const std::optional<Value> src = blocked_source(x)) {
      xin = *src;
      ++ctx_.stat("transforms_skipped");
    }
    const bool narrow = topi::int8::weights_fit_narrow(wc->data<int8_t>().data(), wc->numel());
    const Value packed = ir::make_call("int8_pack_conv_weights", {w}, Attrs().set("ob", out_block(m)))->output();
    attrs.set("channels", c).set("narrow", int64_t{narrow ? 1 : 0});
    const Value y = ir::make_call("int8_conv2d", {xin, packed, sums, bias_c, scale_c}, attrs, conv.name())->output();
    if (uses_.of_node(&node) == 1) single_use_.insert(y.node.get());
    ++ctx_.stat("int8_conv2d");
    if (narrow) ++ctx_.stat("narrow");
    return {plain_view(y)};
  }

 private:
  // groups = C = M: int8_depthwise_conv2d on NCHW{b}c, b = out_block(C). The input is read in
  // place when it is the view of a blocked value with that block, else moved to NCHW{b}c.
  Value rewrite_depthwise(const ir::CallNode& conv, const Value& x, const Value& w, const Value& sums, const Value& bias,
                          const Value& scale, const Attrs& attrs) {
    const int64_t block = out_block(w.type().shape[0]);
    Value xin;
    if (const std::optional<Value> src = blocked_source(x); src && src->type().shape[4] == block) {
      xin = *src;
      ++ctx_.stat("transforms_skipped");
    } else {
      xin = ir::make_call("layout_transform", {x},
                          Attrs().set("src_layout", std::string("NCHW")).set("dst_layout", "NCHW" + std::to_string(block) + "c"))
                ->output();
    }
    const Value packed = ir::make_call("int8_pack_depthwise_weights", {w}, Attrs().set("b", block))->output();
    const Value y = ir::make_call("int8_depthwise_conv2d", {xin, packed, sums, bias, scale}, attrs, conv.name())->output();
    ++ctx_.stat("int8_depthwise_conv2d");
    return plain_view(y);
  }

  // The NCHW view of a blocked [N, C/b, H, W, b] value.
  Value plain_view(const Value& blocked) {
    made_.insert(blocked.node.get());
    const std::string layout = "NCHW" + std::to_string(blocked.type().shape[4]) + "c";
    return ir::make_call("layout_transform", {blocked}, Attrs().set("src_layout", layout).set("dst_layout", std::string("NCHW")))
        ->output();
  }

  // v = layout_transform(NCHW{b}c -> NCHW) of a blocked value made by this pass (never one of
  // AlterOpLayout's f32 chains): that value.
  std::optional<Value> blocked_source(const Value& v) const {
    if (v.node->kind() != ir::NodeKind::kCall || &v.node->as_call().op() != layout_transform_) return std::nullopt;
    const ir::CallNode& lt = v.node->as_call();
    const Value& src = lt.args()[0];
    if (made_.count(src.node.get()) == 0 || src.type().rank() != 5 || lt.attrs().get_string("dst_layout") != "NCHW" ||
        lt.attrs().get_string("src_layout") != "NCHW" + std::to_string(src.type().shape[4]) + "c") {
      return std::nullopt;
    }
    return src;
  }

  // Elementwise / broadcast ops whose tensor operands are all NCHW views of blocked values of the
  // output's shape (same block), other operands single values (per-tensor scales and zero
  // points, scalars), and max_pool2d of a blocked value, run on the blocks: the residual
  // dequantize -> add -> relu -> quantize chain of a QDQ ResNet and the u8 pool between int8
  // convolutions then need no layout transform. Each element is computed from the same
  // elements as before, so the values are unchanged.
  std::optional<Value> rewrite_on_blocks(const ir::CallNode& node, const std::vector<Value>& args) {
    if (node.num_outputs() != 1 || node.output_types()[0].rank() != 4) return std::nullopt;
    if (&node.op() == max_pool2d_) {
      const std::optional<Value> src = blocked_source(args[0]);
      if (!src) return std::nullopt;
      ++ctx_.stat("pools_blocked");
      return plain_view(ir::make_call("max_pool2d_nchwc", {*src}, node.attrs(), node.name())->output());
    }
    if (std::optional<Value> folded = fold_dequantize(node, args)) return folded;
    if (node.op().pattern != ir::OpPattern::kElemwise && node.op().pattern != ir::OpPattern::kBroadcast) return std::nullopt;
    const ir::Shape& shape = node.output_types()[0].shape;
    std::vector<Value> blocked_args;
    int64_t block = 0;
    for (const Value& a : args) {
      if (a.type().shape == shape) {
        const std::optional<Value> src = blocked_source(a);
        if (!src || (block != 0 && src->type().shape[4] != block)) return std::nullopt;
        block = src->type().shape[4];
        blocked_args.push_back(*src);
      } else if (a.type().numel() == 1) {
        blocked_args.push_back(a);
      } else {
        return std::nullopt;
      }
    }
    if (block == 0) return std::nullopt;
    if (&node.op() == quantize_linear_ && quantizes_relu_away(blocked_args)) {
      blocked_args[0] = blocked_args[0].node->as_call().args()[0];
      ++ctx_.stat("relu_before_quantize_dropped");
    }
    ++ctx_.stat("blocked_elementwise");
    return plain_view(ir::make_call(node.op(), blocked_args, node.attrs(), node.name())->output());
  }

  // dequantize_linear(view of a single-use int8_conv2d, constant per-tensor scale, u8 zero
  // point) -> the view of the same convolution with the dequantize as its output (f32).
  std::optional<Value> fold_dequantize(const ir::CallNode& node, const std::vector<Value>& args) {
    if (&node.op() != dequantize_linear_) return std::nullopt;
    const std::optional<Value> src = blocked_source(args[0]);
    if (!src || single_use_.count(src->node.get()) == 0 || &src->node->as_call().op() != int8_conv2d_) return std::nullopt;
    const ir::NDArray *ds = constant_of(args[1]), *dzp = constant_of(args[2]);
    if (!ds || !dzp || ds->numel() != 1 || dzp->numel() != 1 || ds->dtype() != DType::kF32 || dzp->dtype() != DType::kU8) {
      return std::nullopt;
    }
    // A user that also takes an already folded dequantize (e.g. add(dq(conv a), dq(conv b))):
    // leave this one to be read as u8 by that kernel.
    const auto users = users_.find(&node);
    if (users != users_.end() && users->second.size() == 1) {
      for (const Value& other : users->second[0]->as_call().args()) {
        if (other.node.get() != &node && folded_.count(other.node.get()) != 0) return std::nullopt;
      }
    }
    folded_.insert(&node);
    const ir::CallNode& conv = src->node->as_call();
    Attrs attrs = conv.attrs();
    attrs.set("dequantize", int64_t{1})
        .set("dequantize_scale", static_cast<double>(ds->data<float>()[0]))
        .set("dequantize_zero_point", int64_t{dzp->data<uint8_t>()[0]});
    ++ctx_.stat("dequantize_folded");
    return plain_view(ir::make_call(conv.op(), conv.args(), attrs, conv.name())->output());
  }

  // quantize_linear(x = relu(v), scale, zero_point) equals quantize_linear(v, ...) when every
  // scale is a constant > 0 and every zero point the lowest value of its dtype: for v <= 0 (and
  // -inf, -0) round(v / scale) <= 0 clamps to the zero point, nan quantizes to the zero point
  // (the rounding rule: nan -> 0), and relu's 0 quantizes to the zero point too.
  bool quantizes_relu_away(const std::vector<Value>& args) const {
    if (args[0].node->kind() != ir::NodeKind::kCall || &args[0].node->as_call().op() != relu_) return false;
    const ir::NDArray *scale = constant_of(args[1]), *zp = constant_of(args[2]);
    if (!scale || !zp || scale->dtype() != DType::kF32) return false;
    for (float v : scale->data<float>()) {
      if (!(v > 0) || !std::isfinite(v)) return false;
    }
    const double lowest = static_cast<double>(ir::ops::dtype_min_int(zp->dtype()));
    for (int64_t i = 0; i < zp->numel(); ++i) {
      if (zp->get_as_double(i) != lowest) return false;
    }
    return true;
  }

  PassContext& ctx_;
  NameSupply names_;
  UseCounts uses_;
  std::unordered_set<const ir::Node*> single_use_;  // int8_conv2d values whose requantize had one use
  std::unordered_map<const ir::Node*, std::vector<const ir::Node*>> users_;  // of the input graph
  std::unordered_set<const ir::Node*> folded_;  // the input graph's dequantize calls folded
  std::unordered_set<const ir::Node*> made_;  // the blocked values this pass made
  const ir::OpDef* requantize_ = op_ptr("requantize");
  const ir::OpDef* qnn_conv2d_ = op_ptr("qnn_conv2d");
  const ir::OpDef* layout_transform_ = op_ptr("layout_transform");
  const ir::OpDef* max_pool2d_ = op_ptr("max_pool2d");
  const ir::OpDef* dequantize_linear_ = op_ptr("dequantize_linear");
  const ir::OpDef* quantize_linear_ = op_ptr("quantize_linear");
  const ir::OpDef* relu_ = op_ptr("relu");
  const ir::OpDef* int8_conv2d_ = op_ptr("int8_conv2d");
};

class AlterInt8Layout final : public Pass {
 public:
  const char* name() const override { return "AlterInt8Layout"; }
  ir::Graph run(const ir::Graph& graph, PassContext& ctx) const override { return Int8Rewriter(graph, ctx).mutate(graph); }
};

}  // namespace

std::unique_ptr<Pass> make_alter_int8_layout() { return std::make_unique<AlterInt8Layout>(); }

}  // namespace kiln::pass
