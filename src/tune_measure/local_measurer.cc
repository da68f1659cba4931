// make_local_measurer (kiln/tune/measure.h): every job measured on this machine, one after
// another (never two timing runs at once: they would compete for cores and caches).
#include <memory>

#include "kiln/tune/measure.h"

namespace kiln::tune {
namespace {

class LocalMeasurer final : public Measurer {
 public:
  std::vector<MeasureResult> measure(const std::vector<MeasureJob>& jobs) override {
    std::vector<MeasureResult> results;
    results.reserve(jobs.size());
    for (const MeasureJob& job : jobs) {
      results.push_back(measure_artifact(job.artifact_path, job.options));
      results.back().id = job.id;
    }
    return results;
  }
  std::string describe() const override { return "local (1 process)"; }
};

}  // namespace

std::unique_ptr<Measurer> make_local_measurer() { return std::make_unique<LocalMeasurer>(); }

}  // namespace kiln::tune
