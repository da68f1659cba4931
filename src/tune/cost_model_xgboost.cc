// The default CostModel (include/kiln/tune/cost_model.h): gradient-boosted regression trees from
// XGBoost's C API (Debian's libxgboost-dev). XGBoost's header stays in this file.
//
// fit(): rows whose score is not finite are dropped; non-finite features become XGBoost's
// "missing" (NaN), which trees route by a learned default branch. Scores are standardized
// ((s - mean) / stddev) so the tree parameters below mean the same whatever the tuner's score
// scale; predict() maps back to the caller's scale. A fit without ranking information (fewer than
// kMinSamples usable rows, all scores equal, or no features) leaves the model untrained: predict() returns
// zeros and the tuner falls back to random choice.
// Objective reg:squarederror (not rank:pairwise): the tuner's scores are already comparable across
// all samples (normalized per task), and a regression keeps the predictions on the score's scale
// (an estimated speedup), which the tuner can also use to decide which tasks deserve trials.
// Deterministic: one thread, no row/column subsampling, a fixed seed. tree_method=hist: refits on
// every tuning round stay cheap as samples accumulate (docs/tuning.md has the figures).
#include <xgboost/c_api.h>

#include <cmath>
#include <limits>
#include <memory>
#include <mutex>

#include "kiln/support/error.h"
#include "kiln/tune/cost_model.h"

namespace kiln::tune {

namespace {

constexpr size_t kMinSamples = 4;
constexpr int kRounds = 60;

#define KILN_XGB_CALL(call) KILN_ICHECK((call) == 0) << "xgboost: " << XGBGetLastError()

// A dense float matrix for XGBoost: non-finite values become NaN (missing).
class DMatrix {
 public:
  DMatrix(const std::vector<std::vector<double>>& rows, size_t width) {
    std::vector<float> data;
    data.reserve(rows.size() * width);
    for (const std::vector<double>& row : rows) {
      KILN_ICHECK(row.size() == width) << "cost model: feature vectors of " << row.size() << " and " << width
                                       << " values in one call; the tuner must give one length";
      for (double v : row)
        data.push_back(std::isfinite(v) ? static_cast<float>(v) : std::numeric_limits<float>::quiet_NaN());
    }
    KILN_XGB_CALL(XGDMatrixCreateFromMat(data.data(), rows.size(), width, std::numeric_limits<float>::quiet_NaN(),
                                         &handle_));
  }
  DMatrix(const DMatrix&) = delete;
  ~DMatrix() { XGDMatrixFree(handle_); }
  DMatrixHandle get() const { return handle_; }

 private:
  DMatrixHandle handle_ = nullptr;
};

class XGBoostCostModel final : public CostModel {
 public:
  explicit XGBoostCostModel(uint64_t seed) : seed_(seed) {}
  ~XGBoostCostModel() override { reset(); }

  void fit(const std::vector<std::vector<double>>& features, const std::vector<double>& scores) override {
    KILN_ICHECK(features.size() == scores.size())
        << "cost model: " << features.size() << " feature vectors but " << scores.size() << " scores";
    std::lock_guard<std::mutex> lock(mutex_);
    reset();
    std::vector<std::vector<double>> rows;
    std::vector<double> ys;
    for (size_t i = 0; i < scores.size(); ++i) {
      if (!std::isfinite(scores[i])) continue;
      rows.push_back(features[i]);
      ys.push_back(scores[i]);
    }
    if (rows.size() < kMinSamples) return;
    double mean = 0;
    for (double y : ys) mean += y;
    mean /= static_cast<double>(ys.size());
    double var = 0;
    for (double y : ys) var += (y - mean) * (y - mean);
    double stddev = std::sqrt(var / static_cast<double>(ys.size()));
    if (!(stddev > 1e-12 * std::max(1.0, std::abs(mean)))) return;  // all scores (nearly) equal

    if (rows.front().empty()) return;  // no features: nothing to learn from
    DMatrix train(rows, rows.front().size());
    std::vector<float> labels;
    for (double y : ys) labels.push_back(static_cast<float>((y - mean) / stddev));
    KILN_XGB_CALL(XGDMatrixSetFloatInfo(train.get(), "label", labels.data(), labels.size()));
    DMatrixHandle cache[] = {train.get()};
    BoosterHandle handle = nullptr;
    KILN_XGB_CALL(XGBoosterCreate(cache, 1, &handle));
    std::unique_ptr<void, int (*)(BoosterHandle)> booster(handle, XGBoosterFree);
    const std::pair<const char*, std::string> params[] = {
        {"verbosity", "0"},        {"booster", "gbtree"},   {"objective", "reg:squarederror"},
        {"tree_method", "hist"},   {"max_depth", "6"},      {"eta", "0.3"},
        {"min_child_weight", "1"}, {"lambda", "1"},         {"base_score", "0"},
        {"nthread", "1"},          {"seed", std::to_string(seed_ % 2147483647u)},
    };
    for (const auto& [key, value] : params) KILN_XGB_CALL(XGBoosterSetParam(handle, key, value.c_str()));
    for (int round = 0; round < kRounds; ++round) KILN_XGB_CALL(XGBoosterUpdateOneIter(handle, round, train.get()));
    booster_ = booster.release();
    width_ = rows.front().size();
    mean_ = mean;
    stddev_ = stddev;
  }

  std::vector<double> predict(const std::vector<std::vector<double>>& features) const override {
    std::lock_guard<std::mutex> lock(mutex_);
    std::vector<double> out(features.size(), 0.0);
    if (booster_ == nullptr || features.empty()) return out;
    DMatrix data(features, width_);
    bst_ulong length = 0;
    const float* result = nullptr;
    KILN_XGB_CALL(XGBoosterPredict(booster_, data.get(), 0, 0, 0, &length, &result));
    KILN_ICHECK(length == features.size()) << "xgboost returned " << length << " predictions for " << features.size();
    for (size_t i = 0; i < out.size(); ++i) out[i] = static_cast<double>(result[i]) * stddev_ + mean_;
    return out;
  }

  bool trained() const override {
    std::lock_guard<std::mutex> lock(mutex_);
    return booster_ != nullptr;
  }

  std::string name() const override {
    int major = 0, minor = 0, patch = 0;
    XGBoostVersion(&major, &minor, &patch);
    return "xgboost " + std::to_string(major) + "." + std::to_string(minor) + "." + std::to_string(patch) +
           " (gradient-boosted trees, reg:squarederror)";
  }

 private:
  void reset() {
    if (booster_ != nullptr) XGBoosterFree(booster_);
    booster_ = nullptr;
    width_ = 0;
  }

  uint64_t seed_;
  mutable std::mutex mutex_;
  BoosterHandle booster_ = nullptr;
  size_t width_ = 0;
  double mean_ = 0;
  double stddev_ = 1;
};

}  // namespace

std::unique_ptr<CostModel> make_cost_model(uint64_t seed) { return std::make_unique<XGBoostCostModel>(seed); }

}  // namespace kiln::tune
