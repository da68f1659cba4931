// ONNX Attention (opsets 23, 24) -> graph IR, decomposed at import into the ops that compile to
// Kiln's fast kernels (ONNX defines Attention by a function body; this is that body with the
// shapes resolved at compile time):
//   3-D Q/K/V [B, S, heads * head] are reshaped/transposed to [B, heads, S, head];
//   K, V = concat(past, K/V) along the sequence (present_key / present_value);
//   scores = matmul(Q, K^T) * scale  (the scale is the matmul's epilogue), softcap as
//   tanh(scores / c) * c; grouped-query attention (kv heads < q heads) without repeating K/V:
//   Q is viewed as [B, kv_heads, reps * Sq, head] so each K/V head serves its group of query heads
//   in one batched matmul, and the bias add, softmax and P.V matmul stay in that grouped view
//   (a head-independent bias is repeated along its rows, a constant one at import);
//   bias = attn_mask (bool -> 0 / -inf; padded with -inf to the total sequence) + the causal
//   frontier (a constant, offset by the past length; per batch from nonpad_kv_seqlen at run time)
//   + the nonpad_kv_seqlen padding mask (run-time comparisons as integer clip/equal);
//   probs = softmax(scores + bias) (in softmax_precision), rows whose bias is all -inf set to 0
//   (only when such a row can occur: a constant bias is checked at import);
//   Y = matmul(probs, V), back to [B, S, heads * v_head] for 3-D inputs.
// qk_matmul_output (output 3) is the scores (modes 0/1), scores + bias (2) or probs (3).
// The correctness oracle is ONNX's reference (the node tests' expected outputs).
#include <algorithm>
#include <cmath>
#include <limits>

#include "kiln/support/error.h"
#include "onnx_node.h"

