// SimplifyInference: rewrites inference-only constructs into cheaper, fusable ones. Contract:
//   - batch_norm(conv2d(x, w, b?), scale, bias, mean, var) where the conv2d result has no other
//     user (also through a unit-dim reshape keeping axes 0 and 1: a 1-D conv) becomes conv2d(x, w * s[m], (b - mean) * s + bias) with s = scale / sqrt(var + eps),
//     written as graph ops on the parameters (FoldConstant, which follows at every opt level,
//     evaluates them when the parameters are constants, as they are in inference models);
//   - any other batch_norm becomes the per-channel scale-shift x * s' + t' (mul + add, s' and t'
//     reshaped to [C, 1, ...] so they broadcast along axis 1);
//   - conv2d kernel rows/columns that read only zero padding for every output (dilated convs on
//     small maps) are dropped: weights sliced, pads reduced (conv_padding_taps.h); exact;
//   - pow(x, 2) with a constant scalar exponent (RMSNorm, variances) becomes mul(x, x): the same
//     correctly rounded square, without a libm pow per element (RMSNorm's 1/rms was 27 us for a
//     32 x 128 input);
//   - identity-like calls are dropped (their output replaced by their input): a `cast` to the
//     input's dtype, and any single-input injective call (op pattern, no op names) whose output
//     type equals its input's and which maps a tensor of distinct values to itself (checked by
//     running its reference implementation once; reshape to the same shape, identity transpose,
//     zero pads, full slices...). Tensors too big to hold distinct exact values are skipped.
//   - reshape(reshape(x)) becomes one reshape of x (none when it restores x's shape);
//   - an elementwise call (no int-list or shape attribute, so not expand) whose arguments are all reshapes
//     inserting/removing unit dimensions of same-shaped values (no broadcasting) runs before the reshape: f(reshape(a), reshape(b)) ->
//     reshape(f(a, b)), so a 1-D conv's epilogue (relu, residual add) fuses into the conv and
//     the [N, C, 1, L] <-> [N, C, L] reshapes between 1-D convs merge away;
// Numerics: the folded forms round each step to the dtype instead of computing batch_norm in
// double, so results differ from the original by a few ulps (relative ~1e-6 in f32).
// Stats: "bn_folded_into_conv", "bn_to_scale_shift", "identities_dropped", "conv_padding_taps_dropped",
// "squares_to_mul", "reshapes_merged", "elementwise_before_unit_reshape".
#include <algorithm>
#include <numeric>
#include <optional>
#include <random>

#include "kiln/ir/graph_visitor.h"
#include "kiln/pass/pass.h"
#include "pass/conv_padding_taps.h"
#include "pass/pass_util.h"

namespace kiln::pass {
namespace {

using ir::Attrs;
using ir::NodePtr;
using ir::Value;

Value call1(const char* op, std::vector<Value> args, const Attrs& attrs = {}) {
  return ir::make_call(op, std::move(args), attrs)->output();
}

// Largest count of distinct integers the dtype holds exactly (0: don't test).
int64_t exact_distinct_limit(ir::DType dtype) {
  switch (dtype) {
    case ir::DType::kF32: return int64_t{1} << 22;  // also caps the cost of the check
    case ir::DType::kF64: case ir::DType::kI32: case ir::DType::kI64: return int64_t{1} << 22;
    case ir::DType::kF16: return 2048;
    case ir::DType::kBF16: return 256;
    case ir::DType::kI16: return 32767;
    case ir::DType::kI8: return 127;
    case ir::DType::kU8: return 255;
    case ir::DType::kU16: return 65535;
    case ir::DType::kU32: case ir::DType::kU64: return int64_t{1} << 22;
    case ir::DType::kBool: return 0;
  }
  return 0;
}

// True when the single-input call maps a tensor of distinct values to itself.
bool acts_as_identity(const ir::CallNode& call) {
  const ir::TensorType& t = call.args()[0].type();
  if (t.numel() > exact_distinct_limit(t.dtype) || !call.op().reference) return false;
  ir::NDArray probe = ir::NDArray::empty(t.dtype, t.shape);
  std::vector<int64_t> values(static_cast<size_t>(t.numel()));
  std::iota(values.begin(), values.end(), 0);
  std::shuffle(values.begin(), values.end(), std::mt19937_64(42));
  // Signed values where the dtype has them (unsigned types keep 0..n-1).
  const bool is_unsigned = t.dtype == ir::DType::kU8 || t.dtype == ir::DType::kU16 || t.dtype == ir::DType::kU32 ||
                           t.dtype == ir::DType::kU64;
  const int64_t shift = is_unsigned ? 0 : t.numel() / 2;
  for (int64_t i = 0; i < t.numel(); ++i) probe.set_from_double(i, static_cast<double>(values[i] - shift));
  std::vector<ir::NDArray> out = call.op().reference({probe}, call.attrs(), call.output_types());
  return out.size() == 1 && out[0].bitwise_equal(probe);
}

class Simplifier : public ir::GraphMutator {
 public:
  Simplifier(const ir::Graph& graph, PassContext& ctx)
      : GraphMutator("SimplifyInference"), ctx_(ctx), uses_(graph), names_(graph) {}

