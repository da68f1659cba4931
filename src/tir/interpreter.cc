// The loop-IR interpreter. Values are vectors of lanes held as int64 (integers, bool) or double
// (floats, rounded to their type after every operation).
#include "kiln/tir/interpreter.h"

#include <cmath>
#include <cstring>
#include <unordered_map>

#include "kiln/support/error.h"
#include "kiln/tir/printer.h"

namespace kiln::tir {
namespace {

using ir::NDArray;

struct Value {
  Type type;
  std::vector<int64_t> i;  // integer and bool lanes
  std::vector<double> f;   // float lanes
  int lanes() const { return type.lanes; }
};

double round_float(DType d, double v) {
  switch (d) {
    case DType::kF32: return static_cast<float>(v);
    case DType::kF16: return ir::f16_to_f32(ir::f32_to_f16(static_cast<float>(v)));
    case DType::kBF16: return ir::bf16_to_f32(ir::f32_to_bf16(static_cast<float>(v)));
    default: return v;
  }
}

int64_t wrap_int(DType d, int64_t v) {
  switch (d) {
    case DType::kI8: return static_cast<int8_t>(v);
    case DType::kU8: return static_cast<uint8_t>(v);
    case DType::kI16: return static_cast<int16_t>(v);
    case DType::kI32: return static_cast<int32_t>(v);
    case DType::kU16: return static_cast<uint16_t>(v);
    case DType::kU32: return static_cast<uint32_t>(v);
    case DType::kBool: return v != 0;
    default: return v;
  }
}

int64_t floor_div(int64_t a, int64_t b) {
  KILN_ICHECK(b != 0) << "floordiv by zero";
  int64_t q = a / b;
  if ((a % b != 0) && ((a < 0) != (b < 0))) --q;
  return q;
}

struct Storage {
  uint8_t* data = nullptr;
  DType dtype = DType::kF32;
  int64_t numel = 0;
  std::string name;
};

class Interpreter {
 public:
  void bind(const BufferNode* b, NDArray array) {
    arrays_.push_back(array);
    buffers_[b] = Storage{static_cast<uint8_t*>(arrays_.back().mutable_raw_data()), b->dtype, b->numel(), b->name};
  }

  void exec(const Stmt& s) {
    switch (s.kind()) {
      case IRNodeKind::kFor: return exec_for(s.as<For>());
      case IRNodeKind::kStore: return exec_store(s.as<Store>());
      case IRNodeKind::kLetStmt: {
        const auto* op = s.as<LetStmt>();
        vars_[op->var.node()] = eval(op->value);
        exec(op->body);
        vars_.erase(op->var.node());
        return;
      }
      case IRNodeKind::kIfThenElse: {
        const auto* op = s.as<IfThenElse>();
        if (eval(op->condition).i[0]) {
          exec(op->then_case);
        } else if (op->else_case.defined()) {
          exec(op->else_case);
        }
        return;
      }
      case IRNodeKind::kAllocate: {
        const auto* op = s.as<Allocate>();
        NDArray a = NDArray::empty(op->buffer->dtype, {op->buffer->numel()});
        if (is_float(op->buffer->dtype)) {
          for (int64_t k = 0; k < a.numel(); ++k) a.set_from_double(k, NAN);
        } else {
          std::memset(a.mutable_raw_data(), 0x5A, a.nbytes());
        }
        bind(op->buffer.get(), a);
        exec(op->body);
        buffers_.erase(op->buffer.get());
        return;
      }
      case IRNodeKind::kBlock:
        for (const Stmt& c : s.as<Block>()->stmts) exec(c);
        return;
      case IRNodeKind::kEvaluate: (void)eval(s.as<Evaluate>()->value); return;
      default: KILN_IFAIL() << "the interpreter cannot run " << node_kind_name(s.kind()) << " (TE-level node not lowered?)";
    }
  }

 private:
  void exec_for(const For* op) {
    const int64_t mn = eval(op->min).i[0], ext = eval(op->extent).i[0];
    const Variable* v = op->loop_var.node();
    Value iv{op->loop_var.type(), {0}, {}};
    for (int64_t k = 0; k < ext; ++k) {
      const int64_t it = op->kind == ForKind::kParallel ? ext - 1 - k : k;
      iv.i[0] = mn + it;
      vars_[v] = iv;
      exec(op->body);
    }
    vars_.erase(v);
  }

