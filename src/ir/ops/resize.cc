// `resize` (ONNX Resize, opsets 11-19 semantics, following ONNX's reference implementation):
// every axis is resampled separately from output size `sizes` (the importer resolves ONNX's
// scales/sizes inputs). Each output coordinate x maps to an input coordinate x_ori by
// coordinate_transformation_mode (scale s = scales[d] if given, else sizes[d] / in[d]):
//   half_pixel (x + 0.5) / s - 0.5; pytorch_half_pixel the same, or -0.5 when the output length is 1;
//   half_pixel_symmetric; align_corners x * (in - 1) / (out - 1); asymmetric x / s;
//   tf_crop_and_resize (uses `roi`; inputs outside the roi's image give extrapolation_value).
// Neighbours of x_ori (base = floor(x_ori), or x_ori - 1 when x_ori is an integer, with ratio
// x_ori - base in (0, 1]): nearest and linear use base, base+1; cubic base-1..base+2. Indices
// outside the input repeat the edge; exclude_outside=1 drops them and renormalizes. Weights per
// axis multiply; sums are in double. antialias=1 (linear/cubic, an axis shrunk by scale s < 1)
// widens the filter by 1/s: n = 2 - 2 * start taps base + start .. base + start + n - 1, start =
// floor(-w / s) + 1 (w = 1 linear, 2 cubic), weight kernel(s * (start + j - r)), normalized to sum 1.
#include <cmath>

#include "ir/ops/dtype_dispatch.h"
#include "ir/ops/op_util.h"

