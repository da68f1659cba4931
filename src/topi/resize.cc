// resize (ONNX Resize semantics, as the reference in src/ir/ops/resize.cc): per resized axis, the
// input coordinate x_ori of output index x is a closed-form f64 expression of x (coordinate
// transformation mode, scale = scales[d] or out/in); its taps (nearest: 1, linear: 2, cubic: 4)
// have weights from r = x_ori - base and indices clamped to the axis (edge repeat). The element
// is the product-weighted sum over every resized axis's taps. Axes whose size and scale are
// unchanged read the output index directly. exclude_outside renormalizes the in-range weights;
// tf_crop_and_resize gives extrapolation_value outside the roi's image. antialias widens the
// linear/cubic filter of a shrunk axis by 1/scale (more taps, normalized weights).
#include <cmath>

#include "kiln/topi/compute.h"
#include "topi/topi_util.h"

namespace kiln::topi {
namespace {

using ir::DType;

struct Tap {
  Expr index;   // clamped, i64
  Expr weight;  // f64
};

struct AxisTaps {
  std::vector<Tap> taps;
  Expr outside;  // bool, or undefined
};

AxisTaps axis_taps(const Var& xo, int64_t in_len, int64_t out_len, double scale, double roi_start, double roi_end,
                   const ir::Attrs& attrs) {
  const std::string& mode = attrs.get_string("mode");
  const std::string& ctm = attrs.get_string("coordinate_transformation_mode");
  const std::string& nearest = attrs.get_string("nearest_mode");
  const double a = attrs.get_float("cubic_coeff_a");
  const bool exclude_outside = attrs.get_int("exclude_outside") != 0;
  const double out_width = scale * static_cast<double>(in_len);
  const double in_w = static_cast<double>(in_len);
  const tir::Type f64(DType::kF64);
  const Expr x = tir::cast(f64, xo);
  auto c = [&](double v) { return tir::make_const(f64, v); };
  AxisTaps result;
  Expr x_ori;
  if (ctm == "align_corners") {
    x_ori = out_width == 1 ? c(0) : x * c((in_w - 1) / (out_width - 1));
  } else if (ctm == "asymmetric") {
    x_ori = x / c(scale);
  } else if (ctm == "tf_crop_and_resize") {
    x_ori = out_width == 1 ? c((roi_end - roi_start) * (in_w - 1) / 2)
                           : x * c((roi_end - roi_start) * (in_w - 1)) / c(out_width - 1);
    x_ori = x_ori + c(roi_start * (in_w - 1));
    result.outside = x_ori < c(0) || x_ori > c(in_w - 1);
  } else if (ctm == "pytorch_half_pixel") {
    x_ori = out_width == 1 ? c(-0.5) : (x + c(0.5)) / c(scale) - c(0.5);
  } else if (ctm == "half_pixel_symmetric") {
    const double adjustment = static_cast<double>(out_len) / out_width;
    x_ori = c(in_w / 2 * (1 - adjustment)) + (x + c(0.5)) / c(scale) - c(0.5);
  } else {
    x_ori = (x + c(0.5)) / c(scale) - c(0.5);
  }
  const Expr fl = tir::floor(x_ori);
  const Expr integral = x_ori == fl;
  const Expr base = tir::cast(tir::kIndexType, fl) - tir::select(integral, Expr(1), Expr(0));
  const Expr r = tir::select(integral, c(1), x_ori - fl);
  std::vector<std::pair<int64_t, Expr>> taps;  // (offset from base, weight)
  if (attrs.get_int("antialias") != 0 && mode != "nearest" && scale < 1) {
    // The filter widened by 1/scale, normalized (see the reference).
    const double half = mode == "cubic" ? 2.0 : 1.0;
    const int64_t start = static_cast<int64_t>(std::floor(-half / scale)) + 1, n = 2 - 2 * start;
    Expr sum = c(0);
    for (int64_t j = 0; j < n; ++j) {
      const Expr t = tir::fabs((c(static_cast<double>(start + j)) - r) * c(scale));
      Expr w;
      if (mode == "cubic") {
        const Expr near = ((t * c(a + 2) - c(a + 3)) * t * t) + c(1);
        const Expr far = ((t * c(a) - c(5 * a)) * t + c(8 * a)) * t - c(4 * a);
        w = tir::select(t <= c(1), near, tir::select(t < c(2), far, c(0)));
      } else {
        w = tir::max(c(0), c(1) - t);
      }
      taps.push_back({start + j, w});
      sum = sum + w;
    }
    for (auto& [off, w] : taps) w = w / sum;
  } else if (mode == "cubic") {
    const Expr r1 = r + c(1), q = c(1) - r, q1 = q + c(1);
    taps = {{-1, ((r1 * c(a) - c(5 * a)) * r1 + c(8 * a)) * r1 - c(4 * a)},
            {0, ((r * c(a + 2) - c(a + 3)) * r * r) + c(1)},
            {1, ((q * c(a + 2) - c(a + 3)) * q * q) + c(1)},
            {2, ((q1 * c(a) - c(5 * a)) * q1 + c(8 * a)) * q1 - c(4 * a)}};
  } else if (mode == "linear") {
    taps = {{0, c(1) - r}, {1, r}};
  } else {
    Expr up;
    if (nearest == "round_prefer_floor") up = r > c(0.5);
    else if (nearest == "round_prefer_ceil") up = r >= c(0.5);
    else if (nearest == "ceil") up = tir::make_bool(true);
    else up = tir::make_bool(false);
    up = integral || up;
    taps = {{0, tir::select(up, c(0), c(1))}, {1, tir::select(up, c(1), c(0))}};
  }
  if (exclude_outside) {
    Expr sum = c(0);
    for (auto& [off, w] : taps) {
      const Expr idx = base + off;
      w = tir::select(idx < Expr(0) || idx >= Expr(in_len), c(0), w);
      sum = sum + w;
    }
    for (auto& [off, w] : taps) w = w / sum;
  }
  for (auto& [off, w] : taps) {
    result.taps.push_back({tir::min(tir::max(base + off, Expr(0)), Expr(in_len - 1)), w});
  }
  return result;
}

// The taps of output coordinate xo from its index and weight tables ([out, taps]).
AxisTaps table_taps(const std::vector<Tensor>& tables, const Var& xo) {
  AxisTaps result;
  for (int64_t j = 0; j < tables[0].shape()[1]; ++j) result.taps.push_back({tables[0]({xo, Expr(j)}), tables[1]({xo, Expr(j)})});
  return result;
}

ComputeResult resize_compute(const std::vector<Tensor>& in, const ir::Attrs& attrs,
                             const std::vector<ir::TensorType>& out, const LayoutHints&) {
  const Tensor x = in[0];
  const ir::Shape& is = x.shape();
  const ir::Shape& os = out[0].shape;
  const size_t rank = is.size();
  const auto& scales = attrs.get_floats("scales");
  const auto& roi = attrs.get_floats("roi");
  const std::string& ctm = attrs.get_string("coordinate_transformation_mode");
  const bool direct_nearest = attrs.get_string("mode") == "nearest" && attrs.get_int("exclude_outside") == 0;
  const DType dt = x.dtype();
  const double extrapolation = attrs.get_float("extrapolation_value");
  // Antialiased axes have many taps whose weights are normalized by their sum: their indices and
  // weights per output coordinate are computed once into small tables (parts "taps<d>").
  std::vector<std::vector<Tensor>> tables(rank);
  ComputeResult result;
  for (size_t d = 0; d < rank; ++d) {
    const double scale = scales.empty() ? static_cast<double>(os[d]) / static_cast<double>(is[d]) : scales[d];
    if (attrs.get_int("antialias") == 0 || attrs.get_string("mode") == "nearest" || !(scale < 1)) continue;
    const double rs = roi.empty() ? 0.0 : roi[d], re = roi.empty() ? 1.0 : roi[rank + d];
    const int64_t n = static_cast<int64_t>(axis_taps(Var("probe", tir::kIndexType), is[d], os[d], scale, rs, re, attrs).taps.size());
    for (int part = 0; part < 2; ++part) {
      tables[d].push_back(tir::compute(
          {os[d], n},
          [&](const std::vector<Var>& v) {
            const AxisTaps t = axis_taps(v[0], is[d], os[d], scale, rs, re, attrs);
            Expr value = part == 0 ? t.taps.back().index : t.taps.back().weight;
            for (int64_t j = n - 1; j-- > 0;) {
              value = tir::select(Expr(v[1]) == Expr(j), part == 0 ? t.taps[j].index : t.taps[j].weight, value);
            }
            return value;
          },
          "resize_taps" + std::to_string(d) + (part == 0 ? "_index" : "_weight")));
      result.parts["taps" + std::to_string(d) + (part == 0 ? "_index" : "_weight")] = tables[d].back();
    }
  }
  result.outputs = {tir::compute(
      os,
      [&](const std::vector<Var>& i) {
        std::vector<AxisTaps> axes(rank);
        std::vector<bool> resized(rank, false);
        Expr outside;
        for (size_t d = 0; d < rank; ++d) {
          const double scale = scales.empty() ? static_cast<double>(os[d]) / static_cast<double>(is[d]) : scales[d];
          resized[d] = is[d] != os[d] || scale != 1.0 || ctm == "tf_crop_and_resize";
          if (!resized[d]) continue;
          const double rs = roi.empty() ? 0.0 : roi[d], re = roi.empty() ? 1.0 : roi[rank + d];
          axes[d] = tables[d].empty() ? axis_taps(i[d], is[d], os[d], scale, rs, re, attrs) : table_taps(tables[d], i[d]);
          if (axes[d].outside.defined()) outside = outside.defined() ? (outside || axes[d].outside) : axes[d].outside;
        }
        Expr value;
        if (direct_nearest) {
          // One tap per axis: the one whose weight is 1.
          std::vector<Expr> idx;
          for (size_t d = 0; d < rank; ++d) {
            idx.push_back(resized[d] ? tir::select(axes[d].taps[1].weight > tir::make_const(tir::Type(DType::kF64), 0.5),
                                                   axes[d].taps[1].index, axes[d].taps[0].index)
                                     : Expr(i[d]));
          }
          value = x(idx);
        } else {
          // Sum over every combination of taps of the resized axes.
          std::vector<size_t> pick(rank, 0);
          Expr sum = tir::make_const(tir::Type(DType::kF64), 0);
          while (true) {
            std::vector<Expr> idx;
            Expr w = tir::make_const(tir::Type(DType::kF64), 1);
            for (size_t d = 0; d < rank; ++d) {
              if (!resized[d]) {
                idx.push_back(i[d]);
              } else {
                idx.push_back(axes[d].taps[pick[d]].index);
                w = w * axes[d].taps[pick[d]].weight;
              }
            }
            sum = sum + w * cast_to(DType::kF64, x(idx));
            size_t d = 0;
            for (; d < rank; ++d) {
              if (!resized[d]) continue;
              if (++pick[d] < axes[d].taps.size()) break;
              pick[d] = 0;
            }
            if (d == rank) break;
          }
          value = cast_to(dt, sum);
        }
        if (outside.defined()) value = tir::select(outside, constant(dt, extrapolation), value);
        return value;
      },
      "resize")};
  return result;
}
KILN_REGISTER_COMPUTE(resize, "resize", resize_compute);

}  // namespace
}  // namespace kiln::topi