  Storage& storage(const Buffer& b) {
    auto it = buffers_.find(b.get());
    KILN_ICHECK(it != buffers_.end()) << "buffer '" << b->name << "' is neither a parameter nor allocated here";
    return it->second;
  }

  static int64_t checked(const Storage& s, int64_t index) {
    KILN_ICHECK(index >= 0 && index < s.numel) << "out-of-bounds access " << s.name << "[" << index << "], size "
                                               << s.numel;
    return index;
  }

  void exec_store(const Store* op) {
    Storage& s = storage(op->buffer);
    Value idx = eval(op->index);
    Value val = eval(op->value);
    const size_t es = ir::dtype_size(s.dtype);
    for (int l = 0; l < idx.lanes(); ++l) {
      uint8_t* p = s.data + checked(s, idx.i[l]) * es;
      switch (s.dtype) {
        case DType::kF32: *reinterpret_cast<float*>(p) = static_cast<float>(val.f[l]); break;
        case DType::kF64: *reinterpret_cast<double*>(p) = val.f[l]; break;
        case DType::kF16: *reinterpret_cast<uint16_t*>(p) = ir::f32_to_f16(static_cast<float>(val.f[l])); break;
        case DType::kBF16: *reinterpret_cast<uint16_t*>(p) = ir::f32_to_bf16(static_cast<float>(val.f[l])); break;
        case DType::kI8: *reinterpret_cast<int8_t*>(p) = static_cast<int8_t>(val.i[l]); break;
        case DType::kU8: *p = static_cast<uint8_t>(val.i[l]); break;
        case DType::kI16: *reinterpret_cast<int16_t*>(p) = static_cast<int16_t>(val.i[l]); break;
        case DType::kI32: *reinterpret_cast<int32_t*>(p) = static_cast<int32_t>(val.i[l]); break;
        case DType::kI64: *reinterpret_cast<int64_t*>(p) = val.i[l]; break;
        case DType::kBool: *p = val.i[l] != 0; break;
        case DType::kU16: *reinterpret_cast<uint16_t*>(p) = static_cast<uint16_t>(val.i[l]); break;
        case DType::kU32: *reinterpret_cast<uint32_t*>(p) = static_cast<uint32_t>(val.i[l]); break;
        case DType::kU64: *reinterpret_cast<uint64_t*>(p) = static_cast<uint64_t>(val.i[l]); break;
      }
    }
  }

  Value load(const Load* op) {
    Storage& s = storage(op->buffer);
    Value idx = eval(op->index);
    Value r{op->type, {}, {}};
    const size_t es = ir::dtype_size(s.dtype);
    for (int l = 0; l < idx.lanes(); ++l) {
      const uint8_t* p = s.data + checked(s, idx.i[l]) * es;
      switch (s.dtype) {
        case DType::kF32: r.f.push_back(*reinterpret_cast<const float*>(p)); break;
        case DType::kF64: r.f.push_back(*reinterpret_cast<const double*>(p)); break;
        case DType::kF16: r.f.push_back(ir::f16_to_f32(*reinterpret_cast<const uint16_t*>(p))); break;
        case DType::kBF16: r.f.push_back(ir::bf16_to_f32(*reinterpret_cast<const uint16_t*>(p))); break;
        case DType::kI8: r.i.push_back(*reinterpret_cast<const int8_t*>(p)); break;
        case DType::kU8: r.i.push_back(*p); break;
        case DType::kI16: r.i.push_back(*reinterpret_cast<const int16_t*>(p)); break;
        case DType::kI32: r.i.push_back(*reinterpret_cast<const int32_t*>(p)); break;
        case DType::kI64: r.i.push_back(*reinterpret_cast<const int64_t*>(p)); break;
        case DType::kBool: r.i.push_back(*p != 0); break;
        case DType::kU16: r.i.push_back(*reinterpret_cast<const uint16_t*>(p)); break;
        case DType::kU32: r.i.push_back(*reinterpret_cast<const uint32_t*>(p)); break;
        case DType::kU64: r.i.push_back(static_cast<int64_t>(*reinterpret_cast<const uint64_t*>(p))); break;
      }
    }
    return r;
  }

  static Value broadcast(const Value& v, int lanes) {
    if (v.lanes() == lanes) return v;
    Value r{v.type.with_lanes(lanes), {}, {}};
    if (!v.i.empty()) r.i.assign(lanes, v.i[0]);
    if (!v.f.empty()) r.f.assign(lanes, v.f[0]);
    return r;
  }

