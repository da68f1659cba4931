// Loop-IR expressions: immutable, ref-counted nodes built only through validating `make()`
// factories (they KILN_ICHECK their invariants: matching operand types, lanes, non-null operands).
//
// Semantics (the full contract for code generators is in docs/tir.md):
//  - Integer arithmetic is two's complement on the operand type; index expressions (i64) must not
//    overflow (the simplifier and codegen may assume so, e.g. LLVM `nsw`).
//  - Div is for floats only. Integers divide with FloorDiv/FloorMod: floor(a / b) and a - b*floor(a/b)
//    (the remainder has the sign of b). Division by zero is undefined.
//  - Floats are IEEE; no reassociation. Codegen may contract a*b+c into an FMA.
//  - Comparisons, And, Or, Not produce bool with the lanes of their operands.
//  - Vector values have lanes > 1; Ramp(base, stride, n) = [base, base+stride, ...],
//    Broadcast(v, n) = [v, v, ...]. Elementwise nodes require equal lanes on both sides.
//  - Load reads element `index` (a flat element index, not bytes) of a Buffer; a vector index gives
//    a vector load (gather unless the index is a stride-1 Ramp).
//  - Operands are evaluated with no side effects; evaluation order is unobservable.
#ifndef KILN_TIR_EXPR_H_
#define KILN_TIR_EXPR_H_

#include <cstdint>
#include <string>
#include <vector>

#include "kiln/tir/node_kinds.h"
#include "kiln/tir/object.h"
#include "kiln/tir/type.h"

namespace kiln::tir {

// Base of every expression and statement node.
struct IRNode : public Object {
  explicit IRNode(IRNodeKind k) : kind(k) {}
  const IRNodeKind kind;
};

struct ExprNode : public IRNode {
  ExprNode(IRNodeKind k, Type t) : IRNode(k), type(t) {}
  const Type type;
};

// A handle to an expression node. Implicit from int (an i64 immediate) and float (an f32
// immediate) so that compute bodies can write `A(i, 0) * 2.0f`.
class Expr : public Ref<ExprNode> {
 public:
  Expr() = default;
  Expr(const ExprNode* n) : Ref<ExprNode>(n) {}  // NOLINT
  Expr(int value);                               // NOLINT: i64 immediate
  Expr(int64_t value);                           // NOLINT: i64 immediate
  Expr(float value);                             // NOLINT: f32 immediate
  Expr(double value);                            // NOLINT: f64 immediate (retyped next to an f32)

