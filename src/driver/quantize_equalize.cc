// Cross-layer equalization (`kiln quantize --equalize`; Nagel et al. 2019, "Data-Free Quantization
// Through Weight Equalization and Bias Correction"), applied to the f32 weights before calibration.
//
// A pair is Conv A -> [act] -> Conv B where A's output (or act's) has that one consumer, act is
// absent or positively homogeneous (Relu, LeakyRelu, Clip with min 0 and no max), and
// every weight/bias involved is a constant f32 initializer read by that node only. For each of
// A's output channels i: r1 = max|W_A[i, ...]|, r2 = max|W_B[:, i, ...]| (over the output channels
// of B's group that read channel i), s = sqrt(r1 / r2); W_A[i] /= s, b_A[i] /= s, W_B[:, i] *= s.
// Since act(x / s) = act(x) / s for s > 0, the model computes exactly the same function (up to
// f32 rounding) while both weights' ranges become sqrt(r1 * r2) per channel, and the activation
// between them is rescaled per channel. Sweeps over all pairs repeat until no scale moves more
// than 1e-3 (at most 16 sweeps): a conv that is B of one pair and A of the next (MobileNet's
// depthwise conv) converges to a balance of both.
//
// Clip with a finite max (ReLU6) is not positively homogeneous: clip(x / s, 0, 6) !=
// clip(x, 0, 6) / s, so such pairs are left alone and reported (the paper replaces ReLU6 with
// ReLU, which changes the f32 model; Kiln keeps the f32 function exact).
#include <algorithm>
#include <cmath>
#include <limits>
#include <map>
#include <set>

#include "quantize_parts.h"