 protected:
  std::vector<Value> rewrite_call(const ir::CallNode& node, const std::vector<Value>& new_args) override {
    if (&node.op() == batch_norm_) return {rewrite_batch_norm(node, new_args)};
    if (&node.op() == conv2d_) {
      if (std::optional<Value> pruned = drop_padding_taps(node, new_args)) {
        ++ctx_.stat("conv_padding_taps_dropped");
        return {*pruned};
      }
    }
    if (&node.op() == pow_ && new_args.size() == 2 && node.output_types()[0] == new_args[0].type() &&
        ir::is_float(new_args[0].type().dtype) && is_scalar_constant(new_args[1], 2.0)) {
      ++ctx_.stat("squares_to_mul");
      return {call1("mul", {new_args[0], new_args[0]})};
    }
    if (&node.op() == reshape_ && is_call_of(new_args[0], reshape_)) {
      ++ctx_.stat("reshapes_merged");
      const Value& source = new_args[0].node->as_call().args()[0];
      if (source.type().shape == node.output_types()[0].shape) return {source};
      return {call1("reshape", {source}, node.attrs())};
    }
    if (std::optional<Value> sunk = elementwise_before_unit_reshape(node, new_args)) {
      ++ctx_.stat("elementwise_before_unit_reshape");
      return {*sunk};
    }
    if (node.num_outputs() == 1 && new_args.size() == 1 && node.output_types()[0] == new_args[0].type()) {
      const bool identity_cast = &node.op() == cast_;
      if (identity_cast || (node.op().pattern == ir::OpPattern::kInjective && acts_as_identity(node))) {
        ++ctx_.stat("identities_dropped");
        return {new_args[0]};
      }
    }
    return rebuild_call(node, new_args);
  }

 private:
  Value rewrite_batch_norm(const ir::CallNode& bn, const std::vector<Value>& a) {
    const Value& x = a[0];
    const ir::DType dt = x.type().dtype;
    for (const auto& v : a) {
      if (v.type().dtype != dt) return rebuild_call(bn, a)[0];
    }
    const Value eps = scalar_constant(names_, "bn_epsilon", dt, bn.attrs().get_float("epsilon"))->output();
    // s = scale / sqrt(var + eps)
    const Value s = call1("div", {a[1], call1("sqrt", {call1("add", {a[4], eps})})});
    const int64_t c = x.type().shape[1];
    const Value& original_x = bn.args()[0];
    auto fold = [&](const Value& conv_value) {
      const ir::CallNode& conv = conv_value.node->as_call();
      const auto& cargs = conv.args();
      const Value w = call1("mul", {cargs[1], call1("reshape", {s}, Attrs().set("shape", std::vector<int64_t>{c, 1, 1, 1}))});
      const Value shift = cargs.size() > 2 ? call1("sub", {cargs[2], a[3]}) : call1("neg", {a[3]});
      const Value b = call1("add", {call1("mul", {shift, s}), a[2]});
      ++ctx_.stat("bn_folded_into_conv");
      return ir::make_call(conv.op(), {cargs[0], w, b}, conv.attrs(), conv.name())->output();
    };
    if (is_call_of(original_x, conv2d_) && uses_.of(original_x) == 1 && is_call_of(x, conv2d_)) return fold(x);
    // A 1-D convolution's batch norm: batch_norm(reshape(conv2d)) with a unit-dim reshape that
    // keeps axes 0 and 1 ([N, C, 1, L] -> [N, C, L]) folds the same way, the reshape after it.
    if (is_call_of(original_x, reshape_) && uses_.of(original_x) == 1 && is_call_of(x, reshape_)) {
      const Value& original_src = original_x.node->as_call().args()[0];
      const Value& src = x.node->as_call().args()[0];
      const ir::Shape& xs = x.type().shape;
      const ir::Shape& ss = src.type().shape;
      if (is_call_of(original_src, conv2d_) && uses_.of(original_src) == 1 && is_call_of(src, conv2d_) && xs.size() >= 2 &&
          ss[0] == xs[0] && ss[1] == xs[1] && without_unit_dims(ss) == without_unit_dims(xs)) {
        return call1("reshape", {fold(src)}, Attrs().set("shape", xs));
      }
    }
    std::vector<int64_t> shape(static_cast<size_t>(x.type().rank() - 1), 1);
    shape[0] = c;
    const Attrs as_channel = Attrs().set("shape", shape);
    const Value t = call1("sub", {a[2], call1("mul", {a[3], s})});
    ++ctx_.stat("bn_to_scale_shift");
    return call1("add", {call1("mul", {x, call1("reshape", {s}, as_channel)}), call1("reshape", {t}, as_channel)});
  }

