// The simplifier: a mutator that rewrites bottom-up, keeping the ranges of the variables in scope
// (loop variables from For, Let/LetStmt bindings) for interval analysis.
#include "kiln/tir/simplify.h"

#include <cmath>
#include <numeric>

#include "kiln/support/error.h"
#include "kiln/tir/ir_mutator.h"
#include "simplify_linear.h"

namespace kiln::tir {
namespace {

using detail::floor_div;
using detail::floor_mod;
using detail::from_linear;
using detail::Linear;
using detail::to_linear;

bool is_int_scalar(const Type& t) { return t.is_scalar() && t.is_int_or_uint(); }

bool as_float_const(const Expr& e, double* v) {
  if (const auto* f = e.as<FloatImm>()) {
    *v = f->value;
    return true;
  }
  return false;
}

class Simplifier : public IRMutator {
 public:
  explicit Simplifier(const VarBounds& b) : bounds_(b) {}

  // Returns the input itself when the result is structurally the same, so simplifying
  // simplified IR changes nothing (and callers can test same_as).
  Expr mutate(const Expr& e) override {
    Expr r = IRMutator::mutate(e);
    return (!r.same_as(e) && equal(r, e)) ? e : r;
  }
  using IRMutator::mutate;

 protected:
  Interval bound(const Expr& e) { return bound_of(e, bounds_); }

  // Canonical linear form of an integer scalar expression, with floordiv/floormod of constants.
  Expr canonical(const Linear& l) {
    Linear n = l;
    n.normalize();
    return from_linear(n);
  }

  Expr visit(const Add* op) override {
    Expr a = mutate(op->a), b = mutate(op->b);
    if (is_int_scalar(a.type())) {
      Linear l = to_linear(a);
      l.add(to_linear(b), 1);
      return canonical(l);
    }
    if (Expr v = vector_arith(IRNodeKind::kAdd, a, b); v.defined()) return v;
    if (Expr f = fold_float(IRNodeKind::kAdd, a, b); f.defined()) return f;
    return same(op, a, b) ? Expr(op) : Add::make(a, b);
  }

  Expr visit(const Sub* op) override {
    Expr a = mutate(op->a), b = mutate(op->b);
    if (is_int_scalar(a.type())) {
      Linear l = to_linear(a);
      l.add(to_linear(b), -1);
      return canonical(l);
    }
    if (Expr v = vector_arith(IRNodeKind::kSub, a, b); v.defined()) return v;
    if (Expr f = fold_float(IRNodeKind::kSub, a, b); f.defined()) return f;
    return same(op, a, b) ? Expr(op) : Sub::make(a, b);
  }

  Expr visit(const Mul* op) override {
    Expr a = mutate(op->a), b = mutate(op->b);
    if (is_int_scalar(a.type())) {
      int64_t c;
      Linear l;
      if (as_const_int(b, &c)) {
        l = to_linear(a);
        Linear scaled;
        scaled.type = l.type;
        scaled.add(l, c);
        return canonical(scaled);
      }
      if (as_const_int(a, &c)) {
        l = to_linear(b);
        Linear scaled;
        scaled.type = l.type;
        scaled.add(l, c);
        return canonical(scaled);
      }
      // Products of index variables become one canonical term (simplify_linear.cc).
      if (a.type() == kIndexType) return canonical(to_linear(same(op, a, b) ? Expr(op) : Mul::make(a, b)));
      return same(op, a, b) ? Expr(op) : Mul::make(a, b);
    }
    if (Expr v = vector_arith(IRNodeKind::kMul, a, b); v.defined()) return v;
    if (Expr f = fold_float(IRNodeKind::kMul, a, b); f.defined()) return f;
    double c;
    if (a.type().is_float() && as_float_const(b, &c) && c == 1.0) return a;
    if (a.type().is_float() && as_float_const(a, &c) && c == 1.0) return b;
    return same(op, a, b) ? Expr(op) : Mul::make(a, b);
  }

