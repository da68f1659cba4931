// quantize_model (kiln/driver/quantize.h): node selection, calibration, quantization parameters,
// the QdqPlan handed to the ONNX writer, and the per-layer error report.
//
// Parameters (docs/int8.md "kiln quantize"):
//   activation  uint8, per tensor: range [lo, hi] widened to include 0, scale = (hi - lo) / 255,
//               zero_point = round(-lo / scale); a zero range gets scale 1, zero point 0.
//   weight      int8 symmetric per output channel (Conv: axis 0; MatMul [K, N]: axis 1; Gemm: the
//               N axis): scale = max|w| / 127 (63 with reduce_range), q = round_half_even(w / scale).
//   bias        int32, scale = s_x * s_w per channel, zero point 0 (after --bias-correction:
//               quantize_bias_correction.cc).
// --equalize rescales conv pairs first (quantize_equalize.cc); the equalized f32 weights are what
// the calibration model runs and what is quantized.
#include <algorithm>
#include <chrono>
#include <cmath>
#include <fstream>
#include <iomanip>
#include <limits>
#include <set>
#include <sstream>

#include "kiln/runtime/kiln_runtime.hpp"
#include "kiln/support/error.h"
#include "kiln/support/progress.h"
#include "quantize_parts.h"

namespace kiln::driver {

namespace qdq = frontend::qdq;
using quantize_detail::CalibrationSet;
using quantize_detail::CompiledModel;
using quantize_detail::Range;
using quantize_detail::RangeCollector;

CalibrationMethod parse_calibration_method(const std::string& name) {
  if (name == "minmax") return CalibrationMethod::kMinMax;
  if (name == "percentile") return CalibrationMethod::kPercentile;
  if (name == "entropy") return CalibrationMethod::kEntropy;
  throw UserError(UserErrorKind::kInvalidArgument, "--method " + name, "unknown calibration method",
                  "use minmax, percentile or entropy");
}

namespace {

// A node quantized statically: its activation inputs get QDQ pairs; a compute node (Conv, MatMul,
// Gemm with a constant weight) also has its weight (and bias) replaced.
struct Selected {
  int node = 0;
  std::vector<int> act_inputs;
  int weight = -1;
  int weight_axis = -1;
  int bias = -1;
};

struct Selection {
  std::vector<Selected> nodes;
  std::vector<int> dynamic;
  std::vector<std::string> notes;
};

std::string label(const qdq::ModelNode& n) {
  if (!n.name.empty()) return n.name;
  return n.outputs.empty() ? "#" + std::to_string(n.index) : n.outputs[0];
}

int64_t attr(const qdq::ModelNode& n, const std::string& name, int64_t def) {
  auto it = n.ints.find(name);
  return it == n.ints.end() ? def : it->second;
}
float fattr(const qdq::ModelNode& n, const std::string& name, float def) {
  auto it = n.floats.find(name);
  return it == n.floats.end() ? def : it->second;
}

const ir::NDArray* f32_init(const qdq::ModelFacts& f, const qdq::ModelNode& n, size_t i) {
  if (i >= n.inputs.size()) return nullptr;
  auto it = f.float_initializers.find(n.inputs[i]);
  return it == f.float_initializers.end() ? nullptr : &it->second;
}

bool is_activation(const qdq::ModelFacts& f, const qdq::ModelNode& n, size_t i) {
  return i < n.inputs.size() && !n.inputs[i].empty() && !f.initializer_names.count(n.inputs[i]);
}

// Gemm as dynamic quantization needs C = A * B (+ bias): no transA, alpha = beta = 1, C a vector of N.
bool dynamic_gemm_ok(const qdq::ModelFacts& f, const qdq::ModelNode& n, const ir::NDArray& b) {
  if (attr(n, "transA", 0) != 0 || fattr(n, "alpha", 1) != 1 || fattr(n, "beta", 1) != 1) return false;
  if (n.inputs.size() < 3 || n.inputs[2].empty()) return true;
  const ir::NDArray* c = f32_init(f, n, 2);
  return c && c->numel() == b.shape()[attr(n, "transB", 0) ? 0 : 1];
}

Selection select_nodes(const qdq::ModelFacts& f, const QuantizeOptions& o) {
  Selection s;
  std::set<std::string> skip(o.skip.begin(), o.skip.end()), matched;
  const std::set<std::string> skip_ops(o.skip_op_types.begin(), o.skip_op_types.end());
  std::set<std::string> ops_seen;
  for (const auto& n : f.nodes) {
    if (!n.domain.empty()) continue;
    ops_seen.insert(n.op_type);
    const std::string name = label(n);
    const bool skipped = skip.count(n.name) || (!n.outputs.empty() && skip.count(n.outputs[0]));
    if (skipped) {
      matched.insert(skip.count(n.name) ? n.name : n.outputs[0]);
      s.notes.push_back(n.op_type + " " + name + ": kept in f32 (--skip)");
      continue;
    }
    if (skip_ops.count(n.op_type)) {
      s.notes.push_back(n.op_type + " " + name + ": kept in f32 (--skip-op " + n.op_type + ")");
      continue;
    }
    const ir::NDArray* w = f32_init(f, n, 1);
    const bool matmul = n.op_type == "MatMul", gemm = n.op_type == "Gemm";
    if (o.dynamic) {
      if ((matmul || gemm) && w && w->shape().size() == 2 && is_activation(f, n, 0)) {
        if (matmul || dynamic_gemm_ok(f, n, *w)) {
          s.dynamic.push_back(n.index);
        } else {
          s.notes.push_back("Gemm " + name + ": kept in f32 (transA, alpha/beta != 1 or a bias that is not a vector)");
        }
      }
      continue;
    }
    Selected q;
    q.node = n.index;
    if (n.op_type == "Conv") {
      if (!w || w->shape().size() < 3 || !is_activation(f, n, 0)) {
        s.notes.push_back("Conv " + name + ": kept in f32 (its weight is not a constant initializer)");
        continue;
      }
      q.act_inputs = {0};
      q.weight = 1;
      q.weight_axis = 0;
      if (const ir::NDArray* b = f32_init(f, n, 2); b && b->shape().size() == 1) q.bias = 2;
    } else if (matmul || gemm) {
      if (!is_activation(f, n, 0)) continue;
      q.act_inputs = {0};
      if (w) {
        q.weight = 1;
        q.weight_axis = w->shape().size() != 2 ? -1 : (gemm && attr(n, "transB", 0) ? 0 : 1);
        const ir::NDArray* c = f32_init(f, n, 2);
        if (gemm && c && c->shape().size() == 1 && fattr(n, "alpha", 1) == 1 && fattr(n, "beta", 1) == 1) q.bias = 2;
      } else if (matmul && is_activation(f, n, 1)) {
        q.act_inputs.push_back(1);
      } else {
        s.notes.push_back(n.op_type + " " + name + ": kept in f32 (its second input is a non-f32 constant)");
        continue;
      }
    } else if (n.op_type == "Add" || n.op_type == "Concat") {
      for (size_t i = 0; i < n.inputs.size(); ++i) q.act_inputs.push_back(static_cast<int>(i));
      if (!std::all_of(q.act_inputs.begin(), q.act_inputs.end(), [&](int i) { return is_activation(f, n, static_cast<size_t>(i)); })) continue;
    } else if (n.op_type == "MaxPool" || n.op_type == "AveragePool" || n.op_type == "GlobalAveragePool") {
      if (!is_activation(f, n, 0) || n.outputs.size() != 1) continue;
      q.act_inputs = {0};
    } else {
      continue;
    }
    s.nodes.push_back(q);
  }
  for (const auto& op : o.skip_op_types) {
    if (!ops_seen.count(op)) {
      throw UserError(UserErrorKind::kNotFound, "--skip-op " + op, "no node of the model has op type '" + op + "'",
                      "use an ONNX op type of the model, spelled as in ONNX (Add, Conv, MatMul, ...)");
    }
  }
  for (const auto& name : o.skip) {
    if (!matched.count(name)) {
      throw UserError(UserErrorKind::kNotFound, "--skip " + name, "no node of the model is named '" + name + "' (nor writes a tensor of that name)",
                      "use the node names `kiln quantize` prints in its per-layer report (or the ONNX node names)");
    }
  }
  return s;
}

qdq::ActivationQuant activation_params(Range r) {
  qdq::ActivationQuant a;
  const double span = static_cast<double>(r.hi) - r.lo;
  if (!(span > 0) || !std::isfinite(span)) return a;  // scale 1, zero point 0
  a.scale = static_cast<float>(span / 255.0);
  a.zero_point = static_cast<int32_t>(std::clamp(std::nearbyint(-r.lo / a.scale), 0.0f, 255.0f));
  return a;
}

// Symmetric int8 per slice along `axis` (-1: per tensor).
qdq::QuantizedInitializer quantize_weight(const ir::NDArray& w, int axis, bool reduce_range) {
  const float qmax = reduce_range ? 63.0f : 127.0f;
  qdq::QuantizedInitializer q;
  q.axis = axis;
  const int64_t channels = axis < 0 ? 1 : static_cast<int64_t>(w.shape()[static_cast<size_t>(axis)]);
  int64_t inner = 1;
  if (axis >= 0) {
    for (size_t d = static_cast<size_t>(axis) + 1; d < w.shape().size(); ++d) inner *= w.shape()[d];
  } else {
    inner = w.numel();
  }
  auto channel = [&](int64_t i) { return static_cast<size_t>((i / inner) % channels); };
  const float* data = static_cast<const float*>(w.raw_data());
  std::vector<float> absmax(static_cast<size_t>(channels), 0.0f);
  for (int64_t i = 0; i < w.numel(); ++i) absmax[channel(i)] = std::max(absmax[channel(i)], std::fabs(data[i]));
  for (float m : absmax) q.scales.push_back(m > 0 ? m / qmax : 1.0f);
  q.values = ir::NDArray::empty(ir::DType::kI8, w.shape());
  auto* out = static_cast<int8_t*>(q.values.mutable_raw_data());
  for (int64_t i = 0; i < w.numel(); ++i) {
    out[i] = static_cast<int8_t>(std::clamp(std::nearbyint(data[i] / q.scales[channel(i)]), -qmax, qmax));
  }
  return q;
}

qdq::QuantizedInitializer quantize_bias(const ir::NDArray& b, float input_scale, const std::vector<float>& weight_scales) {
  qdq::QuantizedInitializer q;
  q.axis = weight_scales.size() > 1 ? 0 : -1;
  q.values = ir::NDArray::empty(ir::DType::kI32, b.shape());
  auto* out = static_cast<int32_t*>(q.values.mutable_raw_data());
  const float* data = static_cast<const float*>(b.raw_data());
  for (float ws : weight_scales) q.scales.push_back(input_scale * ws);
  constexpr double kMax = std::numeric_limits<int32_t>::max();
  for (int64_t i = 0; i < b.numel(); ++i) {
    const double v = std::nearbyint(static_cast<double>(data[i]) / q.scales[q.axis < 0 ? 0 : static_cast<size_t>(i)]);
    out[i] = static_cast<int32_t>(std::clamp(v, -kMax, kMax));
  }
  return q;
}

ir::NDArray transposed(const ir::NDArray& a) {
  const int64_t r = a.shape()[0], c = a.shape()[1];
  ir::NDArray t = ir::NDArray::empty(a.dtype(), {c, r});
  const float* in = static_cast<const float*>(a.raw_data());
  float* out = static_cast<float*>(t.mutable_raw_data());
  for (int64_t i = 0; i < r; ++i) {
    for (int64_t j = 0; j < c; ++j) out[j * r + i] = in[i * c + j];
  }
  return t;
}

void write_file(const std::string& path, const std::string& bytes) {
  std::ofstream out(path, std::ios::binary);
  out.write(bytes.data(), static_cast<std::streamsize>(bytes.size()));
  if (!out) throw UserError(UserErrorKind::kIO, path, "cannot write the quantized model", "check the directory and free space");
}

double seconds_since(std::chrono::steady_clock::time_point t0) {
  return std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
}

// Sums for relative L2 error and cosine similarity of q against f.
struct ErrorSums {
  double ff = 0, qq = 0, fq = 0, dd = 0;
  void add(const float* f, const float* q, int64_t n) {
    for (int64_t i = 0; i < n; ++i) {
      ff += double(f[i]) * f[i];
      qq += double(q[i]) * q[i];
      fq += double(f[i]) * q[i];
      dd += (double(f[i]) - q[i]) * (double(f[i]) - q[i]);
    }
  }
  double rel_l2() const { return ff > 0 ? std::sqrt(dd / ff) : std::sqrt(dd); }
  double cosine() const { return ff > 0 && qq > 0 ? fq / std::sqrt(ff * qq) : (dd == 0 ? 1.0 : 0.0); }
};

// One quantization: selection, calibration, parameters, the written model and its error report.
QuantizeReport quantize_once(const QuantizeOptions& o) {
  const auto t0 = std::chrono::steady_clock::now();
  qdq::ModelFacts f = qdq::read_model_facts(o.model_path);
  if (f.opset < 13) {
    throw UserError(UserErrorKind::kUnsupported, o.model_path,
                    "opset " + std::to_string(f.opset) + ": the QDQ model needs per-channel QuantizeLinear/DequantizeLinear (opset 13)",
                    "export the model with opset 13 or newer (torch.onnx.export(..., opset_version=13))");
  }
  const Selection sel = select_nodes(f, o);
  QuantizeReport report;
  report.output_path = o.output_path;
  report.notes = sel.notes;
  qdq::QdqPlan plan;
  if (o.equalize) {
    quantize_detail::EqualizeResult eq = quantize_detail::equalize_cross_layer(f);
    for (const auto& [name, value] : eq.values) f.float_initializers[name] = value;
    plan.float_values = std::move(eq.values);
    report.notes.push_back("--equalize: " + std::to_string(eq.pairs) + " Conv pairs equalized (" + std::to_string(eq.sweeps) + " sweeps)");
    report.notes.insert(report.notes.end(), eq.notes.begin(), eq.notes.end());
  }

  std::map<std::string, std::vector<int>> consumers;
  for (const auto& n : f.nodes) {
    for (const auto& i : n.inputs) consumers[i].push_back(n.index);
  }
  const std::set<std::string> graph_outputs(f.outputs.begin(), f.outputs.end());
  std::vector<std::string> wanted;  // activations to quantize, in first-seen order
  std::set<std::string> wanted_set;
  auto want = [&](const std::string& t) {
    if (!t.empty() && !graph_outputs.count(t) && wanted_set.insert(t).second) wanted.push_back(t);
  };
  for (const Selected& s : sel.nodes) {
    const auto& n = f.nodes[static_cast<size_t>(s.node)];
    for (int i : s.act_inputs) want(n.inputs[static_cast<size_t>(i)]);
    const std::string& out = n.outputs[0];
    const auto& c = consumers[out];
    const auto* next = c.size() == 1 ? &f.nodes[static_cast<size_t>(c[0])] : nullptr;
    if (next && (next->op_type == "Relu" || next->op_type == "Clip") && !graph_outputs.count(out)) {
      want(next->outputs[0]);  // the activation folds into the output range
    } else {
      want(out);
    }
  }
  // Layer outputs compared by the error report.
  std::vector<std::string> layer_tensors;
  std::vector<int> layer_nodes;
  for (const Selected& s : sel.nodes) {
    if (s.weight >= 0 || f.nodes[static_cast<size_t>(s.node)].op_type == "MatMul") layer_nodes.push_back(s.node);
  }
  layer_nodes.insert(layer_nodes.end(), sel.dynamic.begin(), sel.dynamic.end());
  for (int k : layer_nodes) layer_tensors.push_back(f.nodes[static_cast<size_t>(k)].outputs[0]);

  CalibrationSet set;
  if (!o.dynamic || !o.calibration.empty()) set = quantize_detail::load_calibration_set(f, o.calibration, o.input_shapes);
  std::map<std::string, ir::Shape> shapes = o.input_shapes;
  if (!set.samples.empty()) {
    for (size_t k = 0; k < set.names.size(); ++k) shapes.emplace(set.names[k], set.samples[0][k].shape());
  }
  std::set<std::string> graph_inputs;
  for (const auto& in : f.inputs) graph_inputs.insert(in.name);
  std::vector<std::string> extra;
  for (const auto& t : wanted) {
    if (!graph_inputs.count(t)) extra.push_back(t);
  }
  for (const auto& t : layer_tensors) {
    if (!wanted_set.count(t)) extra.push_back(t);
  }

  std::unique_ptr<CompiledModel> f32;
  std::map<std::string, quantize_detail::MeanInput> means;  // inputs of the layers whose bias is corrected
  if (o.bias_correction) {
    for (const Selected& s : sel.nodes) {
      if (s.weight >= 0 && s.bias >= 0) means.emplace(f.nodes[static_cast<size_t>(s.node)].inputs[0], quantize_detail::MeanInput());
    }
  }
  if (!set.samples.empty()) {
    if (o.progress) o.progress->phase("compiling the f32 model with " + std::to_string(extra.size()) + " calibration outputs");
    f32 = std::make_unique<CompiledModel>(qdq::model_bytes_with_outputs(o.model_path, extra, plan.float_values), o.model_path, shapes, o.target,
                                          "f32 with calibration outputs");
    const bool histogram = o.method != CalibrationMethod::kMinMax;
    std::vector<std::string> calibrated;
    std::vector<int> input_index;  // >= 0: a graph input of the sample
    for (const auto& t : wanted) {
      auto it = std::find(set.names.begin(), set.names.end(), t);
      const bool f32_input = it != set.names.end() && set.samples[0][static_cast<size_t>(it - set.names.begin())].dtype() == ir::DType::kF32;
      if (f32_input || (it == set.names.end() && f32->has_f32_output(t))) {
        calibrated.push_back(t);
        input_index.push_back(f32_input ? static_cast<int>(it - set.names.begin()) : -1);
      }
    }
    std::vector<RangeCollector> collectors(calibrated.size(), RangeCollector(histogram));
    if (o.progress) o.progress->phase("calibrating", static_cast<int64_t>(set.samples.size()), "samples");
    for (const auto& sample : set.samples) {
      f32->run(set.names, sample);
      runtime::parallel_for(static_cast<int64_t>(calibrated.size()), [&](int64_t begin, int64_t end) {
        for (int64_t i = begin; i < end; ++i) {
          int64_t n = 0;
          const float* p = nullptr;
          if (input_index[static_cast<size_t>(i)] >= 0) {
            const ir::NDArray& a = sample[static_cast<size_t>(input_index[static_cast<size_t>(i)])];
            p = static_cast<const float*>(a.raw_data());
            n = a.numel();
          } else {
            p = f32->f32_output(calibrated[static_cast<size_t>(i)], &n);
          }
          collectors[static_cast<size_t>(i)].add(p, n);
        }
      });
      for (auto& [t, mean] : means) {
        auto it = std::find(set.names.begin(), set.names.end(), t);
        if (it != set.names.end()) {
          const ir::NDArray& a = sample[static_cast<size_t>(it - set.names.begin())];
          if (a.dtype() == ir::DType::kF32) mean.add(static_cast<const float*>(a.raw_data()), a.shape());
        } else if (int64_t n = 0; const float* p = f32->f32_output(t, &n)) {
          mean.add(p, f32->f32_output_shape(t));
        }
      }
      if (o.progress) o.progress->step();
    }
    for (size_t i = 0; i < calibrated.size(); ++i) {
      plan.activations[calibrated[i]] = activation_params(collectors[i].range(o.method, o.percentile));
    }
    report.samples = static_cast<int>(set.samples.size());
  }
  report.calibration_seconds = seconds_since(t0);

  for (const Selected& s : sel.nodes) {
    const auto& n = f.nodes[static_cast<size_t>(s.node)];
    if (n.op_type == "MaxPool" && plan.activations.count(n.inputs[0]) && plan.activations.count(n.outputs[0])) {
      plan.activations[n.outputs[0]] = plan.activations[n.inputs[0]];  // max of quantized values: same grid
    }
  }
  std::vector<quantize_detail::NodeGates> node_gates;  // for the sensitivity search
  std::set<int> quantized;
  std::set<std::string> int8_outputs;  // the outputs of quantized nodes (or of the Relu/Clip folded into them)
  for (const Selected& s : sel.nodes) {
    const auto& n = f.nodes[static_cast<size_t>(s.node)];
    const bool inputs_quantized = std::all_of(s.act_inputs.begin(), s.act_inputs.end(), [&](int i) {
      return plan.activations.count(n.inputs[static_cast<size_t>(i)]) != 0;
    });
    if (!inputs_quantized) {
      report.notes.push_back(n.op_type + " " + label(n) + ": kept in f32 (an input is not an f32 activation)");
      continue;
    }
    ++report.quantized_nodes;
    quantized.insert(s.node);
    quantize_detail::NodeGates gates{s.node, {}};
    for (int i : s.act_inputs) gates.keys.push_back(n.inputs[static_cast<size_t>(i)]);
    const auto& c = consumers[n.outputs[0]];
    const auto* next = c.size() == 1 ? &f.nodes[static_cast<size_t>(c[0])] : nullptr;
    const bool folded = next && (next->op_type == "Relu" || next->op_type == "Clip") && !graph_outputs.count(n.outputs[0]);
    gates.keys.push_back(folded ? next->outputs[0] : n.outputs[0]);
    int8_outputs.insert(gates.keys.back());
    if (s.weight >= 0) gates.keys.push_back(n.inputs[static_cast<size_t>(s.weight)]);
    if (s.bias >= 0) gates.keys.push_back(n.inputs[static_cast<size_t>(s.bias)] + "_" + label(n));
    node_gates.push_back(std::move(gates));
    if (s.weight < 0) continue;
    const std::string& wname = n.inputs[static_cast<size_t>(s.weight)];
    const qdq::QuantizedInitializer w = quantize_weight(f.float_initializers.at(wname), s.weight_axis, o.reduce_range);
    plan.replacements.push_back({s.node, s.weight, wname, w});
    if (s.bias >= 0) {
      const std::string& bname = n.inputs[static_cast<size_t>(s.bias)];
      const float sx = plan.activations.at(n.inputs[0]).scale;
      ir::NDArray bias = f.float_initializers.at(bname);
      if (auto m = means.find(n.inputs[0]); m != means.end()) {
        std::string why;
        if (quantize_detail::corrected_bias(n, f.float_initializers.at(wname), w, m->second, &bias, &why)) {
          ++report.bias_corrected;
        } else {
          report.notes.push_back(n.op_type + " " + label(n) + ": bias not corrected (" + why + ")");
        }
      }
      plan.replacements.push_back({s.node, s.bias, bname + "_" + label(n), quantize_bias(bias, sx, w.scales)});
    }
  }
  // A tensor produced in f32 is quantized for its quantized consumers only: the nodes kept in f32
  // read the original (e.g. a residual Add kept in f32 passes the f32 sum on to the next one).
  for (const auto& [t, q] : plan.activations) {
    if (int8_outputs.count(t)) continue;
    for (int k : consumers[t]) {
      if (quantized.count(k)) continue;
      const auto& n = f.nodes[static_cast<size_t>(k)];
      for (size_t j = 0; j < n.inputs.size(); ++j) {
        if (n.inputs[j] == t) plan.f32_reads.insert({k, static_cast<int>(j)});
      }
    }
  }
  for (int k : sel.dynamic) {
    const auto& n = f.nodes[static_cast<size_t>(k)];
    qdq::DynamicMatMul d;
    d.node = k;
    const ir::NDArray& b = f.float_initializers.at(n.inputs[1]);
    d.weight = quantize_weight(n.op_type == "Gemm" && attr(n, "transB", 0) ? transposed(b) : b, 1, o.reduce_range);
    if (n.op_type == "Gemm" && n.inputs.size() > 2 && !n.inputs[2].empty()) {
      d.bias = f.float_initializers.at(n.inputs[2]).reshaped({d.weight.values.shape()[1]});
    }
    plan.dynamic.push_back(std::move(d));
  }
  report.dynamic_nodes = static_cast<int>(plan.dynamic.size());
  report.activations = static_cast<int>(plan.activations.size());

  write_file(o.output_path, qdq::write_qdq_model(o.model_path, plan, qdq::QdqForm::kStandard));
  if (!o.fake_quant_path.empty()) {
    write_file(o.fake_quant_path, qdq::write_qdq_model(o.model_path, plan, qdq::QdqForm::kFakeQuantF32));
  }

  const int k_samples = std::min<int>(o.report_samples, static_cast<int>(set.samples.size()));
  if (o.skip_sensitive > 0 && k_samples > 0) {
    for (const auto& s : quantize_detail::measure_sensitivity(o.model_path, plan, node_gates, f.outputs, set, k_samples, shapes,
                                                              o.target, o.progress)) {
      const auto& n = f.nodes[static_cast<size_t>(s.node)];
      report.sensitivity.push_back({label(n), n.op_type, s.cosine});
    }
  }
  if (k_samples > 0 && f32) {
    if (o.progress) o.progress->phase("compiling the fake-quantized model for the error report");
    // Each layer's output, its first input (for the error it adds), then the model outputs.
    std::vector<std::string> compared(layer_tensors);
    for (int k : layer_nodes) compared.push_back(f.nodes[static_cast<size_t>(k)].inputs[0]);
    CompiledModel fake(qdq::write_qdq_model(o.model_path, plan, qdq::QdqForm::kFakeQuantF32, compared), o.model_path,
                       shapes, o.target, "fake-quantized f32");
    compared.insert(compared.end(), f.outputs.begin(), f.outputs.end());
    std::vector<ErrorSums> sums(compared.size());
    for (int i = 0; i < k_samples; ++i) {
      f32->run(set.names, set.samples[static_cast<size_t>(i)]);
      fake.run(set.names, set.samples[static_cast<size_t>(i)]);
      for (size_t t = 0; t < compared.size(); ++t) {
        int64_t n1 = 0, n2 = 0;
        const float* a = f32->f32_output(compared[t], &n1);
        const float* b = fake.f32_output(compared[t], &n2);
        if (a && b && n1 == n2) sums[t].add(a, b, n1);
      }
    }
    const size_t n_layers = layer_nodes.size();
    for (size_t t = 0; t < compared.size(); ++t) {
      if (t >= n_layers && t < 2 * n_layers) continue;
      LayerError e;
      e.tensor = compared[t];
      e.rel_l2 = sums[t].rel_l2();
      e.cosine = sums[t].cosine();
      if (t < n_layers) {
        const auto& n = f.nodes[static_cast<size_t>(layer_nodes[t])];
        e.node = label(n);
        e.op_type = n.op_type;
        e.added = e.rel_l2 - sums[n_layers + t].rel_l2();
        e.flagged = e.added > o.error_threshold;
        report.layers.push_back(e);
      } else {
        e.node = "(model output)";
        report.outputs.push_back(e);
      }
    }
    std::stable_sort(report.layers.begin(), report.layers.end(),
                     [](const LayerError& a, const LayerError& b) { return a.added > b.added; });
  }
  report.report_samples = k_samples;
  report.total_seconds = seconds_since(t0);
  return report;
}

}  // namespace

// With auto_skip, the layers the error report flags are kept in f32 and the model is quantized
// again (calibration included: the QDQ pairs around a skipped layer change); the second report
// is the one returned, with a note per skipped layer.
QuantizeReport quantize_model(const QuantizeOptions& o) {
  if ((o.auto_skip || o.skip_sensitive > 0) && (o.report_samples <= 0 || o.calibration.empty())) {
    throw UserError(UserErrorKind::kInvalidArgument, o.auto_skip ? "--auto-skip" : "--skip-sensitive",
                    "needs the per-layer error report, which runs on calibration samples",
                    "give --calibration and --report-samples of at least 1 (the default is 4)");
  }
  QuantizeReport first = quantize_once(o);
  if (!o.auto_skip && o.skip_sensitive <= 0) return first;
  QuantizeOptions again = o;
  std::vector<std::string> notes;
  for (size_t i = 0; i < first.sensitivity.size() && i < static_cast<size_t>(o.skip_sensitive); ++i) {
    const LayerSensitivity& e = first.sensitivity[i];
    again.skip.push_back(e.node);
    std::ostringstream note;
    note << e.op_type << " " << e.node << ": kept in f32 (--skip-sensitive: quantized alone, the output cosine is " << e.cosine << ")";
    notes.push_back(note.str());
  }
  for (const LayerError& e : first.layers) {
    if (!o.auto_skip || !e.flagged || std::count(again.skip.begin(), again.skip.end(), e.node)) continue;
    again.skip.push_back(e.node);
    std::ostringstream note;
    note << e.op_type << " " << e.node << ": kept in f32 (--auto-skip: it added " << e.added
         << " relative L2 error, above --error-threshold " << o.error_threshold << ")";
    notes.push_back(note.str());
  }
  if (notes.empty()) return first;
  if (o.progress) o.progress->phase("quantizing again with " + std::to_string(notes.size()) + " layer(s) kept in f32");
  again.auto_skip = false;
  again.skip_sensitive = 0;
  QuantizeReport second = quantize_once(again);
  second.notes.insert(second.notes.end(), notes.begin(), notes.end());
  second.sensitivity = first.sensitivity;
  second.total_seconds += first.total_seconds;
  return second;
}

std::string QuantizeReport::summary() const {
  std::ostringstream s;
  s.setf(std::ios::fixed);
  s.precision(1);
  s << "quantized model: " << output_path << "\n";
  s << "  " << quantized_nodes << " nodes quantized statically, " << dynamic_nodes << " dynamically; " << activations
    << " activation tensors with QuantizeLinear/DequantizeLinear\n";
  if (bias_corrected > 0) s << "  --bias-correction: " << bias_corrected << " biases corrected\n";
  s << "  calibration: " << samples << " samples in " << calibration_seconds << " s; total " << total_seconds << " s\n";
  for (const auto& n : notes) s << "  note: " << n << "\n";
  s.precision(4);
  if (!layers.empty()) {
    s << "per-layer error, fake-quantized vs f32 on " << report_samples << " samples: the relative L2 error\n"
         "the layer adds to its input's, then its output's (accumulated) relative L2 error and cosine; worst first:\n";
    s << "  added     rel-L2    cosine    layer\n";
    int shown = 0, flagged = 0;
    for (const auto& e : layers) {
      flagged += e.flagged;
      if (shown >= 15 && !e.flagged) continue;
      ++shown;
      s << "  " << (e.added >= 0 ? " " : "") << e.added << "   " << e.rel_l2 << "    " << e.cosine << "    " << e.op_type << " " << e.node << (e.flagged ? "   <-- high" : "") << "\n";
    }
    if (static_cast<size_t>(shown) < layers.size()) s << "  (" << layers.size() - static_cast<size_t>(shown) << " more layers below)\n";
    if (flagged > 0) s << "  " << flagged << " layers above the threshold: keep the worst in f32 with --skip NODE\n";
  }
  if (!sensitivity.empty()) {
    s << "sensitivity (model output cosine to f32 with only that node quantized), most sensitive first:\n";
    for (size_t i = 0; i < sensitivity.size() && i < 15; ++i) {
      s << "  " << std::setprecision(6) << sensitivity[i].cosine << "  " << sensitivity[i].op_type << " " << sensitivity[i].node << "\n";
    }
    s.precision(4);
  }
  for (const auto& e : outputs) s << "model output " << e.tensor << ": rel-L2 " << e.rel_l2 << ", cosine " << e.cosine << "\n";
  return s.str();
}

}  // namespace kiln::driver
