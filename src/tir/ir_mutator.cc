// Default mutations: rebuild a node only when a child changed (identity preserved otherwise).
#include "kiln/tir/ir_mutator.h"

#include "kiln/support/error.h"
#include "kiln/tir/tensor.h"

namespace kiln::tir {

Expr IRMutator::mutate(const Expr& e) {
  if (!e.defined()) return e;
  switch (e.kind()) {
#define KILN_TIR_DISPATCH(N) \
  case IRNodeKind::k##N: return visit(static_cast<const N*>(e.get()));
    KILN_TIR_FOR_EACH_EXPR_NODE(KILN_TIR_DISPATCH)
#undef KILN_TIR_DISPATCH
    default: KILN_IFAIL() << "statement kind " << node_kind_name(e.kind()) << " in an Expr";
  }
}

Stmt IRMutator::mutate(const Stmt& s) {
  if (!s.defined()) return s;
  switch (s.kind()) {
#define KILN_TIR_DISPATCH(N) \
  case IRNodeKind::k##N: return visit(static_cast<const N*>(s.get()));
    KILN_TIR_FOR_EACH_STMT_NODE(KILN_TIR_DISPATCH)
#undef KILN_TIR_DISPATCH
    default: KILN_IFAIL() << "expression kind " << node_kind_name(s.kind()) << " in a Stmt";
  }
}

namespace {

bool same_all(const std::vector<Expr>& a, const std::vector<Expr>& b) {
  for (size_t i = 0; i < a.size(); ++i) {
    if (!a[i].same_as(b[i])) return false;
  }
  return true;
}

}  // namespace

Expr IRMutator::visit(const IntImm* op) { return op; }
Expr IRMutator::visit(const FloatImm* op) { return op; }
Expr IRMutator::visit(const Variable* op) { return op; }

#define KILN_TIR_MUTATE_BINARY(N)                                 \
  Expr IRMutator::visit(const N* op) {                            \
    Expr a = mutate(op->a), b = mutate(op->b);                    \
    if (a.same_as(op->a) && b.same_as(op->b)) return op;          \
    return N::make(std::move(a), std::move(b));                   \
  }
KILN_TIR_MUTATE_BINARY(Add)
KILN_TIR_MUTATE_BINARY(Sub)
KILN_TIR_MUTATE_BINARY(Mul)
KILN_TIR_MUTATE_BINARY(Div)
KILN_TIR_MUTATE_BINARY(FloorDiv)
KILN_TIR_MUTATE_BINARY(FloorMod)
KILN_TIR_MUTATE_BINARY(Min)
KILN_TIR_MUTATE_BINARY(Max)
KILN_TIR_MUTATE_BINARY(EQ)
KILN_TIR_MUTATE_BINARY(NE)
KILN_TIR_MUTATE_BINARY(LT)
KILN_TIR_MUTATE_BINARY(LE)
KILN_TIR_MUTATE_BINARY(GT)
KILN_TIR_MUTATE_BINARY(GE)
KILN_TIR_MUTATE_BINARY(And)
KILN_TIR_MUTATE_BINARY(Or)
#undef KILN_TIR_MUTATE_BINARY

Expr IRMutator::visit(const Not* op) {
  Expr a = mutate(op->a);
  return a.same_as(op->a) ? Expr(op) : Not::make(std::move(a));
}

Expr IRMutator::visit(const Select* op) {
  Expr c = mutate(op->condition), t = mutate(op->true_value), f = mutate(op->false_value);
  if (c.same_as(op->condition) && t.same_as(op->true_value) && f.same_as(op->false_value)) return op;
  return Select::make(std::move(c), std::move(t), std::move(f));
}

Expr IRMutator::visit(const Cast* op) {
  Expr v = mutate(op->value);
  return v.same_as(op->value) ? Expr(op) : Cast::make(op->type, std::move(v));
}

Expr IRMutator::visit(const Call* op) {
  std::vector<Expr> args;
  for (const Expr& a : op->args) args.push_back(mutate(a));
  if (same_all(args, op->args)) return op;
  return Call::make(op->op, std::move(args));
}

Expr IRMutator::visit(const Load* op) {
  Expr i = mutate(op->index);
  return i.same_as(op->index) ? Expr(op) : Load::make(op->buffer, std::move(i));
}

Expr IRMutator::visit(const Ramp* op) {
  Expr b = mutate(op->base), s = mutate(op->stride);
  if (b.same_as(op->base) && s.same_as(op->stride)) return op;
  return Ramp::make(std::move(b), std::move(s), op->lanes);
}

Expr IRMutator::visit(const Broadcast* op) {
  Expr v = mutate(op->value);
  return v.same_as(op->value) ? Expr(op) : Broadcast::make(std::move(v), op->lanes);
}

Expr IRMutator::visit(const Let* op) {
  Expr v = mutate(op->value), b = mutate(op->body);
  if (v.same_as(op->value) && b.same_as(op->body)) return op;
  return Let::make(op->var, std::move(v), std::move(b));
}

Expr IRMutator::visit(const TensorLoad* op) {
  std::vector<Expr> idx;
  for (const Expr& i : op->indices) idx.push_back(mutate(i));
  if (same_all(idx, op->indices)) return op;
  return TensorLoad::make(Tensor(op->op), std::move(idx));
}

Expr IRMutator::visit(const Reduce* op) {
  Expr s = mutate(op->source);
  return s.same_as(op->source) ? Expr(op) : Reduce::make(op->op, std::move(s), op->axis);
}

Stmt IRMutator::visit(const For* op) {
  Expr mn = mutate(op->min), ext = mutate(op->extent);
  Stmt body = mutate(op->body);
  if (mn.same_as(op->min) && ext.same_as(op->extent) && body.same_as(op->body)) return op;
  return For::make(op->loop_var, std::move(mn), std::move(ext), op->kind, std::move(body));
}

Stmt IRMutator::visit(const Store* op) {
  Expr v = mutate(op->value), i = mutate(op->index);
  if (v.same_as(op->value) && i.same_as(op->index)) return op;
  return Store::make(op->buffer, std::move(v), std::move(i));
}

Stmt IRMutator::visit(const LetStmt* op) {
  Expr v = mutate(op->value);
  Stmt b = mutate(op->body);
  if (v.same_as(op->value) && b.same_as(op->body)) return op;
  return LetStmt::make(op->var, std::move(v), std::move(b));
}

Stmt IRMutator::visit(const IfThenElse* op) {
  Expr c = mutate(op->condition);
  Stmt t = mutate(op->then_case), e = mutate(op->else_case);
  if (c.same_as(op->condition) && t.same_as(op->then_case) && e.same_as(op->else_case)) return op;
  return IfThenElse::make(std::move(c), std::move(t), std::move(e));
}

Stmt IRMutator::visit(const Allocate* op) {
  Stmt b = mutate(op->body);
  return b.same_as(op->body) ? Stmt(op) : Allocate::make(op->buffer, op->scope, op->alignment, std::move(b));
}

Stmt IRMutator::visit(const Block* op) {
  std::vector<Stmt> stmts;
  bool same = true;
  for (const Stmt& s : op->stmts) {
    stmts.push_back(mutate(s));
    same = same && stmts.back().same_as(s);
  }
  return same ? Stmt(op) : Block::make(std::move(stmts));
}

Stmt IRMutator::visit(const Evaluate* op) {
  Expr v = mutate(op->value);
  return v.same_as(op->value) ? Stmt(op) : Evaluate::make(std::move(v));
}

Stmt IRMutator::visit(const ProducerStore* op) {
  Expr v = mutate(op->value);
  std::vector<Expr> idx;
  for (const Expr& i : op->indices) idx.push_back(mutate(i));
  if (v.same_as(op->value) && same_all(idx, op->indices)) return op;
  return ProducerStore::make(Tensor(op->op), std::move(v), std::move(idx));
}

Stmt IRMutator::visit(const ProducerRealize* op) {
  std::vector<Range> bounds;
  bool same = true;
  for (const Range& r : op->bounds) {
    bounds.emplace_back(mutate(r.min), mutate(r.extent));
    same = same && bounds.back().min.same_as(r.min) && bounds.back().extent.same_as(r.extent);
  }
  Stmt b = mutate(op->body);
  if (same && b.same_as(op->body)) return op;
  return ProducerRealize::make(Tensor(op->op), std::move(bounds), op->scope, std::move(b));
}

// ---- substitute ---------------------------------------------------------------------------------

namespace {

class Substituter : public IRMutator {
 public:
  explicit Substituter(const std::vector<std::pair<const Variable*, Expr>>& map) : map_(map) {}

 protected:
  Expr visit(const Variable* op) override {
    for (const auto& [v, e] : map_) {
      if (v == op) return e;
    }
    return op;
  }

 private:
  const std::vector<std::pair<const Variable*, Expr>>& map_;
};

}  // namespace

Expr substitute(const Expr& e, const std::vector<std::pair<const Variable*, Expr>>& map) {
  if (map.empty()) return e;
  return Substituter(map).mutate(e);
}

Stmt substitute(const Stmt& s, const std::vector<std::pair<const Variable*, Expr>>& map) {
  if (map.empty()) return s;
  return Substituter(map).mutate(s);
}

}  // namespace kiln::tir
