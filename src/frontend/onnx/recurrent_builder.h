// Building blocks for the ONNX recurrent layers (LSTM, GRU, RNN), which the importer unrolls into
// graph ops for the compile-time sequence length (onnx_ops_recurrent.cc). This file holds what the
// three cells share: the decoded attributes, the activation functions expressed as graph ops, the
// input projection of all steps as one matmul, the per-step recurrent product, the per-step
// sequence_lens masks, and the stacking of the outputs.
//
// Shapes: the hidden state of one direction is kept as [1, B, H] throughout, so that the per-step
// pieces of the input projection (a `split` into [1, B, H] pieces) and the recurrent product
// (`matmul([1, B, H], [H, H])`) have the same shape and FuseOps fuses the add and the gate
// activations into the recurrent matmul's kernel; every step's kernels have identical bodies, so
// the compile driver builds each once.
#ifndef KILN_FRONTEND_ONNX_RECURRENT_BUILDER_H_
#define KILN_FRONTEND_ONNX_RECURRENT_BUILDER_H_

#include <string>
#include <vector>

#include "onnx_node.h"

namespace kiln::frontend::onnx_import::recurrent {

// One activation function of the ONNX recurrent ops, with its alpha/beta resolved.
struct Activation {
  std::string name;  // canonical ONNX spelling: "Sigmoid", "Tanh", ...
  double alpha = 0;
  double beta = 0;
};

// The attributes and inputs shared by LSTM, GRU and RNN, checked and normalized.
struct RecurrentLayer {
  int64_t gates = 1;          // 4 (LSTM: i, o, f, c), 3 (GRU: z, r, h), 1 (RNN)
  int64_t seq = 0, batch = 0, input_size = 0, hidden = 0;
  int64_t directions = 1;     // 2 when bidirectional
  std::string direction;      // "forward", "reverse" or "bidirectional"
  int64_t layout = 0;
  bool has_clip = false;
  double clip = 0;
  ir::DType dtype = ir::DType::kF32;
  // activations[d * per_direction + k]: the k-th function of direction d.
  std::vector<Activation> activations;
  int64_t per_direction = 1;

  ir::Value x;  // [T, B, I] (transposed from layout 1)
  ir::Value w, r;                    // [D, G*H, I], [D, G*H, H]
  ir::Value bias;                    // [D, 2*G*H] or undefined
  ir::Value seq_lens;                // [B] int32 or undefined (undefined too when no step is masked)
  ir::Value initial_h, initial_c;    // [D, B, H] (transposed from layout 1) or undefined

  const Activation& act(int64_t d, int64_t k) const { return activations[d * per_direction + k]; }
};

// Decodes and validates the common inputs/attributes. `default_acts` are the ONNX default
// activations of one direction (e.g. {"Sigmoid", "Tanh", "Tanh"} for LSTM); `initial_c_input` is the
// index of initial_c (LSTM: 6) or -1.
RecurrentLayer decode_layer(ImportContext& ctx, int64_t gates, const std::vector<std::string>& default_acts,
                            int initial_c_input);

// Graph-op helpers bound to one layer's dtype.
class RecurrentBuilder {
 public:
  RecurrentBuilder(ImportContext& ctx, const RecurrentLayer& layer) : ctx_(ctx), l_(layer) {}

  ir::Value scalar(double v);
  ir::Value add(ir::Value a, ir::Value b) { return ctx_.call1("add", {a, b}); }
  ir::Value sub(ir::Value a, ir::Value b) { return ctx_.call1("sub", {a, b}); }
  ir::Value mul(ir::Value a, ir::Value b) { return ctx_.call1("mul", {a, b}); }
  ir::Value reshape(ir::Value x, std::vector<int64_t> shape);
  ir::Value slice(ir::Value x, std::vector<int64_t> begins, std::vector<int64_t> ends);
  // concat of many pieces as a tree of at most 8-way concats (each output element reads at most
  // 8 candidates per level instead of all T).
  ir::Value concat(std::vector<ir::Value> pieces, int64_t axis);
  // x split along axis 0 into rows of size 1, as a tree of at most 8-way splits (one split kernel
  // with thousands of outputs takes minutes to compile; the tree's kernels have few outputs and
  // equal-sized chunks share a kernel).
  std::vector<ir::Value> split_rows(ir::Value x);

  // f(x) for one activation, in graph ops.
  ir::Value activate(const Activation& a, ir::Value x);
  // clip(x) when the layer has `clip`, then f(x).
  ir::Value gate(const Activation& a, ir::Value x);

  // The input projection of every step and gate: xw[d][g][t] is the [1, B, H] piece of
  // X_t W_{d,g}^T + bias (bias_rows[d][g]: which halves of B to add, 0 = none, 1 = Wb, 2 = Wb + Rb).
  // One matmul for all steps, gates and directions, then a tree of splits into the pieces.
  std::vector<std::vector<std::vector<ir::Value>>> input_projection(const std::vector<int>& bias_parts);
  // R_{d,g}^T as [H, H] (folds when R is a constant).
  ir::Value recurrent_weight(int64_t d, int64_t g);
  // Rb_{d,g} as [H] (undefined without B).
  ir::Value recurrent_bias(int64_t d, int64_t g);
  // h [1, B, H] x R_{d,g}^T.
  ir::Value recurrent(ir::Value h, ir::Value rt) { return ctx_.call1("matmul", {h, rt}); }
  // Initial state of direction d as [1, B, H] (zeros when absent).
  ir::Value initial_state(const ir::Value& init, int64_t d);
  // The [1, B, 1] mask (1 while t < sequence_lens[b], else 0) of step t, or undefined.
  ir::Value step_mask(int64_t t);
  // state update under the mask: m * fresh + (1 - m) * previous.
  ir::Value masked(ir::Value mask, ir::Value fresh, ir::Value previous);

  // Y from per-direction per-time [1, B, H] pieces: [T, D, B, H] (layout 0) or [B, T, D, H].
  ir::Value stack_y(const std::vector<std::vector<ir::Value>>& per_dir_time);
  // Y_h / Y_c from per-direction [1, B, H] states: [D, B, H] (layout 0) or [B, D, H].
  ir::Value stack_state(const std::vector<ir::Value>& per_dir);

 private:
  ImportContext& ctx_;
  const RecurrentLayer& l_;
  ir::Value seq_f_;  // sequence_lens as [1, B, 1] in the layer's dtype (built on first use)
};

}  // namespace kiln::frontend::onnx_import::recurrent

#endif  // KILN_FRONTEND_ONNX_RECURRENT_BUILDER_H_
