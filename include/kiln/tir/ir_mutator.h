// Rewriting traversal of the loop IR. The default visit() of each node mutates its children and
// returns the very same node when none changed (identity is preserved, so callers can test
// `result.same_as(input)` to learn that a pass changed nothing).
#ifndef KILN_TIR_IR_MUTATOR_H_
#define KILN_TIR_IR_MUTATOR_H_

#include "kiln/tir/stmt.h"

namespace kiln::tir {

class IRMutator {
 public:
  virtual ~IRMutator() = default;
  virtual Expr mutate(const Expr& e);
  virtual Stmt mutate(const Stmt& s);

 protected:
#define KILN_TIR_MUTATOR_EXPR_DECL(N) virtual Expr visit(const N* op);
#define KILN_TIR_MUTATOR_STMT_DECL(N) virtual Stmt visit(const N* op);
  KILN_TIR_FOR_EACH_EXPR_NODE(KILN_TIR_MUTATOR_EXPR_DECL)
  KILN_TIR_FOR_EACH_STMT_NODE(KILN_TIR_MUTATOR_STMT_DECL)
#undef KILN_TIR_MUTATOR_EXPR_DECL
#undef KILN_TIR_MUTATOR_STMT_DECL
};

// Replaces variables by expressions (keys compared by identity).
Expr substitute(const Expr& e, const std::vector<std::pair<const Variable*, Expr>>& map);
Stmt substitute(const Stmt& s, const std::vector<std::pair<const Variable*, Expr>>& map);

}  // namespace kiln::tir

#endif  // KILN_TIR_IR_MUTATOR_H_