  Expr visit(const Div* op) override {
    Expr a = mutate(op->a), b = mutate(op->b);
    if (Expr f = fold_float(IRNodeKind::kDiv, a, b); f.defined()) return f;
    if (const auto* ba = a.as<Broadcast>(); ba && b.as<Broadcast>()) {
      return Broadcast::make(mutate(Div::make(ba->value, b.as<Broadcast>()->value)), ba->lanes);
    }
    return same(op, a, b) ? Expr(op) : Div::make(a, b);
  }

  Expr visit(const FloorDiv* op) override {
    Expr a = mutate(op->a), b = mutate(op->b);
    int64_t c;
    if (!as_const_int(b, &c) || c <= 0) return same(op, a, b) ? Expr(op) : FloorDiv::make(a, b);
    if (a.type().is_vector()) return vector_divmod(op, a, b, c, true);
    int64_t x;
    if (as_const_int(a, &x)) return make_int(floor_div(x, c), a.type());
    if (c == 1) return a;
    if (const auto* inner = a.as<FloorDiv>()) {
      int64_t d;
      if (as_const_int(inner->b, &d) && d > 0) return mutate(FloorDiv::make(inner->a, make_int(d * c, a.type())));
    }
    Linear q, r;
    split(to_linear(a), c, &q, &r);
    Interval br = bound(from_linear(r));
    if (br.has_lo() && br.has_hi() && floor_div(br.lo, c) == floor_div(br.hi, c)) {
      q.constant += floor_div(br.lo, c);
      return canonical(q);
    }
    Expr rest = FloorDiv::make(canonical(r), b);
    if (q.is_constant() && q.constant == 0) return rest;
    q.add_term(rest, 1);
    return canonical(q);
  }

  Expr visit(const FloorMod* op) override {
    Expr a = mutate(op->a), b = mutate(op->b);
    int64_t c;
    if (!as_const_int(b, &c) || c <= 0) return same(op, a, b) ? Expr(op) : FloorMod::make(a, b);
    if (a.type().is_vector()) return vector_divmod(op, a, b, c, false);
    int64_t x;
    if (as_const_int(a, &x)) return make_int(floor_mod(x, c), a.type());
    if (c == 1) return make_zero(a.type());
    Linear q, r;
    split(to_linear(a), c, &q, &r);
    Expr re = canonical(r);
    Interval br = bound(re);
    if (br.has_lo() && br.has_hi() && floor_div(br.lo, c) == floor_div(br.hi, c)) {
      r.constant -= floor_div(br.lo, c) * c;
      return canonical(r);
    }
    // floormod(floormod(x, k*c), c) -> floormod(x, c)
    if (const auto* inner = re.as<FloorMod>()) {
      int64_t d;
      if (as_const_int(inner->b, &d) && d > 0 && d % c == 0) return mutate(FloorMod::make(inner->a, b));
    }
    return FloorMod::make(re, b);
  }

  Expr visit(const Min* op) override { return min_max(op, true); }
  Expr visit(const Max* op) override { return min_max(op, false); }

  Expr visit(const EQ* op) override { return compare(op, IRNodeKind::kEQ); }
  Expr visit(const NE* op) override { return compare(op, IRNodeKind::kNE); }
  Expr visit(const LT* op) override { return compare(op, IRNodeKind::kLT); }
  Expr visit(const LE* op) override { return compare(op, IRNodeKind::kLE); }
  Expr visit(const GT* op) override { return compare(op, IRNodeKind::kGT); }
  Expr visit(const GE* op) override { return compare(op, IRNodeKind::kGE); }

  Expr visit(const And* op) override {
    Expr a = mutate(op->a), b = mutate(op->b);
    int64_t v;
    if (as_const_int(a, &v)) return v ? b : a;
    if (as_const_int(b, &v)) return v ? a : b;
    if (equal(a, b)) return a;
    return same(op, a, b) ? Expr(op) : And::make(a, b);
  }

  Expr visit(const Or* op) override {
    Expr a = mutate(op->a), b = mutate(op->b);
    int64_t v;
    if (as_const_int(a, &v)) return v ? a : b;
    if (as_const_int(b, &v)) return v ? b : a;
    if (equal(a, b)) return a;
    return same(op, a, b) ? Expr(op) : Or::make(a, b);
  }