  static bool is_call_of(const Value& v, const ir::OpDef* op) {
    return v.node->kind() == ir::NodeKind::kCall && &v.node->as_call().op() == op;
  }

  static ir::Shape without_unit_dims(const ir::Shape& s) {
    ir::Shape out;
    for (int64_t d : s) {
      if (d != 1) out.push_back(d);
    }
    return out;
  }

  // f(reshape(a), reshape(b), ...) -> reshape(f(a, b, ...)) for an elementwise op whose arguments
  // are all reshapes that only insert or remove unit dimensions (1-D convolutions run as 2-D ones
  // with H = 1: [N, C, 1, L] <-> [N, C, L]) of sources of one shape, without broadcasting. The op
  // then sits next to its producer (a conv's epilogue) and the reshape pairs around it merge, so
  // chains of 1-D convolutions stay on the blocked layout.
  std::optional<Value> elementwise_before_unit_reshape(const ir::CallNode& node, const std::vector<Value>& args) const {
    const ir::OpPattern pattern = node.op().pattern;
    if ((pattern != ir::OpPattern::kElemwise && pattern != ir::OpPattern::kBroadcast) || node.num_outputs() != 1 || args.empty()) {
      return std::nullopt;
    }
    // An op whose attributes describe a shape or axes (expand's target shape) is tied to its rank.
    for (const auto& spec : node.op().attrs) {
      if (spec.kind == ir::AttrKind::kInts || spec.kind == ir::AttrKind::kShape) return std::nullopt;
    }
    const ir::Shape& out = node.output_types()[0].shape;
    std::vector<Value> sources;
    for (const Value& a : args) {
      if (!is_call_of(a, reshape_) || a.type().shape != out) return std::nullopt;
      const Value& source = a.node->as_call().args()[0];
      if (without_unit_dims(source.type().shape) != without_unit_dims(out)) return std::nullopt;
      if (!sources.empty() && source.type().shape != sources[0].type().shape) return std::nullopt;
      sources.push_back(source);
    }
    const Value y = ir::make_call(node.op(), sources, node.attrs())->output();
    return call1("reshape", {y}, Attrs().set("shape", out));
  }

  PassContext& ctx_;
  UseCounts uses_;
  NameSupply names_;
  const ir::OpDef* batch_norm_ = op_ptr("batch_norm");
  const ir::OpDef* conv2d_ = op_ptr("conv2d");
  const ir::OpDef* cast_ = op_ptr("cast");
  const ir::OpDef* pow_ = op_ptr("pow");
  const ir::OpDef* reshape_ = op_ptr("reshape");

  static bool is_scalar_constant(const Value& v, double value) {
    if (v.node->kind() != ir::NodeKind::kConstant || v.type().numel() != 1) return false;
    return v.node->as_constant().data().get_as_double(0) == value;
  }
};

class SimplifyInference final : public Pass {
 public:
  const char* name() const override { return "SimplifyInference"; }
  ir::Graph run(const ir::Graph& graph, PassContext& ctx) const override {
    return Simplifier(graph, ctx).mutate(graph);
  }
};

}  // namespace

std::unique_ptr<Pass> make_simplify_inference() { return std::make_unique<SimplifyInference>(); }

}  // namespace kiln::pass
