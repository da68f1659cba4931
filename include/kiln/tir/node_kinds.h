// The one list of loop-IR node kinds. Everything that must handle every node (the kind enum, the
// visitor and mutator declarations, the printer, structural equality) is generated from it, so a
// new node kind cannot be forgotten silently.
//
// Nodes marked "TE-level" only exist between tensor-expression lowering steps; storage flattening
// removes them and codegen rejects them (see docs/tir.md, "loop IR contract for codegen").
#ifndef KILN_TIR_NODE_KINDS_H_
#define KILN_TIR_NODE_KINDS_H_

#include <cstdint>

// X(NodeName)
#define KILN_TIR_FOR_EACH_EXPR_NODE(X) \
  X(IntImm)                            \
  X(FloatImm)                          \
  X(Variable)                          \
  X(Add)                               \
  X(Sub)                               \
  X(Mul)                               \
  X(Div)                               \
  X(FloorDiv)                          \
  X(FloorMod)                          \
  X(Min)                               \
  X(Max)                               \
  X(EQ)                                \
  X(NE)                                \
  X(LT)                                \
  X(LE)                                \
  X(GT)                                \
  X(GE)                                \
  X(And)                               \
  X(Or)                                \
  X(Not)                               \
  X(Select)                            \
  X(Cast)                              \
  X(Call)                              \
  X(Load)                              \
  X(Ramp)                              \
  X(Broadcast)                         \
  X(Let)                               \
  X(TensorLoad) /* TE-level */         \
  X(Reduce)     /* TE-level */

#define KILN_TIR_FOR_EACH_STMT_NODE(X) \
  X(For)                               \
  X(Store)                             \
  X(LetStmt)                           \
  X(IfThenElse)                        \
  X(Allocate)                          \
  X(Block)                             \
  X(Evaluate)                          \
  X(ProducerStore)   /* TE-level */    \
  X(ProducerRealize) /* TE-level */

namespace kiln::tir {

enum class IRNodeKind : uint8_t {
#define KILN_TIR_KIND_ENUM(N) k##N,
  KILN_TIR_FOR_EACH_EXPR_NODE(KILN_TIR_KIND_ENUM) KILN_TIR_FOR_EACH_STMT_NODE(KILN_TIR_KIND_ENUM)
#undef KILN_TIR_KIND_ENUM
};

const char* node_kind_name(IRNodeKind kind);

// Forward declarations of every node struct.
#define KILN_TIR_FORWARD_DECL(N) struct N;
KILN_TIR_FOR_EACH_EXPR_NODE(KILN_TIR_FORWARD_DECL)
KILN_TIR_FOR_EACH_STMT_NODE(KILN_TIR_FORWARD_DECL)
#undef KILN_TIR_FORWARD_DECL

}  // namespace kiln::tir

#endif  // KILN_TIR_NODE_KINDS_H_
