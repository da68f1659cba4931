// Validating factories of the expression nodes, and the operator overloads.
#include "kiln/tir/expr.h"

#include <cmath>
#include <limits>

#include "kiln/ir/tensor_type.h"
#include "kiln/support/error.h"
#include "kiln/tir/printer.h"
#include "kiln/tir/tensor.h"

namespace kiln::tir {

Expr::Expr(int value) : Expr(IntImm::make(kIndexType, value)) {}
Expr::Expr(int64_t value) : Expr(IntImm::make(kIndexType, value)) {}
Expr::Expr(float value) : Expr(FloatImm::make(Type(DType::kF32), value)) {}
Expr::Expr(double value) : Expr(FloatImm::make(Type(DType::kF64), value)) {}

Range Range::from_extent(int64_t extent) { return Range(make_int(0), make_int(extent)); }

int64_t BufferNode::numel() const { return ir::shape_numel(shape); }

Buffer Buffer::make(std::string name, DType dtype, std::vector<int64_t> shape) {
  KILN_ICHECK(!name.empty()) << "buffer without a name";
  for (int64_t d : shape) KILN_ICHECK(d >= 0) << "buffer '" << name << "' has a negative dimension";
  auto* n = new BufferNode;
  n->name = std::move(name);
  n->dtype = dtype;
  n->shape = std::move(shape);
  return Buffer(n);
}

Expr IntImm::make(Type t, int64_t value) {
  KILN_ICHECK(t.is_scalar() && (t.is_int_or_uint() || t.is_bool())) << "IntImm of type " << t.to_string();
  auto* n = new IntImm(t);
  switch (t.dtype) {
    case DType::kI8: value = static_cast<int8_t>(value); break;
    case DType::kU8: value = static_cast<uint8_t>(value); break;
    case DType::kI16: value = static_cast<int16_t>(value); break;
    case DType::kI32: value = static_cast<int32_t>(value); break;
    case DType::kU16: value = static_cast<uint16_t>(value); break;
    case DType::kU32: value = static_cast<uint32_t>(value); break;
    case DType::kBool: value = value != 0; break;
    default: break;
  }
  n->value = value;
  return Expr(n);
}

Expr FloatImm::make(Type t, double value) {
  KILN_ICHECK(t.is_scalar() && t.is_float()) << "FloatImm of type " << t.to_string();
  auto* n = new FloatImm(t);
  n->value = t.dtype == DType::kF32 ? static_cast<double>(static_cast<float>(value)) : value;
  return Expr(n);
}

Expr Variable::make(Type t, std::string name) {
  KILN_ICHECK(!name.empty()) << "variable without a name";
  auto* n = new Variable(t);
  n->name = std::move(name);
  return Expr(n);
}

Var::Var(std::string name, Type t) : Expr(Variable::make(t, std::move(name))) {}

namespace {

void check_operands(const char* what, const Expr& a, const Expr& b) {
  KILN_ICHECK(a.defined() && b.defined()) << what << " with an undefined operand";
  KILN_ICHECK(a.type() == b.type()) << what << " of mismatched types " << a.type().to_string() << " and "
                                    << b.type().to_string() << ": " << a << ", " << b;
}

template <typename T>
Expr make_binary(const char* what, Expr a, Expr b, Type result) {
  auto* n = new T(result);
  n->a = std::move(a);
  n->b = std::move(b);
  return Expr(n);
}

Type bool_like(const Expr& a) { return Type(DType::kBool, a.type().lanes); }

}  // namespace

#define KILN_TIR_ARITH_MAKE(N, CHECK)                                                          \
  Expr N::make(Expr a, Expr b) {                                                               \
    check_operands(#N, a, b);                                                                  \
    const Type t = a.type();                                                                   \
    KILN_ICHECK(CHECK) << #N << " does not accept operands of type " << t.to_string();         \
    return make_binary<N>(#N, std::move(a), std::move(b), t);                                  \
  }
KILN_TIR_ARITH_MAKE(Add, !t.is_bool())
KILN_TIR_ARITH_MAKE(Sub, !t.is_bool())
KILN_TIR_ARITH_MAKE(Mul, !t.is_bool())
KILN_TIR_ARITH_MAKE(Div, t.is_float())
KILN_TIR_ARITH_MAKE(FloorDiv, t.is_int_or_uint())
KILN_TIR_ARITH_MAKE(FloorMod, t.is_int_or_uint())
KILN_TIR_ARITH_MAKE(Min, !t.is_bool())
KILN_TIR_ARITH_MAKE(Max, !t.is_bool())
#undef KILN_TIR_ARITH_MAKE

#define KILN_TIR_CMP_MAKE(N, CHECK)                                                            \
  Expr N::make(Expr a, Expr b) {                                                               \
    check_operands(#N, a, b);                                                                  \
    const Type t = a.type();                                                                   \
    KILN_ICHECK(CHECK) << #N << " does not accept operands of type " << t.to_string();         \
    const Type result = bool_like(a);                                                          \
    return make_binary<N>(#N, std::move(a), std::move(b), result);                             \
  }
KILN_TIR_CMP_MAKE(EQ, true)
KILN_TIR_CMP_MAKE(NE, true)
KILN_TIR_CMP_MAKE(LT, !t.is_bool())
KILN_TIR_CMP_MAKE(LE, !t.is_bool())
KILN_TIR_CMP_MAKE(GT, !t.is_bool())
KILN_TIR_CMP_MAKE(GE, !t.is_bool())
KILN_TIR_CMP_MAKE(And, t.is_bool())
KILN_TIR_CMP_MAKE(Or, t.is_bool())
#undef KILN_TIR_CMP_MAKE

Expr Not::make(Expr a) {
  KILN_ICHECK(a.defined() && a.type().is_bool()) << "Not of a non-bool operand";
  auto* n = new Not(a.type());
  n->a = std::move(a);
  return Expr(n);
}

Expr Select::make(Expr condition, Expr true_value, Expr false_value) {
  KILN_ICHECK(condition.defined() && true_value.defined() && false_value.defined()) << "Select with an undefined operand";
  KILN_ICHECK(condition.type().is_bool()) << "Select condition of type " << condition.type().to_string();
  check_operands("Select", true_value, false_value);
  KILN_ICHECK(condition.type().lanes == 1 || condition.type().lanes == true_value.type().lanes)
      << "Select condition lanes " << condition.type().lanes << " vs value lanes " << true_value.type().lanes;
  auto* n = new Select(true_value.type());
  n->condition = std::move(condition);
  n->true_value = std::move(true_value);
  n->false_value = std::move(false_value);
  return Expr(n);
}

Expr Cast::make(Type t, Expr value) {
  KILN_ICHECK(value.defined()) << "Cast of an undefined value";
  KILN_ICHECK(t.lanes == value.type().lanes) << "Cast changes lanes: " << value.type().to_string() << " to "
                                             << t.to_string();
  auto* n = new Cast(t);
  n->value = std::move(value);
  return Expr(n);
}

const char* call_op_name(CallOp op) {
  switch (op) {
    case CallOp::kExp: return "exp";
    case CallOp::kLog: return "log";
    case CallOp::kSqrt: return "sqrt";
    case CallOp::kRsqrt: return "rsqrt";
    case CallOp::kTanh: return "tanh";
    case CallOp::kErf: return "erf";
    case CallOp::kSigmoid: return "sigmoid";
    case CallOp::kPow: return "pow";
    case CallOp::kFabs: return "fabs";
    case CallOp::kFloor: return "floor";
    case CallOp::kCeil: return "ceil";
    case CallOp::kRound: return "round";
    case CallOp::kSin: return "sin";
    case CallOp::kCos: return "cos";
    case CallOp::kFma: return "fma";
    case CallOp::kBitAnd: return "bit_and";
    case CallOp::kBitOr: return "bit_or";
    case CallOp::kBitXor: return "bit_xor";
    case CallOp::kBitNot: return "bit_not";
    case CallOp::kShiftLeft: return "shift_left";
    case CallOp::kShiftRight: return "shift_right";
    case CallOp::kDot4U8S8: return "dot4_u8s8";
    case CallOp::kDot4U8S8Narrow: return "dot4_u8s8_narrow";
    case CallOp::kDot2S16: return "dot2_s16";
    case CallOp::kPrefetch: return "prefetch";
  }
  return "?";
}

bool is_bit_op(CallOp op) {
  switch (op) {
    case CallOp::kBitAnd:
    case CallOp::kBitOr:
    case CallOp::kBitXor:
    case CallOp::kBitNot:
    case CallOp::kShiftLeft:
    case CallOp::kShiftRight: return true;
    default: return false;
  }
}

bool is_dot_op(CallOp op) { return op == CallOp::kDot4U8S8 || op == CallOp::kDot4U8S8Narrow || op == CallOp::kDot2S16; }

int call_op_arity(CallOp op) {
  switch (op) {
    case CallOp::kDot4U8S8:
    case CallOp::kDot4U8S8Narrow:
    case CallOp::kDot2S16:
    case CallOp::kPow:
    case CallOp::kBitAnd:
    case CallOp::kBitOr:
    case CallOp::kBitXor:
    case CallOp::kShiftLeft:
    case CallOp::kShiftRight: return 2;
    case CallOp::kFma: return 3;
    default: return 1;
  }
}

Expr Call::make(CallOp op, std::vector<Expr> args) {
  KILN_ICHECK(static_cast<int>(args.size()) == call_op_arity(op))
      << call_op_name(op) << " takes " << call_op_arity(op) << " arguments, got " << args.size();
  for (const Expr& a : args) {
    KILN_ICHECK(a.defined()) << call_op_name(op) << " with an undefined argument";
    KILN_ICHECK(a.type() == args[0].type()) << call_op_name(op) << " with arguments of different types";
  }
  if (op == CallOp::kPrefetch) {
    KILN_ICHECK(args[0].as<TensorLoad>() != nullptr || (args[0].as<Load>() != nullptr && args[0].type().is_scalar()))
        << "prefetch of " << args[0].type().to_string() << " that is not a scalar element access";
  } else if (is_dot_op(op)) {
    KILN_ICHECK(args[0].type().dtype == DType::kI32) << call_op_name(op) << " of type " << args[0].type().to_string() << " (needs i32 lanes of packed bytes or halves)";
  } else if (is_bit_op(op)) {
    KILN_ICHECK(args[0].type().is_int_or_uint()) << call_op_name(op) << " of non-integer type " << args[0].type().to_string();
  } else {
    KILN_ICHECK(args[0].type().is_float()) << call_op_name(op) << " of non-float type " << args[0].type().to_string();
  }
  auto* n = new Call(args[0].type());
  n->op = op;
  n->args = std::move(args);
  return Expr(n);
}

Expr Load::make(Buffer buffer, Expr index) {
  KILN_ICHECK(buffer.defined() && index.defined()) << "Load with an undefined buffer or index";
  KILN_ICHECK(index.type().is_int_or_uint()) << "Load index of type " << index.type().to_string();
  auto* n = new Load(Type(buffer->dtype, index.type().lanes));
  n->buffer = std::move(buffer);
  n->index = std::move(index);
  return Expr(n);
}

Expr Ramp::make(Expr base, Expr stride, int lanes) {
  check_operands("Ramp", base, stride);
  KILN_ICHECK(base.type().is_scalar() && base.type().is_int_or_uint()) << "Ramp base of type " << base.type().to_string();
  KILN_ICHECK(lanes > 1) << "Ramp of " << lanes << " lanes";
  auto* n = new Ramp(base.type().with_lanes(lanes));
  n->base = std::move(base);
  n->stride = std::move(stride);
  n->lanes = lanes;
  return Expr(n);
}

Expr Broadcast::make(Expr value, int lanes) {
  KILN_ICHECK(value.defined() && value.type().is_scalar()) << "Broadcast of an undefined or vector value";
  KILN_ICHECK(lanes > 1) << "Broadcast to " << lanes << " lanes";
  auto* n = new Broadcast(value.type().with_lanes(lanes));
  n->value = std::move(value);
  n->lanes = lanes;
  return Expr(n);
}

Expr Let::make(Var var, Expr value, Expr body) {
  KILN_ICHECK(var.defined() && value.defined() && body.defined()) << "Let with an undefined part";
  KILN_ICHECK(var.type() == value.type()) << "Let " << var.name() << " of type " << var.type().to_string()
                                          << " bound to a " << value.type().to_string();
  auto* n = new Let(body.type());
  n->var = std::move(var);
  n->value = std::move(value);
  n->body = std::move(body);
  return Expr(n);
}

Expr TensorLoad::make(const Tensor& tensor, std::vector<Expr> indices) {
  KILN_ICHECK(tensor.defined()) << "TensorLoad of an undefined tensor";
  KILN_ICHECK(static_cast<int>(indices.size()) == tensor.ndim())
      << "tensor '" << tensor.name() << "' has " << tensor.ndim() << " dimensions, indexed with " << indices.size();
  for (const Expr& i : indices) {
    KILN_ICHECK(i.defined() && i.type().is_scalar() && i.type().is_int_or_uint())
        << "tensor '" << tensor.name() << "' indexed with a non-integer or vector index";
  }
  auto* n = new TensorLoad(Type(tensor.dtype()));
  n->op = Ref<OperationNode>(tensor.get());
  n->indices = std::move(indices);
  return Expr(n);
}

IterVar IterVar::make(Var var, Range dom, IterKind kind) {
  KILN_ICHECK(var.defined() && dom.min.defined() && dom.extent.defined()) << "IterVar with an undefined part";
  auto* n = new IterVarNode;
  n->var = std::move(var);
  n->dom = std::move(dom);
  n->kind = kind;
  return IterVar(n);
}

const char* reduce_op_name(ReduceOp op) {
  switch (op) {
    case ReduceOp::kSum: return "sum";
    case ReduceOp::kMax: return "max";
    case ReduceOp::kMin: return "min";
    case ReduceOp::kProd: return "prod";
  }
  return "?";
}

Expr Reduce::make(ReduceOp op, Expr source, std::vector<IterVar> axis) {
  KILN_ICHECK(source.defined() && source.type().is_scalar()) << "Reduce of an undefined or vector source";
  if (axis.empty()) {
    throw UserError(UserErrorKind::kInvalidArgument, std::string("reduction ") + reduce_op_name(op),
                    "no reduction axis given", "pass the axes made by reduce_axis()");
  }
  for (const IterVar& iv : axis) {
    if (iv->kind != IterKind::kReduce) {
      throw UserError(UserErrorKind::kInvalidArgument, "axis '" + iv.var().name() + "'",
                      "is not a reduction axis", "make reduction axes with reduce_axis()");
    }
  }
  auto* n = new Reduce(source.type());
  n->op = op;
  n->source = std::move(source);
  n->axis = std::move(axis);
  return Expr(n);
}

// ---- Helpers ------------------------------------------------------------------------------------

Expr make_const(Type t, double value) {
  Expr s = t.is_float() ? FloatImm::make(t.element_of(), value)
                        : IntImm::make(t.element_of(), static_cast<int64_t>(value));
  return t.lanes > 1 ? Broadcast::make(s, t.lanes) : s;
}

Expr make_int(int64_t value, Type t) {
  Expr s = IntImm::make(t.element_of(), value);
  return t.lanes > 1 ? Broadcast::make(s, t.lanes) : s;
}

Expr make_zero(Type t) { return make_const(t, 0); }
Expr make_bool(bool value, int lanes) { return make_int(value ? 1 : 0, Type(DType::kBool, lanes)); }

Expr type_max(Type t) {
  if (t.is_float()) return make_const(t, std::numeric_limits<double>::infinity());
  switch (t.dtype) {
    case DType::kI8: return make_int(127, t);
    case DType::kU8: return make_int(255, t);
    case DType::kI16: return make_int(32767, t);
    case DType::kI32: return make_int(std::numeric_limits<int32_t>::max(), t);
    case DType::kU16: return make_int(65535, t);
    case DType::kU32: return make_int(std::numeric_limits<uint32_t>::max(), t);
    case DType::kU64: return make_int(-1, t);  // all bits set: u64 values are held as int64 bits
    case DType::kBool: return make_int(1, t);
    default: return make_int(std::numeric_limits<int64_t>::max(), t);
  }
}

Expr type_min(Type t) {
  if (t.is_float()) return make_const(t, -std::numeric_limits<double>::infinity());
  switch (t.dtype) {
    case DType::kI8: return make_int(-128, t);
    case DType::kU8: return make_int(0, t);
    case DType::kI16: return make_int(-32768, t);
    case DType::kI32: return make_int(std::numeric_limits<int32_t>::min(), t);
    case DType::kU16:
    case DType::kU32:
    case DType::kU64: return make_int(0, t);
    case DType::kBool: return make_int(0, t);
    default: return make_int(std::numeric_limits<int64_t>::min(), t);
  }
}

Expr reduce_identity(ReduceOp op, Type t) {
  switch (op) {
    case ReduceOp::kSum: return make_zero(t);
    case ReduceOp::kMax: return type_min(t);
    case ReduceOp::kMin: return type_max(t);
    case ReduceOp::kProd: return make_const(t, 1);
  }
  return Expr();
}

bool as_const_int(const Expr& e, int64_t* value) {
  if (const auto* b = e.as<Broadcast>()) return as_const_int(b->value, value);
  if (const auto* i = e.as<IntImm>()) {
    *value = i->value;
    return true;
  }
  return false;
}

bool is_const_int(const Expr& e, int64_t value) {
  int64_t v;
  return as_const_int(e, &v) && v == value;
}

bool is_const(const Expr& e) {
  if (const auto* b = e.as<Broadcast>()) return is_const(b->value);
  return e.as<IntImm>() || e.as<FloatImm>();
}

// ---- Operators ----------------------------------------------------------------------------------

namespace {

bool is_scalar_imm(const Expr& e) { return e.as<IntImm>() || e.as<FloatImm>(); }

Expr retype_imm(const Expr& e, Type t) {
  if (const auto* i = e.as<IntImm>()) return make_const(t, static_cast<double>(i->value));
  const auto* f = e.as<FloatImm>();
  KILN_ICHECK(f) << "not an immediate";
  if (!t.is_float()) {
    throw UserError(UserErrorKind::kInvalidArgument, "constant " + to_string(e),
                    "is a float used where an " + t.to_string() + " is expected",
                    "use an integer constant or cast()");
  }
  return make_const(t, f->value);
}

// Makes the operands of a binary operator agree: an immediate takes the other side's element
// type; a scalar meets a vector by broadcast.
void match_types(const char* op, Expr& a, Expr& b) {
  KILN_ICHECK(a.defined() && b.defined()) << "operator " << op << " with an undefined operand";
  if (a.type() == b.type()) return;
  const Type ta = a.type(), tb = b.type();
  if (ta.dtype != tb.dtype) {
    if (is_scalar_imm(b)) {
      b = retype_imm(b, ta.element_of());
    } else if (is_scalar_imm(a)) {
      a = retype_imm(a, tb.element_of());
    } else {
      throw UserError(UserErrorKind::kInvalidArgument,
                      std::string("expression '") + to_string(a) + " " + op + " " + to_string(b) + "'",
                      "mixes types " + ta.to_string() + " and " + tb.to_string(),
                      "cast one operand with cast()");
    }
  }
  if (a.type().lanes == 1 && b.type().lanes > 1) a = Broadcast::make(a, b.type().lanes);
  if (b.type().lanes == 1 && a.type().lanes > 1) b = Broadcast::make(b, a.type().lanes);
  KILN_ICHECK(a.type() == b.type()) << "operator " << op << " on " << a.type().to_string() << " and "
                                    << b.type().to_string();
}

}  // namespace

#define KILN_TIR_OPERATOR(FN, SYM, NODE)  \
  Expr FN(Expr a, Expr b) {               \
    match_types(SYM, a, b);               \
    return NODE::make(std::move(a), std::move(b)); \
  }
KILN_TIR_OPERATOR(operator+, "+", Add)
KILN_TIR_OPERATOR(operator-, "-", Sub)
KILN_TIR_OPERATOR(operator*, "*", Mul)
KILN_TIR_OPERATOR(operator==, "==", EQ)
KILN_TIR_OPERATOR(operator!=, "!=", NE)
KILN_TIR_OPERATOR(operator<, "<", LT)
KILN_TIR_OPERATOR(operator<=, "<=", LE)
KILN_TIR_OPERATOR(operator>, ">", GT)
KILN_TIR_OPERATOR(operator>=, ">=", GE)
KILN_TIR_OPERATOR(operator&&, "&&", And)
KILN_TIR_OPERATOR(operator||, "||", Or)
KILN_TIR_OPERATOR(floordiv, "floordiv", FloorDiv)
KILN_TIR_OPERATOR(floormod, "floormod", FloorMod)
KILN_TIR_OPERATOR(min, "min", Min)
KILN_TIR_OPERATOR(max, "max", Max)
#undef KILN_TIR_OPERATOR

Expr operator/(Expr a, Expr b) {
  match_types("/", a, b);
  if (a.type().is_float()) return Div::make(std::move(a), std::move(b));
  return FloorDiv::make(std::move(a), std::move(b));
}

Expr operator%(Expr a, Expr b) {
  match_types("%", a, b);
  return FloorMod::make(std::move(a), std::move(b));
}

Expr operator-(Expr a) { return make_zero(a.type()) - a; }
Expr operator!(Expr a) { return Not::make(std::move(a)); }

Expr select(Expr c, Expr t, Expr f) {
  match_types("select", t, f);
  return Select::make(std::move(c), std::move(t), std::move(f));
}

Expr cast(Type t, Expr v) {
  if (v.type() == t) return v;
  const Type target = t.with_lanes(v.type().lanes);
  return Cast::make(target, std::move(v));
}

#define KILN_TIR_UNARY_CALL(FN, OP) \
  Expr FN(Expr x) { return Call::make(CallOp::OP, {std::move(x)}); }
KILN_TIR_UNARY_CALL(exp, kExp)
KILN_TIR_UNARY_CALL(log, kLog)
KILN_TIR_UNARY_CALL(sqrt, kSqrt)
KILN_TIR_UNARY_CALL(rsqrt, kRsqrt)
KILN_TIR_UNARY_CALL(tanh, kTanh)
KILN_TIR_UNARY_CALL(erf, kErf)
KILN_TIR_UNARY_CALL(sigmoid, kSigmoid)
KILN_TIR_UNARY_CALL(fabs, kFabs)
KILN_TIR_UNARY_CALL(floor, kFloor)
KILN_TIR_UNARY_CALL(ceil, kCeil)
KILN_TIR_UNARY_CALL(round, kRound)
KILN_TIR_UNARY_CALL(sin, kSin)
KILN_TIR_UNARY_CALL(cos, kCos)
#undef KILN_TIR_UNARY_CALL

Expr pow(Expr x, Expr y) {
  match_types("pow", x, y);
  return Call::make(CallOp::kPow, {std::move(x), std::move(y)});
}

Expr fma(Expr a, Expr b, Expr c) {
  match_types("fma", a, b);
  match_types("fma", a, c);
  match_types("fma", b, c);
  return Call::make(CallOp::kFma, {std::move(a), std::move(b), std::move(c)});
}

#define KILN_TIR_BINARY_BIT_CALL(FN, OP)          \
  Expr FN(Expr a, Expr b) {                        \
    match_types(#FN, a, b);                        \
    return Call::make(CallOp::OP, {std::move(a), std::move(b)}); \
  }
KILN_TIR_BINARY_BIT_CALL(bit_and, kBitAnd)
KILN_TIR_BINARY_BIT_CALL(bit_or, kBitOr)
KILN_TIR_BINARY_BIT_CALL(bit_xor, kBitXor)
KILN_TIR_BINARY_BIT_CALL(shift_left, kShiftLeft)
KILN_TIR_BINARY_BIT_CALL(shift_right, kShiftRight)
#undef KILN_TIR_BINARY_BIT_CALL
Expr bit_not(Expr a) { return Call::make(CallOp::kBitNot, {std::move(a)}); }
Expr dot4_u8s8(Expr a, Expr b, bool narrow) {
  match_types("dot4_u8s8", a, b);
  return Call::make(narrow ? CallOp::kDot4U8S8Narrow : CallOp::kDot4U8S8, {std::move(a), std::move(b)});
}

Expr dot2_s16(Expr a, Expr b) {
  match_types("dot2_s16", a, b);
  return Call::make(CallOp::kDot2S16, {std::move(a), std::move(b)});
}

Expr sum(Expr source, std::vector<IterVar> axis) { return Reduce::make(ReduceOp::kSum, std::move(source), std::move(axis)); }
Expr prod_reduce(Expr source, std::vector<IterVar> axis) {
  return Reduce::make(ReduceOp::kProd, std::move(source), std::move(axis));
}
Expr max_reduce(Expr source, std::vector<IterVar> axis) {
  return Reduce::make(ReduceOp::kMax, std::move(source), std::move(axis));
}
Expr min_reduce(Expr source, std::vector<IterVar> axis) {
  return Reduce::make(ReduceOp::kMin, std::move(source), std::move(axis));
}

}  // namespace kiln::tir
