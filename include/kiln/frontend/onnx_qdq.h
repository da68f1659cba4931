// ONNX-level rewriting for post-training quantization (`kiln quantize`, docs/int8.md), with no
// protobuf in the interface: the quantizer (src/driver/quantize*.cc) reads the facts of a model
// (nodes, inputs, float initializers), asks for a copy whose intermediate tensors are extra graph
// outputs (to calibrate them on a compiled artifact), and hands back a QdqPlan that
// write_qdq_model turns into a new ONNX model:
//   - kStandard: the standard QDQ form every engine reads. Each planned activation T gets
//     T -> QuantizeLinear -> DequantizeLinear right after its producer, and every consumer reads
//     the DequantizeLinear output, except the inputs listed in QdqPlan::f32_reads (f32 nodes that
//     read the original f32 tensor). Each replaced initializer (int8 weights, int32 biases) becomes
//     an integer initializer + DequantizeLinear (per axis when it has several scales). Each
//     dynamic MatMul/Gemm becomes DynamicQuantizeLinear + MatMulInteger + Cast + Mul (+ Add bias),
//     the form of ONNX Runtime's quantize_dynamic.
//   - kFakeQuantF32: the same arithmetic written with f32 ops only (Div/Round/Add/Clip/Sub/Mul,
//     weights stored dequantized, dynamic quantization with ReduceMin/ReduceMax), so that any f32
//     engine (Kiln's compiler included) runs the quantized model's numerics; used for the per-layer
//     error report.
//   - kFakeQuantGated: kFakeQuantF32 where each quantized activation and each replaced initializer
//     is switched by its own f32 scalar graph input g (written to *gates): x + g * (fq(x) - x),
//     so that one compiled model runs any subset of the quantization (the sensitivity search of
//     `kiln quantize --skip-sensitive`). Dynamic nodes are not gated.
// Graph outputs keep their names and stay f32. Initializers no node reads any more are dropped.
// Only the main graph is rewritten (subgraph nodes read the original f32 tensors).
#ifndef KILN_FRONTEND_ONNX_QDQ_H_
#define KILN_FRONTEND_ONNX_QDQ_H_

#include <cstdint>
#include <map>
#include <set>
#include <string>
#include <utility>
#include <vector>

#include "kiln/ir/ndarray.h"

namespace kiln::frontend::qdq {

// One node of the main graph, as the quantizer sees it.
struct ModelNode {
  int index = 0;  // position in the graph's node list
  std::string name;
  std::string op_type;
  std::string domain;  // "" for ai.onnx
  std::vector<std::string> inputs;   // "" for an omitted optional input
  std::vector<std::string> outputs;
  std::map<std::string, int64_t> ints;  // INT attributes
  std::map<std::string, float> floats;  // FLOAT attributes
  std::map<std::string, std::vector<int64_t>> int_lists;  // INTS attributes (pads, strides, ...)
  std::map<std::string, std::string> strings;  // STRING attributes (auto_pad, ...)
  bool has_subgraph = false;
};

// A graph input that is not an initializer.
struct ModelInput {
  std::string name;
  bool has_dtype = false;
  ir::DType dtype = ir::DType::kF32;
  std::vector<int64_t> dims;  // -1 for a symbolic or unknown dimension
};

struct ModelFacts {
  std::string path;
  int opset = 0;  // ai.onnx
  std::vector<ModelInput> inputs;
  std::vector<std::string> outputs;
  std::vector<ModelNode> nodes;  // in file order
  std::set<std::string> initializer_names;
  std::map<std::string, ir::NDArray> float_initializers;  // f32 initializers, read
  std::map<std::string, double> scalar_constants;  // outputs of one-element f32 Constant nodes (Clip bounds)
};

// Reads the model at `path`. UserError for an unreadable or malformed file.
ModelFacts read_model_facts(const std::string& path);

// The model at `path` (serialized ModelProto) with `tensors` appended to its graph outputs and
// the f32 initializers named in `float_values` given those values (same shape; see QdqPlan).
std::string model_bytes_with_outputs(const std::string& path, const std::vector<std::string>& tensors,
                                     const std::map<std::string, ir::NDArray>& float_values = {});

// Per-tensor quantization of an activation: q = saturate(round_half_even(x / scale) + zero_point).
struct ActivationQuant {
  float scale = 1.0f;
  int32_t zero_point = 0;
  ir::DType dtype = ir::DType::kU8;  // kU8 or kI8
};

// An integer initializer with its scales: one scale (per tensor) or one per slice along `axis`.
// Zero points are 0 (symmetric). values: kI8 (weights) or kI32 (biases).
struct QuantizedInitializer {
  ir::NDArray values;
  std::vector<float> scales;
  int axis = -1;  // -1: per tensor
};

// Input `input` of node `node` is replaced by the dequantized `q`; replacements with the same key
// share one initializer (a weight read by several nodes).
struct InputReplacement {
  int node = 0;
  int input = 0;
  std::string key;
  QuantizedInitializer q;
};

// Node `node` (MatMul, or Gemm without transA/alpha/beta) computed as dynamic quantization:
// weight already in [K, N] layout with per-column scales (axis 1); bias f32 [N] or undefined.
struct DynamicMatMul {
  int node = 0;
  QuantizedInitializer weight;
  ir::NDArray bias;
};

struct QdqPlan {
  // f32 initializers given new values of the same shape before anything else is rewritten (the
  // cross-layer-equalized weights of `kiln quantize --equalize`); an initializer that is also
  // replaced below is replaced by its quantized form.
  std::map<std::string, ir::NDArray> float_values;
  std::map<std::string, ActivationQuant> activations;
  std::vector<InputReplacement> replacements;
  std::vector<DynamicMatMul> dynamic;
  // (node, input) pairs that keep reading the original f32 activation instead of its dequantized
  // form: nodes kept in f32 that read a tensor also produced in f32, which is quantized only for
  // its quantized consumers (in every form; with kFakeQuantGated they read it ungated).
  std::set<std::pair<int, int>> f32_reads;
};

enum class QdqForm { kStandard, kFakeQuantF32, kFakeQuantGated };

// Rewrites the model at `path` by `plan` (see the file comment); returns the serialized model.
// `extra_outputs` are appended to the graph outputs (the error report reads layer outputs).
// kFakeQuantGated: `gates` receives, for each planned activation (by tensor name) and each
// replacement (by key), the name of the graph input (f32, shape []) that switches it on.
std::string write_qdq_model(const std::string& path, const QdqPlan& plan, QdqForm form,
                            const std::vector<std::string>& extra_outputs = {},
                            std::map<std::string, std::string>* gates = nullptr);

}  // namespace kiln::frontend::qdq

#endif  // KILN_FRONTEND_ONNX_QDQ_H_
