// Per-layer sensitivity (`kiln quantize --skip-sensitive N`): how much the model output loses when
// ONE quantized node is quantized and everything else stays f32.
//
// The error a layer *adds* (the per-layer report) misleads in networks that amplify errors: a late
// layer shows a large added error that earlier layers seeded, an early layer a small one that
// later layers blow up. Quantizing one node at a time and measuring the model output's cosine to
// f32 charges each node with its own error as the rest of the network propagates it. To run N
// such configurations with a single compile, the fake-quantized twin is written in its gated form
// (onnx_qdq.h kFakeQuantGated: every quantized activation and weight switched by a scalar input);
// node k's configuration turns on the gates of its activation inputs, its (possibly folded)
// output, its weight and its bias. All gates off is the f32 model (the reference outputs).
#include <algorithm>
#include <cmath>

#include "quantize_parts.h"

namespace kiln::driver::quantize_detail {

namespace qdq = frontend::qdq;

std::vector<NodeSensitivity> measure_sensitivity(const std::string& model_path, const qdq::QdqPlan& plan,
                                                 const std::vector<NodeGates>& nodes, const std::vector<std::string>& outputs,
                                                 const CalibrationSet& set, int samples, const std::map<std::string, ir::Shape>& shapes,
                                                 const std::string& target, Progress* progress) {
  std::map<std::string, std::string> gates;
  const std::string bytes = qdq::write_qdq_model(model_path, plan, qdq::QdqForm::kFakeQuantGated, {}, &gates);
  if (progress) progress->phase("compiling the gated fake-quantized model for the sensitivity search (" + std::to_string(gates.size()) + " gates)");
  CompiledModel model(bytes, model_path, shapes, target, "gated fake-quantized f32");
  std::vector<std::string> names = set.names;
  std::vector<std::string> gate_names;
  std::map<std::string, size_t> gate_index;
  for (const auto& [what, input] : gates) {
    gate_index[what] = gate_names.size();
    gate_names.push_back(input);
    names.push_back(input);
  }
  const ir::NDArray off = ir::NDArray::scalar(ir::DType::kF32, 0.0), on = ir::NDArray::scalar(ir::DType::kF32, 1.0);
  auto run = [&](int sample, const std::vector<bool>& enabled) {
    std::vector<ir::NDArray> inputs = set.samples[static_cast<size_t>(sample)];
    for (size_t g = 0; g < gate_names.size(); ++g) inputs.push_back(enabled[g] ? on : off);
    model.run(names, inputs);
  };
  // Reference outputs: every gate off.
  std::vector<std::vector<std::vector<float>>> reference(static_cast<size_t>(samples));
  for (int i = 0; i < samples; ++i) {
    run(i, std::vector<bool>(gate_names.size(), false));
    for (const auto& o : outputs) {
      int64_t n = 0;
      const float* p = model.f32_output(o, &n);
      reference[static_cast<size_t>(i)].emplace_back(p, p + (p ? n : 0));
    }
  }
  std::vector<NodeSensitivity> result;
  if (progress) progress->phase("sensitivity search", static_cast<int64_t>(nodes.size()), "layers");
  for (const NodeGates& node : nodes) {
    std::vector<bool> enabled(gate_names.size(), false);
    for (const auto& what : node.keys) {
      if (auto it = gate_index.find(what); it != gate_index.end()) enabled[it->second] = true;
    }
    double ff = 0, qq = 0, fq = 0;
    for (int i = 0; i < samples; ++i) {
      run(i, enabled);
      for (size_t o = 0; o < outputs.size(); ++o) {
        int64_t n = 0;
        const float* q = model.f32_output(outputs[o], &n);
        const std::vector<float>& f = reference[static_cast<size_t>(i)][o];
        if (!q || static_cast<size_t>(n) != f.size()) continue;
        for (int64_t k = 0; k < n; ++k) {
          ff += double(f[static_cast<size_t>(k)]) * f[static_cast<size_t>(k)];
          qq += double(q[k]) * q[k];
          fq += double(f[static_cast<size_t>(k)]) * q[k];
        }
      }
    }
    NodeSensitivity s;
    s.node = node.node;
    s.cosine = ff > 0 && qq > 0 ? fq / std::sqrt(ff * qq) : 1.0;
    result.push_back(s);
    if (progress) progress->step();
  }
  std::stable_sort(result.begin(), result.end(), [](const NodeSensitivity& a, const NodeSensitivity& b) { return a.cosine < b.cosine; });
  return result;
}

}  // namespace kiln::driver::quantize_detail
