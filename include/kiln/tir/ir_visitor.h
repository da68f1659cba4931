// Read-only traversal of the loop IR. The default visit() of each node visits its children, so a
// visitor overrides only the kinds it cares about. Dispatch is a switch on IRNodeKind.
#ifndef KILN_TIR_IR_VISITOR_H_
#define KILN_TIR_IR_VISITOR_H_

#include "kiln/tir/stmt.h"

namespace kiln::tir {

class IRVisitor {
 public:
  virtual ~IRVisitor() = default;
  virtual void visit_expr(const Expr& e);
  virtual void visit_stmt(const Stmt& s);

 protected:
#define KILN_TIR_VISITOR_DECL(N) virtual void visit(const N* op);
  KILN_TIR_FOR_EACH_EXPR_NODE(KILN_TIR_VISITOR_DECL)
  KILN_TIR_FOR_EACH_STMT_NODE(KILN_TIR_VISITOR_DECL)
#undef KILN_TIR_VISITOR_DECL
};

}  // namespace kiln::tir

#endif  // KILN_TIR_IR_VISITOR_H_
