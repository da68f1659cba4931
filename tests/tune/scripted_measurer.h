// A Measurer for tests of whole-model judgements (layer_tuner.h, model_check.h): real
// measurements (so outputs come back), synthetic times.
#ifndef KILN_TESTS_TUNE_SCRIPTED_MEASURER_H_
#define KILN_TESTS_TUNE_SCRIPTED_MEASURER_H_

#include <array>
#include <memory>
#include <string>
#include <vector>

#include "kiln/tune/measure.h"

namespace kiln::testing {

// Real measurements with synthetic times: each batch's first job (the default model) and its
// closing re-run take `default_ms[pass]`, every alternative `alt_ms[pass]`.
class ScriptedMeasurer : public tune::Measurer {
 public:
  ScriptedMeasurer(std::array<double, 2> default_ms, std::array<double, 2> alt_ms)
      : inner_(tune::make_local_measurer()), default_ms_(default_ms), alt_ms_(alt_ms) {}
  std::vector<tune::MeasureResult> measure(const std::vector<tune::MeasureJob>& jobs) override {
    std::vector<tune::MeasureResult> r = inner_->measure(jobs);
    for (size_t k = 0; k < jobs.size(); ++k) {
      const std::string& id = jobs[k].id;
      const int pass = id.find("-again") != std::string::npos ? 1 : 0;
      const bool is_default = k == 0 || id.find("-close") != std::string::npos;
      const double s = 1e-3 * (is_default ? default_ms_[pass] : alt_ms_[pass]);
      r[k].seconds = s;
      for (double& run : r[k].runs) run = s;
    }
    return r;
  }
  std::string describe() const override { return "scripted " + inner_->describe(); }

 private:
  std::unique_ptr<tune::Measurer> inner_;
  std::array<double, 2> default_ms_, alt_ms_;
};

}  // namespace kiln::testing

#endif  // KILN_TESTS_TUNE_SCRIPTED_MEASURER_H_
