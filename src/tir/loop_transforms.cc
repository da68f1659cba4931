// Loop vectorization: widen the body of a vectorized loop by replacing its variable with a Ramp.
// A loop whose whole body is `if (c(v)) S` with c a conjunction of comparisons affine in v (the
// bounds guard of a split tail: `jo * 16 + ji < N`) is versioned: c holds on an interval of v, so
//   if (c(min) && c(min + n - 1)) { S widened } else { the serial loop with its guard }
// runs full vectors everywhere but in the one partial tile (its store then element by element).
#include <algorithm>
#include <map>

#include "kiln/support/error.h"
#include "kiln/support/logging.h"
#include "kiln/tir/ir_mutator.h"
#include "kiln/tir/ir_visitor.h"
#include "kiln/tir/printer.h"
#include "kiln/tir/simplify.h"
#include "kiln/tir/transform.h"

namespace kiln::tir {
namespace {

class Widen : public IRMutator {
 public:
  Widen(const Variable* var, Expr ramp) { vars_[var] = std::move(ramp); }
  bool failed = false;
  std::string why;

 protected:
  void fail(const std::string& reason) {
    if (!failed) why = reason;
    failed = true;
  }
  static int lanes_of(const Expr& e) { return e.type().lanes; }
  static Expr widen_to(const Expr& e, int lanes) {
    if (lanes_of(e) == lanes) return e;
    KILN_ICHECK(lanes_of(e) == 1) << "mixing vector widths " << lanes_of(e) << " and " << lanes;
    return Broadcast::make(e, lanes);
  }

  Expr visit(const Variable* op) override {
    auto it = vars_.find(op);
    return it == vars_.end() ? Expr(op) : it->second;
  }

#define KILN_TIR_WIDEN_BINARY(N)                                  \
  Expr visit(const N* op) override {                              \
    Expr a = mutate(op->a), b = mutate(op->b);                    \
    if (a.same_as(op->a) && b.same_as(op->b)) return op;          \
    const int n = std::max(lanes_of(a), lanes_of(b));             \
    return N::make(widen_to(a, n), widen_to(b, n));               \
  }
  KILN_TIR_WIDEN_BINARY(Add)
  KILN_TIR_WIDEN_BINARY(Sub)
  KILN_TIR_WIDEN_BINARY(Mul)
  KILN_TIR_WIDEN_BINARY(Div)
  KILN_TIR_WIDEN_BINARY(FloorDiv)
  KILN_TIR_WIDEN_BINARY(FloorMod)
  KILN_TIR_WIDEN_BINARY(Min)
  KILN_TIR_WIDEN_BINARY(Max)
  KILN_TIR_WIDEN_BINARY(EQ)
  KILN_TIR_WIDEN_BINARY(NE)
  KILN_TIR_WIDEN_BINARY(LT)
  KILN_TIR_WIDEN_BINARY(LE)
  KILN_TIR_WIDEN_BINARY(GT)
  KILN_TIR_WIDEN_BINARY(GE)
  KILN_TIR_WIDEN_BINARY(And)
  KILN_TIR_WIDEN_BINARY(Or)
#undef KILN_TIR_WIDEN_BINARY

  Expr visit(const Select* op) override {
    Expr c = mutate(op->condition), t = mutate(op->true_value), f = mutate(op->false_value);
    if (c.same_as(op->condition) && t.same_as(op->true_value) && f.same_as(op->false_value)) return op;
    const int n = std::max({lanes_of(c), lanes_of(t), lanes_of(f)});
    return Select::make(lanes_of(c) == 1 ? c : widen_to(c, n), widen_to(t, n), widen_to(f, n));
  }

  Expr visit(const Cast* op) override {
    Expr v = mutate(op->value);
    if (v.same_as(op->value)) return op;
    return Cast::make(op->type.with_lanes(lanes_of(v)), v);
  }

  Expr visit(const Call* op) override {
    std::vector<Expr> args;
    int n = 1;
    bool same = true;
    for (const Expr& a : op->args) {
      args.push_back(mutate(a));
      same = same && args.back().same_as(a);
      n = std::max(n, lanes_of(args.back()));
    }
    if (same) return op;
    for (Expr& a : args) a = widen_to(a, n);
    return Call::make(op->op, args);
  }

