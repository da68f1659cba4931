// Loop partitioning of split tails (see transform.h).
#include <algorithm>
#include <map>

#include "kiln/tir/ir_mutator.h"
#include "kiln/tir/ir_visitor.h"
#include "kiln/tir/simplify.h"
#include "kiln/tir/transform.h"

namespace kiln::tir {
namespace {

bool uses_var(const Expr& e, const Variable* v) {
  struct Uses : IRVisitor {
    const Variable* v;
    bool found = false;
    void visit(const Variable* op) override { found = found || op == v; }
  } u;
  u.v = v;
  u.visit_expr(e);
  return u.found;
}

struct GuardSite {
  Expr cond;
  VarBounds inner;  // ranges of the loops between the partitioned loop and the guard
};

// Collects the guards inside a loop body that use `var`, with the ranges of enclosing inner loops.
class GuardCollector : public IRVisitor {
 public:
  explicit GuardCollector(const Variable* var) : var_(var) {}
  std::vector<GuardSite> sites;

 protected:
  void visit(const For* op) override {
    int64_t mn, ext;
    const bool known = as_const_int(op->min, &mn) && as_const_int(op->extent, &ext) && ext > 0;
    if (known) inner_[op->loop_var.node()] = Interval::range(mn, mn + ext - 1);
    IRVisitor::visit(op);
    inner_.erase(op->loop_var.node());
  }
  void visit(const IfThenElse* op) override {
    if (uses_var(op->condition, var_)) sites.push_back({op->condition, inner_});
    IRVisitor::visit(op);
  }

 private:
  const Variable* var_;
  VarBounds inner_;
};

class TailPartitioner : public IRMutator {
 protected:
  Stmt visit(const For* op) override {
    Stmt body = mutate(op->body);
    Stmt self = body.same_as(op->body) ? Stmt(op) : For::make(op->loop_var, op->min, op->extent, op->kind, body);
    int64_t mn, ext;
    if (op->kind == ForKind::kParallel || !as_const_int(op->min, &mn) || !as_const_int(op->extent, &ext) || ext < 2) {
      return self;
    }
    const Variable* v = op->loop_var.node();
    // for (v, mn, ext) { if (v < K) S }  ->  for (v, mn, K - mn) { S }
    if (const auto* g = body.as<IfThenElse>(); g && !g->else_case.defined()) {
      if (const auto* lt = g->condition.as<LT>()) {
        int64_t k;
        if (lt->a.same_as(op->loop_var) && as_const_int(lt->b, &k) && k > mn && k < mn + ext) {
          return For::make(op->loop_var, op->min, make_int(k - mn, op->min.type()), op->kind, g->then_case);
        }
      }
    }
    // Any other vectorized loop that is one guard (a split's partial tile, whose bound also
    // depends on outer loops) is left whole: vectorize_loops versions it (full vectors on every
    // full tile), where a partition here would cut every tile into odd-width vectors.
    if (const auto* g = body.as<IfThenElse>(); op->kind == ForKind::kVectorized && g && !g->else_case.defined()) {
      return self;
    }
    GuardCollector c(v);
    c.visit_stmt(body);
    if (c.sites.empty()) return self;
    auto holds_below = [&](int64_t p) {  // guards true for v in [mn, mn + p)
      if (p == 0) return true;
      for (const GuardSite& s : c.sites) {
        VarBounds b = s.inner;
        b[v] = Interval::range(mn, mn + p - 1);
        if (!can_prove(s.cond, b)) return false;
      }
      return true;
    };
    int64_t lo = 0, hi = ext;  // holds_below(lo) is true; find the largest such p
    while (lo < hi) {
      const int64_t mid = lo + (hi - lo + 1) / 2;
      if (holds_below(mid)) {
        lo = mid;
      } else {
        hi = mid - 1;
      }
    }
    if (lo == 0 || lo == ext) return self;
    const Type t = op->min.type();
    Stmt main = For::make(op->loop_var, op->min, make_int(lo, t), op->kind, body);
    Var tail_var(op->loop_var.name(), t);
    Stmt tail_body = substitute(body, {{v, tail_var}});
    Stmt tail = For::make(tail_var, make_int(mn + lo, t), make_int(ext - lo, t), op->kind, tail_body);
    return Block::make({simplify(main), mutate(simplify(tail))});
  }
};

}  // namespace

Stmt partition_tails(const Stmt& s) { return TailPartitioner().mutate(s); }

}  // namespace kiln::tir
