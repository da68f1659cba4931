// Interval (bound) analysis of integer expressions: the range [lo, hi] (inclusive) that an
// expression can take given the ranges of the variables it uses. Used by the simplifier to drop
// guards and fold blocked-layout index arithmetic, and by lowering's bound inference.
#ifndef KILN_TIR_INTERVAL_H_
#define KILN_TIR_INTERVAL_H_

#include <cstdint>
#include <limits>
#include <unordered_map>

#include "kiln/tir/expr.h"

namespace kiln::tir {

struct Interval {
  static constexpr int64_t kNegInf = std::numeric_limits<int64_t>::min();
  static constexpr int64_t kPosInf = std::numeric_limits<int64_t>::max();
  int64_t lo = kNegInf;  // kNegInf: unbounded below
  int64_t hi = kPosInf;  // kPosInf: unbounded above

  static Interval everything() { return {}; }
  static Interval point(int64_t v) { return {v, v}; }
  static Interval range(int64_t lo, int64_t hi) { return {lo, hi}; }
  bool has_lo() const { return lo != kNegInf; }
  bool has_hi() const { return hi != kPosInf; }
  bool is_point() const { return has_lo() && lo == hi; }
  // Smallest interval containing both.
  static Interval hull(const Interval& a, const Interval& b);
  bool operator==(const Interval&) const = default;
};

// Ranges of variables, keyed by identity.
using VarBounds = std::unordered_map<const Variable*, Interval>;

// The interval of an integer (or bool, as 0/1) expression; `everything()` where unknown. For
// vectors, the hull over all lanes.
Interval bound_of(const Expr& e, const VarBounds& bounds);

}  // namespace kiln::tir

#endif  // KILN_TIR_INTERVAL_H_
