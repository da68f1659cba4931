// See work_dir.h.
#include "tune/work_dir.h"

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

}  // namespace kiln::tune
