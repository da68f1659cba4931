// Winograd convolution ops (ConvertConvToWinograd makes them at -O3, docs/passes.md):
//   winograd_weight_transform  w [M/ob, C/ib, 3, 3, ib, ob] (OIHW{ib}i{ob}o, conv2d_nchwc's weights)
//                              -> u [alpha, alpha, M/ob, C, ob] = G g G^T per (output, input) channel
//                              pair; attribute tile (m = 2 or 4, alpha = m + 2). Folded at compile
//                              time; pattern opaque.
//   conv2d_winograd_nchwc      x [N, C/xb, H, W, xb], u (as above), bias [M]? -> y [N, M/ob, OH, OW, ob]:
//                              the stride-1, dilation-1 3x3 convolution with zero padding `pads`
//                              [top, left, bottom, right] whose transformed weights are u, computed
//                              by F(m x m, 3 x 3) over m x m output tiles (the last row/column of
//                              tiles may stick out of the output: those outputs are dropped).
//                              Pattern out_ewise_fusable.
// Reference implementations are plain loops in double (the transforms and the per-point products
// exactly as the definition), so with exact u they equal conv2d up to double rounding; with u
// rounded to f32 (a folded constant) the relative change is ~1e-7 (tested in
// tests/ir/ops/winograd_ops_test.cc against conv2d_nchwc).
#include <algorithm>

#include "ir/ops/dtype_dispatch.h"
#include "ir/ops/op_util.h"
#include "ir/ops/winograd.h"

