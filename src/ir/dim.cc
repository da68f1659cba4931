// Dim and DimVar (see kiln/ir/dim.h).
#include "kiln/ir/dim.h"

#include <algorithm>
#include <cctype>
#include <unordered_set>

#include "kiln/support/error.h"
#include "kiln/tir/interval.h"
#include "kiln/tir/ir_visitor.h"
#include "kiln/tir/printer.h"
#include "kiln/tir/simplify.h"

namespace kiln::ir {
namespace {

Dim fold(const tir::Expr& e) { return Dim::of(e); }

class VarCollector : public tir::IRVisitor {
 public:
  std::vector<tir::Var> vars;

 protected:
  void visit(const tir::Variable* v) override {
    if (seen_.insert(v).second) vars.push_back(tir::Var(v));
  }

 private:
  std::unordered_set<const tir::Variable*> seen_;
};

}  // namespace

bool is_dim_var_name(const std::string& name) {
  if (name.empty() || std::isdigit(static_cast<unsigned char>(name[0]))) return false;
  for (char c : name) {
    if (!std::isalnum(static_cast<unsigned char>(c)) && c != '_') return false;
  }
  return true;
}

DimVar make_dim_var(const std::string& name, int64_t lo, int64_t hi) {
  KILN_ICHECK(is_dim_var_name(name)) << "size variable name '" << name << "' is not an identifier";
  KILN_ICHECK(0 <= lo && lo <= hi) << "size variable '" << name << "' with range " << lo << ".." << hi;
  return DimVar{tir::Var(name, tir::kIndexType), lo, hi};
}

Dim Dim::of(const tir::Expr& e) {
  KILN_ICHECK(e.defined() && e.type() == tir::kIndexType) << "a dimension must be an i64 scalar expression";
  tir::Expr s = tir::simplify(e);
  int64_t v = 0;
  if (tir::as_const_int(s, &v)) return Dim(v);
  Dim d;
  d.expr_ = std::move(s);
  return d;
}

int64_t Dim::value() const {
  KILN_ICHECK(is_static()) << "value() of the symbolic dimension " << to_string();
  return value_;
}

SymbolicSizeError::SymbolicSizeError(const std::string& dim)
    : UserError(UserErrorKind::kUnsupported, "symbolic dimension '" + dim + "'",
                "this step needs a static size (dynamic shapes reach only part of the compiler yet)",
                "pin the dimension with --input-shape (docs/dynamic.md lists what runs symbolically)"),
      dim_(dim) {}

Dim::operator int64_t() const {
  if (is_static()) return value_;
  throw SymbolicSizeError(to_string());
}

tir::Expr Dim::expr() const { return is_static() ? tir::make_int(value_) : expr_; }

std::string Dim::to_string() const { return is_static() ? std::to_string(value_) : tir::to_string(expr_); }

bool operator==(const Dim& a, const Dim& b) {
  if (a.is_static() != b.is_static()) return false;
  if (a.is_static()) return a.value() == b.value();
  return tir::equal(a.expr(), b.expr());
}

Dim dim_add(const Dim& a, const Dim& b) {
  if (a.is_static() && b.is_static()) return Dim(a.value() + b.value());
  return fold(a.expr() + b.expr());
}
Dim dim_sub(const Dim& a, const Dim& b) {
  if (a.is_static() && b.is_static()) return Dim(a.value() - b.value());
  return fold(a.expr() - b.expr());
}
Dim dim_mul(const Dim& a, const Dim& b) {
  if (a.is_static() && b.is_static()) return Dim(a.value() * b.value());
  return fold(a.expr() * b.expr());
}
Dim dim_floordiv(const Dim& a, const Dim& b) {
  KILN_ICHECK(b.is_symbolic() || b.value() > 0) << "dimension divided by " << b.to_string();
  if (a.is_static() && b.is_static()) {
    const int64_t q = a.value() / b.value();
    return Dim(q * b.value() > a.value() ? q - 1 : q);
  }
  return fold(tir::floordiv(a.expr(), b.expr()));
}
Dim dim_ceildiv(const Dim& a, const Dim& b) { return dim_floordiv(dim_sub(dim_add(a, b), Dim(1)), b); }
Dim dim_min(const Dim& a, const Dim& b) {
  if (a.is_static() && b.is_static()) return Dim(std::min(a.value(), b.value()));
  return fold(tir::min(a.expr(), b.expr()));
}
Dim dim_max(const Dim& a, const Dim& b) {
  if (a.is_static() && b.is_static()) return Dim(std::max(a.value(), b.value()));
  return fold(tir::max(a.expr(), b.expr()));
}

namespace {

// `e` as a constant times a list of non-constant factors (through nested Muls).
void flatten_product(const tir::Expr& e, int64_t* coefficient, std::vector<tir::Expr>* factors) {
  int64_t v = 0;
  if (tir::as_const_int(e, &v)) {
    *coefficient *= v;
  } else if (const auto* m = e.as<tir::Mul>()) {
    flatten_product(m->a, coefficient, factors);
    flatten_product(m->b, coefficient, factors);
  } else {
    factors->push_back(e);
  }
}

}  // namespace

std::optional<Dim> dim_divide_exact(const Dim& a, const Dim& b) {
  KILN_ICHECK(!(b == 0)) << "dimension " << a.to_string() << " divided by 0";
  if (a.is_static() && b.is_static()) {
    if (a.value() % b.value() != 0) return std::nullopt;
    return Dim(a.value() / b.value());
  }
  // The candidate: a's factors without b's, the coefficients divided. It is checked by
  // multiplying back, so the factor matching only has to find it, not prove it.
  int64_t ca = 1, cb = 1;
  std::vector<tir::Expr> fa, fb;
  flatten_product(a.expr(), &ca, &fa);
  flatten_product(b.expr(), &cb, &fb);
  if (cb == 0 || ca % cb != 0) return std::nullopt;
  for (const tir::Expr& f : fb) {
    auto it = std::find_if(fa.begin(), fa.end(), [&](const tir::Expr& g) { return tir::equal(f, g); });
    if (it == fa.end()) return std::nullopt;
    fa.erase(it);
  }
  tir::Expr q = tir::make_int(ca / cb);
  for (const tir::Expr& f : fa) q = q * f;
  const Dim quotient = Dim::of(q);
  if (!(dim_mul(quotient, b) == a)) return std::nullopt;
  return quotient;
}

bool dims_provably_differ(const Dim& a, const Dim& b) {
  const Dim diff = dim_sub(a, b);
  return diff.is_static() && diff.value() != 0;
}

std::vector<tir::Var> dim_vars_of(const Dim& d) {
  if (d.is_static()) return {};
  VarCollector c;
  c.visit_expr(d.expr());
  return c.vars;
}

int64_t evaluate_dim(const Dim& d, const std::map<std::string, int64_t>& values) {
  if (d.is_static()) return d.value();
  tir::VarBounds bounds;
  for (const tir::Var& v : dim_vars_of(d)) {
    auto it = values.find(v.name());
    if (it == values.end()) {
      throw UserError(UserErrorKind::kInvalidArgument, "size variable '" + v.name() + "'",
                      "has no value (needed by the dimension " + d.to_string() + ")");
    }
    bounds[v.node()] = tir::Interval::point(it->second);
  }
  const tir::Interval r = tir::bound_of(d.expr(), bounds);
  KILN_ICHECK(r.is_point()) << "the dimension " << d.to_string() << " does not evaluate to one value";
  return r.lo;
}

}  // namespace kiln::ir
