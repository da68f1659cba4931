// The pieces of quantize_model (kiln/driver/quantize.h), one file each:
//   quantize_calibration_set.cc  reads and checks the calibration samples
//   quantize_range.cc            per-tensor range collection (minmax, histogram percentile, KL entropy)
//   quantize_runner.cc           compiles an ONNX model with Kiln and runs it sample by sample
//   quantize_equalize.cc         cross-layer equalization of conv pairs (--equalize)
//   quantize_bias_correction.cc  mean input patches and the bias correction (--bias-correction)
//   quantize_sensitivity.cc      one-node-at-a-time sensitivity search (--skip-sensitive)
//   quantize.cc                  node selection, parameters, the plan, the error report
#ifndef KILN_DRIVER_QUANTIZE_PARTS_H_
#define KILN_DRIVER_QUANTIZE_PARTS_H_

#include <cstdint>
#include <map>
#include <memory>
#include <string>
#include <vector>

#include "kiln/driver/quantize.h"
#include "kiln/frontend/onnx_qdq.h"
#include "kiln/ir/ndarray.h"
#include "kiln/support/progress.h"

namespace kiln::driver::quantize_detail {

// Samples, one NDArray per model input (in `names` order) per sample.
struct CalibrationSet {
  std::vector<std::string> names;
  std::vector<std::vector<ir::NDArray>> samples;
};

// Reads the sources against the model's inputs: each file holds samples stacked on axis 0 (slices
// of the model's fixed batch, or of 1 when the batch is symbolic); a directory contributes every
// .npy file in it (sorted). Checks dtype, rank, fixed dimensions, equal sample counts across
// inputs, finite values; UserError naming the file otherwise.
CalibrationSet load_calibration_set(const frontend::qdq::ModelFacts& facts, const std::vector<CalibrationSource>& sources,
                                    const std::map<std::string, ir::Shape>& input_shapes);

// A real-valued range [lo, hi].
struct Range {
  float lo = 0;
  float hi = 0;
};

// Collects one tensor's values over all samples. Histogram: 4096 bins over [-R, R], R doubled
// (bins merged pairwise) whenever a value falls outside.
class RangeCollector {
 public:
  explicit RangeCollector(bool histogram) : use_histogram_(histogram) {}
  void add(const float* data, int64_t n);
  Range range(CalibrationMethod method, double percentile) const;
  bool empty() const { return count_ == 0; }

 private:
  void grow_to(float absmax);
  Range percentile_range(double percentile) const;
  Range entropy_range() const;

  bool use_histogram_;
  int64_t count_ = 0;
  float min_ = 0, max_ = 0;
  float half_width_ = 0;  // R
  std::vector<double> bins_;
};

// An ONNX model compiled by Kiln into a temporary artifact, run one sample at a time.
class CompiledModel {
 public:
  CompiledModel(const std::string& model_bytes, const std::string& model_path, const std::map<std::string, ir::Shape>& shapes,
                const std::string& target, const std::string& label);
  ~CompiledModel();
  CompiledModel(const CompiledModel&) = delete;
  CompiledModel& operator=(const CompiledModel&) = delete;

  void run(const std::vector<std::string>& input_names, const std::vector<ir::NDArray>& inputs);
  // Output `name` of the last run when it is f32 (else null), with its element count.
  const float* f32_output(const std::string& name, int64_t* numel) const;
  // The shape of output `name` in the last run (empty when there is no such f32 output).
  ir::Shape f32_output_shape(const std::string& name) const;
  bool has_f32_output(const std::string& name) const;

 private:
  struct Impl;
  std::unique_ptr<Impl> impl_;
};

// The element-wise mean of a layer's input over the calibration samples (the batch axis averaged
// too), for bias correction (quantize_bias_correction.cc).
class MeanInput {
 public:
  void add(const float* data, const ir::Shape& shape);
  int64_t count() const { return count_; }
  const ir::Shape& shape() const { return shape_; }  // batch 1
  std::vector<double> mean() const {
    std::vector<double> m(sum_);
    for (double& v : m) v /= static_cast<double>(count_);
    return m;
  }

 private:
  ir::Shape shape_;
  std::vector<double> sum_;
  int64_t count_ = 0;
};

// Bias correction of Conv/Gemm node `n` whose f32 weight `w` is quantized to `w_quantized`:
// `bias` becomes bias - E[(W_q - W) x] (per output channel; x's mean from `input`). False, with
// `why`, for a form it does not handle (the bias is then left as it is).
bool corrected_bias(const frontend::qdq::ModelNode& n, const ir::NDArray& w, const frontend::qdq::QuantizedInitializer& w_quantized,
                    const MeanInput& input, ir::NDArray* bias, std::string* why);

// Cross-layer equalization (quantize_equalize.cc): new values of the f32 weights and biases of
// the equalized Conv pairs (the model computes the same function with them), the pairs' count,
// the sweeps run, and a note per pair left alone (e.g. ReLU6 between the convs).
struct EqualizeResult {
  std::map<std::string, ir::NDArray> values;
  std::vector<std::string> notes;
  int pairs = 0;
  int sweeps = 0;
};
EqualizeResult equalize_cross_layer(const frontend::qdq::ModelFacts& facts);

// A quantized node and what its quantization switches on: activation tensor names and
// replacement keys (QdqPlan).
struct NodeGates {
  int node = 0;
  std::vector<std::string> keys;
};
struct NodeSensitivity {
  int node = 0;
  double cosine = 1;  // model outputs, only this node quantized, against f32
};
// Quantizes each node of `nodes` alone (plan's parameters) on the first `samples` samples of
// `set`; most sensitive (lowest cosine) first. One compile (the gated fake-quantized twin).
std::vector<NodeSensitivity> measure_sensitivity(const std::string& model_path, const frontend::qdq::QdqPlan& plan,
                                                 const std::vector<NodeGates>& nodes, const std::vector<std::string>& outputs,
                                                 const CalibrationSet& set, int samples, const std::map<std::string, ir::Shape>& shapes,
                                                 const std::string& target, Progress* progress);


}  // namespace kiln::driver::quantize_detail

#endif  // KILN_DRIVER_QUANTIZE_PARTS_H_