namespace kiln::ir::ops {
namespace {

const char* const kModes[] = {"nearest", "linear", "cubic"};
const char* const kCoordModes[] = {"half_pixel", "half_pixel_symmetric", "pytorch_half_pixel", "align_corners",
                                   "asymmetric", "tf_crop_and_resize"};
const char* const kNearestModes[] = {"round_prefer_floor", "round_prefer_ceil", "floor", "ceil"};

template <size_t N>
void require_one_of(const std::string& attr, const std::string& value, const char* const (&allowed)[N]) {
  std::string list;
  for (const char* a : allowed) {
    if (value == a) return;
    list += std::string(list.empty() ? "" : ", ") + a;
  }
  fail_attr("resize", attr, "is \"" + value + "\"", "expected one of: " + list);
}

struct Tap {
  int64_t index;
  double weight;
};
// Taps of one output coordinate along one axis; `outside`: the whole element is extrapolated.
struct AxisTaps {
  std::vector<Tap> taps;
  bool outside = false;
};

std::vector<AxisTaps> axis_taps(int64_t in_len, int64_t out_len, double scale, double roi_start, double roi_end,
                                const Attrs& attrs) {
  const std::string& mode = attrs.get_string("mode");
  const std::string& ctm = attrs.get_string("coordinate_transformation_mode");
  const std::string& nearest = attrs.get_string("nearest_mode");
  const double a = attrs.get_float("cubic_coeff_a");
  const bool exclude_outside = attrs.get_int("exclude_outside") != 0;
  const double out_width = scale * static_cast<double>(in_len);  // as ONNX's reference: may be fractional
  const double in_w = static_cast<double>(in_len);
  std::vector<AxisTaps> result(static_cast<size_t>(out_len));
  for (int64_t xo = 0; xo < out_len; ++xo) {
    const double x = static_cast<double>(xo);
    double x_ori;
    if (ctm == "align_corners") {
      x_ori = out_width == 1 ? 0.0 : x * (in_w - 1) / (out_width - 1);
    } else if (ctm == "asymmetric") {
      x_ori = x / scale;
    } else if (ctm == "tf_crop_and_resize") {
      x_ori = out_width == 1 ? (roi_end - roi_start) * (in_w - 1) / 2
                             : x * (roi_end - roi_start) * (in_w - 1) / (out_width - 1);
      x_ori += roi_start * (in_w - 1);
      if (x_ori < 0 || x_ori > in_w - 1) {
        result[xo].outside = true;
        continue;
      }
    } else if (ctm == "pytorch_half_pixel") {
      x_ori = out_width == 1 ? -0.5 : (x + 0.5) / scale - 0.5;
    } else if (ctm == "half_pixel_symmetric") {
      const double adjustment = static_cast<double>(out_len) / out_width;
      x_ori = in_w / 2 * (1 - adjustment) + (x + 0.5) / scale - 0.5;
    } else {  // half_pixel
      x_ori = (x + 0.5) / scale - 0.5;
    }
    const bool integral = x_ori == std::floor(x_ori);
    const int64_t base = static_cast<int64_t>(std::floor(x_ori)) - (integral ? 1 : 0);
    const double r = integral ? 1.0 : x_ori - std::floor(x_ori);
    std::vector<Tap> taps;
    if (attrs.get_int("antialias") != 0 && mode != "nearest" && scale < 1) {
      const double half = mode == "cubic" ? 2.0 : 1.0;
      const int64_t start = static_cast<int64_t>(std::floor(-half / scale)) + 1, n = 2 - 2 * start;
      double sum = 0;
      for (int64_t j = 0; j < n; ++j) {
        const double t = std::abs(scale * (static_cast<double>(start + j) - r));
        double w;
        if (mode == "cubic") {
          w = t <= 1 ? ((a + 2) * t - (a + 3)) * t * t + 1 : t < 2 ? ((a * t - 5 * a) * t + 8 * a) * t - 4 * a : 0.0;
        } else {
          w = std::max(0.0, 1 - t);
        }
        taps.push_back({base + start + j, w});
        sum += w;
      }
      for (Tap& t : taps) t.weight /= sum;
    } else if (mode == "cubic") {
      const double r1 = r + 1, q = 1 - r, q1 = q + 1;
      taps = {{base - 1, ((a * r1 - 5 * a) * r1 + 8 * a) * r1 - 4 * a},
              {base, ((a + 2) * r - (a + 3)) * r * r + 1},
              {base + 1, ((a + 2) * q - (a + 3)) * q * q + 1},
              {base + 2, ((a * q1 - 5 * a) * q1 + 8 * a) * q1 - 4 * a}};
    } else if (mode == "linear") {
      taps = {{base, 1 - r}, {base + 1, r}};
    } else {
      bool up = true;  // integral: the right neighbour is x_ori itself
      if (!integral) {
        if (nearest == "round_prefer_floor") up = r > 0.5;
        else if (nearest == "round_prefer_ceil") up = r >= 0.5;
        else up = nearest == "ceil";
      }
      taps = {{base, up ? 0.0 : 1.0}, {base + 1, up ? 1.0 : 0.0}};
    }
    if (exclude_outside) {
      double sum = 0;
      for (Tap& t : taps) {
        if (t.index < 0 || t.index >= in_len) t.weight = 0;
        sum += t.weight;
      }
      for (Tap& t : taps) t.weight /= sum;
    }
    for (Tap& t : taps) {
      if (t.weight == 0) continue;  // contributes nothing; keeps the loops short
      result[xo].taps.push_back({std::clamp<int64_t>(t.index, 0, in_len - 1), t.weight});
    }
  }
  return result;
}

std::vector<TensorType> infer_resize(const std::vector<TensorType>& in, const Attrs& attrs) {
  const TensorType& x = in[0];
  const int rank = x.rank();
  require_one_of("mode", attrs.get_string("mode"), kModes);
  require_one_of("coordinate_transformation_mode", attrs.get_string("coordinate_transformation_mode"), kCoordModes);
  require_one_of("nearest_mode", attrs.get_string("nearest_mode"), kNearestModes);
  require_dtype("resize", 0, "x", x.dtype, attrs.get_string("mode") == "nearest" ? DTypeSet::kNumeric : DTypeSet::kFloat);
  const auto& sizes = ints_of_size("resize", attrs, "sizes", static_cast<size_t>(rank));
  require_all_at_least("resize", "sizes", sizes, 1);
  for (int d = 0; d < rank; ++d) {
    if (x.shape[d] == 0) fail_input("resize", 0, "x", "has an empty axis " + std::to_string(d) + ": nothing to resample");
  }
  const auto& scales = attrs.get_floats("scales");
  if (!scales.empty() && scales.size() != static_cast<size_t>(rank)) {
    fail_attr("resize", "scales", "has " + std::to_string(scales.size()) + " values, expected 0 or " + std::to_string(rank));
  }
  for (double s : scales) {
    if (!(s > 0)) fail_attr("resize", "scales", "contains " + std::to_string(s) + ", expected values > 0");
  }
  const auto& roi = attrs.get_floats("roi");
  if (attrs.get_string("coordinate_transformation_mode") == "tf_crop_and_resize" &&
      roi.size() != 2 * static_cast<size_t>(rank)) {
    fail_attr("resize", "roi",
              "has " + std::to_string(roi.size()) + " values; tf_crop_and_resize needs 2 * rank = " +
                  std::to_string(2 * rank) + " ([starts..., ends...], normalized)");
  }
  const int64_t antialias = attrs.get_int("antialias");
  if (antialias != 0 && antialias != 1) fail_attr("resize", "antialias", "is " + std::to_string(antialias) + ", expected 0 or 1");
  const int64_t exclude = attrs.get_int("exclude_outside");
  if (exclude != 0 && exclude != 1) fail_attr("resize", "exclude_outside", "is " + std::to_string(exclude) + ", expected 0 or 1");
  return {{x.dtype, Shape(sizes.begin(), sizes.end())}};
}

std::vector<NDArray> reference_resize(const std::vector<NDArray>& in, const Attrs& attrs, const std::vector<TensorType>& out_types) {
  const NDArray& x = in[0];
  const int rank = static_cast<int>(x.shape().size());
  const Shape& os = out_types[0].shape;
  const auto& scales = attrs.get_floats("scales");
  const auto& roi = attrs.get_floats("roi");
  std::vector<std::vector<AxisTaps>> taps(rank);
  for (int d = 0; d < rank; ++d) {
    const double s = scales.empty() ? static_cast<double>(os[d]) / static_cast<double>(x.shape()[d]) : scales[d];
    const bool has_roi = roi.size() == 2 * static_cast<size_t>(rank);
    taps[d] = axis_taps(x.shape()[d], os[d], s, has_roi ? roi[d] : 0.0, has_roi ? roi[d + rank] : 1.0, attrs);
  }
  const std::vector<int64_t> strides = contiguous_strides(x.shape());
  const double extrapolation = attrs.get_float("extrapolation_value");
  NDArray out = NDArray::empty(x.dtype(), os);
  visit_dtype(x.dtype(), [&]<typename T>() {
    if constexpr (std::is_same_v<T, Bool>) {
      KILN_IFAIL() << "resize on bool";
    } else {
      auto px = x.data<T>();
      auto po = out.mutable_data<T>();
      std::vector<int64_t> counter(rank, 0);
      // Sum over the cartesian product of the per-axis taps, recursively over axes.
      auto accumulate = [&](auto&& self, int d, int64_t offset, double weight) -> double {
        if (d == rank) return weight * to_double(px[offset]);
        double sum = 0;
        for (const Tap& t : taps[d][counter[d]].taps) sum += self(self, d + 1, offset + t.index * strides[d], weight * t.weight);
        return sum;
      };
      for (int64_t i = 0; i < out.numel(); ++i) {
        bool outside = false;
        for (int d = 0; d < rank; ++d) outside = outside || taps[d][counter[d]].outside;
        po[i] = from_double<T>(outside ? extrapolation : accumulate(accumulate, 0, 0, 1.0));
        for (int d = rank - 1; d >= 0; --d) {
          if (++counter[d] < os[d]) break;
          counter[d] = 0;
        }
      }
    }
  });
  return {out};
}

}  // namespace

KILN_REGISTER_OP(resize) {
  OpDef d;
  d.name = "resize";
  d.doc = "resamples every axis to `sizes` (nearest, linear or cubic; ONNX Resize)";
  d.attrs = {
      {"sizes", AttrKind::kInts, std::nullopt, "output shape (rank values)"},
      {"mode", AttrKind::kString, AttrValue(std::string("nearest")), "nearest, linear or cubic"},
      {"coordinate_transformation_mode", AttrKind::kString, AttrValue(std::string("half_pixel")),
       "half_pixel, half_pixel_symmetric, pytorch_half_pixel, align_corners, asymmetric, tf_crop_and_resize"},
      {"nearest_mode", AttrKind::kString, AttrValue(std::string("round_prefer_floor")),
       "round_prefer_floor, round_prefer_ceil, floor or ceil"},
      {"cubic_coeff_a", AttrKind::kFloat, AttrValue(-0.75), "cubic kernel coefficient"},
      {"exclude_outside", AttrKind::kInt, AttrValue(int64_t{0}), "1: drop taps outside the input, renormalize"},
      {"extrapolation_value", AttrKind::kFloat, AttrValue(0.0), "tf_crop_and_resize value outside the image"},
      {"scales", AttrKind::kFloats, AttrValue(std::vector<double>{}),
       "per-axis scales when ONNX gave scales (empty: sizes / input shape)"},
      {"roi", AttrKind::kFloats, AttrValue(std::vector<double>{}), "tf_crop_and_resize: [starts..., ends...]"},
      {"antialias", AttrKind::kInt, AttrValue(int64_t{0}), "1: linear/cubic downscaling widens the filter by 1/scale"},
  };
  d.infer_type = infer_resize;
  d.reference = reference_resize;
  d.pattern = OpPattern::kInjective;
  return with_arity_check(std::move(d));
}

}  // namespace kiln::ir::ops
