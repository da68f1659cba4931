// What the tuner computes about a candidate besides its time (include/kiln/tune/tuner.h): its
// cost-model features and whether its outputs match the default schedule's.
#include <algorithm>
#include <cmath>
#include <cstring>
#include <sstream>

#include "kiln/tune/tuner.h"

namespace kiln::tune {

std::vector<double> candidate_features(const topi::KnobSpace& space, const topi::Knobs& knobs, uint64_t flops) {
  std::vector<double> f;
  for (const topi::KnobChoice& c : space.knobs) {
    f.push_back(std::log2(1.0 + static_cast<double>(knobs.has(c.name) ? knobs.get(c.name) : 0)));
  }
  f.push_back(std::log2(1.0 + static_cast<double>(flops)));
  double tile = static_cast<double>(space.tile_scale);
  for (const std::string& name : space.tile_knobs) tile *= static_cast<double>(knobs.has(name) ? knobs.get(name) : 1);
  f.push_back(std::log2(tile));
  f.push_back(space.max_tile > 0 ? tile / static_cast<double>(space.max_tile) : 0.0);
  return f;
}

namespace {

template <typename T>
bool close_floats(const std::vector<char>& a, const std::vector<char>& b, std::string* why) {
  const size_t n = a.size() / sizeof(T);
  std::vector<T> x(n), y(n);
  std::memcpy(x.data(), b.data(), n * sizeof(T));  // expected
  std::memcpy(y.data(), a.data(), n * sizeof(T));  // got
  double scale = 1;
  for (T v : x) {
    if (std::isfinite(static_cast<double>(v))) scale = std::max(scale, std::fabs(static_cast<double>(v)));
  }
  const double rtol = 1e-4, atol = 1e-5 * scale;
  for (size_t i = 0; i < n; ++i) {
    const double e = static_cast<double>(x[i]), g = static_cast<double>(y[i]);
    if (std::isnan(e) && std::isnan(g)) continue;
    if (e == g) continue;  // equal infinities
    if (!(std::fabs(g - e) <= atol + rtol * std::fabs(e))) {
      if (why != nullptr) {
        std::ostringstream os;
        os << "element " << i << ": " << g << " vs default " << e << " (tolerance " << atol + rtol * std::fabs(e) << ")";
        *why = os.str();
      }
      return false;
    }
  }
  return true;
}

}  // namespace

bool outputs_match(const std::vector<ir::TensorType>& types, const std::vector<std::vector<char>>& expected,
                   const std::vector<std::vector<char>>& got, std::string* why) {
  if (expected.size() != got.size() || expected.size() != types.size()) {
    if (why != nullptr) *why = "output count differs";
    return false;
  }
  for (size_t o = 0; o < types.size(); ++o) {
    if (expected[o].size() != got[o].size()) {
      if (why != nullptr) *why = "output " + std::to_string(o) + " size differs";
      return false;
    }
    std::string w;
    bool ok = true;
    if (types[o].dtype == ir::DType::kF32) {
      ok = close_floats<float>(got[o], expected[o], &w);
    } else if (types[o].dtype == ir::DType::kF64) {
      ok = close_floats<double>(got[o], expected[o], &w);
    } else if (got[o] != expected[o]) {
      ok = false;
      w = "bytes differ (exact match required for " + std::string(ir::dtype_name(types[o].dtype)) + ")";
    }
    if (!ok) {
      if (why != nullptr) *why = "output " + std::to_string(o) + ": " + w;
      return false;
    }
  }
  return true;
}

}  // namespace kiln::tune
