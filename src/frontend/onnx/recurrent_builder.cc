// The shared part of the LSTM/GRU/RNN unrolling: attribute decoding, activations as graph ops, the
// one-matmul input projection, masks and output stacking (contract in recurrent_builder.h).
#include "recurrent_builder.h"

#include <algorithm>
#include <cctype>

#include "kiln/support/error.h"

namespace kiln::frontend::onnx_import::recurrent {
namespace {

using ir::Attrs;
using ir::DType;
using ir::NDArray;
using ir::Value;

std::string lower(std::string s) {
  for (char& c : s) c = static_cast<char>(std::tolower(static_cast<unsigned char>(c)));
  return s;
}

// Canonical name, and whether the function reads alpha / beta, with ONNX's defaults.
struct ActivationInfo {
  const char* name;
  bool uses_alpha, uses_beta;
  double alpha, beta;
};

const ActivationInfo* find_activation(const std::string& name) {
  static const ActivationInfo table[] = {
      {"Relu", false, false, 0, 0},         {"Tanh", false, false, 0, 0},
      {"Sigmoid", false, false, 0, 0},      {"Affine", true, true, 1.0, 0.0},
      {"LeakyRelu", true, false, 0.01, 0},  {"ThresholdedRelu", true, false, 1.0, 0},
      {"ScaledTanh", true, true, 1.0, 1.0}, {"HardSigmoid", true, true, 0.2, 0.5},
      {"Elu", true, false, 1.0, 0},         {"Softsign", false, false, 0, 0},
      {"Softplus", false, false, 0, 0},
  };
  for (const auto& a : table) {
    if (lower(a.name) == lower(name)) return &a;
  }
  return nullptr;
}


}  // namespace

RecurrentLayer decode_layer(ImportContext& ctx, int64_t gates, const std::vector<std::string>& default_acts,
                            int initial_c_input) {
  RecurrentLayer l;
  l.gates = gates;
  l.per_direction = static_cast<int64_t>(default_acts.size());
  l.layout = ctx.opset() >= 14 ? ctx.attr_int("layout", 0) : 0;
  if (l.layout != 0 && l.layout != 1) ctx.fail_attr("layout", "is " + std::to_string(l.layout) + "; expected 0 or 1");
  l.direction = ctx.attr_string("direction", "forward");
  if (l.direction != "forward" && l.direction != "reverse" && l.direction != "bidirectional") {
    ctx.fail_attr("direction", "is '" + l.direction + "'; expected forward, reverse or bidirectional");
  }
  l.directions = l.direction == "bidirectional" ? 2 : 1;

  Value x = ctx.input(0);
  l.dtype = x.type().dtype;
  if (!is_float(l.dtype)) ctx.fail_unsupported("input X has element type " + std::string(ir::dtype_name(l.dtype)) + "; expected a float type");
  if (x.type().rank() != 3) ctx.fail_invalid("input X has rank " + std::to_string(x.type().rank()) + "; expected 3");
  if (l.layout == 1) x = ctx.call1("transpose", {x}, Attrs().set("perm", std::vector<int64_t>{1, 0, 2}));
  l.x = x;
  l.seq = x.type().shape[0];
  l.batch = x.type().shape[1];
  l.input_size = x.type().shape[2];
  if (l.seq < 1) ctx.fail_invalid("input X has an empty sequence axis");

  l.w = ctx.input(1);
  l.r = ctx.input(2);
  const ir::Shape& rs = l.r.type().shape;
  if (rs.size() != 3) ctx.fail_invalid("input R has rank " + std::to_string(rs.size()) + "; expected 3");
  l.hidden = ctx.attr_int("hidden_size", rs[2]);
  const int64_t D = l.directions, H = l.hidden, G = gates;
  auto expect = [&](const Value& v, const std::string& what, const ir::Shape& shape) {
    if (v.type().shape != shape || v.type().dtype != l.dtype) {
      ctx.fail_invalid("input " + what + " has type " + v.type().to_string() + "; expected " +
                       ir::TensorType{l.dtype, shape}.to_string() + " (direction " + l.direction + ", hidden_size " +
                       std::to_string(H) + ")");
    }
  };
  expect(l.w, "W", {D, G * H, l.input_size});
  expect(l.r, "R", {D, G * H, H});
  if (ctx.has_input(3)) {
    l.bias = ctx.input(3);
    expect(l.bias, "B", {D, 2 * G * H});
  }
  if (ctx.has_input(4)) {
    Value s = ctx.input(4);
    if (s.type().shape != ir::Shape{l.batch} || (s.type().dtype != DType::kI32 && s.type().dtype != DType::kI64)) {
      ctx.fail_invalid("input sequence_lens has type " + s.type().to_string() + "; expected int32[" + std::to_string(l.batch) + "]");
    }
    bool masks_needed = true;
    if (s.node->kind() == ir::NodeKind::kConstant) {
      const NDArray& a = s.node->as_constant().data();
      masks_needed = false;
      for (int64_t b = 0; b < a.numel(); ++b) {
        const double len = a.get_as_double(b);
        if (len < 0 || len > static_cast<double>(l.seq)) {
          ctx.fail_invalid("sequence_lens[" + std::to_string(b) + "] = " + std::to_string(static_cast<int64_t>(len)) +
                           " is outside [0, " + std::to_string(l.seq) + "]");
        }
        masks_needed = masks_needed || len < static_cast<double>(l.seq);
      }
    }
    if (masks_needed) l.seq_lens = s;
  }
  auto state = [&](size_t i, const std::string& what) -> Value {
    if (!ctx.has_input(i)) return {};
    Value v = ctx.input(i);
    if (l.layout == 1) {
      expect(v, what, {l.batch, D, H});
      v = ctx.call1("transpose", {v}, Attrs().set("perm", std::vector<int64_t>{1, 0, 2}));
    }
    expect(v, what, {D, l.batch, H});
    return v;
  };
  l.initial_h = state(5, "initial_h");
  if (initial_c_input >= 0) l.initial_c = state(static_cast<size_t>(initial_c_input), "initial_c");

  if (ctx.has_attr("clip")) {
    l.has_clip = true;
    l.clip = ctx.attr_float("clip", 0);
    if (!(l.clip > 0)) ctx.fail_attr("clip", "must be positive");
  }

  std::vector<std::string> names = ctx.attr_strings("activations", {});
  if (names.empty()) {
    for (int64_t d = 0; d < D; ++d) names.insert(names.end(), default_acts.begin(), default_acts.end());
  } else if (static_cast<int64_t>(names.size()) == l.per_direction && D == 2) {
    names.insert(names.end(), names.begin(), names.end());  // one list given for both directions
  }
  if (static_cast<int64_t>(names.size()) != l.per_direction * D) {
    ctx.fail_attr("activations", "lists " + std::to_string(names.size()) + " functions; expected " +
                                     std::to_string(l.per_direction * D) + " (" + std::to_string(l.per_direction) +
                                     " per direction)");
  }
  // activation_alpha/beta are consumed in order by the functions that take them (as ONNX Runtime).
  const std::vector<double> alphas = ctx.attr_floats("activation_alpha", {});
  const std::vector<double> betas = ctx.attr_floats("activation_beta", {});
  size_t ai = 0, bi = 0;
  for (const std::string& n : names) {
    const ActivationInfo* info = find_activation(n);
    if (!info) {
      ctx.fail_attr("activations", "names '" + n + "', which Kiln does not know",
                    "supported: Relu, Tanh, Sigmoid, Affine, LeakyRelu, ThresholdedRelu, ScaledTanh, HardSigmoid, Elu, "
                    "Softsign, Softplus");
    }
    Activation a{info->name, info->alpha, info->beta};
    if (info->uses_alpha && ai < alphas.size()) a.alpha = alphas[ai++];
    if (info->uses_beta && bi < betas.size()) a.beta = betas[bi++];
    l.activations.push_back(a);
  }
  if (ctx.attr_int("input_forget", 0) != 0 && gates != 4) ctx.fail_attr("input_forget", "applies to LSTM only");
  return l;
}

Value RecurrentBuilder::scalar(double v) { return ctx_.constant(NDArray::scalar(l_.dtype, v), "rnn_scalar"); }

Value RecurrentBuilder::reshape(Value x, std::vector<int64_t> shape) {
  if (x.type().shape == ir::Shape(shape.begin(), shape.end())) return x;
  return ctx_.call1("reshape", {x}, Attrs().set("shape", shape));
}

Value RecurrentBuilder::slice(Value x, std::vector<int64_t> begins, std::vector<int64_t> ends) {
  return ctx_.call1("strided_slice", {x}, Attrs().set("begins", begins).set("ends", ends));
}

Value RecurrentBuilder::concat(std::vector<Value> pieces, int64_t axis) {
  constexpr size_t kFanIn = 8;
  while (pieces.size() > 1) {
    std::vector<Value> next;
    for (size_t i = 0; i < pieces.size(); i += kFanIn) {
      std::vector<Value> part(pieces.begin() + static_cast<std::ptrdiff_t>(i),
                              pieces.begin() + static_cast<std::ptrdiff_t>(std::min(pieces.size(), i + kFanIn)));
      next.push_back(part.size() == 1 ? part[0] : ctx_.call1("concat", part, Attrs().set("axis", axis)));
    }
    pieces = std::move(next);
  }
  return pieces.at(0);
}

std::vector<Value> RecurrentBuilder::split_rows(Value x) {
  constexpr int64_t kFanOut = 8;
  const int64_t n = x.type().shape[0];
  if (n == 1) return {x};
  const int64_t chunk = n <= kFanOut ? 1 : (n + kFanOut - 1) / kFanOut;
  std::vector<int64_t> sizes;
  for (int64_t left = n; left > 0; left -= chunk) sizes.push_back(std::min(chunk, left));
  std::vector<Value> parts = ctx_.call("split", {x}, Attrs().set("axis", int64_t{0}).set("sizes", sizes));
  if (chunk == 1) return parts;
  std::vector<Value> rows;
  for (const Value& p : parts) {
    std::vector<Value> sub = split_rows(p);
    rows.insert(rows.end(), sub.begin(), sub.end());
  }
  return rows;
}

Value RecurrentBuilder::activate(const Activation& a, Value x) {
  const std::string& n = a.name;
  if (n == "Sigmoid") return ctx_.call1("sigmoid", {x});
  if (n == "Tanh") return ctx_.call1("tanh", {x});
  if (n == "Relu") return ctx_.call1("relu", {x});
  if (n == "Affine") return add(mul(x, scalar(a.alpha)), scalar(a.beta));
  if (n == "LeakyRelu") return ctx_.call1("leaky_relu", {x}, Attrs().set("alpha", a.alpha));
  if (n == "HardSigmoid") return ctx_.call1("hard_sigmoid", {x}, Attrs().set("alpha", a.alpha).set("beta", a.beta));
  if (n == "ScaledTanh") return mul(ctx_.call1("tanh", {mul(x, scalar(a.beta))}), scalar(a.alpha));
  if (n == "ThresholdedRelu") {
    // x > alpha ? x : 0, with x <= alpha  <=>  max(x, alpha) == alpha (nan propagates through max).
    Value alpha = scalar(a.alpha);
    Value at_most = ctx_.call1("equal", {ctx_.call1("max", {x, alpha}), alpha});
    return ctx_.call1("where", {at_most, scalar(0), x});
  }
  if (n == "Elu") {
    // relu(x) + alpha * (exp(min(x, 0)) - 1)
    Value neg_part = sub(ctx_.call1("exp", {ctx_.call1("min", {x, scalar(0)})}), scalar(1));
    return add(ctx_.call1("relu", {x}), mul(neg_part, scalar(a.alpha)));
  }
  if (n == "Softsign") return ctx_.call1("div", {x, add(ctx_.call1("abs", {x}), scalar(1))});
  if (n == "Softplus") {
    // log(1 + exp(x)) = relu(x) + log(1 + exp(-|x|)), which does not overflow.
    Value tail = ctx_.call1("log", {add(ctx_.call1("exp", {ctx_.call1("neg", {ctx_.call1("abs", {x})})}), scalar(1))});
    return add(ctx_.call1("relu", {x}), tail);
  }
  KILN_ICHECK(false) << "unhandled recurrent activation " << n;
  return x;
}

Value RecurrentBuilder::gate(const Activation& a, Value x) {
  if (l_.has_clip) x = ctx_.call1("clip", {x}, Attrs().set("min", -l_.clip).set("max", l_.clip));
  return activate(a, x);
}

std::vector<std::vector<std::vector<Value>>> RecurrentBuilder::input_projection(const std::vector<int>& bias_parts) {
  const int64_t T = l_.seq, B = l_.batch, I = l_.input_size, H = l_.hidden, G = l_.gates, D = l_.directions;
  const int64_t DG = D * G;
  Value x2 = reshape(l_.x, {T * B, I});
  Value wt = ctx_.call1("transpose", {reshape(l_.w, {DG * H, I})}, Attrs().set("perm", std::vector<int64_t>{1, 0}));
  Value xw = ctx_.call1("matmul", {x2, wt});  // [T*B, D*G*H]
  if (l_.bias.defined()) {
    Value wb = slice(l_.bias, {0, 0}, {D, G * H});
    Value rb = slice(l_.bias, {0, G * H}, {D, 2 * G * H});
    NDArray keep = NDArray::empty(l_.dtype, {G * H});
    for (int64_t g = 0; g < G; ++g) {
      for (int64_t h = 0; h < H; ++h) keep.set_from_double(g * H + h, bias_parts[static_cast<size_t>(g)] == 2 ? 1.0 : 0.0);
    }
    Value b = add(wb, mul(rb, ctx_.constant(keep, "rnn_bias_parts")));
    xw = add(xw, reshape(b, {DG * H}));
  }
  // [T, B, DG, H] -> [T, DG, B, H] -> T*DG pieces of [1, B, H], index t * DG + d * G + g.
  Value pieces_src = reshape(xw, {T, B, DG, H});
  if (B > 1 && DG > 1) pieces_src = ctx_.call1("transpose", {pieces_src}, Attrs().set("perm", std::vector<int64_t>{0, 2, 1, 3}));
  pieces_src = reshape(pieces_src, {T * DG, B, H});
  std::vector<Value> pieces = split_rows(pieces_src);
  std::vector<std::vector<std::vector<Value>>> out(static_cast<size_t>(D), std::vector<std::vector<Value>>(static_cast<size_t>(G)));
  for (int64_t t = 0; t < T; ++t) {
    for (int64_t d = 0; d < D; ++d) {
      for (int64_t g = 0; g < G; ++g) out[d][g].push_back(pieces[static_cast<size_t>(t * DG + d * G + g)]);
    }
  }
  return out;
}

Value RecurrentBuilder::recurrent_weight(int64_t d, int64_t g) {
  const int64_t H = l_.hidden;
  Value r = reshape(slice(l_.r, {d, g * H, 0}, {d + 1, (g + 1) * H, H}), {H, H});
  return ctx_.call1("transpose", {r}, Attrs().set("perm", std::vector<int64_t>{1, 0}));
}

Value RecurrentBuilder::recurrent_bias(int64_t d, int64_t g) {
  if (!l_.bias.defined()) return {};
  const int64_t H = l_.hidden, G = l_.gates;
  return reshape(slice(l_.bias, {d, G * H + g * H}, {d + 1, G * H + (g + 1) * H}), {H});
}

Value RecurrentBuilder::initial_state(const Value& init, int64_t d) {
  if (init.defined()) return slice(init, {d, 0, 0}, {d + 1, l_.batch, l_.hidden});
  return ctx_.constant(NDArray::empty(l_.dtype, {1, l_.batch, l_.hidden}), "rnn_zero_state");
}

Value RecurrentBuilder::step_mask(int64_t t) {
  if (!l_.seq_lens.defined()) return {};
  if (!seq_f_.defined()) {
    seq_f_ = reshape(ctx_.call1("cast", {l_.seq_lens}, Attrs().set("dtype", l_.dtype)), {1, l_.batch, 1});
  }
  return ctx_.call1("clip", {sub(seq_f_, scalar(static_cast<double>(t)))}, Attrs().set("min", 0.0).set("max", 1.0));
}

Value RecurrentBuilder::masked(Value mask, Value fresh, Value previous) {
  if (!mask.defined()) return fresh;
  return add(mul(mask, fresh), mul(sub(scalar(1), mask), previous));
}

Value RecurrentBuilder::stack_y(const std::vector<std::vector<Value>>& per_dir_time) {
  const int64_t T = l_.seq, B = l_.batch, H = l_.hidden;
  std::vector<Value> dirs;
  for (const auto& steps : per_dir_time) dirs.push_back(reshape(concat(steps, 0), {T, 1, B, H}));
  Value y = dirs.size() == 1 ? dirs[0] : ctx_.call1("concat", dirs, Attrs().set("axis", int64_t{1}));
  if (l_.layout == 1) y = ctx_.call1("transpose", {y}, Attrs().set("perm", std::vector<int64_t>{2, 0, 1, 3}));
  return y;
}

Value RecurrentBuilder::stack_state(const std::vector<Value>& per_dir) {
  Value s = per_dir.size() == 1 ? per_dir[0] : ctx_.call1("concat", per_dir, Attrs().set("axis", int64_t{0}));
  if (l_.layout == 1) s = ctx_.call1("transpose", {s}, Attrs().set("perm", std::vector<int64_t>{1, 0, 2}));
  return s;
}

}  // namespace kiln::frontend::onnx_import::recurrent
