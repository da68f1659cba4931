// Post-training quantization (`kiln quantize`, `kiln compile --quantize int8`; docs/int8.md).
//
// quantize_model reads an f32 ONNX model and writes a standard QDQ ONNX model:
//   1. Picks the nodes to quantize: Conv, MatMul, Gemm (weights int8 symmetric per output
//      channel, zero point 0; biases int32 with scale s_x * s_w), and Add, Concat, MaxPool,
//      AveragePool, GlobalAveragePool (activations only). A Relu/Clip that is the only consumer
//      of a quantized node's output is folded: only its output is quantized. --skip keeps nodes f32.
//   2. Calibrates: compiles (with Kiln) a copy of the model whose to-be-quantized tensors are
//      extra graph outputs, runs it on every calibration sample and collects per-tensor ranges
//      (minmax, percentile of a histogram, or entropy = the KL-divergence threshold search).
//   3. Activations become uint8 asymmetric per tensor (the u8 x s8 form ONNX Runtime runs fast on
//      x86); writes QuantizeLinear/DequantizeLinear pairs (frontend/onnx_qdq.h).
//   4. Error report: compiles the fake-quantized f32 twin of the written model and compares, on a
//      few calibration samples, every quantized layer's output (and the model outputs) with f32.
//      With auto_skip, the flagged layers are kept in f32 and the model is quantized again.
//   5. With skip_sensitive N: a sensitivity search (each node quantized alone, output cosine) and
//      the N most sensitive nodes kept in f32, quantized again.
// Options that reduce the error (docs/int8.md "Accuracy"): equalize (cross-layer equalization of
// Conv -> [ReLU] -> Conv pairs, an exact rescaling of the f32 weights, before calibration) and
// bias_correction (each Conv/Gemm bias minus the mean output shift its weight quantization causes,
// measured with the calibration samples' mean input).
// Dynamic mode (options.dynamic): MatMul/Gemm with constant weights become DynamicQuantizeLinear +
// MatMulInteger (ONNX Runtime's quantize_dynamic form); no calibration is needed (samples, when
// given, feed the error report).
//
// Every problem with the inputs is a kiln::UserError naming the file/input and the fix: a
// calibration file of the wrong dtype or shape, NaN/Inf in it, an empty set, a directory without
// .npy files, a missing or unknown input, a --skip name that matches no node.
#ifndef KILN_DRIVER_QUANTIZE_H_
#define KILN_DRIVER_QUANTIZE_H_

#include <iosfwd>
#include <map>
#include <string>
#include <vector>

#include "kiln/ir/tensor_type.h"

namespace kiln {
class Progress;
}

namespace kiln::driver {

// One --calibration value: `input` ("" = the model's only input) fed from `path`, a .npy file of
// samples stacked on axis 0 or a directory of such files.
struct CalibrationSource {
  std::string input;
  std::string path;
};

// Parses `NAME=PATH` or `PATH`.
CalibrationSource parse_calibration_option(const std::string& spec);

enum class CalibrationMethod { kMinMax, kPercentile, kEntropy };
// "minmax" | "percentile" | "entropy"; UserError otherwise.
CalibrationMethod parse_calibration_method(const std::string& name);

struct QuantizeOptions {
  std::string model_path;
  std::string output_path;  // the QDQ model to write
  std::string fake_quant_path;  // also write the fake-quantized f32 twin here ("": no)
  std::vector<CalibrationSource> calibration;
  CalibrationMethod method = CalibrationMethod::kMinMax;
  double percentile = 99.99;  // for kPercentile: the kept share of values, in percent
  std::vector<std::string> skip;  // node names (or first-output names) kept in f32
  std::vector<std::string> skip_op_types;  // ONNX op types (e.g. "Add") whose nodes are kept in f32
  bool dynamic = false;
  bool reduce_range = false;  // 7-bit weights ([-63, 63]) for u8 x s8 kernels that saturate at 16 bits
  std::map<std::string, ir::Shape> input_shapes;  // overrides the shapes taken from the samples
  std::string target = "llvm";  // for the calibration artifacts
  int report_samples = 4;       // samples the error report runs (0: no report)
  double error_threshold = 0.05;  // layers adding more relative L2 error than this are flagged
  bool auto_skip = false;         // keep the flagged layers in f32 and quantize again (needs the report)
  bool equalize = false;          // cross-layer equalization of Conv pairs before calibration
  bool bias_correction = false;   // correct Conv/Gemm biases by the mean weight-quantization error
  // Sensitivity search: quantize each node alone on report_samples calibration samples, keep the
  // skip_sensitive nodes whose output cosine to f32 is lowest in f32, and quantize again.
  int skip_sensitive = 0;
  Progress* progress = nullptr;  // the phases and counts (support/progress.h; not owned); null: none
};

// One layer's (or model output's) error, fake-quantized against f32, over the report's samples.
struct LayerError {
  std::string node;     // node name (or its first output when unnamed)
  std::string op_type;
  std::string tensor;   // the compared tensor
  double rel_l2 = 0;    // ||q - f|| / ||f||, accumulated through the network
  double added = 0;     // rel_l2 minus its first input's rel_l2: the error this layer adds
  double cosine = 1;
  bool flagged = false;
};

// One node's sensitivity: the model output's cosine to f32 with only this node quantized.
struct LayerSensitivity {
  std::string node;
  std::string op_type;
  double cosine = 1;
};

struct QuantizeReport {
  std::string output_path;
  int samples = 0;           // calibration samples run
  int report_samples = 0;    // samples the error report ran
  int quantized_nodes = 0;   // static Conv/MatMul/Gemm + activation-only nodes
  int dynamic_nodes = 0;
  int activations = 0;       // tensors with a QuantizeLinear/DequantizeLinear pair
  int bias_corrected = 0;    // layers whose bias --bias-correction changed
  std::vector<std::string> notes;  // nodes left in f32 and why, folded activations
  std::vector<LayerError> layers;  // worst first
  std::vector<LayerError> outputs;  // the model outputs
  std::vector<LayerSensitivity> sensitivity;  // with skip_sensitive: every quantized node, most sensitive first
  double calibration_seconds = 0;   // compile + runs + range collection
  double total_seconds = 0;
  std::string summary() const;
};

QuantizeReport quantize_model(const QuantizeOptions& options);

}  // namespace kiln::driver

#endif  // KILN_DRIVER_QUANTIZE_H_
