// Broadcasting binary operators: add sub mul div pow min max mod fmod (output dtype of `a`), equal (bool),
// and the ternary `where`. numpy (multidirectional) broadcasting; ONNX semantics:
//   - floats compute in double and round once (exact for + - * / of f32); min/max propagate nan;
//   - integers compute in int64 and wrap modulo 2^bits like numpy; div truncates toward zero
//     (ONNX Div), and integer division by zero is a UserError (it has no defined result);
//   - mod is the floor modulo (result has b's sign, Python's %; ONNX Mod fmod=0), fmod the truncated
//     one (result has a's sign, C's fmod and %; ONNX Mod fmod=1); integers by zero are a UserError;
//   - pow's exponent may have another numeric dtype than its base (ONNX Pow's T1); an integer base
//     with an integer exponent is raised exactly (wrapping), with a float exponent via double and
//     truncated; a float base uses std::pow.
#include <cmath>
#include <limits>

#include "ir/ops/dtype_dispatch.h"
#include "ir/ops/op_util.h"

namespace kiln::ir::ops {
namespace {

using FloatFn = double (*)(double, double);
using IntFn = int64_t (*)(int64_t, int64_t);

struct BinaryDef {
  const char* name;
  const char* doc;
  FloatFn f;
  IntFn fi;
};

int64_t wrap_add(int64_t a, int64_t b) { return static_cast<int64_t>(static_cast<uint64_t>(a) + static_cast<uint64_t>(b)); }
int64_t wrap_sub(int64_t a, int64_t b) { return static_cast<int64_t>(static_cast<uint64_t>(a) - static_cast<uint64_t>(b)); }
int64_t wrap_mul(int64_t a, int64_t b) { return static_cast<int64_t>(static_cast<uint64_t>(a) * static_cast<uint64_t>(b)); }

int64_t int_div(int64_t a, int64_t b) {
  if (b == 0) {
    throw UserError(UserErrorKind::kInvalidArgument, "div", "integer division by zero",
                    "integer division by zero has no result; check the divisor or divide in floating point");
  }
  if (b == -1) return static_cast<int64_t>(0ull - static_cast<uint64_t>(a));  // INT64_MIN / -1 wraps
  return a / b;  // C++ truncates toward zero, as ONNX Div does
}

// Exact integer power by squaring (wrapping); negative exponents give 1/a^e truncated.
int64_t int_pow(int64_t a, int64_t e) {
  if (e < 0) {
    if (a == 1) return 1;
    if (a == -1) return (e % 2 == 0) ? 1 : -1;
    if (a == 0) {
      throw UserError(UserErrorKind::kInvalidArgument, "pow", "integer 0 raised to a negative power",
                      "cast the base to a float type to get inf");
    }
    return 0;
  }
  uint64_t result = 1, base = static_cast<uint64_t>(a);
  for (uint64_t n = static_cast<uint64_t>(e); n != 0; n >>= 1) {
    if (n & 1) result *= base;
    base *= base;
  }
  return static_cast<int64_t>(result);
}

void check_int_divisor(const char* op, int64_t b) {
  if (b == 0) {
    throw UserError(UserErrorKind::kInvalidArgument, op, "integer modulo by zero",
                    "integer modulo by zero has no result; check the divisor");
  }
}

int64_t int_fmod(int64_t a, int64_t b) {
  check_int_divisor("fmod", b);
  if (b == -1) return 0;  // INT64_MIN % -1 overflows in C++
  return a % b;  // C++ truncates: the result has a's sign
}

int64_t int_floor_mod(int64_t a, int64_t b) {
  check_int_divisor("mod", b);
  if (b == -1) return 0;
  const int64_t r = a % b;
  return (r != 0 && ((r < 0) != (b < 0))) ? r + b : r;
}

double floor_mod(double a, double b) {
  const double r = std::fmod(a, b);
  return (r != 0 && ((r < 0) != (b < 0))) ? r + b : r;
}

double nan_min(double a, double b) { return std::isnan(a) || std::isnan(b) ? std::numeric_limits<double>::quiet_NaN() : std::min(a, b); }
double nan_max(double a, double b) { return std::isnan(a) || std::isnan(b) ? std::numeric_limits<double>::quiet_NaN() : std::max(a, b); }

const BinaryDef kBinaryDefs[] = {
    {"add", "a + b", [](double a, double b) { return a + b; }, wrap_add},
    {"sub", "a - b", [](double a, double b) { return a - b; }, wrap_sub},
    {"mul", "a * b", [](double a, double b) { return a * b; }, wrap_mul},
    {"div", "a / b (integers truncate toward zero)", [](double a, double b) { return a / b; }, int_div},
    {"pow", "a ^ b (b may have another numeric dtype)", [](double a, double b) { return std::pow(a, b); }, int_pow},
    {"min", "elementwise minimum (nan propagates)", nan_min, [](int64_t a, int64_t b) { return std::min(a, b); }},
    {"max", "elementwise maximum (nan propagates)", nan_max, [](int64_t a, int64_t b) { return std::max(a, b); }},
    {"mod", "a mod b, floored: the result has b's sign (Python %)", floor_mod, int_floor_mod},
    {"fmod", "a mod b, truncated: the result has a's sign (C fmod)", [](double a, double b) { return std::fmod(a, b); },
     int_fmod},
};

const BinaryDef& find_def(const char* name) {
  for (const auto& d : kBinaryDefs) {
    if (std::string(d.name) == name) return d;
  }
  KILN_IFAIL() << "no binary definition '" << name << "'";
}

// out[i] = fn(a[ia], b[ib]) over the broadcast of a and b.
template <typename TA, typename TB, typename TO, typename Fn>
void broadcast_apply(const NDArray& a, const NDArray& b, NDArray& out, Fn&& fn) {
  auto pa = a.data<TA>();
  auto pb = b.data<TB>();
  auto po = out.mutable_data<TO>();
  if (a.shape() == out.shape() && b.shape() == out.shape()) {
    for (size_t i = 0; i < po.size(); ++i) po[i] = fn(pa[i], pb[i]);
    return;
  }
  const std::vector<int64_t> strides[2] = {broadcast_strides(a.shape(), out.shape()),
                                           broadcast_strides(b.shape(), out.shape())};
  for_each_strided(out.shape(), strides, [&](int64_t i, const int64_t* off) { po[i] = fn(pa[off[0]], pb[off[1]]); });
}

NDArray apply_binary(const BinaryDef& def, const NDArray& a, const NDArray& b, const Shape& out_shape) {
  NDArray out = NDArray::empty(a.dtype(), out_shape);
  visit_dtype(a.dtype(), [&]<typename TA>() {
    visit_dtype(b.dtype(), [&]<typename TB>() {
      if constexpr (std::is_same_v<TA, Bool> || std::is_same_v<TB, Bool>) {
        KILN_IFAIL() << def.name << " on bool";
      } else if constexpr (kIsFloatStorage<TA>) {
        broadcast_apply<TA, TB, TA>(a, b, out, [&](TA x, TB y) { return from_double<TA>(def.f(to_double(x), to_double(y))); });
      } else if constexpr (kIsIntStorage<TB>) {
        broadcast_apply<TA, TB, TA>(a, b, out, [&](TA x, TB y) { return from_int64<TA>(def.fi(to_int64(x), to_int64(y))); });
      } else {  // integer base, float exponent (pow only): via double, truncated
        broadcast_apply<TA, TB, TA>(a, b, out, [&](TA x, TB y) { return from_double<TA>(def.f(to_double(x), to_double(y))); });
      }
    });
  });
  return out;
}

OpDef make_binary(const char* name) {
  const BinaryDef& def = find_def(name);
  const bool mixed = std::string(name) == "pow";
  OpDef d;
  d.name = def.name;
  d.doc = def.doc;
  d.min_inputs = d.max_inputs = 2;
  d.pattern = OpPattern::kBroadcast;
  d.infer_type = [&def, mixed](const std::vector<TensorType>& in, const Attrs&) {
    require_dtype(def.name, 0, "a", in[0].dtype, DTypeSet::kNumeric);
    require_dtype(def.name, 1, "b", in[1].dtype, DTypeSet::kNumeric);
    if (!mixed) require_same_dtype(def.name, in, {"a", "b"});
    return std::vector<TensorType>{{in[0].dtype, broadcast_shapes(def.name, {in[0].shape, in[1].shape}, {"a", "b"})}};
  };
  d.reference = [&def](const std::vector<NDArray>& in, const Attrs&, const std::vector<TensorType>& out) {
    return std::vector<NDArray>{apply_binary(def, in[0], in[1], out[0].shape)};
  };
  return with_arity_check(std::move(d));
}

}  // namespace

KILN_REGISTER_OP(add) { return make_binary("add"); }
KILN_REGISTER_OP(sub) { return make_binary("sub"); }
KILN_REGISTER_OP(mul) { return make_binary("mul"); }
KILN_REGISTER_OP(div) { return make_binary("div"); }
KILN_REGISTER_OP(pow) { return make_binary("pow"); }
KILN_REGISTER_OP(min) { return make_binary("min"); }
KILN_REGISTER_OP(max) { return make_binary("max"); }
KILN_REGISTER_OP(mod) { return make_binary("mod"); }
KILN_REGISTER_OP(fmod) { return make_binary("fmod"); }

KILN_REGISTER_OP(equal) {
  OpDef d;
  d.name = "equal";
  d.doc = "a == b elementwise, bool result (nan != nan)";
  d.min_inputs = d.max_inputs = 2;
  d.pattern = OpPattern::kBroadcast;
  d.infer_type = [](const std::vector<TensorType>& in, const Attrs&) {
    require_same_dtype("equal", in, {"a", "b"});
    return std::vector<TensorType>{{DType::kBool, broadcast_shapes("equal", {in[0].shape, in[1].shape}, {"a", "b"})}};
  };
  d.reference = [](const std::vector<NDArray>& in, const Attrs&, const std::vector<TensorType>& out_types) {
    NDArray out = NDArray::empty(DType::kBool, out_types[0].shape);
    visit_dtype(in[0].dtype(), [&]<typename T>() {
      broadcast_apply<T, T, Bool>(in[0], in[1], out, [](T x, T y) {
        if constexpr (kIsFloatStorage<T>) return Bool{static_cast<uint8_t>(to_double(x) == to_double(y))};
        else return Bool{static_cast<uint8_t>(to_int64(x) == to_int64(y))};
      });
    });
    return std::vector<NDArray>{out};
  };
  return with_arity_check(std::move(d));
}

KILN_REGISTER_OP(where) {
  OpDef d;
  d.name = "where";
  d.doc = "cond ? x : y elementwise, broadcasting all three";
  d.min_inputs = d.max_inputs = 3;
  d.pattern = OpPattern::kBroadcast;
  d.infer_type = [](const std::vector<TensorType>& in, const Attrs&) {
    if (in[0].dtype != DType::kBool) {
      fail_input("where", 0, "cond", std::string("has element type ") + dtype_name(in[0].dtype) + ", expected bool",
                 "compare or cast the condition to bool");
    }
    require_same_dtype("where", {in[1], in[2]}, {"x", "y"});
    const Shape shape = broadcast_shapes("where", {in[0].shape, in[1].shape, in[2].shape}, {"cond", "x", "y"});
    return std::vector<TensorType>{{in[1].dtype, shape}};
  };
  d.reference = [](const std::vector<NDArray>& in, const Attrs&, const std::vector<TensorType>& out_types) {
    const Shape& shape = out_types[0].shape;
    NDArray out = NDArray::empty(in[1].dtype(), shape);
    const std::vector<int64_t> strides[3] = {broadcast_strides(in[0].shape(), shape),
                                             broadcast_strides(in[1].shape(), shape),
                                             broadcast_strides(in[2].shape(), shape)};
    auto cond = in[0].data<Bool>();
    visit_dtype(in[1].dtype(), [&]<typename T>() {
      auto x = in[1].data<T>();
      auto y = in[2].data<T>();
      auto o = out.mutable_data<T>();
      for_each_strided(shape, strides,
                       [&](int64_t i, const int64_t* off) { o[i] = cond[off[0]].value ? x[off[1]] : y[off[2]]; });
    });
    return std::vector<NDArray>{out};
  };
  return with_arity_check(std::move(d));
}

}  // namespace kiln::ir::ops
