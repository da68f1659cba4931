// kiln run's made-up inputs and its top-K listing (see run_io.h).
#include "run_io.h"

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <numeric>

#include "kiln/support/error.h"
#include "kiln/support/splitmix64.h"

namespace kiln::cli {
namespace {

double unit(SplitMix64& rng) { return static_cast<double>(rng.next() >> 11) * 0x1.0p-53; }  // [0, 1)

bool is_bool(ir::DType t) { return t == ir::DType::kBool; }

std::string index_text(int64_t flat, const std::vector<int64_t>& shape) {
  std::vector<int64_t> index(shape.size());
  for (size_t d = shape.size(); d-- > 0;) {
    index[d] = shape[d] == 0 ? 0 : flat % shape[d];
    flat = shape[d] == 0 ? 0 : flat / shape[d];
  }
  std::string s = "[";
  for (size_t d = 0; d < index.size(); ++d) s += (d ? ", " : "") + std::to_string(index[d]);
  return s + "]";
}

}  // namespace

FillMode parse_fill_mode(const std::string& text) {
  if (text == "random") return FillMode::kRandom;
  if (text == "zeros") return FillMode::kZeros;
  if (text == "ones") return FillMode::kOnes;
  throw UserError(UserErrorKind::kInvalidArgument, "--fill " + text, "unknown fill mode", "use random, zeros or ones");
}

ir::NDArray filled_input(ir::DType dtype, const std::vector<int64_t>& shape, FillMode mode, uint64_t seed,
                         size_t input_index) {
  ir::NDArray a = ir::NDArray::empty(dtype, ir::Shape(shape));
  SplitMix64 rng{seed * 0xD1B54A32D192ED03ull + input_index};
  for (int64_t i = 0; i < a.numel(); ++i) {
    double v = mode == FillMode::kOnes ? 1.0 : 0.0;
    if (mode == FillMode::kRandom) {
      if (ir::is_float(dtype)) v = 2.0 * unit(rng) - 1.0;
      else if (is_bool(dtype)) v = static_cast<double>(rng.next() >> 63);
      else v = static_cast<double>(rng.next() % 10);
    }
    a.set_from_double(i, v);
  }
  return a;
}

std::string fill_note(const std::string& name, const ir::NDArray& value, FillMode mode, uint64_t seed) {
  std::string what;
  if (mode != FillMode::kRandom) {
    what = mode == FillMode::kZeros ? "zeros" : "ones";
  } else {
    const char* range = ir::is_float(value.dtype()) ? "uniform in [-1, 1)"
                        : is_bool(value.dtype())    ? "0 or 1"
                                                    : "uniform in 0..9";
    what = std::string("random values ") + range + ", seed " + std::to_string(seed);
  }
  return "filled input '" + name + "' " + value.type().to_string() + " with " + what + "\n";
}

std::string top_k_text(const std::string& name, const ir::NDArray& value, int k) {
  const int64_t n = value.numel();
  std::vector<int64_t> order(static_cast<size_t>(n));
  std::iota(order.begin(), order.end(), 0);
  const int64_t count = std::min<int64_t>(std::max(k, 0), n);
  auto larger = [&](int64_t a, int64_t b) {
    const double x = value.get_as_double(a), y = value.get_as_double(b);
    const bool x_nan = std::isnan(x), y_nan = std::isnan(y);
    if (x_nan != y_nan) return y_nan;  // numbers before NaN
    if (!x_nan && x != y) return x > y;
    return a < b;
  };
  std::partial_sort(order.begin(), order.begin() + count, order.end(), larger);
  std::string out = "top " + std::to_string(count) + " of '" + name + "' " + value.type().to_string() + ":\n";
  const std::vector<int64_t>& shape = value.sizes();
  for (int64_t r = 0; r < count; ++r) {
    char num[64];
    std::snprintf(num, sizeof num, "%.6g", value.get_as_double(order[r]));
    out += "  " + std::to_string(r + 1) + "  " + index_text(order[r], shape) + "  " + num + "\n";
  }
  return out;
}

}  // namespace kiln::cli
