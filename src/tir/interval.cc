// Interval arithmetic over integer expressions. Every operation saturates to "unbounded" on
// overflow, so a reported bound is always sound.
#include "kiln/tir/interval.h"

#include <algorithm>

#include "kiln/tir/printer.h"

namespace kiln::tir {
namespace {

using I = Interval;

int64_t add_lo(int64_t a, int64_t b) {
  if (a == I::kNegInf || b == I::kNegInf) return I::kNegInf;
  int64_t r;
  if (__builtin_add_overflow(a, b, &r)) return I::kNegInf;
  return r;
}

int64_t add_hi(int64_t a, int64_t b) {
  if (a == I::kPosInf || b == I::kPosInf) return I::kPosInf;
  int64_t r;
  if (__builtin_add_overflow(a, b, &r)) return I::kPosInf;
  return r;
}

Interval add(const I& a, const I& b) { return {add_lo(a.lo, b.lo), add_hi(a.hi, b.hi)}; }

Interval negate(const I& a) {
  I r;
  r.lo = a.has_hi() ? -a.hi : I::kNegInf;
  r.hi = a.has_lo() && a.lo != I::kNegInf ? -a.lo : I::kPosInf;
  return r;
}

Interval mul(const I& a, const I& b) {
  if (!a.has_lo() || !a.has_hi() || !b.has_lo() || !b.has_hi()) {
    // A constant non-negative factor keeps the sign structure of the other side.
    if (b.is_point() && b.lo >= 0) {
      I r;
      int64_t v;
      r.lo = a.has_lo() && !__builtin_mul_overflow(a.lo, b.lo, &v) ? v : I::kNegInf;
      r.hi = a.has_hi() && !__builtin_mul_overflow(a.hi, b.lo, &v) ? v : I::kPosInf;
      return r;
    }
    if (a.is_point()) return mul(b, a);
    return I::everything();
  }
  int64_t c[4];
  if (__builtin_mul_overflow(a.lo, b.lo, &c[0]) || __builtin_mul_overflow(a.lo, b.hi, &c[1]) ||
      __builtin_mul_overflow(a.hi, b.lo, &c[2]) || __builtin_mul_overflow(a.hi, b.hi, &c[3])) {
    return I::everything();
  }
  return {*std::min_element(c, c + 4), *std::max_element(c, c + 4)};
}

int64_t fdiv(int64_t a, int64_t b) {
  int64_t q = a / b;
  if ((a % b != 0) && ((a < 0) != (b < 0))) --q;
  return q;
}

Interval floordiv(const I& a, const I& b) {
  if (!b.is_point() || b.lo <= 0) return I::everything();
  const int64_t c = b.lo;
  return {a.has_lo() ? fdiv(a.lo, c) : I::kNegInf, a.has_hi() ? fdiv(a.hi, c) : I::kPosInf};
}

Interval floormod(const I& a, const I& b) {
  if (!b.is_point() || b.lo <= 0) {
    if (b.has_lo() && b.lo > 0 && b.has_hi()) return {0, b.hi - 1};
    return I::everything();
  }
  const int64_t c = b.lo;
  if (a.has_lo() && a.has_hi() && fdiv(a.lo, c) == fdiv(a.hi, c)) {
    const int64_t base = fdiv(a.lo, c) * c;
    return {a.lo - base, a.hi - base};
  }
  return {0, c - 1};
}

class Bounder {
 public:
  explicit Bounder(const VarBounds& b) : bounds_(b) {}

  Interval of(const Expr& e) {
    if (!e.defined()) return I::everything();
    const Type t = e.type();
    if (t.is_bool()) return bool_bound(e);
    if (!t.is_int_or_uint()) return I::everything();
    switch (e.kind()) {
      case IRNodeKind::kIntImm: return I::point(e.as<IntImm>()->value);
      case IRNodeKind::kVariable: {
        auto it = bounds_.find(e.as<Variable>());
        if (it != bounds_.end()) return it->second;
        if (local_.count(e.as<Variable>())) return local_.at(e.as<Variable>());
        return type_bound(t);
      }
      case IRNodeKind::kAdd: return add(of(e.as<Add>()->a), of(e.as<Add>()->b));
      case IRNodeKind::kSub: return add(of(e.as<Sub>()->a), negate(of(e.as<Sub>()->b)));
      case IRNodeKind::kMul: return mul(of(e.as<Mul>()->a), of(e.as<Mul>()->b));
      case IRNodeKind::kFloorDiv: return floordiv(of(e.as<FloorDiv>()->a), of(e.as<FloorDiv>()->b));
      case IRNodeKind::kFloorMod: return floormod(of(e.as<FloorMod>()->a), of(e.as<FloorMod>()->b));
      case IRNodeKind::kMin: {
        I a = of(e.as<Min>()->a), b = of(e.as<Min>()->b);
        return {std::min(a.lo, b.lo), std::min(a.hi, b.hi)};
      }
      case IRNodeKind::kMax: {
        I a = of(e.as<Max>()->a), b = of(e.as<Max>()->b);
        return {std::max(a.lo, b.lo), std::max(a.hi, b.hi)};
      }
      case IRNodeKind::kSelect:
        return I::hull(of(e.as<Select>()->true_value), of(e.as<Select>()->false_value));
      case IRNodeKind::kCast: {
        const Expr& v = e.as<Cast>()->value;
        if (v.type().is_int_or_uint() || v.type().is_bool()) {
          I inner = of(v);
          I range = type_bound(t);
          if (inner.lo >= range.lo && inner.hi <= range.hi) return inner;
        }
        return type_bound(t);
      }
      case IRNodeKind::kRamp: {
        const auto* r = e.as<Ramp>();
        return add(of(r->base), mul(of(r->stride), I::range(0, r->lanes - 1)));
      }
      case IRNodeKind::kBroadcast: return of(e.as<Broadcast>()->value);
      case IRNodeKind::kLet: {
        const auto* l = e.as<Let>();
        local_[l->var.node()] = of(l->value);
        return of(l->body);
      }
      default: return type_bound(t);
    }
  }

 private:
  Interval bool_bound(const Expr& e) {
    if (const auto* i = e.as<IntImm>()) return I::point(i->value);
    return I::range(0, 1);
  }
  static Interval type_bound(Type t) {
    switch (t.dtype) {
      case DType::kI8: return I::range(-128, 127);
      case DType::kU8: return I::range(0, 255);
      case DType::kI16: return I::range(-32768, 32767);
      case DType::kI32: return I::range(INT32_MIN, INT32_MAX);
      case DType::kU16: return I::range(0, 65535);
      case DType::kU32: return I::range(0, UINT32_MAX);
      case DType::kBool: return I::range(0, 1);
      default: return I::everything();
    }
  }

  const VarBounds& bounds_;
  VarBounds local_;
};

}  // namespace

Interval Interval::hull(const Interval& a, const Interval& b) { return {std::min(a.lo, b.lo), std::max(a.hi, b.hi)}; }

Interval bound_of(const Expr& e, const VarBounds& bounds) { return Bounder(bounds).of(e); }

}  // namespace kiln::tir
