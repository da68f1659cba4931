// The XGBoost cost model: learns a synthetic score with a peak (score = -(log2 tile - 3)^2 +
// noise, plus an irrelevant feature) well enough to rank held-out candidates (Spearman >= 0.8);
// predicts zeros untrained and with too few samples; does not throw on degenerate data (constant
// scores, NaN/inf features or scores, one sample); deterministic for a seed; single-threaded.
#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <filesystem>
#include <numeric>
#include <random>

#include "kiln/tune/cost_model.h"

namespace kiln::tune {
namespace {

// Ranks (0-based, ties averaged) of `v`.
std::vector<double> ranks(const std::vector<double>& v) {
  std::vector<size_t> order(v.size());
  std::iota(order.begin(), order.end(), 0);
  std::sort(order.begin(), order.end(), [&](size_t a, size_t b) { return v[a] < v[b]; });
  std::vector<double> r(v.size());
  for (size_t i = 0; i < order.size();) {
    size_t j = i;
    while (j + 1 < order.size() && v[order[j + 1]] == v[order[i]]) ++j;
    for (size_t k = i; k <= j; ++k) r[order[k]] = (static_cast<double>(i) + static_cast<double>(j)) / 2;
    i = j + 1;
  }
  return r;
}

// Spearman's rank correlation: Pearson correlation of the ranks.
double spearman(const std::vector<double>& a, const std::vector<double>& b) {
  std::vector<double> ra = ranks(a), rb = ranks(b);
  double n = static_cast<double>(a.size());
  double ma = std::accumulate(ra.begin(), ra.end(), 0.0) / n, mb = std::accumulate(rb.begin(), rb.end(), 0.0) / n;
  double cov = 0, va = 0, vb = 0;
  for (size_t i = 0; i < ra.size(); ++i) {
    cov += (ra[i] - ma) * (rb[i] - mb);
    va += (ra[i] - ma) * (ra[i] - ma);
    vb += (rb[i] - mb) * (rb[i] - mb);
  }
  return cov / std::sqrt(va * vb);
}

struct Samples {
  std::vector<std::vector<double>> features;
  std::vector<double> scores;       // with noise (what the model sees)
  std::vector<double> true_scores;  // without
};

// Candidates: tile in 1..256 (a power of two times 1 or 3), an irrelevant knob, a constant.
Samples synthetic(int n, uint32_t seed) {
  std::mt19937 rng(seed);
  std::uniform_int_distribution<int> log_tile(0, 8), noise_knob(0, 15), odd(0, 1);
  std::normal_distribution<double> noise(0, 0.3);
  Samples s;
  for (int i = 0; i < n; ++i) {
    double tile = std::ldexp(odd(rng) ? 3.0 : 1.0, log_tile(rng));
    double l = std::log2(tile);
    double truth = -(l - 3) * (l - 3);
    s.features.push_back({l, static_cast<double>(noise_knob(rng)), 1.0});
    s.true_scores.push_back(truth);
    s.scores.push_back(truth + noise(rng));
  }
  return s;
}

TEST(CostModel, LearnsToRankASyntheticScore) {
  auto model = make_cost_model(1);
  EXPECT_NE(model->name().find("xgboost"), std::string::npos) << model->name();
  Samples train = synthetic(200, 11);
  model->fit(train.features, train.scores);
  EXPECT_TRUE(model->trained());
  Samples test = synthetic(100, 12);
  std::vector<double> predicted = model->predict(test.features);
  ASSERT_EQ(predicted.size(), 100u);
  double rho = spearman(predicted, test.true_scores);
  EXPECT_GE(rho, 0.8) << "Spearman rank correlation on held-out candidates";
  // Predictions are on the caller's scale: the best candidates (tile 8) score near 0.
  double best = *std::max_element(predicted.begin(), predicted.end());
  EXPECT_NEAR(best, 0.0, 0.5);
}

TEST(CostModel, DeterministicForASeed) {
  Samples train = synthetic(120, 5), test = synthetic(30, 6);
  auto a = make_cost_model(3), b = make_cost_model(3);
  a->fit(train.features, train.scores);
  b->fit(train.features, train.scores);
  EXPECT_EQ(a->predict(test.features), b->predict(test.features));
}

TEST(CostModel, UntrainedOrTooFewSamplesPredictZeros) {
  auto model = make_cost_model();
  std::vector<std::vector<double>> x = {{1, 2}, {3, 4}, {5, 6}};
  EXPECT_FALSE(model->trained());
  EXPECT_EQ(model->predict(x), std::vector<double>(3, 0.0));
  model->fit(x, {1, 2, 3});
  EXPECT_FALSE(model->trained());
  EXPECT_EQ(model->predict(x), std::vector<double>(3, 0.0));
  model->fit({}, {});
  EXPECT_EQ(model->predict({}), std::vector<double>{});
  model->fit({{1, 2}}, {5});
  EXPECT_EQ(model->predict(x), std::vector<double>(3, 0.0));
}

TEST(CostModel, DegenerateDataDoesNotThrow) {
  auto model = make_cost_model();
  Samples s = synthetic(50, 9);
  // Constant scores carry no ranking: untrained, zeros.
  EXPECT_NO_THROW(model->fit(s.features, std::vector<double>(50, 2.5)));
  EXPECT_FALSE(model->trained());
  EXPECT_EQ(model->predict(s.features), std::vector<double>(50, 0.0));
  // Constant features: trains, predicts one value for all.
  std::vector<std::vector<double>> same(50, std::vector<double>{1, 1, 1});
  EXPECT_NO_THROW(model->fit(same, s.scores));
  std::vector<double> p = model->predict(same);
  EXPECT_TRUE(std::all_of(p.begin(), p.end(), [&](double v) { return std::isfinite(v) && v == p[0]; }));
  // NaN / inf in features and scores.
  Samples bad = s;
  bad.features[0][0] = std::nan("");
  bad.features[1][1] = INFINITY;
  bad.scores[2] = std::nan("");
  bad.scores[3] = -INFINITY;
  EXPECT_NO_THROW(model->fit(bad.features, bad.scores));
  EXPECT_TRUE(model->trained());
  p = model->predict(bad.features);
  EXPECT_TRUE(std::all_of(p.begin(), p.end(), [](double v) { return std::isfinite(v); }));
  // Zero-width features.
  std::vector<double> ten(s.scores.begin(), s.scores.begin() + 10);
  EXPECT_NO_THROW(model->fit(std::vector<std::vector<double>>(10), ten));
  EXPECT_FALSE(model->trained());
  EXPECT_NO_THROW(model->predict(std::vector<std::vector<double>>(3)));
}

// The tuner forks measurement children while the model lives; OpenMP worker threads in the parent
// would make that fragile (and steal CPU from measurements). nthread=1 keeps XGBoost on the
// calling thread.
TEST(CostModel, StartsNoThreads) {
  auto threads = [] {
    int n = 0;
    for (const auto& entry : std::filesystem::directory_iterator("/proc/self/task")) n += entry.exists() ? 1 : 0;
    return n;
  };
  int before = threads();
  auto model = make_cost_model();
  Samples s = synthetic(300, 4);
  model->fit(s.features, s.scores);
  model->predict(s.features);
  EXPECT_EQ(threads(), before);
}

}  // namespace
}  // namespace kiln::tune
