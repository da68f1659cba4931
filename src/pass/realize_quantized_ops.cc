// RealizeQuantizedOps: rewrites the dequantize -> float op -> quantize patterns of QDQ models into
// integer operators (TVM's QNN canonicalization; docs/int8.md, "Rewrite pass"). Contract:
//   - The root is a quantize_linear q with a constant per-tensor scale and zero point (8-bit
//     output). Recognized producers of q's input (each intermediate with exactly one use):
//       conv2d(dq(x), dq(w), bias?)      -> requantize(qnn_conv2d(x, w), x_scale * w_scale, bias)
//       matmul(dq(a), dq(b))             -> requantize(qnn_matmul(a, b), a_scale * b_scale)
//       gemm(dq(a), dq(b), bias?)        -> requantize(qnn_matmul(a, b'), a_scale * b_scale, bias)
//         (alpha = beta = 1, trans_a = 0; with trans_b, b' = transpose(b) of a constant b, per
//         tensor or per row of b = per output column, folded by FoldConstant)
//     optionally through relu / clip before q (fused as requantize's clamp: q(clip(t, a, b)) =
//     clamp(q(t), q(a), q(b)) since rounding is monotonic); dq(x)/dq(a) per tensor, dq(w) per
//     tensor or per output channel (axis 0), dq(b) per tensor or per column (its last axis), all
//     parameters constants and the quantized operands 8-bit. A bias is dq(i32 b) with zero point
//     0 and exactly the scale x_scale * w_scale (used as is), or an f32 constant (quantized with
//     that scale, round half to even).
//       max_pool2d / reshape / transpose (dq(x)) and concat(dq(x_i)...) -> the op on the integers,
//     when every dq has q's exact scale and zero point (exact: q(dq(v)) = v).
//   - Results: the integer path matches the reference executor on the unrewritten graph within one
//     unit of the output's last place (the float graph rounds the f32 convolution/matmul sum and
//     the bias add before dividing by the scale; the integer path sums exactly and rounds once;
//     a float bias is rounded to the accumulator's scale). Everything else is left as it is
//     (exact float semantics; FoldConstant then folds dequantized constant weights).
// Op identities come from the registry (op_ptr). Stats: "qnn_convs", "qnn_matmuls", "integer_moves".
#include <cmath>
#include <optional>

#include "ir/ops/quantize_params.h"
#include "kiln/ir/graph_visitor.h"
#include "kiln/pass/pass.h"
#include "pass/pass_util.h"

namespace kiln::pass {
namespace {

using ir::Attrs;
using ir::DType;
using ir::NDArray;
using ir::Value;

bool is_constant(const Value& v) { return v.node->kind() == ir::NodeKind::kConstant; }
bool is_8bit(DType d) { return d == DType::kI8 || d == DType::kU8; }

std::vector<float> f32_values(const Value& v) {
  const NDArray a = v.node->as_constant().data();
  auto d = a.data<float>();
  return {d.begin(), d.end()};
}

// A dequantize_linear's operands when its scale and zero point are constants.
struct Dequant {
  Value x, scale, zero_point;
  int64_t axis = 0;
  int64_t count = 1;  // parameter values (1: per tensor)
};

class Matcher {
 public:
  explicit Matcher(const ir::Graph& graph) : uses_(graph) {}

  const ir::CallNode* call_of(const Value& v, const ir::OpDef* op) const {
    if (v.node->kind() != ir::NodeKind::kCall || v.node->num_outputs() != 1) return nullptr;
    const ir::CallNode& c = v.node->as_call();
    return &c.op() == op ? &c : nullptr;
  }
  const ir::CallNode* single_use(const Value& v, const ir::OpDef* op) const {
    const ir::CallNode* c = call_of(v, op);
    return c && uses_.of_node(v.node.get()) == 1 ? c : nullptr;
  }
  std::optional<Dequant> dequant(const Value& v) const {
    const ir::CallNode* c = call_of(v, dequantize_);
    if (!c || !is_constant(c->args()[1]) || !is_constant(c->args()[2])) return std::nullopt;
    return Dequant{c->args()[0], c->args()[1], c->args()[2], c->attrs().get_int("axis"),
                   c->args()[1].type().numel()};
  }
  // dq of an 8-bit tensor, per tensor or per `axis`.
  std::optional<Dequant> dequant_8bit(const Value& v, int64_t axis) const {
    std::optional<Dequant> d = dequant(v);
    if (!d || !is_8bit(d->x.type().dtype) || (d->count > 1 && d->axis != axis)) return std::nullopt;
    return d;
  }