  template <typename IntFn, typename FloatFn>
  Value arith(const Expr& ea, const Expr& eb, Type result, IntFn fi, FloatFn ff) {
    Value a = eval(ea), b = eval(eb);
    Value r{result, {}, {}};
    const int n = result.lanes;
    const bool float_operands = ea.type().is_float();
    for (int l = 0; l < n; ++l) {
      if (float_operands) {
        double v = ff(a.f[l], b.f[l]);
        if (result.is_float()) {
          r.f.push_back(round_float(result.dtype, v));
        } else {
          r.i.push_back(static_cast<int64_t>(v));
        }
      } else {
        r.i.push_back(wrap_int(result.dtype, fi(a.i[l], b.i[l])));
      }
    }
    return r;
  }

  Value eval(const Expr& e) {
    const Type t = e.type();
    switch (e.kind()) {
      case IRNodeKind::kIntImm: return Value{t, {e.as<IntImm>()->value}, {}};
      case IRNodeKind::kFloatImm: return Value{t, {}, {e.as<FloatImm>()->value}};
      case IRNodeKind::kVariable: {
        auto it = vars_.find(e.as<Variable>());
        KILN_ICHECK(it != vars_.end()) << "unbound variable " << e.as<Variable>()->name;
        return it->second;
      }
      case IRNodeKind::kAdd: {
        const auto* op = e.as<Add>();
        return arith(op->a, op->b, t, [](int64_t a, int64_t b) { return static_cast<int64_t>(static_cast<uint64_t>(a) + static_cast<uint64_t>(b)); },
                     [](double a, double b) { return a + b; });
      }
      case IRNodeKind::kSub: {
        const auto* op = e.as<Sub>();
        return arith(op->a, op->b, t, [](int64_t a, int64_t b) { return static_cast<int64_t>(static_cast<uint64_t>(a) - static_cast<uint64_t>(b)); },
                     [](double a, double b) { return a - b; });
      }
      case IRNodeKind::kMul: {
        const auto* op = e.as<Mul>();
        return arith(op->a, op->b, t, [](int64_t a, int64_t b) { return static_cast<int64_t>(static_cast<uint64_t>(a) * static_cast<uint64_t>(b)); },
                     [](double a, double b) { return a * b; });
      }
      case IRNodeKind::kDiv: {
        const auto* op = e.as<Div>();
        return arith(op->a, op->b, t, [](int64_t, int64_t) -> int64_t { KILN_IFAIL() << "integer Div"; },
                     [](double a, double b) { return a / b; });
      }
      case IRNodeKind::kFloorDiv: {
        const auto* op = e.as<FloorDiv>();
        return arith(op->a, op->b, t, floor_div, [](double, double) -> double { KILN_IFAIL() << "float floordiv"; });
      }
      case IRNodeKind::kFloorMod: {
        const auto* op = e.as<FloorMod>();
        return arith(op->a, op->b, t, [](int64_t a, int64_t b) { return a - floor_div(a, b) * b; },
                     [](double, double) -> double { KILN_IFAIL() << "float floormod"; });
      }
      case IRNodeKind::kMin: {
        const auto* op = e.as<Min>();
        return arith(op->a, op->b, t, [](int64_t a, int64_t b) { return std::min(a, b); },
                     [](double a, double b) { return b < a ? b : a; });
      }
      case IRNodeKind::kMax: {
        const auto* op = e.as<Max>();
        return arith(op->a, op->b, t, [](int64_t a, int64_t b) { return std::max(a, b); },
                     [](double a, double b) { return b > a ? b : a; });
      }
#define KILN_TIR_INTERP_CMP(N, SYM)                                                                      \
  case IRNodeKind::k##N: {                                                                               \
    const auto* op = e.as<N>();                                                                          \
    return arith(op->a, op->b, t, [](int64_t a, int64_t b) -> int64_t { return a SYM b; },              \
                 [](double a, double b) -> double { return a SYM b; });                                  \
  }
        KILN_TIR_INTERP_CMP(EQ, ==)
        KILN_TIR_INTERP_CMP(NE, !=)
        KILN_TIR_INTERP_CMP(LT, <)
        KILN_TIR_INTERP_CMP(LE, <=)
        KILN_TIR_INTERP_CMP(GT, >)
        KILN_TIR_INTERP_CMP(GE, >=)
        KILN_TIR_INTERP_CMP(And, &&)
        KILN_TIR_INTERP_CMP(Or, ||)
#undef KILN_TIR_INTERP_CMP
      case IRNodeKind::kNot: {
        Value v = eval(e.as<Not>()->a);
        for (auto& x : v.i) x = !x;
        return v;
      }
      case IRNodeKind::kSelect: {
        const auto* op = e.as<Select>();
        Value c = broadcast(eval(op->condition), t.lanes);
        Value a = eval(op->true_value), b = eval(op->false_value);
        Value r{t, {}, {}};
        for (int l = 0; l < t.lanes; ++l) {
          if (t.is_float()) {
            r.f.push_back(c.i[l] ? a.f[l] : b.f[l]);
          } else {
            r.i.push_back(c.i[l] ? a.i[l] : b.i[l]);
          }
        }
        return r;
      }
      case IRNodeKind::kCast: return cast(eval(e.as<Cast>()->value), t);
      case IRNodeKind::kCall: return call(e.as<Call>());
      case IRNodeKind::kLoad: return load(e.as<Load>());
      case IRNodeKind::kRamp: {
        const auto* op = e.as<Ramp>();
        const int64_t b = eval(op->base).i[0], s = eval(op->stride).i[0];
        Value r{t, {}, {}};
        for (int l = 0; l < op->lanes; ++l) r.i.push_back(wrap_int(t.dtype, b + s * l));
        return r;
      }
      case IRNodeKind::kBroadcast: return broadcast(eval(e.as<Broadcast>()->value), t.lanes);
      case IRNodeKind::kLet: {
        const auto* op = e.as<Let>();
        vars_[op->var.node()] = eval(op->value);
        Value r = eval(op->body);
        vars_.erase(op->var.node());
        return r;
      }
      default: KILN_IFAIL() << "the interpreter cannot evaluate " << node_kind_name(e.kind()) << ": " << e;
    }
  }