namespace kiln::driver::quantize_detail {

namespace {

namespace qdq = frontend::qdq;

struct Pair {
  int a = 0, b = 0;  // node indices
};

std::string node_label(const qdq::ModelNode& n) {
  if (!n.name.empty()) return n.name;
  return n.outputs.empty() ? "#" + std::to_string(n.index) : n.outputs[0];
}

// Whether act(x / s) == act(x) / s for every s > 0; `why` names the reason when not.
bool positively_homogeneous(const qdq::ModelFacts& f, const qdq::ModelNode& n, std::string* why) {
  if (n.op_type == "Relu" || n.op_type == "LeakyRelu") return true;
  if (n.op_type != "Clip") {
    *why = n.op_type + " between them is not positively homogeneous";
    return false;
  }
  auto bound = [&](size_t i, double* v) {
    if (i >= n.inputs.size() || n.inputs[i].empty()) return false;
    if (auto c = f.scalar_constants.find(n.inputs[i]); c != f.scalar_constants.end()) {
      *v = c->second;
      return true;
    }
    if (auto it = f.float_initializers.find(n.inputs[i]); it != f.float_initializers.end() && it->second.numel() == 1) {
      *v = it->second.get_as_double(0);
      return true;
    }
    *v = std::numeric_limits<double>::quiet_NaN();  // a computed bound: unknown
    return true;
  };
  double lo = 0, hi = 0;
  const bool has_lo = bound(1, &lo), has_hi = bound(2, &hi);
  if (n.ints.count("min") || n.floats.count("min") || n.floats.count("max")) {
    *why = "Clip with bound attributes (opset < 11)";
    return false;
  }
  if (has_hi && !(std::isinf(hi) && hi > 0)) {
    *why = "Clip with a finite max (ReLU6-like) between them: scaling a channel would move its clip bound";
    return false;
  }
  if (has_lo && lo != 0 && !(std::isinf(lo) && lo < 0)) {
    *why = "Clip with a min other than 0 between them";
    return false;
  }
  return true;
}

}  // namespace

EqualizeResult equalize_cross_layer(const qdq::ModelFacts& f) {
  EqualizeResult r;
  std::map<std::string, std::vector<int>> consumers;
  std::map<std::string, int> reads;
  for (const auto& n : f.nodes) {
    for (const auto& i : n.inputs) {
      if (i.empty()) continue;
      consumers[i].push_back(n.index);
      ++reads[i];
    }
  }
  const std::set<std::string> outputs(f.outputs.begin(), f.outputs.end());
  auto only_consumer = [&](const std::string& t) -> const qdq::ModelNode* {
    if (outputs.count(t)) return nullptr;
    auto it = consumers.find(t);
    if (it == consumers.end() || it->second.size() != 1) return nullptr;
    return &f.nodes[static_cast<size_t>(it->second[0])];
  };
  auto is_conv = [&](const qdq::ModelNode& n) {
    const ir::NDArray* w = n.inputs.size() > 1 ? (f.float_initializers.count(n.inputs[1]) ? &f.float_initializers.at(n.inputs[1]) : nullptr) : nullptr;
    return n.op_type == "Conv" && n.domain.empty() && w && w->shape().size() >= 3;
  };

  std::map<std::string, ir::NDArray> w;  // working copies of the weights and biases involved
  std::vector<Pair> pairs;
  for (const auto& a : f.nodes) {
    if (!is_conv(a) || a.outputs.size() != 1) continue;
    const qdq::ModelNode* next = only_consumer(a.outputs[0]);
    if (!next) continue;
    const qdq::ModelNode* act = nullptr;
    if (!is_conv(*next)) {
      act = next;
      // An activation: one data input (Clip's bounds aside); Add, Mul, Concat... are not.
      const size_t data_inputs = act->op_type == "Clip" ? 1 : std::count_if(act->inputs.begin(), act->inputs.end(), [](const std::string& i) { return !i.empty(); });
      if (data_inputs != 1) continue;
      next = act->outputs.size() == 1 ? only_consumer(act->outputs[0]) : nullptr;
      if (!next || !is_conv(*next)) continue;
    }
    const qdq::ModelNode& b = *next;
    if (b.inputs[0] != (act ? act->outputs[0] : a.outputs[0])) continue;
    std::string why;
    if (act && !positively_homogeneous(f, *act, &why)) {
      r.notes.push_back("not equalized: Conv " + node_label(a) + " -> " + node_label(b) + ": " + why);
      continue;
    }
    const ir::NDArray& wa = f.float_initializers.at(a.inputs[1]);
    const ir::NDArray& wb = f.float_initializers.at(b.inputs[1]);
    const int64_t group_b = b.ints.count("group") ? b.ints.at("group") : 1;
    if (wa.shape()[0] != wb.shape()[1] * group_b) continue;  // malformed; the importer reports it
    // Working copies of A's weight and bias and B's weight; each must be an f32 initializer read
    // by that node only (a shared weight would change another node too).
    auto own = [&](const qdq::ModelNode& n, size_t i) {
      const std::string& t = n.inputs[i];
      auto it = f.float_initializers.find(t);
      if (it == f.float_initializers.end() || reads.at(t) != 1 || outputs.count(t)) return false;
      w.emplace(t, it->second.copy());
      return true;
    };
    const bool has_bias = a.inputs.size() > 2 && !a.inputs[2].empty();
    if (!own(a, 1) || !own(b, 1) || (has_bias && !own(a, 2))) {
      r.notes.push_back("not equalized: Conv " + node_label(a) + " -> " + node_label(b) + ": a weight or bias is shared or not an f32 initializer");
      continue;
    }
    pairs.push_back({a.index, b.index});
  }

  double moved = 1;
  for (int sweep = 0; sweep < 16 && moved > 1e-3; ++sweep) {
    moved = 0;
    for (const Pair& p : pairs) {
      const auto& a = f.nodes[static_cast<size_t>(p.a)];
      const auto& b = f.nodes[static_cast<size_t>(p.b)];
      ir::NDArray& wa = w.at(a.inputs[1]);
      ir::NDArray& wb = w.at(b.inputs[1]);
      ir::NDArray* ba = a.inputs.size() > 2 && !a.inputs[2].empty() ? &w.at(a.inputs[2]) : nullptr;
      const int64_t channels = wa.shape()[0], per_a = wa.numel() / channels;
      const int64_t group_b = b.ints.count("group") ? b.ints.at("group") : 1;
      const int64_t out_b = wb.shape()[0], in_per_group = wb.shape()[1], k_b = wb.numel() / (out_b * in_per_group);
      const int64_t out_per_group = out_b / group_b;
      float* pa = wa.mutable_data<float>().data();
      float* pb = wb.mutable_data<float>().data();
      for (int64_t i = 0; i < channels; ++i) {
        const int64_t g = i / in_per_group, ci = i % in_per_group;
        double r1 = 0, r2 = 0;
        for (int64_t k = 0; k < per_a; ++k) r1 = std::max(r1, std::fabs(double(pa[i * per_a + k])));
        for (int64_t o = g * out_per_group; o < (g + 1) * out_per_group; ++o) {
          for (int64_t k = 0; k < k_b; ++k) r2 = std::max(r2, std::fabs(double(pb[(o * in_per_group + ci) * k_b + k])));
        }
        if (!(r1 > 0) || !(r2 > 0)) continue;
        const double s = std::sqrt(r1 / r2);
        if (!std::isfinite(s)) continue;
        moved = std::max(moved, std::fabs(std::log(s)));
        for (int64_t k = 0; k < per_a; ++k) pa[i * per_a + k] = static_cast<float>(pa[i * per_a + k] / s);
        if (ba) ba->mutable_data<float>()[static_cast<size_t>(i)] = static_cast<float>(ba->data<float>()[static_cast<size_t>(i)] / s);
        for (int64_t o = g * out_per_group; o < (g + 1) * out_per_group; ++o) {
          for (int64_t k = 0; k < k_b; ++k) {
            float& v = pb[(o * in_per_group + ci) * k_b + k];
            v = static_cast<float>(v * s);
          }
        }
      }
    }
    ++r.sweeps;
  }
  r.pairs = static_cast<int>(pairs.size());
  for (const Pair& p : pairs) {
    for (const auto& t : {f.nodes[static_cast<size_t>(p.a)].inputs[1], f.nodes[static_cast<size_t>(p.b)].inputs[1]}) r.values[t] = w.at(t);
    const auto& a = f.nodes[static_cast<size_t>(p.a)];
    if (a.inputs.size() > 2 && !a.inputs[2].empty()) r.values[a.inputs[2]] = w.at(a.inputs[2]);
  }
  return r;
}

}  // namespace kiln::driver::quantize_detail
