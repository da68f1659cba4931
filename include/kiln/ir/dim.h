// One dimension of a graph tensor's shape: a static size, or a symbolic integer expression over
// the graph's size variables (`batch`, `seq + past`, `floordiv(h + 31, 32) * 32`).
//
// The expression language is the loop IR's (kiln/tir/expr.h: i64 Vars, Add, Mul, FloorDiv, Min,
// Max, ...) and its one simplifier (kiln/tir/simplify.h): a graph dimension and a loop extent are
// the same kind of value, so lowering hands a dimension to a kernel unchanged (docs/dynamic.md).
// A symbolic Dim always holds a simplified expression, so two dimensions that are provably equal
// in the simplifier's canonical linear form compare equal with ==; a Dim whose expression folds
// to a constant is static. A static Dim costs what an int64_t did (no expression is allocated).
//
// The static-size bridge: a Dim converts implicitly to int64_t (and a Shape to
// std::vector<int64_t>) so that code that needs a concrete size (the reference executor, lowering,
// the memory planner, the ops whose shape inference is not symbolic yet) reads it as before. The
// conversion of a symbolic Dim throws UserError(kUnsupported) naming the dimension and the fix
// (pin it with --input-shape): a symbolic size never turns into a wrong number silently.
#ifndef KILN_IR_DIM_H_
#define KILN_IR_DIM_H_

#include <concepts>
#include <cstdint>
#include <map>
#include <optional>
#include <string>
#include <vector>

#include "kiln/support/error.h"
#include "kiln/tir/expr.h"

namespace kiln::ir {

// The range a size variable takes when nothing narrows it (`--dim NAME=LO..HI` does).
inline constexpr int64_t kDefaultDimMin = 1;
inline constexpr int64_t kDefaultDimMax = 65536;

// A graph's size variable: a named i64 variable and its declared inclusive range [lo, hi].
struct DimVar {
  tir::Var var;
  int64_t lo = kDefaultDimMin;
  int64_t hi = kDefaultDimMax;

  const std::string& name() const { return var.name(); }
  bool operator==(const DimVar& o) const { return var.same_as(o.var) && lo == o.lo && hi == o.hi; }
};

// A new size variable named `name` (an identifier: letters, digits, '_', not starting with a
// digit; KILN_ICHECKed).
DimVar make_dim_var(const std::string& name, int64_t lo = kDefaultDimMin, int64_t hi = kDefaultDimMax);
// True when `name` can name a size variable in the text form.
bool is_dim_var_name(const std::string& name);

// The static-size bridge's error: a symbolic dimension reached code that needs its size. A
// UserError(kUnsupported) whose subject names the dimension; a boundary that knows more (the
// importer's node) catches it to add where.
class SymbolicSizeError : public UserError {
 public:
  explicit SymbolicSizeError(const std::string& dim);
  const std::string& dim() const { return dim_; }

 private:
  std::string dim_;
};

class Dim {
 public:
  Dim() = default;  // static 0
  template <std::integral T>
  Dim(T value) : value_(static_cast<int64_t>(value)) {}  // NOLINT: a static size

  // The dimension `e` (an i64 scalar expression over size variables), simplified; static when it
  // folds to a constant.
  static Dim of(const tir::Expr& e);
  // The size variable itself.
  static Dim of(const DimVar& v) { return of(v.var); }

  bool is_static() const { return !expr_.defined(); }
  bool is_symbolic() const { return expr_.defined(); }
  // The static size (KILN_ICHECK: is_static()).
  int64_t value() const;
  // The static-size bridge (see the header comment): the size, or SymbolicSizeError when the
  // dimension is symbolic.
  operator int64_t() const;  // NOLINT
  // The expression: an i64 IntImm for a static dimension.
  tir::Expr expr() const;
  // "768", "seq", "seq + past", "floordiv(h + 31, 32) * 32"
  std::string to_string() const;

 private:
  int64_t value_ = 0;
  tir::Expr expr_;  // undefined: static
};

// Structural equality of the canonical forms: provable equality for sums of terms, static sizes
// by value. A symbolic Dim never equals an integer (it is not known to).
bool operator==(const Dim& a, const Dim& b);
template <std::integral T>
bool operator==(const Dim& a, T b) {
  return a.is_static() && a.value() == static_cast<int64_t>(b);
}

// Arithmetic on dimensions, folded when static and simplified when symbolic.
Dim dim_add(const Dim& a, const Dim& b);
Dim dim_sub(const Dim& a, const Dim& b);
Dim dim_mul(const Dim& a, const Dim& b);
Dim dim_floordiv(const Dim& a, const Dim& b);  // b > 0
Dim dim_ceildiv(const Dim& a, const Dim& b);   // b > 0
Dim dim_min(const Dim& a, const Dim& b);
Dim dim_max(const Dim& a, const Dim& b);

// a / b when b divides a for every value of the variables, provably: static sizes that divide,
// or a product whose factors include b's (`batch * seq * 768` / `seq * 768` is `batch`); nullopt
// otherwise (the quotient may exist for some values only). b != 0.
std::optional<Dim> dim_divide_exact(const Dim& a, const Dim& b);

// True when a and b differ for every value of the variables: both static and different, or their
// difference simplifies to a non-zero constant (seq + 1 vs seq).
bool dims_provably_differ(const Dim& a, const Dim& b);

// The value of `d` with the variables at `values` (keyed by variable name). UserError naming
// the variable when one has no value.
int64_t evaluate_dim(const Dim& d, const std::map<std::string, int64_t>& values);

// The size variables `d` uses, each once, in first-use order.
std::vector<tir::Var> dim_vars_of(const Dim& d);

}  // namespace kiln::ir

#endif  // KILN_IR_DIM_H_