namespace kiln::ir::ops {

const WinogradMatrices& winograd_matrices(int m) {
  static const WinogradMatrices f2 = [] {
    WinogradMatrices w;
    w.m = 2;
    w.alpha = 4;
    w.at = {1, 1, 1, 0,  //
            0, 1, -1, -1};
    w.g = {1, 0, 0,        //
           0.5, 0.5, 0.5,  //
           0.5, -0.5, 0.5,  //
           0, 0, 1};
    w.bt = {1, 0, -1, 0,  //
            0, 1, 1, 0,   //
            0, -1, 1, 0,  //
            0, 1, 0, -1};
    return w;
  }();
  static const WinogradMatrices f4 = [] {
    WinogradMatrices w;
    w.m = 4;
    w.alpha = 6;
    w.at = {1, 1, 1, 1, 1, 0,   //
            0, 1, -1, 2, -2, 0,  //
            0, 1, 1, 4, 4, 0,    //
            0, 1, -1, 8, -8, 1};
    w.g = {1.0 / 4, 0, 0,                    //
           -1.0 / 6, -1.0 / 6, -1.0 / 6,     //
           -1.0 / 6, 1.0 / 6, -1.0 / 6,      //
           1.0 / 24, 1.0 / 12, 1.0 / 6,      //
           1.0 / 24, -1.0 / 12, 1.0 / 6,     //
           0, 0, 1};
    w.bt = {4, 0, -5, 0, 1, 0,    //
            0, -4, -4, 1, 1, 0,   //
            0, 4, -4, -1, 1, 0,   //
            0, -2, -1, 2, 1, 0,   //
            0, 2, -1, -2, 1, 0,   //
            0, 4, 0, -5, 0, 1};
    return w;
  }();
  KILN_ICHECK(m == 2 || m == 4) << "Winograd tile " << m << " (2 or 4)";
  return m == 2 ? f2 : f4;
}

namespace {

constexpr const char* kWeightOp = "winograd_weight_transform";
constexpr const char* kConvOp = "conv2d_winograd_nchwc";

int tile_attr(const std::string& op, const Attrs& attrs) {
  const int64_t m = attrs.get_int("tile");
  if (m != 2 && m != 4) fail_attr(op, "tile", "is " + std::to_string(m) + ", expected 2 or 4", "F(2x2,3x3) or F(4x4,3x3)");
  return static_cast<int>(m);
}

std::vector<TensorType> infer_weight_transform(const std::vector<TensorType>& in, const Attrs& attrs) {
  const int m = tile_attr(kWeightOp, attrs);
  require_rank(kWeightOp, 0, "w", in[0], 6, "[M/ob, C/ib, 3, 3, ib, ob]");
  require_dtype(kWeightOp, 0, "w", in[0].dtype, DTypeSet::kFloat);
  if (in[0].dtype != DType::kF32 && in[0].dtype != DType::kF64) fail_unsupported_dtype(kWeightOp, 0, "w", in[0].dtype, "f32, f64");
  const Shape& w = in[0].shape;
  if (w[2] != 3 || w[3] != 3) fail_input(kWeightOp, 0, "w", "has a " + std::to_string(w[2]) + "x" + std::to_string(w[3]) + " kernel, expected 3x3");
  const int64_t alpha = m + 2;
  return {{in[0].dtype, {alpha, alpha, w[0], w[1] * w[4], w[5]}}};
}

std::vector<NDArray> reference_weight_transform(const std::vector<NDArray>& in, const Attrs& attrs,
                                                const std::vector<TensorType>& out_types) {
  const WinogradMatrices& wm = winograd_matrices(tile_attr(kWeightOp, attrs));
  const Shape& s = in[0].shape();
  const int64_t mb = s[0], cb = s[1], ib = s[4], ob = s[5], c = cb * ib, a = wm.alpha;
  const std::vector<double> w = to_doubles(in[0]);
  NDArray out = NDArray::empty(out_types[0].dtype, out_types[0].shape);
  float* out_f32 = out.dtype() == DType::kF32 ? out.mutable_data<float>().data() : nullptr;
  for (int64_t mo = 0; mo < mb; ++mo) {
    for (int64_t ci = 0; ci < c; ++ci) {
      for (int64_t o = 0; o < ob; ++o) {
        double g[3][3], gg[6][3];
        for (int kh = 0; kh < 3; ++kh) {
          for (int kw = 0; kw < 3; ++kw) {
            g[kh][kw] = w[static_cast<size_t>((((mo * cb + ci / ib) * 3 + kh) * 3 + kw) * ib * ob + (ci % ib) * ob + o)];
          }
        }
        for (int e = 0; e < a; ++e) {  // G g
          for (int kw = 0; kw < 3; ++kw) gg[e][kw] = wm.G(e, 0) * g[0][kw] + wm.G(e, 1) * g[1][kw] + wm.G(e, 2) * g[2][kw];
        }
        for (int e = 0; e < a; ++e) {  // (G g) G^T
          for (int nu = 0; nu < a; ++nu) {
            const double v = gg[e][0] * wm.G(nu, 0) + gg[e][1] * wm.G(nu, 1) + gg[e][2] * wm.G(nu, 2);
            const int64_t at = (((e * a + nu) * mb + mo) * c + ci) * ob + o;
            if (out_f32) {
              out_f32[at] = static_cast<float>(v);
            } else {
              out.set_from_double(at, v);
            }
          }
        }
      }
    }
  }
  return {out};
}

struct ConvShape {
  int64_t n, cb, h, w, xb, mb, ob, c, oh, ow;
};

ConvShape conv_shape(const std::vector<TensorType>& in, const Attrs& attrs, int m) {
  require_rank(kConvOp, 0, "x", in[0], 5, "[N, C/xb, H, W, xb]");
  require_rank(kConvOp, 1, "u", in[1], 5, "[alpha, alpha, M/ob, C, ob]");
  require_same_dtype(kConvOp, {in[0], in[1]}, {"x", "u"});
  if (in[0].dtype != DType::kF32 && in[0].dtype != DType::kF64) fail_unsupported_dtype(kConvOp, 0, "x", in[0].dtype, "f32, f64");
  const Shape& x = in[0].shape;
  const Shape& u = in[1].shape;
  ConvShape s{x[0], x[1], x[2], x[3], x[4], u[2], u[4], x[1] * x[4], 0, 0};
  if (u[0] != m + 2 || u[1] != m + 2) {
    fail_input(kConvOp, 1, "u", "has " + std::to_string(u[0]) + "x" + std::to_string(u[1]) + " points, tile " +
                                    std::to_string(m) + " needs " + std::to_string(m + 2) + "x" + std::to_string(m + 2));
  }
  if (u[3] != s.c) fail_input(kConvOp, 1, "u", "has " + std::to_string(u[3]) + " input channels, x has " + std::to_string(s.c));
  const std::vector<int64_t>& p = ints_of_size(kConvOp, attrs, "pads", 4);
  require_all_at_least(kConvOp, "pads", p, 0);
  s.oh = s.h + p[0] + p[2] - 2;
  s.ow = s.w + p[1] + p[3] - 2;
  if (s.oh < 1 || s.ow < 1) fail_input(kConvOp, 0, "x", "is smaller than the 3x3 kernel after padding");
  if (in.size() > 2 && (in[2].dtype != in[0].dtype || in[2].shape != Shape{s.mb * s.ob})) {
    fail_input(kConvOp, 2, "bias", "must be " + TensorType{in[0].dtype, {s.mb * s.ob}}.to_string() + ", is " +
                                       in[2].to_string());
  }
  return s;
}

std::vector<TensorType> infer_conv(const std::vector<TensorType>& in, const Attrs& attrs) {
  const ConvShape s = conv_shape(in, attrs, tile_attr(kConvOp, attrs));
  return {{in[0].dtype, {s.n, s.mb, s.oh, s.ow, s.ob}}};
}

std::vector<NDArray> reference_conv(const std::vector<NDArray>& in, const Attrs& attrs,
                                    const std::vector<TensorType>& out_types) {
  const int m = tile_attr(kConvOp, attrs);
  const WinogradMatrices& wm = winograd_matrices(m);
  std::vector<TensorType> types;
  for (const NDArray& a : in) types.push_back(a.type());
  const ConvShape s = conv_shape(types, attrs, m);
  const std::vector<int64_t>& pads = attrs.get_ints("pads");
  const int a = wm.alpha, aa = a * a;
  const int64_t th = (s.oh + m - 1) / m, tw = (s.ow + m - 1) / m, tiles = s.n * th * tw;
  const std::vector<double> x = to_doubles(in[0]), u = to_doubles(in[1]);
  const std::vector<double> bias = in.size() > 2 ? to_doubles(in[2]) : std::vector<double>(s.mb * s.ob, 0.0);
  // v[(tile * C + c) * aa + point] = B^T d B.
  std::vector<double> v(static_cast<size_t>(tiles * s.c * aa));
  for (int64_t t = 0; t < tiles; ++t) {
    const int64_t n = t / (th * tw), y0 = (t / tw) % th * m - pads[0], x0 = t % tw * m - pads[1];
    for (int64_t c = 0; c < s.c; ++c) {
      double d[6][6], bd[6][6];
      for (int i = 0; i < a; ++i) {
        for (int j = 0; j < a; ++j) {
          const int64_t yy = y0 + i, xx = x0 + j;
          const bool inside = yy >= 0 && yy < s.h && xx >= 0 && xx < s.w;
          d[i][j] = inside ? x[static_cast<size_t>((((n * s.cb + c / s.xb) * s.h + yy) * s.w + xx) * s.xb + c % s.xb)] : 0.0;
        }
      }
      for (int e = 0; e < a; ++e) {
        for (int j = 0; j < a; ++j) {
          double acc = 0;
          for (int i = 0; i < a; ++i) acc += wm.BT(e, i) * d[i][j];
          bd[e][j] = acc;
        }
      }
      for (int e = 0; e < a; ++e) {
        for (int nu = 0; nu < a; ++nu) {
          double acc = 0;
          for (int j = 0; j < a; ++j) acc += bd[e][j] * wm.BT(nu, j);
          v[static_cast<size_t>((t * s.c + c) * aa + e * a + nu)] = acc;
        }
      }
    }
  }
  NDArray out = NDArray::empty(out_types[0].dtype, out_types[0].shape);
  std::vector<double> mm(static_cast<size_t>(aa));
  for (int64_t t = 0; t < tiles; ++t) {
    const int64_t n = t / (th * tw), y0 = (t / tw) % th * m, x0 = t % tw * m;
    for (int64_t mo = 0; mo < s.mb; ++mo) {
      for (int64_t o = 0; o < s.ob; ++o) {
        std::fill(mm.begin(), mm.end(), 0.0);
        for (int64_t c = 0; c < s.c; ++c) {
          const double* vp = &v[static_cast<size_t>((t * s.c + c) * aa)];
          for (int k = 0; k < aa; ++k) mm[static_cast<size_t>(k)] += u[static_cast<size_t>(((k * s.mb + mo) * s.c + c) * s.ob + o)] * vp[k];
        }
        for (int i = 0; i < m; ++i) {
          for (int j = 0; j < m; ++j) {
            if (y0 + i >= s.oh || x0 + j >= s.ow) continue;
            double acc = 0;
            for (int e = 0; e < a; ++e) {
              for (int nu = 0; nu < a; ++nu) acc += wm.AT(i, e) * mm[static_cast<size_t>(e * a + nu)] * wm.AT(j, nu);
            }
            out.set_from_double((((n * s.mb + mo) * s.oh + y0 + i) * s.ow + x0 + j) * s.ob + o,
                                acc + bias[static_cast<size_t>(mo * s.ob + o)]);
          }
        }
      }
    }
  }
  return {out};
}

}  // namespace

KILN_REGISTER_OP(winograd_weight_transform) {
  OpDef d;
  d.name = kWeightOp;
  d.doc = "Winograd weight transform G g G^T of OIHW{ib}i{ob}o 3x3 weights, giving [alpha, alpha, M/ob, C, ob]";
  d.min_inputs = 1;
  d.max_inputs = 1;
  d.attrs = {{"tile", AttrKind::kInt, AttrValue(int64_t{4}), "output tile m of F(m x m, 3 x 3): 2 or 4"}};
  d.infer_type = infer_weight_transform;
  d.reference = reference_weight_transform;
  d.pattern = OpPattern::kOpaque;
  return with_arity_check(std::move(d));
}

KILN_REGISTER_OP(conv2d_winograd_nchwc) {
  OpDef d;
  d.name = kConvOp;
  d.doc = "stride-1 3x3 conv2d on NCHW{xb}c data by Winograd F(m x m, 3 x 3) with transformed weights, giving NCHW{ob}c";
  d.min_inputs = 2;
  d.max_inputs = 3;
  d.attrs = {{"pads", AttrKind::kInts, AttrValue(std::vector<int64_t>{0, 0, 0, 0}), "[top, left, bottom, right]"},
             {"tile", AttrKind::kInt, AttrValue(int64_t{4}), "output tile m of F(m x m, 3 x 3): 2 or 4"}};
  d.infer_type = infer_conv;
  d.reference = reference_conv;
  d.pattern = OpPattern::kOutEWiseFusable;
  return with_arity_check(std::move(d));
}

}  // namespace kiln::ir::ops