  Expr visit(const Not* op) override {
    Expr a = mutate(op->a);
    int64_t v;
    if (as_const_int(a, &v)) return make_bool(!v, a.type().lanes);
    if (const auto* n = a.as<Not>()) return n->a;
    if (const auto* lt = a.as<LT>()) return LE::make(lt->b, lt->a);
    if (const auto* le = a.as<LE>()) return LT::make(le->b, le->a);
    if (const auto* eq = a.as<EQ>()) return NE::make(eq->a, eq->b);
    if (const auto* ne = a.as<NE>()) return EQ::make(ne->a, ne->b);
    return a.same_as(op->a) ? Expr(op) : Not::make(a);
  }

  Expr visit(const Select* op) override {
    Expr c = mutate(op->condition), t = mutate(op->true_value), f = mutate(op->false_value);
    int64_t v;
    if (c.type().is_scalar() && as_const_int(c, &v)) return v ? t : f;
    if (equal(t, f)) return t;
    if (c.same_as(op->condition) && t.same_as(op->true_value) && f.same_as(op->false_value)) return op;
    return Select::make(c, t, f);
  }

  Expr visit(const Cast* op) override {
    Expr v = mutate(op->value);
    const Type t = op->type;
    if (v.type() == t) return v;
    if (t.is_scalar()) {
      int64_t i;
      double f;
      if (as_const_int(v, &i)) return t.is_float() ? make_const(t, static_cast<double>(i)) : make_int(i, t);
      if (as_float_const(v, &f)) {
        if (t.is_float()) return make_const(t, f);
        if (t.is_bool()) return make_bool(f != 0);
        if (std::isfinite(f)) return make_int(static_cast<int64_t>(std::trunc(f)), t);
      }
    }
    return v.same_as(op->value) ? Expr(op) : Cast::make(t, v);
  }

  Expr visit(const Call* op) override {
    Expr e = IRMutator::visit(op);
    const auto* c = e.as<Call>();
    if (!c || is_bit_op(c->op) || is_dot_op(c->op)) return e;
    std::vector<double> args;
    for (const Expr& a : c->args) {
      double v;
      if (!as_float_const(a, &v)) return e;
      args.push_back(v);
    }
    double r = 0;
    switch (c->op) {
      case CallOp::kExp: r = std::exp(args[0]); break;
      case CallOp::kLog: r = std::log(args[0]); break;
      case CallOp::kSqrt: r = std::sqrt(args[0]); break;
      case CallOp::kRsqrt: r = 1.0 / std::sqrt(args[0]); break;
      case CallOp::kTanh: r = std::tanh(args[0]); break;
      case CallOp::kErf: r = std::erf(args[0]); break;
      case CallOp::kSigmoid: r = 1.0 / (1.0 + std::exp(-args[0])); break;
      case CallOp::kPow: r = std::pow(args[0], args[1]); break;
      case CallOp::kFabs: r = std::fabs(args[0]); break;
      case CallOp::kFloor: r = std::floor(args[0]); break;
      case CallOp::kCeil: r = std::ceil(args[0]); break;
      case CallOp::kRound: r = std::nearbyint(args[0]); break;
      case CallOp::kSin: r = std::sin(args[0]); break;
      case CallOp::kCos: r = std::cos(args[0]); break;
      case CallOp::kFma: r = std::fma(args[0], args[1], args[2]); break;
      default: return e;
    }
    return make_const(c->type, r);
  }

  Expr visit(const Ramp* op) override {
    Expr b = mutate(op->base), s = mutate(op->stride);
    if (is_const_int(s, 0)) return Broadcast::make(b, op->lanes);
    if (b.same_as(op->base) && s.same_as(op->stride)) return op;
    return Ramp::make(b, s, op->lanes);
  }

  Expr visit(const Let* op) override {
    Expr v = mutate(op->value);
    if (is_const(v) || v.as<Variable>()) return mutate(substitute(op->body, {{op->var.node(), v}}));
    bounds_[op->var.node()] = bound(v);
    Expr body = mutate(op->body);
    bounds_.erase(op->var.node());
    if (v.same_as(op->value) && body.same_as(op->body)) return op;
    return Let::make(op->var, v, body);
  }

  // ---- statements ----

