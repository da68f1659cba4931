// Bias correction (`kiln quantize --bias-correction`; Nagel et al. 2019, section 4.2, with the
// input statistics measured on the calibration data, the "empirical" variant).
//
// Quantizing a layer's weight W to W_q shifts its output by (W_q - W) x, whose mean over the data
// is not zero in general (rounding errors of a channel do not cancel against a non-zero-mean
// input, e.g. after a ReLU) and biases every layer downstream. The layer's f32 bias b becomes
//   b'[o] = b[o] - E[((W_q - W) x)[o]],
// the expectation over the calibration samples and, for a convolution, over the output
// positions. By linearity it is (W_q - W) applied to the mean input: Kiln accumulates each
// corrected layer's input element by element over the calibration run (MeanInput), then for a
// convolution builds the mean input *patch* M[c, k] = mean over output positions of the padded
// input at that tap (so zero padding at the borders is counted exactly), and
//   correction[o] = sum_{c in o's group, k} (W_q - W)[o, c, k] * M[c, k].
// For Gemm the mean input row gives correction[n] = sum_k mean[k] (W_q - W)[k, n].
// Only the weight quantization error is corrected (the activation rounding's mean is not).
#include <algorithm>
#include <cmath>

#include "kiln/support/error.h"
#include "quantize_parts.h"