  UseCounts uses_;
  const ir::OpDef* quantize_ = op_ptr("quantize_linear");
  const ir::OpDef* dequantize_ = op_ptr("dequantize_linear");
  const ir::OpDef* conv2d_ = op_ptr("conv2d");
  const ir::OpDef* matmul_ = op_ptr("matmul");
  const ir::OpDef* gemm_ = op_ptr("gemm");
  const ir::OpDef* relu_ = op_ptr("relu");
  const ir::OpDef* clip_ = op_ptr("clip");
  const ir::OpDef* max_pool_ = op_ptr("max_pool2d");
  const ir::OpDef* reshape_ = op_ptr("reshape");
  const ir::OpDef* transpose_ = op_ptr("transpose");
  const ir::OpDef* concat_ = op_ptr("concat");
};

class Rewriter : public ir::GraphMutator {
 public:
  Rewriter(const ir::Graph& graph, PassContext& ctx)
      : GraphMutator("RealizeQuantizedOps"), ctx_(ctx), m_(graph), names_(graph) {}

 protected:
  std::vector<Value> rewrite_call(const ir::CallNode& node, const std::vector<Value>& new_args) override {
    if (&node.op() == m_.quantize_) {
      if (std::optional<Value> v = realize(node)) return {*v};
    }
    return rebuild_call(node, new_args);
  }

 private:
  Value constant(const std::string& base, NDArray data) { return ir::make_constant(names_.fresh(base), std::move(data))->output(); }

  std::optional<Value> realize(const ir::CallNode& q) {
    const Value ys = q.args()[1], yzp = q.args()[2];
    if (!is_constant(ys) || !is_constant(yzp) || ys.type().numel() != 1 || !is_8bit(yzp.type().dtype)) return std::nullopt;
    if (std::optional<Value> v = integer_move(q)) return v;
    const float out_scale = f32_values(ys)[0];
    const int64_t zp = static_cast<int64_t>(yzp.node->as_constant().data().get_as_double(0));
    // Optional relu / clip before q.
    int64_t lo = ir::ops::dtype_min_int(yzp.type().dtype), hi = ir::ops::dtype_max_int(yzp.type().dtype);
    Value t = q.args()[0];
    if (const ir::CallNode* r = m_.single_use(t, m_.relu_)) {
      lo = std::max(lo, zp);
      t = r->args()[0];
    } else if (const ir::CallNode* c = m_.single_use(t, m_.clip_)) {
      const double a = c->attrs().get_float("min"), b = c->attrs().get_float("max");
      if (std::isfinite(a)) lo = std::max(lo, ir::ops::round_quant(static_cast<float>(a) / out_scale) + zp);
      if (std::isfinite(b)) hi = std::min(hi, ir::ops::round_quant(static_cast<float>(b) / out_scale) + zp);
      t = c->args()[0];
    }
    if (t.type().dtype != DType::kF32) return std::nullopt;
    if (const ir::CallNode* conv = m_.single_use(t, m_.conv2d_)) return realize_conv(*conv, q, lo, hi);
    if (const ir::CallNode* mm = m_.single_use(t, m_.matmul_)) return realize_matmul(*mm, q, lo, hi);
    if (const ir::CallNode* gm = m_.single_use(t, m_.gemm_)) return realize_gemm(*gm, q, lo, hi);
    return std::nullopt;
  }