  Stmt visit(const For* op) override {
    Expr mn = mutate(op->min), ext = mutate(op->extent);
    int64_t e;
    if (as_const_int(ext, &e)) {
      if (e <= 0) return make_nop();
      if (e == 1) return mutate(substitute(op->body, {{op->loop_var.node(), mn}}));
    }
    Interval bm = bound(mn), be = bound(ext);
    Interval iv;
    iv.lo = bm.lo;
    iv.hi = (bm.has_hi() && be.has_hi()) ? bm.hi + be.hi - 1 : Interval::kPosInf;
    bounds_[op->loop_var.node()] = iv;
    Stmt body = mutate(op->body);
    bounds_.erase(op->loop_var.node());
    if (is_nop(body)) return make_nop();
    if (mn.same_as(op->min) && ext.same_as(op->extent) && body.same_as(op->body)) return op;
    return For::make(op->loop_var, mn, ext, op->kind, body);
  }

  Stmt visit(const LetStmt* op) override {
    Expr v = mutate(op->value);
    if (is_const(v) || v.as<Variable>()) return mutate(substitute(op->body, {{op->var.node(), v}}));
    bounds_[op->var.node()] = bound(v);
    Stmt body = mutate(op->body);
    bounds_.erase(op->var.node());
    if (v.same_as(op->value) && body.same_as(op->body)) return op;
    return LetStmt::make(op->var, v, body);
  }

  Stmt visit(const IfThenElse* op) override {
    Expr c = mutate(op->condition);
    int64_t v;
    if (as_const_int(c, &v)) {
      if (v) return mutate(op->then_case);
      return op->else_case.defined() ? mutate(op->else_case) : make_nop();
    }
    Stmt t = mutate(op->then_case), e = mutate(op->else_case);
    if (e.defined() && is_nop(e)) e = Stmt();
    if (is_nop(t) && !e.defined()) return make_nop();
    if (c.same_as(op->condition) && t.same_as(op->then_case) && e.same_as(op->else_case)) return op;
    return IfThenElse::make(c, t, e);
  }

 private:
  template <typename T>
  static bool same(const T* op, const Expr& a, const Expr& b) {
    return a.same_as(op->a) && b.same_as(op->b);
  }

  // q = terms of l divisible by c (divided), r = the remainders in [0, c).
  static void split(const Linear& l, int64_t c, Linear* q, Linear* r) {
    q->type = r->type = l.type;
    for (const auto& t : l.terms) {
      const int64_t qc = floor_div(t.coeff, c), rc = t.coeff - qc * c;
      if (qc) q->add_term(t.term, qc);
      if (rc) r->add_term(t.term, rc);
    }
    q->constant = floor_div(l.constant, c);
    r->constant = l.constant - q->constant * c;
  }

  Expr fold_float(IRNodeKind kind, const Expr& a, const Expr& b) {
    double x, y;
    if (!as_float_const(a, &x) || !as_float_const(b, &y)) return Expr();
    switch (kind) {
      case IRNodeKind::kAdd: return make_const(a.type(), x + y);
      case IRNodeKind::kSub: return make_const(a.type(), x - y);
      case IRNodeKind::kMul: return make_const(a.type(), x * y);
      case IRNodeKind::kDiv: return make_const(a.type(), x / y);
      default: return Expr();
    }
  }

  Expr make_binary(IRNodeKind kind, const Expr& a, const Expr& b) {
    switch (kind) {
      case IRNodeKind::kAdd: return mutate(Add::make(a, b));
      case IRNodeKind::kSub: return mutate(Sub::make(a, b));
      case IRNodeKind::kMul: return mutate(Mul::make(a, b));
      default: KILN_IFAIL() << "not an arithmetic kind";
    }
  }