namespace kiln::driver::quantize_detail {

namespace qdq = frontend::qdq;

void MeanInput::add(const float* data, const ir::Shape& shape) {
  if (shape.empty()) return;
  const int64_t batch = shape[0];
  const int64_t per = batch > 0 ? ir::TensorType{ir::DType::kF32, shape}.numel() / batch : 0;
  if (sum_.empty()) {
    shape_ = shape;
    shape_[0] = 1;
    sum_.assign(static_cast<size_t>(per), 0.0);
  }
  KILN_ICHECK(static_cast<int64_t>(sum_.size()) == per) << "MeanInput: the input's shape changed between samples";
  for (int64_t b = 0; b < batch; ++b) {
    for (int64_t i = 0; i < per; ++i) sum_[static_cast<size_t>(i)] += data[b * per + i];
  }
  count_ += batch;
}

namespace {

int64_t attr_or(const qdq::ModelNode& n, const std::string& name, int64_t def) {
  auto it = n.ints.find(name);
  return it == n.ints.end() ? def : it->second;
}

std::vector<int64_t> list_or(const qdq::ModelNode& n, const std::string& name, size_t size, int64_t def) {
  auto it = n.int_lists.find(name);
  if (it != n.int_lists.end() && it->second.size() >= size) return it->second;
  return std::vector<int64_t>(size, def);
}

// Mean input patch of a Conv with spatial rank 1 or 2: M[c][kh][kw] (KH = 1 for 1-D).
// False (with `why`) for a form it does not handle.
bool mean_patch(const qdq::ModelNode& n, const ir::Shape& wshape, const ir::Shape& xshape, const std::vector<double>& mean,
                std::vector<double>* patch, std::string* why) {
  const size_t rank = wshape.size() - 2;
  if (rank < 1 || rank > 2 || xshape.size() != wshape.size()) {
    *why = "only 1-D and 2-D convolutions are corrected";
    return false;
  }
  const int64_t c_in = xshape[1];
  const int64_t h = rank == 2 ? static_cast<int64_t>(xshape[2]) : 1, wd = xshape[rank == 2 ? 3 : 2];
  const int64_t kh = rank == 2 ? static_cast<int64_t>(wshape[2]) : 1, kw = wshape[rank == 2 ? 3 : 2];
  const auto strides = list_or(n, "strides", rank, 1), dil = list_or(n, "dilations", rank, 1);
  std::vector<int64_t> pads = list_or(n, "pads", 2 * rank, 0);
  const std::string auto_pad = n.strings.count("auto_pad") ? n.strings.at("auto_pad") : "NOTSET";
  const std::vector<int64_t> in_size = rank == 2 ? std::vector<int64_t>{h, wd} : std::vector<int64_t>{wd};
  const std::vector<int64_t> k_size = rank == 2 ? std::vector<int64_t>{kh, kw} : std::vector<int64_t>{kw};
  std::vector<int64_t> out(rank);
  for (size_t d = 0; d < rank; ++d) {
    const int64_t span = dil[d] * (k_size[d] - 1) + 1;
    if (auto_pad == "SAME_UPPER" || auto_pad == "SAME_LOWER") {
      out[d] = (in_size[d] + strides[d] - 1) / strides[d];
      const int64_t total = std::max<int64_t>((out[d] - 1) * strides[d] + span - in_size[d], 0);
      pads[d] = auto_pad == "SAME_UPPER" ? total / 2 : total - total / 2;
    } else {
      if (auto_pad == "VALID") pads.assign(2 * rank, 0);
      out[d] = (in_size[d] + pads[d] + pads[d + rank] - span) / strides[d] + 1;
    }
    if (out[d] <= 0) {
      *why = "empty output";
      return false;
    }
  }
  const int64_t oh = rank == 2 ? out[0] : 1, ow = out[rank - 1];
  const int64_t sh = rank == 2 ? strides[0] : 1, sw = strides[rank - 1];
  const int64_t dh = rank == 2 ? dil[0] : 1, dw = dil[rank - 1];
  const int64_t ph = rank == 2 ? pads[0] : 0, pw = pads[rank - 1];
  patch->assign(static_cast<size_t>(c_in * kh * kw), 0.0);
  const double inv = 1.0 / static_cast<double>(oh * ow);
  for (int64_t c = 0; c < c_in; ++c) {
    const double* x = mean.data() + c * h * wd;
    for (int64_t i = 0; i < kh; ++i) {
      for (int64_t j = 0; j < kw; ++j) {
        double s = 0;
        for (int64_t y = 0; y < oh; ++y) {
          const int64_t iy = y * sh + i * dh - ph;
          if (iy < 0 || iy >= h) continue;
          for (int64_t xo = 0; xo < ow; ++xo) {
            const int64_t ix = xo * sw + j * dw - pw;
            if (ix >= 0 && ix < wd) s += x[iy * wd + ix];
          }
        }
        (*patch)[static_cast<size_t>((c * kh + i) * kw + j)] = s * inv;
      }
    }
  }
  return true;
}

// The f32 values of a symmetric int8 initializer (scale per slice along its axis, or one).
std::vector<float> dequantize(const qdq::QuantizedInitializer& q) {
  const ir::NDArray& v = q.values;
  int64_t inner = 1;
  if (q.axis >= 0) {
    for (size_t d = static_cast<size_t>(q.axis) + 1; d < v.shape().size(); ++d) inner *= v.shape()[d];
  }
  const int64_t channels = static_cast<int64_t>(q.scales.size());
  std::vector<float> out(static_cast<size_t>(v.numel()));
  for (int64_t i = 0; i < v.numel(); ++i) {
    const float s = q.axis < 0 ? q.scales[0] : q.scales[static_cast<size_t>((i / inner) % channels)];
    out[static_cast<size_t>(i)] = static_cast<float>(v.get_as_double(i)) * s;
  }
  return out;
}

}  // namespace

bool corrected_bias(const qdq::ModelNode& n, const ir::NDArray& w, const qdq::QuantizedInitializer& w_quantized,
                    const MeanInput& input, ir::NDArray* bias, std::string* why) {
  if (input.count() == 0) {
    *why = "its input was not measured";
    return false;
  }
  const std::vector<double> mean = input.mean();
  const float* wf = w.data<float>().data();
  const std::vector<float> dequantized = dequantize(w_quantized);
  const float* wq = dequantized.data();
  std::vector<double> correction;
  if (n.op_type == "Conv") {
    std::vector<double> patch;
    if (!mean_patch(n, w.shape(), input.shape(), mean, &patch, why)) return false;
    const int64_t out_c = w.shape()[0], in_per_group = w.shape()[1];
    const int64_t k = w.numel() / (out_c * in_per_group);
    const int64_t group = attr_or(n, "group", 1), out_per_group = out_c / group;
    correction.assign(static_cast<size_t>(out_c), 0.0);
    for (int64_t o = 0; o < out_c; ++o) {
      const int64_t c0 = (o / out_per_group) * in_per_group;
      double s = 0;
      for (int64_t c = 0; c < in_per_group; ++c) {
        for (int64_t t = 0; t < k; ++t) {
          const int64_t wi = (o * in_per_group + c) * k + t;
          s += (double(wq[wi]) - wf[wi]) * patch[static_cast<size_t>((c0 + c) * k + t)];
        }
      }
      correction[static_cast<size_t>(o)] = s;
    }
  } else if (n.op_type == "Gemm" && w.shape().size() == 2) {
    const bool trans_b = attr_or(n, "transB", 0) != 0;
    const int64_t kdim = trans_b ? w.shape()[1] : w.shape()[0], ndim = trans_b ? w.shape()[0] : w.shape()[1];
    if (static_cast<int64_t>(mean.size()) != kdim || attr_or(n, "transA", 0) != 0) {
      *why = "its input is not a [batch, K] matrix";
      return false;
    }
    correction.assign(static_cast<size_t>(ndim), 0.0);
    for (int64_t kk = 0; kk < kdim; ++kk) {
      for (int64_t j = 0; j < ndim; ++j) {
        const int64_t wi = trans_b ? j * kdim + kk : kk * ndim + j;
        correction[static_cast<size_t>(j)] += mean[static_cast<size_t>(kk)] * (double(wq[wi]) - wf[wi]);
      }
    }
  } else {
    *why = "only Conv and Gemm biases are corrected";
    return false;
  }
  if (bias->numel() != static_cast<int64_t>(correction.size())) {
    *why = "its bias is not one value per output channel";
    return false;
  }
  ir::NDArray b = bias->copy();
  float* pb = b.mutable_data<float>().data();
  for (size_t o = 0; o < correction.size(); ++o) pb[o] = static_cast<float>(pb[o] - correction[o]);
  *bias = b;
  return true;
}

}  // namespace kiln::driver::quantize_detail
