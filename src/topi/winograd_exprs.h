// Expression builders shared by the Winograd computes (conv2d_winograd.cc in f32,
// int8_winograd.cc in integers): sums with the transform matrices' small constant coefficients,
// let-bound loads, and per-point select trees that the schedules' unrolling folds.
#ifndef KILN_SRC_TOPI_WINOGRAD_EXPRS_H_
#define KILN_SRC_TOPI_WINOGRAD_EXPRS_H_

#include <functional>
#include <string>
#include <vector>

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

}  // namespace kiln::topi::winograd

#endif  // KILN_SRC_TOPI_WINOGRAD_EXPRS_H_
