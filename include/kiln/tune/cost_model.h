// The learned cost model that picks which candidates `kiln tune` measures (issue 15).
//
// A candidate is a fixed-length feature vector (the tuner builds it from the task and the knob
// values: log2 of each knob, the task's FLOPs and bytes, tile products ...); the model learns a
// score from the measurements as they arrive (higher = faster; the tuner passes throughput
// normalized per task, e.g. default_seconds / seconds) and ranks unmeasured candidates.
//
//   auto model = make_cost_model();
//   model->fit(features, scores);                 // all measurements so far (refit each round)
//   std::vector<double> s = model->predict(candidate_features);
//
// Contract: before the first fit (or with fewer than a handful of samples) predict() returns
// zeros, so the tuner falls back to random choice; fit() and predict() never throw on degenerate
// data (constant scores, one sample); feature vectors of one call have one length.
#ifndef KILN_TUNE_COST_MODEL_H_
#define KILN_TUNE_COST_MODEL_H_

#include <cstdint>
#include <memory>
#include <string>
#include <vector>

namespace kiln::tune {

class CostModel {
 public:
  virtual ~CostModel() = default;
  virtual void fit(const std::vector<std::vector<double>>& features, const std::vector<double>& scores) = 0;
  virtual std::vector<double> predict(const std::vector<std::vector<double>>& features) const = 0;
  virtual bool trained() const = 0;
  virtual std::string name() const = 0;  // e.g. "xgboost 1.7.4 (gradient-boosted trees)"
};

// The default model (gradient-boosted trees), deterministic for a seed.
std::unique_ptr<CostModel> make_cost_model(uint64_t seed = 1);

}  // namespace kiln::tune

#endif  // KILN_TUNE_COST_MODEL_H_
