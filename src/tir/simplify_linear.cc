#include "simplify_linear.h"

#include <algorithm>
#include <tuple>

#include "kiln/tir/printer.h"

namespace kiln::tir::detail {

int64_t floor_div(int64_t a, int64_t b) {
  int64_t q = a / b;
  if ((a % b != 0) && ((a < 0) != (b < 0))) --q;
  return q;
}

int64_t floor_mod(int64_t a, int64_t b) { return a - floor_div(a, b) * b; }

namespace {

int64_t wrap_mul(int64_t a, int64_t b) {
  return static_cast<int64_t>(static_cast<uint64_t>(a) * static_cast<uint64_t>(b));
}
int64_t wrap_add(int64_t a, int64_t b) {
  return static_cast<int64_t>(static_cast<uint64_t>(a) + static_cast<uint64_t>(b));
}

void decompose(const Expr& e, int64_t scale, Linear* out);

// The variables of a product of i64 variables (v, v * w, (v * 2) * w ...) and its constant
// factor; false for anything else (a load, a sum, a division).
bool monomial_factors(const Expr& e, std::vector<Expr>* vars, int64_t* coeff) {
  int64_t c;
  if (e.as<Variable>()) {
    vars->push_back(e);
    return true;
  }
  if (const auto* m = e.as<Mul>()) {
    if (as_const_int(m->b, &c)) {
      *coeff = wrap_mul(*coeff, c);
      return monomial_factors(m->a, vars, coeff);
    }
    if (as_const_int(m->a, &c)) {
      *coeff = wrap_mul(*coeff, c);
      return monomial_factors(m->b, vars, coeff);
    }
    return monomial_factors(m->a, vars, coeff) && monomial_factors(m->b, vars, coeff);
  }
  return false;
}

// A product of index variables as one canonical term: the variables sorted by name (then by
// identity's first appearance), the constant factor pulled out. `batch * (seq * 4) * 8` and
// `seq * batch * 32` both give the term `batch * seq` with coefficient 32, so symbolic sizes
// (graph dimensions) that are equal compare equal. Other products stay atoms as they were.
bool decompose_monomial(const Expr& e, int64_t scale, Linear* out) {
  if (e.type() != kIndexType) return false;
  std::vector<Expr> vars;
  int64_t coeff = 1;
  if (!monomial_factors(e, &vars, &coeff) || vars.size() < 2) return false;
  std::stable_sort(vars.begin(), vars.end(),
                   [](const Expr& a, const Expr& b) { return a.as<Variable>()->name < b.as<Variable>()->name; });
  Expr term = vars[0];
  for (size_t i = 1; i < vars.size(); ++i) term = Mul::make(term, vars[i]);
  out->add_term(term, wrap_mul(scale, coeff));
  return true;
}

void decompose(const Expr& e, int64_t scale, Linear* out) {
  if (const auto* i = e.as<IntImm>()) {
    out->constant = wrap_add(out->constant, wrap_mul(i->value, scale));
    return;
  }
  if (const auto* a = e.as<Add>()) {
    decompose(a->a, scale, out);
    decompose(a->b, scale, out);
    return;
  }
  if (const auto* s = e.as<Sub>()) {
    decompose(s->a, scale, out);
    decompose(s->b, wrap_mul(scale, -1), out);
    return;
  }
  if (const auto* m = e.as<Mul>()) {
    int64_t c;
    if (as_const_int(m->b, &c)) return decompose(m->a, wrap_mul(scale, c), out);
    if (as_const_int(m->a, &c)) return decompose(m->b, wrap_mul(scale, c), out);
    if (decompose_monomial(e, scale, out)) return;
  }
  out->add_term(e, scale);
}

// Sort key: positive coefficients first, larger magnitudes first (outer loop variables of an
// index come first: i * 16 + j), then variables by name before other atoms by their text.
using TermKey = std::tuple<bool, int64_t, int, std::string>;
TermKey term_key(const LinearTerm& t) {
  const int64_t mag = t.coeff < 0 ? -t.coeff : t.coeff;
  if (const auto* v = t.term.as<Variable>()) return {t.coeff < 0, -mag, 0, v->name};
  return {t.coeff < 0, -mag, 1, to_string(t.term)};
}

}  // namespace

void Linear::add(const Linear& other, int64_t scale) {
  for (const LinearTerm& t : other.terms) add_term(t.term, wrap_mul(t.coeff, scale));
  constant = wrap_add(constant, wrap_mul(other.constant, scale));
}

void Linear::add_term(const Expr& term, int64_t coeff) {
  for (LinearTerm& t : terms) {
    if (equal(t.term, term)) {
      t.coeff = wrap_add(t.coeff, coeff);
      return;
    }
  }
  terms.push_back({term, coeff});
}

void Linear::normalize() {
  // floordiv(x, c) * (k*c) + floormod(x, c) * k  ->  x * k
  bool changed = true;
  while (changed) {
    changed = false;
    for (size_t i = 0; i < terms.size() && !changed; ++i) {
      const auto* mod = terms[i].term.as<FloorMod>();
      int64_t c;
      if (!mod || terms[i].coeff == 0 || !as_const_int(mod->b, &c)) continue;
      for (size_t j = 0; j < terms.size(); ++j) {
        const auto* div = terms[j].term.as<FloorDiv>();
        if (!div || !is_const_int(div->b, c) || !equal(div->a, mod->a)) continue;
        if (terms[j].coeff != wrap_mul(terms[i].coeff, c)) continue;
        const int64_t k = terms[i].coeff;
        const Expr x = mod->a;
        terms[i].coeff = 0;
        terms[j].coeff = 0;
        Linear lx = to_linear(x);
        add(lx, k);
        changed = true;
        break;
      }
    }
  }
  std::vector<LinearTerm> kept;
  for (LinearTerm& t : terms) {
    if (t.coeff != 0) kept.push_back(std::move(t));
  }
  std::vector<std::pair<TermKey, LinearTerm>> keyed;
  for (LinearTerm& t : kept) keyed.push_back({term_key(t), std::move(t)});
  std::stable_sort(keyed.begin(), keyed.end(), [](const auto& a, const auto& b) { return a.first < b.first; });
  terms.clear();
  for (auto& [k, t] : keyed) terms.push_back(std::move(t));
}

Linear to_linear(const Expr& e) {
  Linear l;
  l.type = e.type();
  decompose(e, 1, &l);
  return l;
}

Expr from_linear(const Linear& l) {
  Expr result;
  for (const LinearTerm& t : l.terms) {
    const int64_t mag = t.coeff < 0 ? -t.coeff : t.coeff;
    Expr scaled = mag == 1 ? t.term : Mul::make(t.term, make_int(mag, l.type));
    if (!result.defined()) {
      result = t.coeff < 0 ? Mul::make(t.term, make_int(t.coeff, l.type)) : scaled;
      if (t.coeff == -1) result = Sub::make(make_zero(l.type), t.term);
    } else {
      result = t.coeff < 0 ? Sub::make(result, scaled) : Add::make(result, scaled);
    }
  }
  if (!result.defined()) return make_int(l.constant, l.type);
  if (l.constant > 0) return Add::make(result, make_int(l.constant, l.type));
  if (l.constant < 0 && l.constant != INT64_MIN) return Sub::make(result, make_int(-l.constant, l.type));
  if (l.constant < 0) return Add::make(result, make_int(l.constant, l.type));
  return result;
}

}  // namespace kiln::tir::detail