  // Broadcast/Ramp algebra so that vector indices stay Ramps.
  Expr vector_arith(IRNodeKind kind, const Expr& a, const Expr& b) {
    if (!a.type().is_vector()) return Expr();
    const int n = a.type().lanes;
    const auto *ba = a.as<Broadcast>(), *bb = b.as<Broadcast>();
    const auto *ra = a.as<Ramp>(), *rb = b.as<Ramp>();
    if (ba && bb) return Broadcast::make(make_binary(kind, ba->value, bb->value), n);
    if (kind == IRNodeKind::kAdd || kind == IRNodeKind::kSub) {
      if (ra && bb) return ramp(make_binary(kind, ra->base, bb->value), ra->stride, n);
      if (ba && rb && kind == IRNodeKind::kAdd) return ramp(make_binary(kind, ba->value, rb->base), rb->stride, n);
      if (ra && rb) return ramp(make_binary(kind, ra->base, rb->base), make_binary(kind, ra->stride, rb->stride), n);
    }
    if (kind == IRNodeKind::kMul) {
      if (ra && bb) return ramp(make_binary(kind, ra->base, bb->value), make_binary(kind, ra->stride, bb->value), n);
      if (ba && rb) return ramp(make_binary(kind, ba->value, rb->base), make_binary(kind, ba->value, rb->stride), n);
    }
    return Expr();
  }

  static Expr ramp(const Expr& base, const Expr& stride, int n) {
    if (is_const_int(stride, 0)) return Broadcast::make(base, n);
    return Ramp::make(base, stride, n);
  }

  // floordiv/floormod of a Ramp that stays within one period of c.
  template <typename T>
  Expr vector_divmod(const T* op, const Expr& a, const Expr& b, int64_t c, bool div) {
    const int n = a.type().lanes;
    if (const auto* ba = a.as<Broadcast>()) {
      Expr s = div ? mutate(FloorDiv::make(ba->value, make_int(c, ba->value.type())))
                   : mutate(FloorMod::make(ba->value, make_int(c, ba->value.type())));
      return Broadcast::make(s, n);
    }
    const auto* r = a.as<Ramp>();
    int64_t s;
    if (r && as_const_int(r->stride, &s) && s >= 0) {
      const Type t = r->base.type();
      Expr base_mod = mutate(FloorMod::make(r->base, make_int(c, t)));
      Interval bm = bound(base_mod);
      // A base whose terms' coefficients share a factor g with c has residues r + g * j mod c
      // (r = its constant mod g), at most c - g + r: x * 8 + ramp(0, 1, 8) stays in one period
      // of 16 (a channel block of 8 inside a block of 16), which the interval [0, 15] misses.
      if (bm.has_hi() && bm.lo >= 0) {
        const Linear l = to_linear(r->base);
        int64_t g = c;
        for (const auto& term : l.terms) g = std::gcd(g, term.coeff < 0 ? -term.coeff : term.coeff);
        if (g > 1) bm.hi = std::min(bm.hi, c - g + floor_mod(l.constant, g));
      }
      if (bm.has_hi() && bm.lo >= 0 && bm.hi + s * (n - 1) < c) {
        if (div) return Broadcast::make(mutate(FloorDiv::make(r->base, make_int(c, t))), n);
        return ramp(base_mod, r->stride, n);
      }
    }
    if (same(op, a, b)) return op;
    return T::make(a, b);
  }

  template <typename T>
  Expr min_max(const T* op, bool is_min) {
    Expr a = mutate(op->a), b = mutate(op->b);
    if (is_int_scalar(a.type())) {
      Linear d = to_linear(a);
      d.add(to_linear(b), -1);
      d.normalize();
      Interval bd = bound(from_linear(d));
      if (bd.has_hi() && bd.hi <= 0) return is_min ? a : b;
      if (bd.has_lo() && bd.lo >= 0) return is_min ? b : a;
    }
    double x, y;
    if (as_float_const(a, &x) && as_float_const(b, &y)) return make_const(a.type(), is_min ? std::min(x, y) : std::max(x, y));
    if (a.type().is_vector()) {
      const auto *ba = a.as<Broadcast>(), *bb = b.as<Broadcast>();
      if (ba && bb) {
        Expr s = is_min ? mutate(Min::make(ba->value, bb->value)) : mutate(Max::make(ba->value, bb->value));
        return Broadcast::make(s, a.type().lanes);
      }
    }
    if (equal(a, b)) return a;
    if (a.same_as(op->a) && b.same_as(op->b)) return op;
    return T::make(a, b);
  }