  Type type() const { return get()->type; }
  IRNodeKind kind() const { return get()->kind; }
  // The node as T when its kind is T's, else nullptr (no RTTI).
  template <typename T>
  const T* as() const {
    return defined() && get()->kind == T::kKind ? static_cast<const T*>(get()) : nullptr;
  }
};

// ---- Helper objects referenced by nodes ---------------------------------------------------------

// A half-open range [min, min + extent).
struct Range {
  Expr min;
  Expr extent;
  Range() = default;
  Range(Expr mn, Expr ext) : min(std::move(mn)), extent(std::move(ext)) {}
  static Range from_extent(int64_t extent);
};

// A typed, flat array of `numel()` elements. Buffers are parameters of a PrimFunc or declared by
// Allocate; Load/Store name them directly. Identity is by object (two buffers with one name are
// distinct). The shape is kept for printing and checking; indexing is always flat.
struct BufferNode : public Object {
  std::string name;
  DType dtype;
  std::vector<int64_t> shape;
  int64_t numel() const;
};
class Buffer : public Ref<BufferNode> {
 public:
  Buffer() = default;
  Buffer(const BufferNode* n) : Ref<BufferNode>(n) {}  // NOLINT
  static Buffer make(std::string name, DType dtype, std::vector<int64_t> shape);
};

// Forward declaration of a tensor-expression operation (kiln/tir/tensor.h). A Tensor is a handle
// to the operation that produces it (every operation has one output).
struct OperationNode;
class Tensor;

// ---- Nodes --------------------------------------------------------------------------------------

#define KILN_TIR_EXPR_NODE_HEADER(N)                       \
  static constexpr IRNodeKind kKind = IRNodeKind::k##N;    \
  explicit N(Type t) : ExprNode(IRNodeKind::k##N, t) {}

struct IntImm : public ExprNode {
  KILN_TIR_EXPR_NODE_HEADER(IntImm)
  int64_t value = 0;
  // `t` an int, uint or bool scalar type; `value` is wrapped to the type's width.
  static Expr make(Type t, int64_t value);
};

struct FloatImm : public ExprNode {
  KILN_TIR_EXPR_NODE_HEADER(FloatImm)
  double value = 0;
  static Expr make(Type t, double value);
};

// A named scalar (or vector) value: a loop variable, a Let binding. Identity is by object.
struct Variable : public ExprNode {
  KILN_TIR_EXPR_NODE_HEADER(Variable)
  std::string name;
  static Expr make(Type t, std::string name);
};

// A handle that is known to hold a Variable.
class Var : public Expr {
 public:
  Var() = default;
  explicit Var(std::string name, Type t = kIndexType);
  explicit Var(const Variable* v) : Expr(v) {}
  const Variable* node() const { return static_cast<const Variable*>(get()); }
  const std::string& name() const { return node()->name; }
};

#define KILN_TIR_DECLARE_BINARY(N)        \
  struct N : public ExprNode {            \
    KILN_TIR_EXPR_NODE_HEADER(N)          \
    Expr a, b;                            \
    static Expr make(Expr a, Expr b);     \
  };
KILN_TIR_DECLARE_BINARY(Add)
KILN_TIR_DECLARE_BINARY(Sub)
KILN_TIR_DECLARE_BINARY(Mul)
KILN_TIR_DECLARE_BINARY(Div)       // floats only
KILN_TIR_DECLARE_BINARY(FloorDiv)  // integers only
KILN_TIR_DECLARE_BINARY(FloorMod)  // integers only
KILN_TIR_DECLARE_BINARY(Min)
KILN_TIR_DECLARE_BINARY(Max)
KILN_TIR_DECLARE_BINARY(EQ)  // result bool
KILN_TIR_DECLARE_BINARY(NE)
KILN_TIR_DECLARE_BINARY(LT)
KILN_TIR_DECLARE_BINARY(LE)
KILN_TIR_DECLARE_BINARY(GT)
KILN_TIR_DECLARE_BINARY(GE)
KILN_TIR_DECLARE_BINARY(And)  // bool operands
KILN_TIR_DECLARE_BINARY(Or)
#undef KILN_TIR_DECLARE_BINARY

struct Not : public ExprNode {
  KILN_TIR_EXPR_NODE_HEADER(Not)
  Expr a;
  static Expr make(Expr a);
};

// condition ? true_value : false_value; both values are evaluated (no side effects exist). A
// scalar condition may select between vectors.
struct Select : public ExprNode {
  KILN_TIR_EXPR_NODE_HEADER(Select)
  Expr condition, true_value, false_value;
  static Expr make(Expr condition, Expr true_value, Expr false_value);
};

// Conversion to `t` (same lanes). float->int truncates toward zero (undefined when out of range);
// int->float rounds to nearest; x->bool is x != 0; bool->x is 0 or 1.
struct Cast : public ExprNode {
  KILN_TIR_EXPR_NODE_HEADER(Cast)
  Expr value;
  static Expr make(Type t, Expr value);
};

// Math intrinsics. All take and return floats of one type (elementwise on vectors).
// kPow(x, y); kFma(a, b, c) = a*b+c rounded once; kSigmoid(x) = 1/(1+exp(-x));
// kRound rounds half to even.
// The bit operations take and return integers of one type (i*, u*): kBitAnd/Or/Xor(a, b),
// kBitNot(a); kShiftLeft/kShiftRight(a, n) shift by n bits (logical for unsigned, arithmetic for
// signed types), and a shift by n < 0 or n >= the type's bits gives 0 (-1 for a right shift of a
// negative signed value), as numpy's wide shifts do.
// The byte dot products (int8 kernels, `is_dot_op`) take two i32 operands of equal lanes, each
// lane holding 4 bytes (byte j = bits 8j..8j+7), and return i32: kDot4U8S8(a, b) lane l =
// sum_j u8(a.byte j) * s8(b.byte j), exact (|sum| <= 4 * 255 * 128). kDot4U8S8Narrow(a, b) is the
// same value under the caller's guarantee that each pair a.b0*b.b0 + a.b1*b.b1 (and b2, b3) fits
// in i16, which holds when every byte of b is in [-64, 64]; it lets AVX2 use vpmaddubsw without
// its 16-bit saturation changing the result (the interpreter checks the guarantee). Codegen lowers
// `acc + dot` to vpdpbusd (AVX-VNNI / AVX-512 VNNI), vpmaddubsw + vpmaddwd (AVX2), sdot/usdot
// (AArch64 +dotprod / +i8mm) or widening multiplies (docs/int8.md, "Integer kernels").
// kDot2S16(a, b), also a dot op: each i32 lane holds two s16 halves (half j = bits 16j..16j+15),
// lane l = s16(a.half 0) * s16(b.half 0) + s16(a.half 1) * s16(b.half 1), wrapping modulo 2^32
// (only -32768 * -32768 twice wraps); codegen lowers `acc + dot2` to vpdpwssd (AVX-VNNI /
// AVX-512 VNNI), vpmaddwd + vpaddd (AVX2, AVX-512) or widening multiplies (the int8 Winograd
// kernel's product of 16-bit transformed values, src/topi/int8_winograd.cc).
// kPrefetch(load): a cache hint, used as a statement (Evaluate) only: brings the cache line that
// holds the element `load` (a TensorLoad, or a scalar Load after storage flattening) reads into
// the cache. The element is never read: its index may lie outside the buffer (a prefetch never
// faults), and the call's value (zero, the load's type) means nothing. Placed by the schedule
// primitive Stage::prefetch; codegen emits llvm.prefetch, the interpreter does nothing.
enum class CallOp : uint8_t {
  kExp, kLog, kSqrt, kRsqrt, kTanh, kErf, kSigmoid, kPow, kFabs, kFloor, kCeil, kRound, kSin,
  kCos, kFma, kBitAnd, kBitOr, kBitXor, kBitNot, kShiftLeft, kShiftRight, kDot4U8S8, kDot4U8S8Narrow,
  kDot2S16, kPrefetch
};
// True for the integer bit operations above (kBitAnd ... kShiftRight).
bool is_bit_op(CallOp op);
// True for the dot products (kDot4U8S8, kDot4U8S8Narrow, kDot2S16).
bool is_dot_op(CallOp op);
const char* call_op_name(CallOp op);
int call_op_arity(CallOp op);

struct Call : public ExprNode {
  KILN_TIR_EXPR_NODE_HEADER(Call)
  CallOp op;
  std::vector<Expr> args;
  static Expr make(CallOp op, std::vector<Expr> args);
};

// buffer[index]: type is the buffer's dtype with the lanes of `index`.
struct Load : public ExprNode {
  KILN_TIR_EXPR_NODE_HEADER(Load)
  Buffer buffer;
  Expr index;
  static Expr make(Buffer buffer, Expr index);
};

// [base, base + stride, ..., base + (lanes-1)*stride]; base and stride scalar ints of one type.
struct Ramp : public ExprNode {
  KILN_TIR_EXPR_NODE_HEADER(Ramp)
  Expr base, stride;
  int lanes = 0;
  static Expr make(Expr base, Expr stride, int lanes);
};

struct Broadcast : public ExprNode {
  KILN_TIR_EXPR_NODE_HEADER(Broadcast)
  Expr value;  // scalar
  int lanes = 0;
  static Expr make(Expr value, int lanes);
};

// let var = value in body
struct Let : public ExprNode {
  KILN_TIR_EXPR_NODE_HEADER(Let)
  Var var;
  Expr value, body;
  static Expr make(Var var, Expr value, Expr body);
};

// TE-level: element `indices` of a tensor (a multi-dimensional read). Removed by storage
// flattening; never reaches codegen.
struct TensorLoad : public ExprNode {
  KILN_TIR_EXPR_NODE_HEADER(TensorLoad)
  Ref<OperationNode> op;  // the producing operation (the tensor)
  std::vector<Expr> indices;
  static Expr make(const Tensor& tensor, std::vector<Expr> indices);
};

// An iteration variable of a compute: a data-parallel axis or a reduction axis over `dom`.
enum class IterKind : uint8_t { kDataPar, kReduce };
struct IterVarNode : public Object {
  Var var;
  Range dom;
  IterKind kind = IterKind::kDataPar;
};
class IterVar : public Ref<IterVarNode> {
 public:
  IterVar() = default;
  IterVar(const IterVarNode* n) : Ref<IterVarNode>(n) {}  // NOLINT
  static IterVar make(Var var, Range dom, IterKind kind);
  const Var& var() const { return get()->var; }
  operator Expr() const { return get()->var; }  // NOLINT: use an axis as an index
};

// TE-level: a commutative reduction of `source` over the reduction axes. Only allowed as the
// whole body of a compute; loop-nest construction replaces it by an init and an update.
enum class ReduceOp : uint8_t { kSum, kMax, kMin, kProd };
const char* reduce_op_name(ReduceOp op);
struct Reduce : public ExprNode {
  KILN_TIR_EXPR_NODE_HEADER(Reduce)
  ReduceOp op;
  Expr source;
  std::vector<IterVar> axis;
  static Expr make(ReduceOp op, Expr source, std::vector<IterVar> axis);
};

#undef KILN_TIR_EXPR_NODE_HEADER

// ---- Construction helpers -----------------------------------------------------------------------

// An immediate of type `t` (broadcast when t is a vector) holding `value` converted.
Expr make_const(Type t, double value);
Expr make_int(int64_t value, Type t = kIndexType);
Expr make_zero(Type t);
Expr make_bool(bool value, int lanes = 1);
// The identity element of a reduction (0, lowest, highest) in `t`.
Expr reduce_identity(ReduceOp op, Type t);
// Largest / lowest finite-or-infinite value of a type as an immediate (-inf/+inf for floats).
Expr type_max(Type t);
Expr type_min(Type t);

// The constant value when `e` is an integer immediate (or a broadcast of one).
bool as_const_int(const Expr& e, int64_t* value);
bool is_const_int(const Expr& e, int64_t value);
bool is_const(const Expr& e);  // an IntImm or FloatImm (or a broadcast of one)

// Operators: an immediate operand (a C++ literal) takes the type of the other operand; a scalar
// meeting a vector is broadcast. Mismatched types are an internal error (cast explicitly).
Expr operator+(Expr a, Expr b);
Expr operator-(Expr a, Expr b);
Expr operator*(Expr a, Expr b);
Expr operator/(Expr a, Expr b);  // floats: Div. integers: FloorDiv.
Expr operator%(Expr a, Expr b);  // integers: FloorMod.
Expr operator-(Expr a);
Expr operator==(Expr a, Expr b);
Expr operator!=(Expr a, Expr b);
Expr operator<(Expr a, Expr b);
Expr operator<=(Expr a, Expr b);
Expr operator>(Expr a, Expr b);
Expr operator>=(Expr a, Expr b);
Expr operator&&(Expr a, Expr b);
Expr operator||(Expr a, Expr b);
Expr operator!(Expr a);
Expr floordiv(Expr a, Expr b);
Expr floormod(Expr a, Expr b);
Expr min(Expr a, Expr b);
Expr max(Expr a, Expr b);
Expr select(Expr c, Expr t, Expr f);
Expr cast(Type t, Expr v);
Expr exp(Expr x);
Expr log(Expr x);
Expr sqrt(Expr x);
Expr rsqrt(Expr x);
Expr tanh(Expr x);
Expr erf(Expr x);
Expr sigmoid(Expr x);
Expr pow(Expr x, Expr y);
Expr fabs(Expr x);
Expr floor(Expr x);
Expr ceil(Expr x);
Expr round(Expr x);
Expr sin(Expr x);
Expr cos(Expr x);
Expr fma(Expr a, Expr b, Expr c);
Expr bit_and(Expr a, Expr b);
// Byte dot product of i32 lanes holding 4 bytes each (CallOp kDot4U8S8 / kDot4U8S8Narrow).
Expr dot4_u8s8(Expr a, Expr b, bool narrow = false);
// Dot product of i32 lanes holding two s16 halves each (CallOp kDot2S16).
Expr dot2_s16(Expr a, Expr b);
Expr bit_or(Expr a, Expr b);
Expr bit_xor(Expr a, Expr b);
Expr bit_not(Expr a);
Expr shift_left(Expr a, Expr n);
Expr shift_right(Expr a, Expr n);

// Reductions over reduction axes (IterVars of kind kReduce, see reduce_axis in tensor.h).
Expr sum(Expr source, std::vector<IterVar> axis);
Expr max_reduce(Expr source, std::vector<IterVar> axis);
Expr min_reduce(Expr source, std::vector<IterVar> axis);
Expr prod_reduce(Expr source, std::vector<IterVar> axis);

// Structural equality of expressions (variables and buffers compare by identity).
bool equal(const Expr& a, const Expr& b);

}  // namespace kiln::tir

#endif  // KILN_TIR_EXPR_H_
