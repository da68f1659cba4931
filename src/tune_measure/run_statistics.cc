// Outlier rejection and the median (run_statistics.h).
#include "run_statistics.h"

#include <algorithm>
#include <cmath>

namespace kiln::tune {
namespace {

double median_of(std::vector<double> v) {
  if (v.empty()) return 0;
  std::sort(v.begin(), v.end());
  const size_t n = v.size();
  return n % 2 == 1 ? v[n / 2] : 0.5 * (v[n / 2 - 1] + v[n / 2]);
}

}  // namespace

RobustMedian robust_median(const std::vector<double>& runs) {
  RobustMedian r;
  if (runs.empty()) return r;
  const double m = median_of(runs);
  std::vector<double> deviations;
  deviations.reserve(runs.size());
  for (double t : runs) deviations.push_back(std::fabs(t - m));
  const double limit = m + 3 * median_of(deviations);
  std::vector<double> kept;
  for (double t : runs) {
    if (t > limit) ++r.rejected;
    else kept.push_back(t);
  }
  r.median = median_of(kept);
  return r;
}

}  // namespace kiln::tune