  static Value cast(const Value& v, Type t) {
    Value r{t, {}, {}};
    for (int l = 0; l < t.lanes; ++l) {
      if (t.is_float()) {
        const double x = v.type.is_float() ? v.f[l] : static_cast<double>(v.i[l]);
        r.f.push_back(round_float(t.dtype, x));
      } else if (t.is_bool()) {
        r.i.push_back(v.type.is_float() ? v.f[l] != 0 : v.i[l] != 0);
      } else {
        const int64_t x = v.type.is_float() ? static_cast<int64_t>(std::trunc(v.f[l])) : v.i[l];
        r.i.push_back(wrap_int(t.dtype, x));
      }
    }
    return r;
  }

  // One lane of an integer bit operation (see CallOp in expr.h), wrapped to the type.
  static int64_t bit_call(CallOp op, Type t, int64_t a, int64_t b) {
    const int bits = t.bits();
    const bool is_unsigned = t.is_uint();
    uint64_t ua = static_cast<uint64_t>(a);
    if (is_unsigned && bits < 64) ua &= (uint64_t{1} << bits) - 1;
    switch (op) {
      case CallOp::kBitAnd: return wrap_int(t.dtype, a & b);
      case CallOp::kBitOr: return wrap_int(t.dtype, a | b);
      case CallOp::kBitXor: return wrap_int(t.dtype, a ^ b);
      case CallOp::kBitNot: return wrap_int(t.dtype, ~a);
      case CallOp::kShiftLeft:
        if (b < 0 || b >= bits) return 0;
        return wrap_int(t.dtype, static_cast<int64_t>(ua << b));
      case CallOp::kShiftRight:
        if (is_unsigned) return (b < 0 || b >= bits) ? 0 : wrap_int(t.dtype, static_cast<int64_t>(ua >> b));
        if (b < 0 || b >= bits) return a < 0 ? -1 : 0;
        return a >> b;
      default: KILN_IFAIL() << call_op_name(op) << " is not a bit operation";
    }
  }

