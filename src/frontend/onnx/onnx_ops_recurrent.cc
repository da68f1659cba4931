// ONNX LSTM, GRU and RNN: unrolled at import into graph ops for the (static) sequence length, as
// TVM's ONNX frontend does. Semantics are ONNX's (opset 7 and 14 forms: direction, layout,
// sequence_lens, initial states, LSTM peepholes and input_forget, GRU linear_before_reset, clip,
// activations with activation_alpha/beta).
//
// What gets compiled:
//   - the input projection of all steps, gates and directions: ONE matmul [T*B, I] x [I, D*G*H]
//     plus the folded bias Wb + Rb, then one split into per-step per-gate [1, B, H] pieces;
//   - per step and gate: matmul(h [1, B, H], R_g^T) + piece -> clip -> activation, which FuseOps
//     fuses into one kernel (PackMatmulWeights pre-packs R_g^T when R is a constant); the cell
//     update (c = f*c + i*g, h = o*h(c)) joins one of those kernels' epilogues or forms one
//     elementwise kernel. Every step has the same kernel bodies, so the driver builds them once;
//   - sequence_lens (when some length < T): per-step masks m_t = clip(len - t, 0, 1) [1, B, 1];
//     state = m*new + (1-m)*old (Y_h/Y_c keep the last valid step), Y_t = m*new (zero past the end).
//     The reverse direction walks t = T-1..0 with the same masks, so it starts at each sequence's
//     own last element.
//   - Y: the per-step states concatenated (8-way concat tree), then transposed for layout 1.
#include <string>
#include <vector>

#include "kiln/support/error.h"
#include "onnx_node.h"
#include "recurrent_builder.h"

namespace kiln::frontend::onnx_import {
namespace {

using ir::Value;
using recurrent::RecurrentBuilder;
using recurrent::RecurrentLayer;

// Time indices of direction d in processing order.
std::vector<int64_t> step_order(const RecurrentLayer& l, int64_t d) {
  const bool reverse = l.direction == "reverse" || (l.direction == "bidirectional" && d == 1);
  std::vector<int64_t> order;
  for (int64_t k = 0; k < l.seq; ++k) order.push_back(reverse ? l.seq - 1 - k : k);
  return order;
}

bool wants(const ImportContext& ctx, size_t output) {
  return output < ctx.node().outputs.size() && !ctx.node().outputs[output].empty();
}

// Collects the results of the directions and builds the requested outputs (Y, Y_h, Y_c).
struct Outputs {
  std::vector<std::vector<Value>> y;  // [d][t] in time order
  std::vector<Value> h, c;            // final states per direction

  explicit Outputs(const RecurrentLayer& l) : y(static_cast<size_t>(l.directions), std::vector<Value>(static_cast<size_t>(l.seq))) {}