  Expr visit(const Ramp* op) override {
    Expr e = IRMutator::visit(op);
    if (!e.same_as(Expr(op))) fail("a ramp depends on the vectorized variable");
    return op;
  }

  Expr visit(const Broadcast* op) override {
    Expr e = IRMutator::visit(op);
    if (!e.same_as(Expr(op))) fail("a broadcast depends on the vectorized variable");
    return op;
  }

  Expr visit(const Let* op) override {
    Expr v = mutate(op->value);
    if (lanes_of(v) != lanes_of(op->value)) {
      Var wide(op->var.name(), v.type());
      vars_[op->var.node()] = wide;
      Expr body = mutate(op->body);
      vars_.erase(op->var.node());
      return Let::make(wide, v, body);
    }
    Expr body = mutate(op->body);
    if (v.same_as(op->value) && body.same_as(op->body)) return op;
    return Let::make(op->var, v, body);
  }

  Stmt visit(const LetStmt* op) override {
    Expr v = mutate(op->value);
    if (lanes_of(v) != lanes_of(op->value)) {
      Var wide(op->var.name(), v.type());
      vars_[op->var.node()] = wide;
      Stmt body = mutate(op->body);
      vars_.erase(op->var.node());
      return LetStmt::make(wide, v, body);
    }
    Stmt body = mutate(op->body);
    if (v.same_as(op->value) && body.same_as(op->body)) return op;
    return LetStmt::make(op->var, v, body);
  }

  Stmt visit(const Store* op) override {
    Expr v = mutate(op->value), i = mutate(op->index);
    if (v.same_as(op->value) && i.same_as(op->index)) return op;
    if (lanes_of(i) == 1) {
      fail("a vector value is stored to a scalar index (" + to_string(op->index) + ")");
      return op;
    }
    return Store::make(op->buffer, widen_to(v, lanes_of(i)), i);
  }

  Stmt visit(const IfThenElse* op) override {
    Expr c = mutate(op->condition);
    if (lanes_of(c) != 1) {
      fail("the condition " + to_string(op->condition) + " depends on the vectorized variable");
      return op;
    }
    return IRMutator::visit(op);
  }

  Stmt visit(const For* op) override {
    Expr mn = mutate(op->min), ext = mutate(op->extent);
    if (lanes_of(mn) != 1 || lanes_of(ext) != 1) {
      fail("the bounds of loop " + op->loop_var.name() + " depend on the vectorized variable");
      return op;
    }
    return IRMutator::visit(op);
  }

  Stmt visit(const Allocate* op) override {
    fail("an allocation inside the vectorized loop");
    return op;
  }

 private:
  std::map<const Variable*, Expr> vars_;
};

// Whether e is affine in v: v enters only through +, - and products with v-free factors.
bool affine_in(const Expr& e, const Variable* v) {
  struct Uses : IRVisitor {
    const Variable* v;
    bool found = false;
    void visit(const Variable* op) override { found = found || op == v; }
  };
  auto uses = [&](const Expr& x) {
    Uses u;
    u.v = v;
    u.visit_expr(x);
    return u.found;
  };
  if (!uses(e) || e.as<Variable>()) return true;
  if (const auto* a = e.as<Add>()) return affine_in(a->a, v) && affine_in(a->b, v);
  if (const auto* a = e.as<Sub>()) return affine_in(a->a, v) && affine_in(a->b, v);
  if (const auto* m = e.as<Mul>()) return (!uses(m->a) && affine_in(m->b, v)) || (!uses(m->b) && affine_in(m->a, v));
  return false;
}

// Whether the set of v where c holds is an interval: a conjunction of comparisons of affine terms.
bool interval_condition(const Expr& c, const Variable* v) {
  if (const auto* a = c.as<And>()) return interval_condition(a->a, v) && interval_condition(a->b, v);
#define KILN_TIR_AFFINE_CMP(N) \
  if (const auto* x = c.as<N>()) return x->a.type().lanes == 1 && affine_in(x->a, v) && affine_in(x->b, v);
  KILN_TIR_AFFINE_CMP(LT)
  KILN_TIR_AFFINE_CMP(LE)
  KILN_TIR_AFFINE_CMP(GT)
  KILN_TIR_AFFINE_CMP(GE)
#undef KILN_TIR_AFFINE_CMP
  return false;
}

class VectorizeLoops : public IRMutator {
 protected:
  Stmt visit(const For* op) override {
    Stmt body = mutate(op->body);
    int64_t n;
    if (op->kind != ForKind::kVectorized) {
      if (body.same_as(op->body)) return op;
      return For::make(op->loop_var, op->min, op->extent, op->kind, body);
    }
    if (!as_const_int(op->extent, &n) || n < 2) {
      KILN_LOG(tir, kDebug) << "vectorize: loop " << op->loop_var.name() << " has extent " << op->extent
                            << "; kept serial";
      return For::make(op->loop_var, op->min, op->extent, ForKind::kSerial, body);
    }
    Widen w(op->loop_var.node(), Ramp::make(op->min, make_int(1, op->min.type()), static_cast<int>(n)));
    Stmt wide = w.mutate(body);
    if (w.failed) {
      if (Stmt versioned = version_guard(op, body, n); versioned.defined()) return versioned;
      KILN_LOG(tir, kDebug) << "vectorize: loop " << op->loop_var.name() << " kept serial: " << w.why;
      return For::make(op->loop_var, op->min, op->extent, ForKind::kSerial, body);
    }
    return simplify(wide);
  }

