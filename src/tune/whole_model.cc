// See whole_model.h.
#include "tune/whole_model.h"

#include <stdlib.h>

#include <algorithm>
#include <cstdlib>

#include "kiln/support/error.h"

namespace kiln::tune {

double median_of(std::vector<double> v) {
  std::sort(v.begin(), v.end());
  const size_t n = v.size();
  return n == 0 ? 0 : n % 2 == 1 ? v[n / 2] : 0.5 * (v[n / 2 - 1] + v[n / 2]);
}

std::filesystem::path make_work_dir(const std::string& requested, const std::string& prefix, bool* own) {
  *own = requested.empty();
  if (!requested.empty()) {
    std::filesystem::create_directories(requested);
    return requested;
  }
  const char* tmp = std::getenv("TMPDIR");
  std::string pattern = std::string(tmp != nullptr && *tmp ? tmp : "/tmp") + "/" + prefix + "-XXXXXX";
  if (mkdtemp(pattern.data()) == nullptr) {
    throw UserError(UserErrorKind::kIO, "kiln tune", "cannot create a temporary directory " + pattern,
                    "set TMPDIR to a writable directory");
  }
  return pattern;
}

double two_pass_seconds(const MeasureResult& first, const MeasureResult& second, bool is_default,
                        const MeasureResult* close_first, const MeasureResult* close_second) {
  const double s1 = median_of(first.runs), s2 = median_of(second.runs);
  if (!is_default) return std::max(s1, s2);
  double s = std::min(s1, s2);
  if (close_first != nullptr && close_second != nullptr && close_first->ok && close_second->ok) {
    s = std::min({s, median_of(close_first->runs), median_of(close_second->runs)});
  }
  return s;
}

}  // namespace kiln::tune
