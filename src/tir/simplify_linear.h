// Private to the simplifier: integer scalar expressions as linear forms
// sum(coeff_i * term_i) + constant, with deterministic term order.
#ifndef KILN_SRC_TIR_SIMPLIFY_LINEAR_H_
#define KILN_SRC_TIR_SIMPLIFY_LINEAR_H_

#include <vector>

#include "kiln/tir/expr.h"

namespace kiln::tir::detail {

struct LinearTerm {
  Expr term;  // a non-constant atom: a variable, a floordiv, a load, a product of non-constants ...
  int64_t coeff = 0;
};

struct Linear {
  Type type;
  std::vector<LinearTerm> terms;
  int64_t constant = 0;

  bool is_constant() const { return terms.empty(); }
  // Adds `scale` times `other` (same type).
  void add(const Linear& other, int64_t scale);
  void add_term(const Expr& term, int64_t coeff);
  // Merges like terms, drops zero coefficients, folds floordiv(x, c) * c + floormod(x, c) into x,
  // and sorts the terms (positive before negative coefficients, larger magnitudes first, then
  // variables by name before other terms by their text).
  void normalize();
};

// Decomposes an (already simplified) integer scalar expression.
Linear to_linear(const Expr& e);
// Rebuilds the expression: `i * 16 + j - 3`.
Expr from_linear(const Linear& l);

int64_t floor_div(int64_t a, int64_t b);
int64_t floor_mod(int64_t a, int64_t b);

}  // namespace kiln::tir::detail

#endif  // KILN_SRC_TIR_SIMPLIFY_LINEAR_H_
