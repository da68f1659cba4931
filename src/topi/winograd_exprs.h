// Expression builders shared by the Winograd computes (conv2d_winograd.cc in f32,
// int8_winograd.cc in integers): sums with the transform matrices' small constant coefficients,
// let-bound loads, and per-point select trees that the schedules' unrolling folds.
#ifndef KILN_SRC_TOPI_WINOGRAD_EXPRS_H_
#define KILN_SRC_TOPI_WINOGRAD_EXPRS_H_

#include <functional>
#include <string>
#include <vector>

#include "ir/ops/winograd.h"
#include "kiln/tir/expr.h"
#include "kiln/tir/tensor.h"
#include "topi/topi_util.h"

namespace kiln::topi::winograd {

using tir::DType;
using tir::Expr;
using tir::Var;

// sum_k coeff(k) * term(k) over k in [0, n), zero coefficients left out, +-1 as add/sub.
inline Expr linear_combination(int n, const std::function<double(int)>& coeff, const std::function<Expr(int)>& term,
                        DType dt) {
  Expr acc;
  for (int k = 0; k < n; ++k) {
    const double c = coeff(k);
    if (c == 0) continue;
    Expr t = term(k);
    if (!acc.defined()) {
      acc = c == 1 ? t : c == -1 ? -t : t * constant(dt, c);
    } else if (c == 1) {
      acc = acc + t;
    } else if (c == -1) {
      acc = acc - t;
    } else {
      acc = acc + t * constant(dt, c);
    }
  }
  return acc.defined() ? acc : constant(dt, 0);
}

// let v_k = values[k] in body(v): the per-point select trees below refer to the a*a loaded values
// through variables, so each load appears once per element (a tree of loads would be copied into
// every unrolled point: ~20x the expression size and lowering time).
inline Expr with_lets(const std::vector<Expr>& values, const std::string& prefix,
               const std::function<Expr(const std::vector<Expr>&)>& body) {
  std::vector<Var> vars;
  std::vector<Expr> refs;
  for (size_t k = 0; k < values.size(); ++k) {
    vars.emplace_back(prefix + std::to_string(k), values[k].type());
    refs.push_back(vars.back());
  }
  Expr out = body(refs);
  for (size_t k = values.size(); k-- > 0;) out = tir::Let::make(vars[k], values[k], out);
  return out;
}

// select(i == 0, f(0), select(i == 1, f(1), ... f(n - 1))).
inline Expr select_on(const Expr& i, int n, const std::function<Expr(int)>& f) {
  Expr out = f(n - 1);
  for (int k = n - 2; k >= 0; --k) out = tir::select(i == Expr(k), f(k), out);
  return out;
}

// Tile p of P = n * th * tw tiles: its batch, tile row and tile column.
struct TileIndex {
  Expr n, row, col;
};
inline TileIndex tile_index(const Expr& p, int64_t th, int64_t tw) {
  return {tir::floordiv(p, Expr(th * tw)), tir::floormod(tir::floordiv(p, Expr(tw)), Expr(th)), tir::floormod(p, Expr(tw))};
}

// (B^T d B)[e, nu] at the loop variables e, nu: a select over the a x a points (folded by the
// schedule's unrolling) of sums of the window's values d (row-major a x a, let-bound by the caller).
inline Expr input_transform(const ir::ops::WinogradMatrices& wm, const Expr& e_var, const Expr& nu_var,
                            const std::vector<Expr>& d, DType dt) {
  const int a = wm.alpha;
  return select_on(e_var, a, [&](int e) {
    return select_on(nu_var, a, [&](int nu) {
      // sum_s B^T[nu, s] * (sum_r B^T[e, r] d[r, s])
      return linear_combination(
          a, [&](int s) { return wm.BT(nu, s); },
          [&](int s) {
            return linear_combination(a, [&](int r) { return wm.BT(e, r); }, [&](int r) { return d[static_cast<size_t>(r * a + s)]; }, dt);
          },
          dt);
    });
  });
}

// The a*a batched-product values of output element i = (n, mo, oh, ow, o)'s tile:
// mt(e, nu, mo, p, o), row-major in (e, nu).
inline std::vector<Expr> tile_products(const tir::Tensor& mt, const std::vector<Var>& i, int64_t th, int64_t tw, int m, int a) {
  const Expr p = (i[0] * Expr(th) + tir::floordiv(i[2], Expr(m))) * Expr(tw) + tir::floordiv(i[3], Expr(m));
  std::vector<Expr> loads;
  for (int e = 0; e < a; ++e) {
    for (int nu = 0; nu < a; ++nu) loads.push_back(mt(Expr(e), Expr(nu), i[1], p, i[4]));
  }
  return loads;
}

// (A^T M A)[oh % m, ow % m]: a select over the position in the tile of sums of the tile's
// products mv (row-major a x a, let-bound by the caller).
inline Expr output_transform(const ir::ops::WinogradMatrices& wm, const Expr& oh, const Expr& ow, const std::vector<Expr>& mv,
                             DType dt) {
  const int a = wm.alpha, m = wm.m;
  return select_on(tir::floormod(oh, Expr(m)), m, [&](int r) {
    return select_on(tir::floormod(ow, Expr(m)), m, [&](int s) {
      // sum_nu A^T[s, nu] * (sum_e A^T[r, e] M[e, nu])
      return linear_combination(
          a, [&](int nu) { return wm.AT(s, nu); },
          [&](int nu) {
            return linear_combination(a, [&](int e) { return wm.AT(r, e); }, [&](int e) { return mv[static_cast<size_t>(e * a + nu)]; }, dt);
          },
          dt);
    });
  });
}

// The result of a Winograd compute for the kConv2dWinograd schedule template: the input
// transform v, the batched product mt (its anchor), the output y; the tile m and the input
// stage's vector (the channel block, or its words) as layout.
inline ComputeResult result(const tir::Tensor& v, const tir::Tensor& mt, const tir::Tensor& y, int m, int64_t ic_block) {
  ComputeResult r;
  r.schedule = ScheduleKind::kConv2dWinograd;
  r.parts["input"] = v;
  r.parts["anchor"] = mt;
  r.layout["wino_tile"] = m;
  r.layout["ic_block"] = ic_block;
  r.outputs = {y};
  return r;
}

}  // namespace kiln::topi::winograd

#endif  // KILN_SRC_TOPI_WINOGRAD_EXPRS_H_