  // in_scale[c] = f32(w_scale[c] * x_scale), one value or one per channel.
  Value input_scale(const Dequant& x, const Dequant& w, std::vector<float>* values) {
    const float xs = f32_values(x.scale)[0];
    *values = f32_values(w.scale);
    for (float& v : *values) v = v * xs;
    NDArray a = NDArray::empty(DType::kF32, w.count > 1 ? ir::Shape{w.count} : ir::Shape{});
    std::copy(values->begin(), values->end(), a.mutable_data<float>().begin());
    return constant("requantize_scale", std::move(a));
  }

  // The bias as i32 at the accumulator's scale, or nullopt when it cannot be expressed.
  std::optional<Value> integer_bias(const Value& b, const std::vector<float>& in_scale, int64_t channels) {
    if (std::optional<Dequant> d = m_.dequant(b)) {
      if (d->x.type().dtype != DType::kI32 || d->x.type().shape != ir::Shape{channels}) return std::nullopt;
      const NDArray z = d->zero_point.node->as_constant().data();
      for (int64_t i = 0; i < z.numel(); ++i) {
        if (z.get_as_double(i) != 0) return std::nullopt;
      }
      const std::vector<float> s = f32_values(d->scale);
      for (int64_t c = 0; c < channels; ++c) {
        if (s[s.size() == 1 ? 0 : c] != in_scale[in_scale.size() == 1 ? 0 : c]) return std::nullopt;
      }
      return mapped(d->x);
    }
    if (!is_constant(b) || b.type().dtype != DType::kF32 || b.type().numel() != channels) return std::nullopt;
    const std::vector<float> bf = f32_values(b);
    NDArray a = NDArray::empty(DType::kI32, {channels});
    auto o = a.mutable_data<int32_t>();
    for (int64_t c = 0; c < channels; ++c) {
      o[c] = static_cast<int32_t>(ir::ops::round_quant(bf[c] / in_scale[in_scale.size() == 1 ? 0 : c]));
    }
    return constant("requantize_bias", std::move(a));
  }

  Value requantize(const ir::CallNode& q, const Value& acc, const Value& in_scale, std::optional<Value> bias,
                   int64_t axis, int64_t lo, int64_t hi) {
    std::vector<Value> args = {acc, in_scale, mapped(q.args()[1]), mapped(q.args()[2])};
    if (bias) args.push_back(*bias);
    const Attrs a = Attrs().set("axis", axis).set("clamp_min", lo).set("clamp_max", hi);
    return ir::make_call("requantize", args, a, q.name())->output();
  }

  std::optional<Value> realize_conv(const ir::CallNode& conv, const ir::CallNode& q, int64_t lo, int64_t hi) {
    std::optional<Dequant> x = m_.dequant_8bit(conv.args()[0], 1), w = m_.dequant_8bit(conv.args()[1], 0);
    if (!x || !w || x->count != 1) return std::nullopt;
    const int64_t channels = conv.output_types()[0].shape[1];
    std::vector<float> scale_values;
    const Value in_scale = input_scale(*x, *w, &scale_values);
    std::optional<Value> bias;
    if (conv.args().size() > 2) {
      bias = integer_bias(conv.args()[2], scale_values, channels);
      if (!bias) return std::nullopt;
    }
    const Value acc = ir::make_call("qnn_conv2d", {mapped(x->x), mapped(w->x), mapped(x->zero_point), mapped(w->zero_point)},
                                    conv.attrs(), conv.name())->output();
    ++ctx_.stat("qnn_convs");
    return requantize(q, acc, in_scale, bias, 1, lo, hi);
  }

