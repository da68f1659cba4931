#include "kiln/tir/ir_visitor.h"

#include "kiln/support/error.h"

namespace kiln::tir {

void IRVisitor::visit_expr(const Expr& e) {
  if (!e.defined()) return;
  switch (e.kind()) {
#define KILN_TIR_DISPATCH(N) \
  case IRNodeKind::k##N: return visit(static_cast<const N*>(e.get()));
    KILN_TIR_FOR_EACH_EXPR_NODE(KILN_TIR_DISPATCH)
#undef KILN_TIR_DISPATCH
    default: KILN_IFAIL() << "statement kind " << node_kind_name(e.kind()) << " in an Expr";
  }
}

void IRVisitor::visit_stmt(const Stmt& s) {
  if (!s.defined()) return;
  switch (s.kind()) {
#define KILN_TIR_DISPATCH(N) \
  case IRNodeKind::k##N: return visit(static_cast<const N*>(s.get()));
    KILN_TIR_FOR_EACH_STMT_NODE(KILN_TIR_DISPATCH)
#undef KILN_TIR_DISPATCH
    default: KILN_IFAIL() << "expression kind " << node_kind_name(s.kind()) << " in a Stmt";
  }
}

void IRVisitor::visit(const IntImm*) {}
void IRVisitor::visit(const FloatImm*) {}
void IRVisitor::visit(const Variable*) {}
#define KILN_TIR_VISIT_BINARY(N)      \
  void IRVisitor::visit(const N* op) { \
    visit_expr(op->a);                \
    visit_expr(op->b);                \
  }
KILN_TIR_VISIT_BINARY(Add)
KILN_TIR_VISIT_BINARY(Sub)
KILN_TIR_VISIT_BINARY(Mul)
KILN_TIR_VISIT_BINARY(Div)
KILN_TIR_VISIT_BINARY(FloorDiv)
KILN_TIR_VISIT_BINARY(FloorMod)
KILN_TIR_VISIT_BINARY(Min)
KILN_TIR_VISIT_BINARY(Max)
KILN_TIR_VISIT_BINARY(EQ)
KILN_TIR_VISIT_BINARY(NE)
KILN_TIR_VISIT_BINARY(LT)
KILN_TIR_VISIT_BINARY(LE)
KILN_TIR_VISIT_BINARY(GT)
KILN_TIR_VISIT_BINARY(GE)
KILN_TIR_VISIT_BINARY(And)
KILN_TIR_VISIT_BINARY(Or)
#undef KILN_TIR_VISIT_BINARY
void IRVisitor::visit(const Not* op) { visit_expr(op->a); }
void IRVisitor::visit(const Select* op) {
  visit_expr(op->condition);
  visit_expr(op->true_value);
  visit_expr(op->false_value);
}
void IRVisitor::visit(const Cast* op) { visit_expr(op->value); }
void IRVisitor::visit(const Call* op) {
  for (const Expr& a : op->args) visit_expr(a);
}
void IRVisitor::visit(const Load* op) { visit_expr(op->index); }
void IRVisitor::visit(const Ramp* op) {
  visit_expr(op->base);
  visit_expr(op->stride);
}
void IRVisitor::visit(const Broadcast* op) { visit_expr(op->value); }
void IRVisitor::visit(const Let* op) {
  visit_expr(op->value);
  visit_expr(op->body);
}
void IRVisitor::visit(const TensorLoad* op) {
  for (const Expr& i : op->indices) visit_expr(i);
}
void IRVisitor::visit(const Reduce* op) { visit_expr(op->source); }

void IRVisitor::visit(const For* op) {
  visit_expr(op->min);
  visit_expr(op->extent);
  visit_stmt(op->body);
}
void IRVisitor::visit(const Store* op) {
  visit_expr(op->value);
  visit_expr(op->index);
}
void IRVisitor::visit(const LetStmt* op) {
  visit_expr(op->value);
  visit_stmt(op->body);
}
void IRVisitor::visit(const IfThenElse* op) {
  visit_expr(op->condition);
  visit_stmt(op->then_case);
  visit_stmt(op->else_case);
}
void IRVisitor::visit(const Allocate* op) { visit_stmt(op->body); }
void IRVisitor::visit(const Block* op) {
  for (const Stmt& s : op->stmts) visit_stmt(s);
}
void IRVisitor::visit(const Evaluate* op) { visit_expr(op->value); }
void IRVisitor::visit(const ProducerStore* op) {
  visit_expr(op->value);
  for (const Expr& i : op->indices) visit_expr(i);
}
void IRVisitor::visit(const ProducerRealize* op) {
  for (const Range& r : op->bounds) {
    visit_expr(r.min);
    visit_expr(r.extent);
  }
  visit_stmt(op->body);
}

}  // namespace kiln::tir
