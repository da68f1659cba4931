// Loop-IR statements and the lowered function (PrimFunc) that codegen consumes.
//
// Semantics (contract for code generators in docs/tir.md):
//  - For runs body for loop_var in [min, min + extent), min/extent evaluated once before the loop;
//    kinds: kSerial; kParallel (iterations independent, may run concurrently: codegen outlines the
//    body and hands it to the runtime's parallel_for); kVectorized and kUnrolled are requests that
//    lowering normally carries out itself (a remaining one may be run as serial).
//  - Store writes value (lanes n) to buffer elements `index` (lanes n): flat element index.
//  - Allocate declares `buffer` for the duration of body: uninitialized, `alignment` bytes aligned,
//    on the stack (kStack, small and constant size) or the heap (kHeap).
//  - Block runs its statements in order. Evaluate evaluates an expression for its effects (none
//    exist today; it holds a constant 0 as a no-op).
#ifndef KILN_TIR_STMT_H_
#define KILN_TIR_STMT_H_

#include <string>
#include <vector>

#include "kiln/tir/expr.h"

namespace kiln::tir {

struct StmtNode : public IRNode {
  explicit StmtNode(IRNodeKind k) : IRNode(k) {}
};

class Stmt : public Ref<StmtNode> {
 public:
  Stmt() = default;
  Stmt(const StmtNode* n) : Ref<StmtNode>(n) {}  // NOLINT
  IRNodeKind kind() const { return get()->kind; }
  template <typename T>
  const T* as() const {
    return defined() && get()->kind == T::kKind ? static_cast<const T*>(get()) : nullptr;
  }
};

#define KILN_TIR_STMT_NODE_HEADER(N)                    \
  static constexpr IRNodeKind kKind = IRNodeKind::k##N; \
  N() : StmtNode(IRNodeKind::k##N) {}

enum class ForKind : uint8_t { kSerial, kParallel, kVectorized, kUnrolled };
const char* for_kind_name(ForKind kind);

struct For : public StmtNode {
  KILN_TIR_STMT_NODE_HEADER(For)
  Var loop_var;  // scalar int, the type of min and extent
  Expr min, extent;
  ForKind kind = ForKind::kSerial;
  Stmt body;
  static Stmt make(Var loop_var, Expr min, Expr extent, ForKind kind, Stmt body);
};

struct Store : public StmtNode {
  KILN_TIR_STMT_NODE_HEADER(Store)
  Buffer buffer;
  Expr value;
  Expr index;  // flat element index; lanes equal to value's
  static Stmt make(Buffer buffer, Expr value, Expr index);
};

struct LetStmt : public StmtNode {
  KILN_TIR_STMT_NODE_HEADER(LetStmt)
  Var var;
  Expr value;
  Stmt body;
  static Stmt make(Var var, Expr value, Stmt body);
};

struct IfThenElse : public StmtNode {
  KILN_TIR_STMT_NODE_HEADER(IfThenElse)
  Expr condition;  // scalar bool
  Stmt then_case;
  Stmt else_case;  // may be undefined
  static Stmt make(Expr condition, Stmt then_case, Stmt else_case = Stmt());
};

enum class MemoryScope : uint8_t { kStack, kHeap };
const char* memory_scope_name(MemoryScope scope);

struct Allocate : public StmtNode {
  KILN_TIR_STMT_NODE_HEADER(Allocate)
  Buffer buffer;  // numel() elements of buffer->dtype
  MemoryScope scope = MemoryScope::kHeap;
  int alignment = 64;  // bytes, a power of two
  Stmt body;
  static Stmt make(Buffer buffer, MemoryScope scope, int alignment, Stmt body);
};

struct Block : public StmtNode {
  KILN_TIR_STMT_NODE_HEADER(Block)
  std::vector<Stmt> stmts;  // at least two; nested Blocks are flattened by make()
  // Returns the single statement when `stmts` has one (after flattening), a no-op when none.
  static Stmt make(std::vector<Stmt> stmts);
};

struct Evaluate : public StmtNode {
  KILN_TIR_STMT_NODE_HEADER(Evaluate)
  Expr value;
  static Stmt make(Expr value);
};

// TE-level: tensor[indices] = value. Removed by storage flattening.
struct ProducerStore : public StmtNode {
  KILN_TIR_STMT_NODE_HEADER(ProducerStore)
  Ref<OperationNode> op;
  Expr value;
  std::vector<Expr> indices;
  static Stmt make(const Tensor& tensor, Expr value, std::vector<Expr> indices);
};

// TE-level: storage for the region `bounds` of a tensor during body. Storage flattening turns it
// into an Allocate of the region's size, indexed relative to the region's minimum.
struct ProducerRealize : public StmtNode {
  KILN_TIR_STMT_NODE_HEADER(ProducerRealize)
  Ref<OperationNode> op;
  std::vector<Range> bounds;
  MemoryScope scope = MemoryScope::kHeap;
  Stmt body;
  static Stmt make(const Tensor& tensor, std::vector<Range> bounds, MemoryScope scope, Stmt body);
};

#undef KILN_TIR_STMT_NODE_HEADER

// A no-op statement (Evaluate of 0).
Stmt make_nop();
bool is_nop(const Stmt& s);

// A lowered function: codegen emits one kernel per PrimFunc. `params` are the buffers the caller
// passes, in order (inputs first, then outputs); every Load/Store names a param or a buffer
// declared by an enclosing Allocate.
struct PrimFuncNode : public Object {
  std::string name;
  std::vector<Buffer> params;
  Stmt body;
};
class PrimFunc : public Ref<PrimFuncNode> {
 public:
  PrimFunc() = default;
  PrimFunc(const PrimFuncNode* n) : Ref<PrimFuncNode>(n) {}  // NOLINT
  static PrimFunc make(std::string name, std::vector<Buffer> params, Stmt body);
};

}  // namespace kiln::tir

#endif  // KILN_TIR_STMT_H_