  template <typename T>
  Expr compare(const T* op, IRNodeKind kind) {
    Expr a = mutate(op->a), b = mutate(op->b);
    const int lanes = a.type().lanes;
    // Canonical direction: a > b is b < a, a >= b is b <= a.
    if (kind == IRNodeKind::kGT || kind == IRNodeKind::kGE) {
      const IRNodeKind k = kind == IRNodeKind::kGT ? IRNodeKind::kLT : IRNodeKind::kLE;
      Expr r = mutate_compare(k, b, a, lanes);
      return r.defined() ? r : rebuild_compare(k, b, a);
    }
    if (Expr r = mutate_compare(kind, a, b, lanes); r.defined()) return r;
    return same(op, a, b) ? Expr(op) : rebuild_compare(kind, a, b);
  }

  // The decided or canonicalized comparison; undefined when `a op b` stays as it is.
  Expr mutate_compare(IRNodeKind kind, const Expr& a, const Expr& b, int lanes) {
    // Integer: decide from the bounds of a - b; else rebuild as (positive terms) op (negative terms).
    const bool is_int = a.type().is_int_or_uint();
    if (is_int && (a.type().is_scalar() || (a.as<Broadcast>() || a.as<Ramp>()))) {
      Interval d;
      Expr da, db;
      if (a.type().is_scalar()) {
        Linear l = to_linear(a);
        l.add(to_linear(b), -1);
        l.normalize();
        d = bound(from_linear(l));
        Linear pos, neg;
        pos.type = neg.type = l.type;
        for (const auto& t : l.terms) (t.coeff > 0 ? pos : neg).add_term(t.term, t.coeff > 0 ? t.coeff : -t.coeff);
        if (l.constant > 0 && pos.terms.empty()) {
          pos.constant = l.constant;  // 1 <= x rather than 0 <= x - 1
        } else {
          neg.constant = -l.constant;
        }
        da = from_linear(pos);
        db = from_linear(neg);
      } else {
        d = bound(mutate(Sub::make(a, b)));
      }
      switch (kind) {
        case IRNodeKind::kLT:
          if (d.has_hi() && d.hi < 0) return make_bool(true, lanes);
          if (d.has_lo() && d.lo >= 0) return make_bool(false, lanes);
          break;
        case IRNodeKind::kLE:
          if (d.has_hi() && d.hi <= 0) return make_bool(true, lanes);
          if (d.has_lo() && d.lo > 0) return make_bool(false, lanes);
          break;
        case IRNodeKind::kEQ:
          if (d.is_point()) return make_bool(d.lo == 0, lanes);
          if ((d.has_lo() && d.lo > 0) || (d.has_hi() && d.hi < 0)) return make_bool(false, lanes);
          break;
        case IRNodeKind::kNE:
          if (d.is_point()) return make_bool(d.lo != 0, lanes);
          if ((d.has_lo() && d.lo > 0) || (d.has_hi() && d.hi < 0)) return make_bool(true, lanes);
          break;
        default: break;
      }
      if (da.defined()) return rebuild_compare(kind, da, db);
    }
    double x, y;
    if (as_float_const(a, &x) && as_float_const(b, &y)) {
      switch (kind) {
        case IRNodeKind::kLT: return make_bool(x < y);
        case IRNodeKind::kLE: return make_bool(x <= y);
        case IRNodeKind::kEQ: return make_bool(x == y);
        case IRNodeKind::kNE: return make_bool(x != y);
        default: break;
      }
    }
    return Expr();
  }

  static Expr rebuild_compare(IRNodeKind kind, const Expr& a, const Expr& b) {
    switch (kind) {
      case IRNodeKind::kLT: return LT::make(a, b);
      case IRNodeKind::kLE: return LE::make(a, b);
      case IRNodeKind::kEQ: return EQ::make(a, b);
      case IRNodeKind::kNE: return NE::make(a, b);
      default: KILN_IFAIL() << "not a canonical comparison";
    }
  }

  VarBounds bounds_;
};

}  // namespace

Expr simplify(const Expr& e, const VarBounds& bounds) { return Simplifier(bounds).mutate(e); }
Stmt simplify(const Stmt& s, const VarBounds& bounds) { return Simplifier(bounds).mutate(s); }

bool can_prove(const Expr& cond, const VarBounds& bounds) { return is_const_int(simplify(cond, bounds), 1); }

}  // namespace kiln::tir