  std::optional<Value> realize_matmul(const ir::CallNode& mm, const ir::CallNode& q, int64_t lo, int64_t hi) {
    const int rank_a = mm.args()[0].type().rank(), rank_b = mm.args()[1].type().rank();
    if (rank_a < 2 || rank_b < 2) return std::nullopt;
    std::optional<Dequant> a = m_.dequant_8bit(mm.args()[0], rank_a - 2), b = m_.dequant_8bit(mm.args()[1], rank_b - 1);
    if (!a || !b || a->count != 1) return std::nullopt;
    std::vector<float> scale_values;
    const Value in_scale = input_scale(*a, *b, &scale_values);
    const Value acc = ir::make_call("qnn_matmul", {mapped(a->x), mapped(b->x), mapped(a->zero_point), mapped(b->zero_point)},
                                    Attrs(), mm.name())->output();
    ++ctx_.stat("qnn_matmuls");
    return requantize(q, acc, in_scale, std::nullopt, static_cast<int64_t>(mm.output_types()[0].rank()) - 1, lo, hi);
  }

  // gemm(dq(a) [M, K], dq(b) [K, N] or [N, K] (trans_b), bias?) with alpha = beta = 1, trans_a = 0.
  std::optional<Value> realize_gemm(const ir::CallNode& gm, const ir::CallNode& q, int64_t lo, int64_t hi) {
    const Attrs& at = gm.attrs();
    const bool trans_b = at.get_int("trans_b") != 0;
    if (at.get_float("alpha") != 1.0 || at.get_float("beta") != 1.0 || at.get_int("trans_a") != 0) return std::nullopt;
    std::optional<Dequant> a = m_.dequant_8bit(gm.args()[0], 1), b = m_.dequant_8bit(gm.args()[1], trans_b ? 0 : 1);
    if (!a || !b || a->count != 1 || (trans_b && !is_constant(b->x))) return std::nullopt;
    const int64_t n = gm.output_types()[0].shape[1];
    std::vector<float> scale_values;
    const Value in_scale = input_scale(*a, *b, &scale_values);
    std::optional<Value> bias;
    if (gm.args().size() > 2) {
      bias = integer_bias(gm.args()[2], scale_values, n);
      if (!bias) return std::nullopt;
    }
    Value w = mapped(b->x);
    if (trans_b) w = ir::make_call("transpose", {w}, Attrs().set("perm", std::vector<int64_t>{1, 0}))->output();
    const Value acc = ir::make_call("qnn_matmul", {mapped(a->x), w, mapped(a->zero_point), mapped(b->zero_point)}, Attrs(),
                                    gm.name())->output();
    ++ctx_.stat("qnn_matmuls");
    return requantize(q, acc, in_scale, bias, 1, lo, hi);
  }

  // q(op(dq(x)...)) for a data-movement op or max pooling, every dq with q's scale and zero point.
  std::optional<Value> integer_move(const ir::CallNode& q) {
    const Value t = q.args()[0];
    const ir::CallNode* op = nullptr;
    for (const ir::OpDef* def : {m_.max_pool_, m_.reshape_, m_.transpose_, m_.concat_}) {
      if (!op) op = m_.single_use(t, def);
    }
    if (!op) return std::nullopt;
    const float scale = f32_values(q.args()[1])[0];
    const NDArray zp = q.args()[2].node->as_constant().data();
    std::vector<Value> ints;
    for (const Value& arg : op->args()) {
      std::optional<Dequant> d = m_.dequant(arg);
      if (!d || d->count != 1 || d->x.type().dtype != zp.dtype() || f32_values(d->scale)[0] != scale ||
          d->zero_point.node->as_constant().data().get_as_double(0) != zp.get_as_double(0)) {
        return std::nullopt;
      }
      ints.push_back(mapped(d->x));
    }
    ++ctx_.stat("integer_moves");
    return ir::make_call(op->op(), ints, op->attrs(), q.name())->output();
  }

  PassContext& ctx_;
  Matcher m_;
  NameSupply names_;
};

class RealizeQuantizedOps final : public Pass {
 public:
  const char* name() const override { return "RealizeQuantizedOps"; }
  ir::Graph run(const ir::Graph& graph, PassContext& ctx) const override { return Rewriter(graph, ctx).mutate(graph); }
};

}  // namespace

std::unique_ptr<Pass> make_realize_quantized_ops() { return std::make_unique<RealizeQuantizedOps>(); }

}  // namespace kiln::pass
