// Loop-IR passes used by lowering (each a free function with its contract; the mutators are
// private to their .cc files).
#ifndef KILN_TIR_TRANSFORM_H_
#define KILN_TIR_TRANSFORM_H_

#include <cstdint>

#include "kiln/tir/stmt.h"

namespace kiln::tir {

// Loop partitioning for split tails. A non-parallel For of constant extent E whose body holds
// guards (IfThenElse) on its variable is cut at the largest P such that the guards are provably
// true for iterations [0, P): the main loop [0, P) loses its guards (so its inner loops can be
// vectorized), the tail [P, E) keeps them. A loop whose whole body is `if (v < K)` with constant
// K is shortened to K iterations. Run after simplify and before vectorize_loops.
Stmt partition_tails(const Stmt& s);

// Turns each For of kind kVectorized with a constant extent n into vector code: the loop variable
// becomes Ramp(min, 1, n), scalars meeting vectors are broadcast, loads and stores become vector
// loads and stores. A loop whose body cannot be widened (a condition or a loop bound that depends
// on the vectorized variable, an Allocate inside, a store of a vector to a scalar index) is kept
// as a serial loop (logged at debug level), except a body that is one bounds guard `if (c) S`
// with c a conjunction of comparisons affine in the variable (a split's partial last tile): that
// loop is versioned, `if (c at the first and last lane) { S widened } else { the serial loop }`.
Stmt vectorize_loops(const Stmt& s);

// Replaces each For of kind kUnrolled with a constant extent <= max_extent by copies of its body;
// longer or non-constant ones become serial loops.
Stmt unroll_loops(const Stmt& s, int64_t max_extent = 64);

// Throws UserError (kUnsupported) when a parallel loop is nested inside another parallel loop.
void check_parallel_nesting(const Stmt& s);

}  // namespace kiln::tir

#endif  // KILN_TIR_TRANSFORM_H_
