// grid_sample (src/ir/ops/grid_sample.cc) as two injective stages: the sampling coordinate of
// each output location and spatial axis from the grid (f64, as the reference: unnormalize, round
// half to even for nearest, clamp or reflect out-of-image coordinates; materialized, part
// "coord"), then per output element the taps of the mode
// (1, 2 or 4 per axis) with their weights, and the weighted sum over every tap combination; a tap
// outside the image reads 0 (zeros: read_or) or the clamped / reflected pixel.
#include "kiln/topi/compute.h"
#include "topi/topi_util.h"

namespace kiln::topi {
namespace {

using ir::DType;

// ONNX's reflection into [lo, hi] (see the reference), in f64 expressions.
Expr reflect(const Expr& x, double lo, double hi) {
  const double range = hi - lo;
  if (range <= 0) return constant(DType::kF64, lo);
  auto parity_even = [](const Expr& n) { return n - tir::floor(n * 0.5) * 2.0 == constant(DType::kF64, 0.0); };
  const Expr dlo = constant(DType::kF64, lo) - x, dhi = x - constant(DType::kF64, hi);
  const Expr nlo = tir::floor(dlo * (1.0 / range)), nhi = tir::floor(dhi * (1.0 / range));
  const Expr rlo = dlo - nlo * range, rhi = dhi - nhi * range;
  const Expr below = tir::select(parity_even(nlo), constant(DType::kF64, lo) + rlo, constant(DType::kF64, hi) - rlo);
  const Expr above = tir::select(parity_even(nhi), constant(DType::kF64, hi) - rhi, constant(DType::kF64, lo) + rhi);
  return tir::select(x < constant(DType::kF64, lo), below, tir::select(x > constant(DType::kF64, hi), above, x));
}

// Round half to even.
Expr round_even(const Expr& x) {
  const Expr f = tir::floor(x), d = x - f;
  const Expr f_odd = f - tir::floor(f * 0.5) * 2.0;  // 0 or 1
  return tir::select(d < constant(DType::kF64, 0.5), f,
                     tir::select(d > constant(DType::kF64, 0.5), f + 1.0, f + f_odd));
}

void cubic_weights(const Expr& t, Expr w[4]) {
  const double a = -0.75;
  const Expr x0 = t + 1.0, x1 = t, x2 = constant(DType::kF64, 1.0) - t, x3 = constant(DType::kF64, 2.0) - t;
  w[0] = ((x0 * a - 5 * a) * x0 + 8 * a) * x0 - 4 * a;
  w[1] = ((x1 * (a + 2) - (a + 3)) * x1) * x1 + 1.0;
  w[2] = ((x2 * (a + 2) - (a + 3)) * x2) * x2 + 1.0;
  w[3] = ((x3 * a - 5 * a) * x3 + 8 * a) * x3 - 4 * a;
}

ComputeResult grid_sample_compute(const std::vector<Tensor>& in, const ir::Attrs& attrs,
                                  const std::vector<ir::TensorType>& out, const LayoutHints&) {
  const Tensor x = in[0], grid = in[1];
  const std::string& mode = attrs.get_string("mode");
  const std::string& padding = attrs.get_string("padding_mode");
  const bool align = attrs.get_int("align_corners") != 0;
  const int m = mode == "nearest" ? 0 : (mode == "linear" || mode == "bilinear") ? 1 : 2;
  const int pad = padding == "zeros" ? 0 : padding == "border" ? 1 : 2;
  const size_t s = x.shape().size() - 2;
  const int taps = m == 0 ? 1 : m == 1 ? 2 : 4;
  // The sampling coordinate of every output location and spatial axis, computed once (a
  // materialized stage: the taps and weights below read it many times).
  ir::Shape cshape = {x.shape()[0]};
  for (size_t k = 0; k < s; ++k) cshape.push_back(out[0].shape[2 + k]);
  cshape.push_back(static_cast<int64_t>(s));
  const Tensor coord = tir::compute(
      cshape,
      [&](const std::vector<Var>& i) {
        Expr value;
        for (size_t k = s; k-- > 0;) {
          std::vector<Expr> gidx(i.begin(), i.begin() + static_cast<long>(s + 1));
          gidx.push_back(Expr(static_cast<int64_t>(s - 1 - k)));
          const Expr g = cast_to(DType::kF64, grid(gidx));
          const double len = static_cast<double>(x.shape()[2 + k]);
          Expr c = align ? (g + 1.0) * (0.5 * (len - 1)) : ((g + 1.0) * len - 1.0) * 0.5;
          if (m == 0) c = round_even(c);
          const double lo = align ? 0 : -0.5, hi = align ? len - 1 : len - 0.5;
          if (pad == 1) {
            const Expr outside = c < constant(DType::kF64, lo) || c > constant(DType::kF64, hi);
            c = tir::select(outside, tir::min(tir::max(c, constant(DType::kF64, 0.0)), constant(DType::kF64, len - 1)), c);
          }
          if (pad == 2) c = reflect(c, lo, hi);
          value = value.defined() ? tir::select(Expr(i[s + 1]) == Expr(static_cast<int64_t>(k)), c, value) : c;
        }
        return value;
      },
      "grid_sample_coord");
  ComputeResult result = injective_result(tir::compute(
      out[0].shape,
      [&](const std::vector<Var>& i) {
        std::vector<std::vector<Expr>> pos(s), weight(s);
        for (size_t k = 0; k < s; ++k) {
          std::vector<Expr> cidx = {i[0]};
          for (size_t j = 0; j < s; ++j) cidx.push_back(i[2 + j]);
          cidx.push_back(Expr(static_cast<int64_t>(k)));
          const Expr c = coord(cidx);
          const double len = static_cast<double>(x.shape()[2 + k]);
          const double lo = align ? 0 : -0.5, hi = align ? len - 1 : len - 0.5;
          const Expr f = m == 0 ? c : tir::floor(c);
          const Expr base = cast_to(DType::kI64, f);
          if (m == 0) {
            pos[k] = {base};
            weight[k] = {constant(DType::kF64, 1.0)};
          } else if (m == 1) {
            pos[k] = {base, base + 1};
            weight[k] = {constant(DType::kF64, 1.0) - (c - f), c - f};
          } else {
            Expr w[4];
            cubic_weights(c - f, w);
            pos[k] = {base - 1, base, base + 1, base + 2};
            weight[k] = {w[0], w[1], w[2], w[3]};
          }
          // Taps outside the image: border clamps, reflection reflects (integer taps stay integer).
          const int64_t n = x.shape()[2 + k];
          for (Expr& p : pos[k]) {
            if (pad == 1) p = tir::min(tir::max(p, Expr(int64_t{0})), Expr(n - 1));
            if (pad == 2) {
              const Expr r = cast_to(DType::kI64, reflect(cast_to(DType::kF64, p), lo, hi));
              p = tir::min(tir::max(r, Expr(int64_t{0})), Expr(n - 1));
            }
          }
        }
        int combos = 1;
        for (size_t k = 0; k < s; ++k) combos *= taps;
        Expr sum;
        for (int combo = 0; combo < combos; ++combo) {
          std::vector<Expr> idx = {i[0], i[1]};
          Expr w;
          for (size_t k = 0, rest = static_cast<size_t>(combo); k < s; ++k) {
            const size_t t = rest % static_cast<size_t>(taps);
            rest /= static_cast<size_t>(taps);
            idx.push_back(pos[k][t]);
            w = w.defined() ? w * weight[k][t] : weight[k][t];
          }
          const Expr v = cast_to(DType::kF64, tir::read_or(x, idx, constant(x.dtype(), 0.0))) * w;
          sum = sum.defined() ? sum + v : v;
        }
        return cast_to(x.dtype(), sum);
      },
      "grid_sample"));
  result.parts["coord"] = coord;
  return result;
}
KILN_REGISTER_COMPUTE(grid_sample, "grid_sample", grid_sample_compute);

}  // namespace
}  // namespace kiln::topi
