// The statistic a measurement reports: the median of the timed runs after dropping outliers,
// runs slower than median + 3 x MAD (median absolute deviation). Only slow runs are outliers:
// a run cannot be disturbed into being faster than the kernel is.
#ifndef KILN_SRC_TUNE_MEASURE_RUN_STATISTICS_H_
#define KILN_SRC_TUNE_MEASURE_RUN_STATISTICS_H_

#include <vector>

namespace kiln::tune {

struct RobustMedian {
  double median = 0;  // of the runs kept (0 for no runs)
  int rejected = 0;   // runs dropped as outliers
};

RobustMedian robust_median(const std::vector<double>& runs);

}  // namespace kiln::tune

#endif  // KILN_SRC_TUNE_MEASURE_RUN_STATISTICS_H_