  // One lane of a byte dot product (CallOp kDot4U8S8*): exact; the narrow form checks its
  // guarantee (each pair of products fits in i16) instead of saturating like vpmaddubsw.
  static int64_t dot_call(CallOp op, int64_t a, int64_t b) {
    if (op == CallOp::kDot2S16) {
      // Two s16 x s16 products, the sum wrapping modulo 2^32 like vpmaddwd.
      int64_t s = 0;
      for (int j = 0; j < 2; ++j) {
        const auto half = [&](int64_t v) { return static_cast<int64_t>(static_cast<int16_t>(static_cast<uint16_t>((static_cast<uint64_t>(v) >> (16 * j)) & 0xFFFF))); };
        s += half(a) * half(b);
      }
      return static_cast<int32_t>(static_cast<uint32_t>(static_cast<uint64_t>(s)));
    }
    int64_t total = 0;
    for (int pair = 0; pair < 2; ++pair) {
      int64_t s = 0;
      for (int j = 2 * pair; j < 2 * pair + 2; ++j) {
        const int64_t ua = (static_cast<uint64_t>(a) >> (8 * j)) & 0xFF;
        const int64_t sb = static_cast<int8_t>(static_cast<uint8_t>((static_cast<uint64_t>(b) >> (8 * j)) & 0xFF));
        s += ua * sb;
      }
      if (op == CallOp::kDot4U8S8Narrow && (s < -32768 || s > 32767)) {
        KILN_IFAIL() << "dot4_u8s8_narrow: a pair of byte products sums to " << s
                     << ", outside i16 (the narrow form needs the s8 operand's bytes in [-64, 64])";
      }
      total += s;
    }
    return total;
  }

  Value call(const Call* op) {
    // A cache hint: its element is never read (its index may lie outside the buffer).
    if (op->op == CallOp::kPrefetch) {
      Value z{op->type, {}, {}};
      if (op->type.is_float()) z.f.assign(op->type.lanes, 0.0);
      else z.i.assign(op->type.lanes, 0);
      return z;
    }
    std::vector<Value> args;
    for (const Expr& a : op->args) args.push_back(eval(a));
    Value r{op->type, {}, {}};
    if (is_dot_op(op->op)) {
      for (int l = 0; l < op->type.lanes; ++l) r.i.push_back(dot_call(op->op, args[0].i[l], args[1].i[l]));
      return r;
    }
    if (is_bit_op(op->op)) {
      for (int l = 0; l < op->type.lanes; ++l) {
        r.i.push_back(bit_call(op->op, op->type, args[0].i[l], args.size() > 1 ? args[1].i[l] : 0));
      }
      return r;
    }
    for (int l = 0; l < op->type.lanes; ++l) {
      const double x = args[0].f[l];
      double v = 0;
      switch (op->op) {
        case CallOp::kExp: v = std::exp(x); break;
        case CallOp::kLog: v = std::log(x); break;
        case CallOp::kSqrt: v = std::sqrt(x); break;
        case CallOp::kRsqrt: v = 1.0 / std::sqrt(x); break;
        case CallOp::kTanh: v = std::tanh(x); break;
        case CallOp::kErf: v = std::erf(x); break;
        case CallOp::kSigmoid: v = 1.0 / (1.0 + std::exp(-x)); break;
        case CallOp::kPow: v = std::pow(x, args[1].f[l]); break;
        case CallOp::kFabs: v = std::fabs(x); break;
        case CallOp::kFloor: v = std::floor(x); break;
        case CallOp::kCeil: v = std::ceil(x); break;
        case CallOp::kRound: v = std::nearbyint(x); break;
        case CallOp::kSin: v = std::sin(x); break;
        case CallOp::kCos: v = std::cos(x); break;
        case CallOp::kFma: v = std::fma(x, args[1].f[l], args[2].f[l]); break;
        default: KILN_IFAIL() << "unhandled call op " << call_op_name(op->op);
      }
      r.f.push_back(round_float(op->type.dtype, v));
    }
    return r;
  }

  std::vector<NDArray> arrays_;
  std::unordered_map<const BufferNode*, Storage> buffers_;
  std::unordered_map<const Variable*, Value> vars_;
};

}  // namespace

void interpret(const PrimFunc& f, const std::vector<ir::NDArray>& args) {
  if (args.size() != f->params.size()) {
    throw UserError(UserErrorKind::kInvalidArgument, "kernel '" + f->name + "'",
                    "takes " + std::to_string(f->params.size()) + " buffers, got " + std::to_string(args.size()),
                    "pass one array per parameter, inputs first then outputs");
  }
  Interpreter in;
  for (size_t k = 0; k < args.size(); ++k) {
    const Buffer& p = f->params[k];
    const ir::TensorType expected{p->dtype, p->shape};
    if (!args[k].defined() || args[k].type() != expected) {
      throw UserError(UserErrorKind::kInvalidArgument, "kernel '" + f->name + "' parameter '" + p->name + "'",
                      "expects " + expected.to_string() + ", got " +
                          (args[k].defined() ? args[k].type().to_string() : std::string("an undefined array")),
                      "");
    }
    in.bind(p.get(), args[k]);
  }
  in.exec(f->body);
}

}  // namespace kiln::tir
