// `grid_sample` (ONNX GridSample, 2-D and 3-D): out[n, c, p...] samples x[n, c] at the location
// grid[n, p..., :] (normalized to [-1, 1]; component 0 is the last spatial axis, x/W). Modes
// nearest (round half to even), linear (2^S taps), cubic (4^S taps, a = -0.75); padding zeros
// (taps outside read 0), border (the coordinate and the taps clamped into the image) and
// reflection (reflected at the image border: the pixel edges without align_corners, the pixel
// centres with it), as ONNX's reference implementation. Computes in double.
#include <cmath>

#include "ir/ops/dtype_dispatch.h"
#include "ir/ops/op_util.h"

namespace kiln::ir::ops {
namespace {

struct Sampler {
  int mode;     // 0 nearest, 1 linear, 2 cubic
  int padding;  // 0 zeros, 1 border, 2 reflection
  bool align_corners;
};

int parse_mode(const std::string& m) {
  if (m == "nearest") return 0;
  if (m == "linear" || m == "bilinear") return 1;
  if (m == "cubic" || m == "bicubic") return 2;
  fail_attr("grid_sample", "mode", "is \"" + m + "\"", "expected nearest, linear or cubic");
}

int parse_padding(const std::string& p) {
  if (p == "zeros") return 0;
  if (p == "border") return 1;
  if (p == "reflection") return 2;
  fail_attr("grid_sample", "padding_mode", "is \"" + p + "\"", "expected zeros, border or reflection");
}

// Reflects x into [lo, hi] by the nearest border until inside (ONNX's reference).
double reflect(double x, double lo, double hi) {
  const double range = hi - lo;
  if (range <= 0) return lo;
  if (x < lo) {
    const double dx = lo - x;
    const double n = std::floor(dx / range), r = dx - n * range;
    return std::fmod(n, 2.0) == 0 ? lo + r : hi - r;
  }
  if (x > hi) {
    const double dx = x - hi;
    const double n = std::floor(dx / range), r = dx - n * range;
    return std::fmod(n, 2.0) == 0 ? hi - r : lo + r;
  }
  return x;
}

void cubic_coeffs(double t, double c[4]) {
  const double a = -0.75;
  const double x0 = t + 1, x1 = t, x2 = 1 - t, x3 = 2 - t;
  c[0] = ((a * x0 - 5 * a) * x0 + 8 * a) * x0 - 4 * a;
  c[1] = ((a + 2) * x1 - (a + 3)) * x1 * x1 + 1;
  c[2] = ((a + 2) * x2 - (a + 3)) * x2 * x2 + 1;
  c[3] = ((a * x3 - 5 * a) * x3 + 8 * a) * x3 - 4 * a;
}

}  // namespace

KILN_REGISTER_OP(grid_sample) {
  OpDef d;
  d.name = "grid_sample";
  d.doc = "samples x at the normalized locations of grid (ONNX GridSample, 2-D and 3-D)";
  d.min_inputs = d.max_inputs = 2;
  d.attrs = {{"mode", AttrKind::kString, AttrValue(std::string("linear")), "nearest, linear or cubic"},
             {"padding_mode", AttrKind::kString, AttrValue(std::string("zeros")), "zeros, border or reflection"},
             {"align_corners", AttrKind::kInt, AttrValue(int64_t{0}), "1: -1 and 1 are the corner pixels' centres"}};
  d.infer_type = [](const std::vector<TensorType>& in, const Attrs& attrs) {
    require_dtype("grid_sample", 0, "x", in[0].dtype, DTypeSet::kFloat);
    require_dtype("grid_sample", 1, "grid", in[1].dtype, DTypeSet::kFloat);
    parse_mode(attrs.get_string("mode"));
    parse_padding(attrs.get_string("padding_mode"));
    const int rank = in[0].rank();
    if (rank != 4 && rank != 5) fail_input("grid_sample", 0, "x", "x must be [N, C, H, W] or [N, C, D, H, W]");
    const int s = rank - 2;
    if (in[1].rank() != rank || in[1].shape[0] != in[0].shape[0] || in[1].shape.back() != s) {
      fail_input("grid_sample", 1, "grid", "grid must be [N, out spatial..., " + std::to_string(s) + "] with x's N");
    }
    Shape out = {in[0].shape[0], in[0].shape[1]};
    out.insert(out.end(), in[1].shape.begin() + 1, in[1].shape.end() - 1);
    return std::vector<TensorType>{{in[0].dtype, out}};
  };
  d.reference = [](const std::vector<NDArray>& in, const Attrs& attrs, const std::vector<TensorType>& out_types) {
    const Sampler sm{parse_mode(attrs.get_string("mode")), parse_padding(attrs.get_string("padding_mode")),
                     attrs.get_int("align_corners") != 0};
    const Shape& xs = in[0].shape();
    const int s = static_cast<int>(xs.size()) - 2;
    const std::vector<double> x = to_doubles(in[0]), grid = to_doubles(in[1]);
    NDArray out = NDArray::empty(out_types[0].dtype, out_types[0].shape);
    const Shape& os = out_types[0].shape;
    int64_t points = 1;  // output locations per image
    for (int k = 0; k < s; ++k) points *= os[2 + k];
    const int64_t n_img = xs[0], chans = xs[1];
    int64_t image = 1;
    for (int k = 0; k < s; ++k) image *= xs[2 + k];
    for (int64_t n = 0; n < n_img; ++n) {
      for (int64_t p = 0; p < points; ++p) {
        // Continuous coordinate per spatial axis k (axis 2 + k of x).
        double coord[3];
        for (int k = 0; k < s; ++k) {
          const double g = grid[(n * points + p) * s + (s - 1 - k)];
          const double len = static_cast<double>(xs[2 + k]);
          double c = sm.align_corners ? (g + 1) / 2 * (len - 1) : ((g + 1) * len - 1) / 2;
          if (sm.mode == 0) c = std::nearbyint(c);
          const double lo = sm.align_corners ? 0 : -0.5, hi = sm.align_corners ? len - 1 : len - 0.5;
          if (c < lo || c > hi) {
            if (sm.padding == 1) c = std::clamp(c, 0.0, len - 1);
            if (sm.padding == 2) c = reflect(c, lo, hi);
          }
          coord[k] = c;
        }
        // Taps per axis: positions and weights.
        int taps = sm.mode == 0 ? 1 : sm.mode == 1 ? 2 : 4;
        std::vector<int64_t> pos(static_cast<size_t>(s * taps));
        std::vector<double> w(static_cast<size_t>(s * taps));
        for (int k = 0; k < s; ++k) {
          const double c = coord[k];
          if (sm.mode == 0) {
            pos[k * taps] = static_cast<int64_t>(c);
            w[k * taps] = 1;
          } else if (sm.mode == 1) {
            const double f = std::floor(c);
            pos[k * taps] = static_cast<int64_t>(f);
            pos[k * taps + 1] = static_cast<int64_t>(f) + 1;
            w[k * taps] = 1 - (c - f);
            w[k * taps + 1] = c - f;
          } else {
            const double f = std::floor(c);
            double cc[4];
            cubic_coeffs(c - f, cc);
            for (int t = 0; t < 4; ++t) {
              pos[k * taps + t] = static_cast<int64_t>(f) - 1 + t;
              w[k * taps + t] = cc[t];
            }
          }
        }
        int combos = 1;
        for (int k = 0; k < s; ++k) combos *= taps;
        for (int64_t c = 0; c < chans; ++c) {
          double sum = 0;
          for (int combo = 0; combo < combos; ++combo) {
            double weight = 1;
            int64_t offset = 0;
            bool inside = true;
            for (int k = 0, rest = combo; k < s; ++k) {
              const int t = rest % taps;
              rest /= taps;
              const int64_t len = xs[2 + k];
              int64_t q = pos[k * taps + t];
              if (q < 0 || q >= len) {
                if (sm.padding == 0) inside = false;
                if (sm.padding == 1) q = std::clamp<int64_t>(q, 0, len - 1);
                if (sm.padding == 2) {
                  const double lo = sm.align_corners ? 0 : -0.5, hi = sm.align_corners ? len - 1 : len - 0.5;
                  q = std::clamp<int64_t>(static_cast<int64_t>(reflect(static_cast<double>(q), lo, hi)), 0, len - 1);
                }
              }
              weight *= w[k * taps + t];
              offset = offset * len + q;
            }
            if (inside) sum += weight * x[(n * chans + c) * image + offset];
          }
          out.set_from_double((n * chans + c) * points + p, sum);
        }
      }
    }
    return std::vector<NDArray>{out};
  };
  d.pattern = OpPattern::kInjective;
  return with_arity_check(std::move(d));
}

}  // namespace kiln::ir::ops
