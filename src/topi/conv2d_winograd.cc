// Computes of the Winograd ops (src/ir/ops/conv2d_winograd.cc):
//   conv2d_winograd_nchwc  x [N, C/xb, H, W, xb], u [a, a, M/ob, C, ob] (a = m + 2), bias [M]?
//                          -> y [N, M/ob, OH, OW, ob], in four stages (schedule kConv2dWinograd):
//     xp        x zero-padded by pads and on to whole tiles (read_or; inlined into "input": a
//               separate padded copy measured 4-5% slower on 56x56x64 and 112x112x16);
//     "input"   v[e, nu, P, C] = (B^T d B)[e, nu] for every tile p (P = N*TH*TW tiles of m x m
//               outputs) and channel c, d the a x a window of xp; each point's sum is written out
//               term by term with B's non-zero entries (a select over (e, nu) that the schedule's
//               unrolling folds to one sum per point);
//     "anchor"  mt[e, nu, M/ob, P, ob] = sum_c v[e, nu, p, c] * u[e, nu, mo, c, o]: a batch of a*a
//               matrix products [P x C] x [C x M];
//     output    (not a part: inlined into the group's outputs) y[n, mo, h, w, o] = (A^T mt A)[h % m, w % m] (+ bias): a select over the position
//               inside the tile that the unrolled output loops fold. Elementwise consumers of a
//               fused group (residual add, relu) are inlined into it.
//   winograd_weight_transform  u[e, nu, mo, c, o] = sum_{kh, kw} G[e, kh] w[..] G[nu, kw]: a plain
//                          reduction (normally folded at compile time; the kernel exists for
//                          weights that are not constants).
// Values agree with the ops' double references within f32 Winograd rounding (tests/topi/
// conv2d_winograd_test.cc states the tolerance).
#include "ir/ops/winograd.h"
#include "kiln/topi/compute.h"
#include "topi/topi_util.h"
#include "topi/winograd_exprs.h"

namespace kiln::topi {
namespace {

using ir::DType;
using ir::ops::WinogradMatrices;
using winograd::select_on;
using winograd::with_lets;

ComputeResult conv2d_winograd_compute(const std::vector<Tensor>& in, const ir::Attrs& attrs,
                                      const std::vector<ir::TensorType>& out, const LayoutHints&) {
  const int m = static_cast<int>(attrs.get_int("tile"));
  const WinogradMatrices& wm = ir::ops::winograd_matrices(m);
  const int a = wm.alpha;
  const std::vector<int64_t>& pads = attrs.get_ints("pads");
  const Tensor x = in[0], u = in[1];
  const DType dt = out[0].dtype;
  const ir::Shape& xs = x.shape();
  const ir::Shape& os = out[0].shape;
  const int64_t n = xs[0], cb = xs[1], h = xs[2], w = xs[3], xb = xs[4], c = cb * xb;
  const int64_t mb = os[1], oh = os[2], ow = os[3], ob = os[4];
  const int64_t th = (oh + m - 1) / m, tw = (ow + m - 1) / m, tiles = n * th * tw;
  const int64_t pt = pads[0], pl = pads[1];

  const Tensor xp = tir::compute(
      {n, cb, th * m + 2, tw * m + 2, xb},
      [&](const std::vector<Var>& i) {
        return tir::read_or(x, {i[0], i[1], i[2] - pt, i[3] - pl, i[4]}, constant(dt, 0));
      },
      "wino_pack_x", {"n", "cb", "h", "w", "ci"});
  (void)h;
  (void)w;

  const Tensor v = tir::compute(
      {a, a, tiles, c},
      [&](const std::vector<Var>& i) {
        const winograd::TileIndex t = winograd::tile_index(i[2], th, tw);
        const Expr ccb = tir::floordiv(i[3], Expr(xb)), cci = tir::floormod(i[3], Expr(xb));
        std::vector<Expr> loads;
        for (int r = 0; r < a; ++r) {
          for (int s = 0; s < a; ++s) loads.push_back(xp(t.n, ccb, t.row * m + r, t.col * m + s, cci));
        }
        return with_lets(loads, "d", [&](const std::vector<Expr>& dv) { return winograd::input_transform(wm, i[0], i[1], dv, dt); });
      },
      "wino_input", {"e", "nu", "p", "c"});

  tir::IterVar rc = tir::reduce_axis(c, "rc");
  const Tensor mt = tir::compute(
      {a, a, mb, tiles, ob},
      [&](const std::vector<Var>& i) {
        return tir::sum(v(i[0], i[1], i[3], Expr(rc)) * u(i[0], i[1], i[2], Expr(rc), i[4]), {rc});
      },
      "wino_product", {"e", "nu", "mo", "p", "o"});

  const Tensor y = tir::compute(
      os,
      [&](const std::vector<Var>& i) {
        Expr val = with_lets(winograd::tile_products(mt, i, th, tw, m, a), "m", [&](const std::vector<Expr>& mv) {
          return winograd::output_transform(wm, i[2], i[3], mv, dt);
        });
        if (in.size() > 2) val = val + in[2](i[1] * Expr(ob) + i[4]);
        return val;
      },
      "conv2d_winograd", {"n", "mo", "oh", "ow", "o"});

  return winograd::result(v, mt, y, m, xb);
}
KILN_REGISTER_COMPUTE(conv2d_winograd_nchwc, "conv2d_winograd_nchwc", conv2d_winograd_compute);

ComputeResult weight_transform_compute(const std::vector<Tensor>& in, const ir::Attrs& attrs,
                                       const std::vector<ir::TensorType>& out, const LayoutHints&) {
  const WinogradMatrices& wm = ir::ops::winograd_matrices(static_cast<int>(attrs.get_int("tile")));
  const Tensor w = in[0];
  const int64_t ib = w.shape()[4];
  const DType dt = out[0].dtype;
  tir::IterVar rh = tir::reduce_axis(3, "rh"), rw = tir::reduce_axis(3, "rw");
  // G as a select table over (row, column).
  auto g = [&](const Expr& row, const Expr& col) {
    return select_on(row, wm.alpha, [&](int e) { return select_on(col, 3, [&](int k) { return constant(dt, wm.G(e, k)); }); });
  };
  const Tensor uu = tir::compute(
      out[0].shape,
      [&](const std::vector<Var>& i) {
        const Expr wv = w(i[2], tir::floordiv(i[3], Expr(ib)), Expr(rh), Expr(rw), tir::floormod(i[3], Expr(ib)), i[4]);
        return tir::sum(g(i[0], Expr(rh)) * wv * g(i[1], Expr(rw)), {rh, rw});
      },
      "winograd_weight_transform");
  ComputeResult r;
  r.schedule = ScheduleKind::kReduction;
  r.parts["anchor"] = uu;
  r.outputs = {uu};
  return r;
}
KILN_REGISTER_COMPUTE(winograd_weight_transform, "winograd_weight_transform", weight_transform_compute);

}  // namespace
}  // namespace kiln::topi