  std::vector<Value> build(ImportContext& ctx, RecurrentBuilder& b, bool with_c) const {
    std::vector<Value> out(ctx.node().outputs.size());
    if (wants(ctx, 0)) out[0] = b.stack_y(y);
    if (wants(ctx, 1)) out[1] = b.stack_state(h);
    if (with_c && wants(ctx, 2)) out[2] = b.stack_state(c);
    return out;
  }
};

std::vector<Value> convert_lstm(ImportContext& ctx) {
  RecurrentLayer l = recurrent::decode_layer(ctx, 4, {"Sigmoid", "Tanh", "Tanh"}, 6);
  RecurrentBuilder b(ctx, l);
  const int64_t H = l.hidden;
  const bool input_forget = ctx.attr_int("input_forget", 0) != 0;
  Value peep;
  if (ctx.has_input(7)) {
    peep = ctx.input(7);
    if (peep.type().shape != ir::Shape{l.directions, 3 * H} || peep.type().dtype != l.dtype) {
      ctx.fail_invalid("input P has type " + peep.type().to_string() + "; expected [" + std::to_string(l.directions) +
                       ", " + std::to_string(3 * H) + "] of the type of X");
    }
  }
  // Gate order in W, R, B: i, o, f, c. Peepholes: i, o, f.
  enum { kI = 0, kO = 1, kF = 2, kC = 3 };
  auto xw = b.input_projection({2, 2, 2, 2});
  Outputs out(l);
  for (int64_t d = 0; d < l.directions; ++d) {
    std::vector<Value> rt;
    for (int64_t g = 0; g < 4; ++g) rt.push_back(b.recurrent_weight(d, g));
    Value p[3];
    if (peep.defined()) {
      for (int64_t k = 0; k < 3; ++k) p[k] = b.reshape(b.slice(peep, {d, k * H}, {d + 1, (k + 1) * H}), {H});
    }
    Value h = b.initial_state(l.initial_h, d);
    Value c = b.initial_state(l.initial_c, d);
    for (int64_t t : step_order(l, d)) {
      auto pre = [&](int g) { return b.add(b.recurrent(h, rt[static_cast<size_t>(g)]), xw[d][g][static_cast<size_t>(t)]); };
      Value i_pre = pre(kI);
      if (peep.defined()) i_pre = b.add(i_pre, b.mul(c, p[0]));
      Value i = b.gate(l.act(d, 0), i_pre);
      Value f;
      if (input_forget) {
        f = b.sub(b.scalar(1), i);
      } else {
        Value f_pre = pre(kF);
        if (peep.defined()) f_pre = b.add(f_pre, b.mul(c, p[2]));
        f = b.gate(l.act(d, 0), f_pre);
      }
      Value cell = b.gate(l.act(d, 1), pre(kC));
      Value c_new = b.add(b.mul(f, c), b.mul(i, cell));
      Value o_pre = pre(kO);
      if (peep.defined()) o_pre = b.add(o_pre, b.mul(c_new, p[1]));
      Value o = b.gate(l.act(d, 0), o_pre);
      Value h_new = b.mul(o, b.activate(l.act(d, 2), c_new));
      Value m = b.step_mask(t);
      out.y[d][static_cast<size_t>(t)] = m.defined() ? b.mul(m, h_new) : h_new;
      h = b.masked(m, h_new, h);
      c = b.masked(m, c_new, c);
    }
    out.h.push_back(h);
    out.c.push_back(c);
  }
  return out.build(ctx, b, true);
}

std::vector<Value> convert_gru(ImportContext& ctx) {
  RecurrentLayer l = recurrent::decode_layer(ctx, 3, {"Sigmoid", "Tanh"}, -1);
  RecurrentBuilder b(ctx, l);
  const bool linear_before_reset = ctx.attr_int("linear_before_reset", 0) != 0;
  // Gate order: z, r, h. With linear_before_reset, Rbh is added inside r * (h R_h^T + Rbh).
  enum { kZ = 0, kR = 1, kH = 2 };
  auto xw = b.input_projection({2, 2, linear_before_reset ? 1 : 2});
  Outputs out(l);
  for (int64_t d = 0; d < l.directions; ++d) {
    std::vector<Value> rt;
    for (int64_t g = 0; g < 3; ++g) rt.push_back(b.recurrent_weight(d, g));
    Value rbh = linear_before_reset ? b.recurrent_bias(d, kH) : Value{};
    Value h = b.initial_state(l.initial_h, d);
    for (int64_t t : step_order(l, d)) {
      const size_t ts = static_cast<size_t>(t);
      Value z = b.gate(l.act(d, 0), b.add(b.recurrent(h, rt[kZ]), xw[d][kZ][ts]));
      Value r = b.gate(l.act(d, 0), b.add(b.recurrent(h, rt[kR]), xw[d][kR][ts]));
      Value cand_pre;
      if (linear_before_reset) {
        Value rec = b.recurrent(h, rt[kH]);
        if (rbh.defined()) rec = b.add(rec, rbh);
        cand_pre = b.add(b.mul(r, rec), xw[d][kH][ts]);
      } else {
        cand_pre = b.add(b.recurrent(b.mul(r, h), rt[kH]), xw[d][kH][ts]);
      }
      Value cand = b.gate(l.act(d, 1), cand_pre);
      // (1 - z) * cand + z * h  =  cand + z * (h - cand)
      Value h_new = b.add(cand, b.mul(z, b.sub(h, cand)));
      Value m = b.step_mask(t);
      out.y[d][ts] = m.defined() ? b.mul(m, h_new) : h_new;
      h = b.masked(m, h_new, h);
    }
    out.h.push_back(h);
  }
  return out.build(ctx, b, false);
}

std::vector<Value> convert_rnn(ImportContext& ctx) {
  RecurrentLayer l = recurrent::decode_layer(ctx, 1, {"Tanh"}, -1);
  RecurrentBuilder b(ctx, l);
  auto xw = b.input_projection({2});
  Outputs out(l);
  for (int64_t d = 0; d < l.directions; ++d) {
    Value rt = b.recurrent_weight(d, 0);
    Value h = b.initial_state(l.initial_h, d);
    for (int64_t t : step_order(l, d)) {
      const size_t ts = static_cast<size_t>(t);
      Value h_new = b.gate(l.act(d, 0), b.add(b.recurrent(h, rt), xw[d][0][ts]));
      Value m = b.step_mask(t);
      out.y[d][ts] = m.defined() ? b.mul(m, h_new) : h_new;
      h = b.masked(m, h_new, h);
    }
    out.h.push_back(h);
  }
  return out.build(ctx, b, false);
}

}  // namespace

void add_recurrent_converters(std::map<std::string, Converter>& table) {
  table["LSTM"] = convert_lstm;
  table["GRU"] = convert_gru;
  table["RNN"] = convert_rnn;
}

}  // namespace kiln::frontend::onnx_import