 private:
  // The body `if (c(v)) S`, c an interval condition: full vectors where c holds on the whole loop.
  static Stmt version_guard(const For* op, const Stmt& body, int64_t n) {
    const auto* g = body.as<IfThenElse>();
    const Variable* v = op->loop_var.node();
    if (g == nullptr || g->else_case.defined() || !interval_condition(g->condition, v)) return Stmt();
    Widen w(v, Ramp::make(op->min, make_int(1, op->min.type()), static_cast<int>(n)));
    Stmt wide = w.mutate(g->then_case);
    if (w.failed) return Stmt();
    const Expr first = substitute(g->condition, {{v, op->min}});
    const Expr last = substitute(g->condition, {{v, op->min + make_int(n - 1, op->min.type())}});
    KILN_LOG(tir, kDebug) << "vectorize: loop " << op->loop_var.name() << " versioned on " << g->condition;
    return IfThenElse::make(simplify(And::make(first, last)), simplify(wide),
                            For::make(op->loop_var, op->min, op->extent, ForKind::kSerial, body));
  }
};

class UnrollLoops : public IRMutator {
 public:
  explicit UnrollLoops(int64_t max) : max_(max) {}

 protected:
  Stmt visit(const For* op) override {
    Stmt body = mutate(op->body);
    if (op->kind != ForKind::kUnrolled) {
      if (body.same_as(op->body)) return op;
      return For::make(op->loop_var, op->min, op->extent, op->kind, body);
    }
    int64_t n;
    if (!as_const_int(op->extent, &n) || n > max_) {
      KILN_LOG(tir, kDebug) << "unroll: loop " << op->loop_var.name() << " of extent " << op->extent
                            << " kept serial";
      return For::make(op->loop_var, op->min, op->extent, ForKind::kSerial, body);
    }
    std::vector<Stmt> copies;
    for (int64_t k = 0; k < n; ++k) {
      copies.push_back(simplify(substitute(body, {{op->loop_var.node(), op->min + make_int(k, op->min.type())}})));
    }
    return Block::make(copies);
  }

 private:
  int64_t max_;
};

class ParallelNesting : public IRVisitor {
 protected:
  void visit(const For* op) override {
    if (op->kind == ForKind::kParallel) {
      if (depth_ > 0) {
        throw UserError(UserErrorKind::kUnsupported, "loop '" + op->loop_var.name() + "'",
                        "is parallel inside another parallel loop", "parallelize one loop of the nest (fuse them first)");
      }
      ++depth_;
      IRVisitor::visit(op);
      --depth_;
      return;
    }
    IRVisitor::visit(op);
  }

 private:
  int depth_ = 0;
};

}  // namespace

Stmt vectorize_loops(const Stmt& s) { return VectorizeLoops().mutate(s); }
Stmt unroll_loops(const Stmt& s, int64_t max_extent) { return UnrollLoops(max_extent).mutate(s); }
void check_parallel_nesting(const Stmt& s) { ParallelNesting().visit_stmt(s); }

}  // namespace kiln::tir
