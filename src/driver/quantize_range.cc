// Per-tensor range calibration for `kiln quantize` (quantize_parts.h: RangeCollector).
//   minmax      the observed [min, max].
//   percentile  the two-sided percentile of a histogram: [(100-p)%, p%] of the values.
//   entropy     the KL-divergence threshold search (TensorRT's calibrator, as described in
//               "8-bit Inference with TensorRT", 2017): on the histogram of |x|, for every
//               candidate threshold t, the distribution P clipped at t (outliers folded into the
//               last bin) is compared with Q, P merged into the quantized levels and expanded back;
//               the t minimizing KL(P || Q) is kept. Levels: 255 for a non-negative tensor
//               (uint8 covers [0, t]), else 128 (one side of the range).
// Every range is widened to include 0 (the zero point must represent 0 exactly).
#include <algorithm>
#include <cmath>
#include <limits>

#include "quantize_parts.h"

namespace kiln::driver::quantize_detail {
namespace {

constexpr int kBins = 4096;  // over [-R, R]; |x| histogram: kBins / 2 bins over [0, R]

}  // namespace

void RangeCollector::grow_to(float absmax) {
  if (bins_.empty()) {
    bins_.assign(kBins, 0.0);
    half_width_ = absmax > 0 ? absmax : 1e-8f;
    return;
  }
  while (absmax > half_width_) {
    // Double R: old bins 2j, 2j+1 become the new bin kBins/4 + j.
    std::vector<double> merged(kBins, 0.0);
    for (int j = 0; j < kBins / 2; ++j) merged[kBins / 4 + j] = bins_[2 * j] + bins_[2 * j + 1];
    bins_.swap(merged);
    half_width_ *= 2;
  }
}

void RangeCollector::add(const float* data, int64_t n) {
  if (n <= 0) return;
  float lo = data[0], hi = data[0];
  for (int64_t i = 1; i < n; ++i) {
    lo = std::min(lo, data[i]);
    hi = std::max(hi, data[i]);
  }
  if (count_ == 0) {
    min_ = lo;
    max_ = hi;
  } else {
    min_ = std::min(min_, lo);
    max_ = std::max(max_, hi);
  }
  count_ += n;
  if (!use_histogram_) return;
  grow_to(std::max(std::fabs(lo), std::fabs(hi)));
  const double scale = kBins / (2.0 * half_width_);
  for (int64_t i = 0; i < n; ++i) {
    int b = static_cast<int>((static_cast<double>(data[i]) + half_width_) * scale);
    bins_[static_cast<size_t>(std::clamp(b, 0, kBins - 1))] += 1;
  }
}

Range RangeCollector::percentile_range(double percentile) const {
  double total = 0;
  for (double b : bins_) total += b;
  const double tail = total * (100.0 - percentile) / 100.0;
  const double width = 2.0 * half_width_ / kBins;
  int lo_bin = 0, hi_bin = kBins - 1;
  for (double acc = 0; lo_bin < kBins - 1 && acc + bins_[static_cast<size_t>(lo_bin)] <= tail; ++lo_bin) acc += bins_[static_cast<size_t>(lo_bin)];
  for (double acc = 0; hi_bin > 0 && acc + bins_[static_cast<size_t>(hi_bin)] <= tail; --hi_bin) acc += bins_[static_cast<size_t>(hi_bin)];
  Range r;
  r.lo = std::max(min_, static_cast<float>(-half_width_ + lo_bin * width));
  r.hi = std::min(max_, static_cast<float>(-half_width_ + (hi_bin + 1) * width));
  return r;
}

Range RangeCollector::entropy_range() const {
  const int n = kBins / 2;  // |x| histogram over [0, R]
  std::vector<double> h(static_cast<size_t>(n));
  for (int j = 0; j < n; ++j) h[static_cast<size_t>(j)] = bins_[static_cast<size_t>(n + j)] + bins_[static_cast<size_t>(n - 1 - j)];
  const int levels = min_ >= 0 ? 255 : 128;
  if (n <= levels) return Range{min_, max_};
  std::vector<double> suffix(static_cast<size_t>(n) + 1, 0.0);
  for (int j = n - 1; j >= 0; --j) suffix[static_cast<size_t>(j)] = suffix[static_cast<size_t>(j) + 1] + h[static_cast<size_t>(j)];
  double best_kl = std::numeric_limits<double>::infinity();
  int best = n;
  std::vector<double> p, q;
  for (int i = levels; i <= n; ++i) {
    p.assign(h.begin(), h.begin() + i);
    p[static_cast<size_t>(i) - 1] += suffix[static_cast<size_t>(i)];
    q.assign(static_cast<size_t>(i), 0.0);
    const double merged = static_cast<double>(i) / levels;
    for (int l = 0; l < levels; ++l) {
      const int start = static_cast<int>(std::floor(l * merged));
      const int end = l == levels - 1 ? i : static_cast<int>(std::floor((l + 1) * merged));
      double sum = 0;
      int nonzero = 0;
      for (int k = start; k < end; ++k) {
        sum += h[static_cast<size_t>(k)];
        nonzero += h[static_cast<size_t>(k)] != 0;
      }
      if (nonzero == 0) continue;
      for (int k = start; k < end; ++k) {
        if (h[static_cast<size_t>(k)] != 0) q[static_cast<size_t>(k)] = sum / nonzero;
      }
    }
    double sp = 0, sq = 0;
    for (int k = 0; k < i; ++k) {
      sp += p[static_cast<size_t>(k)];
      sq += q[static_cast<size_t>(k)];
    }
    if (sp <= 0 || sq <= 0) continue;
    double kl = 0;
    for (int k = 0; k < i; ++k) {
      const double pk = p[static_cast<size_t>(k)] / sp;
      if (pk <= 0) continue;
      const double qk = std::max(q[static_cast<size_t>(k)] / sq, 1e-12);
      kl += pk * std::log(pk / qk);
    }
    if (kl < best_kl) {
      best_kl = kl;
      best = i;
    }
  }
  const float t = static_cast<float>(best * (static_cast<double>(half_width_) / n));
  return Range{std::max(min_, -t), std::min(max_, t)};
}

Range RangeCollector::range(CalibrationMethod method, double percentile) const {
  Range r{min_, max_};
  if (count_ > 0 && use_histogram_ && !bins_.empty()) {
    if (method == CalibrationMethod::kPercentile) r = percentile_range(percentile);
    if (method == CalibrationMethod::kEntropy) r = entropy_range();
  }
  r.lo = std::min(r.lo, 0.0f);
  r.hi = std::max(r.hi, 0.0f);
  return r;
}

}  // namespace kiln::driver::quantize_detail