namespace kiln::frontend::onnx_import {
namespace {

using ir::Attrs;
using ir::DType;
using ir::NDArray;
using ir::Shape;
using ir::Value;

constexpr double kInf = std::numeric_limits<double>::infinity();

Value reshape(ImportContext& ctx, const Value& x, const Shape& shape) {
  if (x.type().shape == shape) return x;
  return ctx.call1("reshape", {x}, Attrs().set("shape", std::vector<int64_t>(shape.begin(), shape.end())));
}

Value transpose(ImportContext& ctx, const Value& x, const std::vector<int64_t>& perm) {
  return ctx.call1("transpose", {x}, Attrs().set("perm", perm));
}

Value scalar(ImportContext& ctx, DType dtype, double v, const std::string& name) {
  return ctx.constant(NDArray::scalar(dtype, v), name);
}

// [B, S, heads * head] -> [B, heads, S, head].
Value split_heads(ImportContext& ctx, const Value& x, int64_t heads, const std::string& what) {
  const Shape& s = x.type().shape;
  if (heads <= 0) ctx.fail_attr(what == "Q" ? "q_num_heads" : "kv_num_heads", "must be given and positive for 3-D inputs");
  if (s[2] % heads != 0) {
    ctx.fail_invalid(what + " has hidden size " + std::to_string(s[2]) + ", not a multiple of " + std::to_string(heads) + " heads");
  }
  return transpose(ctx, reshape(ctx, x, {s[0], s[1], heads, s[2] / heads}), {0, 2, 1, 3});
}

// An i64 constant of `shape` whose element at flat index k is f(k).
template <typename F>
Value int_constant(ImportContext& ctx, const Shape& shape, F f, const std::string& name) {
  NDArray a = NDArray::empty(DType::kI64, shape);
  auto p = a.mutable_data<int64_t>();
  for (size_t k = 0; k < p.size(); ++k) p[k] = f(static_cast<int64_t>(k));
  return ctx.constant(a, name);
}

// 0 where `allowed`, -inf elsewhere, in `dtype`.
Value additive(ImportContext& ctx, const Value& allowed, DType dtype) {
  return ctx.call1("where", {allowed, scalar(ctx, dtype, 0.0, "attention_zero"), scalar(ctx, dtype, -kInf, "attention_neg_inf")});
}

// `t >= 1` for an integer tensor t, as bool (clip to [0, 1], compare with 1).
Value at_least_one(ImportContext& ctx, const Value& t) {
  Value c = ctx.call1("clip", {t}, Attrs().set("min", 0.0).set("max", 1.0));
  return ctx.call1("equal", {c, scalar(ctx, DType::kI64, 1.0, "attention_one")});
}

Value add_bias(ImportContext& ctx, const Value& bias, const Value& part) {
  return bias.defined() ? ctx.call1("add", {bias, part}) : part;
}

// True when some row (last axis) of the constant `bias` is entirely -inf.
bool has_fully_masked_row(const NDArray& bias) {
  const int64_t n = bias.shape().empty() ? 1 : static_cast<int64_t>(bias.shape().back());
  if (n == 0) return bias.numel() > 0;
  for (int64_t r = 0; r < bias.numel() / n; ++r) {
    bool all = true;
    for (int64_t j = 0; j < n && all; ++j) all = bias.get_as_double(r * n + j) == -kInf;
    if (all) return true;
  }
  return false;
}

// The additive bias (broadcastable to [B, Hq, Sq, Skv]) as a rank-4 tensor broadcastable to the
// grouped view [B, Hkv, reps * Sq, Skv]: per-query-head biases reshaped, head-independent ones
// repeated `reps` times along the rows (a constant bias folds at import).
Value group_bias(ImportContext& ctx, Value bias, int64_t hq, int64_t hkv, int64_t sq) {
  Shape b = bias.type().shape;
  if (b.size() > 4) ctx.fail_invalid("attn_mask has rank " + std::to_string(b.size()) + "; expected at most 4");
  while (b.size() < 4) b.insert(b.begin(), 1);
  bias = reshape(ctx, bias, b);
  const int64_t reps = hq / hkv;
  if (reps == 1) return bias;
  if (b[1] == hq) {
    const Shape e = {b[0], hq, sq, b[3]};
    if (b != e) bias = ctx.call1("expand", {bias}, Attrs().set("shape", std::vector<int64_t>(e.begin(), e.end())));
    return reshape(ctx, bias, {b[0], hkv, reps * sq, b[3]});
  }
  if (b[1] != 1) ctx.fail_invalid("the attention bias has " + std::to_string(b[1]) + " heads; expected 1 or " + std::to_string(hq));
  if (b[2] == 1) return bias;
  return ctx.call1("concat", std::vector<Value>(static_cast<size_t>(reps), bias), Attrs().set("axis", int64_t{2}));
}

std::vector<Value> convert_attention(ImportContext& ctx) {
  Value q = ctx.input(0), k = ctx.input(1), v = ctx.input(2);
  const int64_t rank = q.type().rank();
  if (rank != 3 && rank != 4) ctx.fail_invalid("Q has rank " + std::to_string(rank) + "; expected 3 or 4");
  if (k.type().rank() != rank || v.type().rank() != rank) ctx.fail_invalid("Q, K and V must have the same rank");
  const DType dt = q.type().dtype;
  if (!ir::is_float(dt)) ctx.fail_unsupported("Q of type " + std::string(ir::dtype_name(dt)) + " (floating-point only)");
  const int64_t batch = q.type().shape[0];
  if (rank == 3) {
    q = split_heads(ctx, q, ctx.attr_int("q_num_heads", 0), "Q");
    k = split_heads(ctx, k, ctx.attr_int("kv_num_heads", 0), "K");
    v = split_heads(ctx, v, ctx.attr_int("kv_num_heads", 0), "V");
  }
  const int64_t hq = q.type().shape[1], hkv = k.type().shape[1], sq = q.type().shape[2], head = q.type().shape[3];
  if (v.type().shape[1] != hkv || k.type().shape[0] != batch || v.type().shape[0] != batch ||
      k.type().shape[3] != head || v.type().shape[2] != k.type().shape[2]) {
    ctx.fail_invalid("Q, K, V shapes " + q.type().to_string() + ", " + k.type().to_string() + ", " + v.type().to_string() +
                     " do not fit together ([B, heads, S, head], K and V with the same heads and length)");
  }
  if (hq % hkv != 0) {
    ctx.fail_invalid(std::to_string(hq) + " query heads are not a multiple of " + std::to_string(hkv) + " key/value heads");
  }
  // Past key/value cache.
  const bool has_past = ctx.has_input(4) || ctx.has_input(5);
  int64_t past = 0;
  if (has_past) {
    if (!(ctx.has_input(4) && ctx.has_input(5))) ctx.fail_invalid("past_key and past_value must be given together");
    if (ctx.input(4).type().rank() != 4 || ctx.input(5).type().rank() != 4) {
      ctx.fail_invalid("past_key and past_value must be 4-D [B, heads, S, head], not " + ctx.input(4).type().to_string() +
                       " and " + ctx.input(5).type().to_string());
    }
    past = ctx.input(4).type().shape.at(2);
    k = ctx.call1("concat", {ctx.input(4), k}, Attrs().set("axis", int64_t{2}));
    v = ctx.call1("concat", {ctx.input(5), v}, Attrs().set("axis", int64_t{2}));
  }
  const Value present_key = k, present_value = v;
  const int64_t skv = k.type().shape[2], vhead = v.type().shape[3];
  const bool has_nonpad = ctx.has_input(6);
  if (has_nonpad && has_past) ctx.fail_invalid("nonpad_kv_seqlen cannot be combined with past_key/past_value");

  // The additive bias [.., Sq, Skv].
  Value bias;
  if (ctx.has_input(3)) {
    Value mask = ctx.input(3);
    const Shape ms = mask.type().shape;
    if (ms.empty()) ctx.fail_invalid("attn_mask must have rank >= 1");
    const bool is_bool = mask.type().dtype == DType::kBool;
    if (!is_bool && mask.type().dtype != dt) {
      ctx.fail_invalid("attn_mask is " + std::string(ir::dtype_name(mask.type().dtype)) + "; expected bool or Q's type " + ir::dtype_name(dt));
    }
    if (ms.back() > skv) ctx.fail_invalid("attn_mask's last axis " + std::to_string(ms.back()) + " is longer than the total sequence " + std::to_string(skv));
    if (ms.back() < skv) {
      std::vector<int64_t> pads(2 * ms.size(), 0);
      pads[2 * ms.size() - 1] = skv - ms.back();
      mask = ctx.call1("pad", {mask}, Attrs().set("pads", pads).set("mode", std::string("constant")).set("value", is_bool ? 0.0 : -kInf));
    }
    bias = is_bool ? additive(ctx, mask, dt) : mask;
  }
  Value nonpad;
  if (has_nonpad) {
    nonpad = ctx.input(6);
    if (nonpad.type().shape != Shape{batch}) ctx.fail_invalid("nonpad_kv_seqlen has shape " + nonpad.type().to_string() + "; expected [" + std::to_string(batch) + "]");
    if (nonpad.type().dtype != DType::kI64) nonpad = ctx.call1("cast", {nonpad}, Attrs().set("dtype", DType::kI64));
    nonpad = reshape(ctx, nonpad, {batch, 1, 1, 1});
  }
  if (ctx.attr_int("is_causal", 0) != 0) {
    if (has_nonpad) {
      // Per batch: key j is allowed for query i iff j <= i + nonpad[b] - Sq.
      Value rel = int_constant(ctx, {sq, skv}, [&](int64_t f) { return f / skv - f % skv - sq + 1; }, "attention_causal_rel");
      bias = add_bias(ctx, bias, additive(ctx, at_least_one(ctx, ctx.call1("add", {nonpad, rel})), dt));
    } else {
      NDArray c = NDArray::empty(dt, {sq, skv});
      for (int64_t i = 0; i < sq; ++i) {
        for (int64_t j = 0; j < skv; ++j) c.set_from_double(i * skv + j, j <= i + past ? 0.0 : -kInf);
      }
      bias = add_bias(ctx, bias, ctx.constant(c, "attention_causal_bias"));
    }
  }
  if (has_nonpad) {
    // Key j is padding for batch b iff j >= nonpad[b].
    Value cols = int_constant(ctx, {skv}, [&](int64_t j) { return -j; }, "attention_neg_cols");
    bias = add_bias(ctx, bias, additive(ctx, at_least_one(ctx, ctx.call1("add", {nonpad, cols})), dt));
  }

  // Everything below works on the grouped view [B, Hkv, reps * Sq, Skv]: query head h = g * reps + r
  // is row block r of group g, so each K/V head serves its query heads in one batched matmul and
  // nothing is repeated or reshaped between the matmuls, the bias add and the softmax.
  const int64_t reps = hq / hkv;
  const Shape grouped = {batch, hkv, reps * sq, skv};
  const Shape full = {batch, hq, sq, skv};
  const double scale = ctx.has_attr("scale") ? ctx.attr_float("scale", 1.0) : 1.0 / std::sqrt(static_cast<double>(head));
  Value scores = ctx.call1("matmul", {reshape(ctx, q, {batch, hkv, reps * sq, head}), transpose(ctx, k, {0, 1, 3, 2})});
  if (scale != 1.0) scores = ctx.call1("mul", {scores, scalar(ctx, dt, scale, "attention_scale")});
  const double softcap = ctx.attr_float("softcap", 0.0);
  if (softcap > 0) {
    Value t = ctx.call1("tanh", {ctx.call1("mul", {scores, scalar(ctx, dt, 1.0 / softcap, "attention_inv_softcap")})});
    scores = ctx.call1("mul", {t, scalar(ctx, dt, softcap, "attention_softcap")});
  }
  if (bias.defined()) bias = group_bias(ctx, bias, hq, hkv, sq);
  const int64_t mode = ctx.attr_int("qk_matmul_output_mode", 0);
  if (mode < 0 || mode > 3) ctx.fail_attr("qk_matmul_output_mode", "is " + std::to_string(mode) + "; expected 0, 1, 2 or 3");
  Value qk_out = scores;
  Value logits = bias.defined() ? ctx.call1("add", {scores, bias}) : scores;
  if (mode == 2) qk_out = logits;

  DType softmax_dt = dt;
  if (ctx.has_attr("softmax_precision")) {
    switch (ctx.attr_int("softmax_precision", 1)) {
      case 1: softmax_dt = DType::kF32; break;
      case 10: softmax_dt = DType::kF16; break;
      case 11: softmax_dt = DType::kF64; break;
      case 16: softmax_dt = DType::kBF16; break;
      default: ctx.fail_attr("softmax_precision", "is not a floating-point ONNX type (1, 10, 11, 16)");
    }
  }
  if (softmax_dt != dt) logits = ctx.call1("cast", {logits}, Attrs().set("dtype", softmax_dt));
  Value probs = ctx.call1("softmax", {logits}, Attrs().set("axis", int64_t{3}));
  if (softmax_dt != dt) probs = ctx.call1("cast", {probs}, Attrs().set("dtype", dt));
  // Rows without any allowed key: probabilities 0 (ONNX), not softmax's NaN.
  if (bias.defined()) {
    const bool constant_bias = bias.node->kind() == ir::NodeKind::kConstant;
    if (!constant_bias || has_fully_masked_row(bias.node->as_constant().data())) {
      Value row_max = ctx.call1("reduce_max", {bias}, Attrs().set("axes", std::vector<int64_t>{3}).set("keepdims", int64_t{1}));
      Value masked = ctx.call1("equal", {row_max, scalar(ctx, dt, -kInf, "attention_neg_inf")});
      probs = ctx.call1("where", {masked, scalar(ctx, dt, 0.0, "attention_zero"), probs});
    }
  }
  if (mode == 3) qk_out = probs;
  if (ctx.node().outputs.size() > 3 && !ctx.node().outputs[3].empty()) {
    if (qk_out.type().shape != grouped) qk_out = ctx.call1("expand", {qk_out}, Attrs().set("shape", std::vector<int64_t>(grouped.begin(), grouped.end())));
    qk_out = reshape(ctx, qk_out, full);
  }

  Value y = ctx.call1("matmul", {probs, v});
  y = reshape(ctx, y, {batch, hq, sq, vhead});
  if (rank == 3) y = reshape(ctx, transpose(ctx, y, {0, 2, 1, 3}), {batch, sq, hq * vhead});
  std::vector<Value> outs = {y, present_key, present_value, qk_out};
  outs.resize(std::min(outs.size(), ctx.node().outputs.size()));
  return outs;
}

}  // namespace

void add_attention_converters(std::map<std::string, Converter>& table) { table["Attention"] = convert_attention; }

}  // namespace kiln::frontend::onnx_import
