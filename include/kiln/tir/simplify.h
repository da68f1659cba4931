// The arithmetic simplifier.
//
// Integer scalar expressions are put in a canonical linear form: sum of coefficient * term plus a
// constant, terms ordered (variables by name, then other terms), constants folded, like terms
// merged (x - x -> 0). Division and modulus by a positive constant split the linear form into the
// part divisible by the constant and a remainder whose bounds (from interval analysis of loop
// variables) decide the result: (i*16 + j) / 16 -> i and (i*16 + j) % 16 -> j when 0 <= j < 16.
// Comparisons, min and max are decided from the bounds of the difference of their operands.
// Floats are only constant folded (plus x*1 -> x); no reassociation.
// Statement simplification learns loop-variable ranges from enclosing For loops, drops loops of
// extent 0, replaces loops of extent 1 by their body, and removes IfThenElse branches whose
// condition is decided. The full rule list is in docs/tir.md.
#ifndef KILN_TIR_SIMPLIFY_H_
#define KILN_TIR_SIMPLIFY_H_

#include "kiln/tir/interval.h"
#include "kiln/tir/stmt.h"

namespace kiln::tir {

Expr simplify(const Expr& e, const VarBounds& bounds = {});
Stmt simplify(const Stmt& s, const VarBounds& bounds = {});

// True when `cond` simplifies to true under `bounds`.
bool can_prove(const Expr& cond, const VarBounds& bounds = {});

}  // namespace kiln::tir

#endif  // KILN_TIR_SIMPLIFY_H_
