// Comparison, logical, bitwise and classification operators (ONNX semantics), numpy broadcasting:
//   less greater less_equal greater_equal (a, b same numeric dtype -> bool; nan compares false),
//   logical_and logical_or logical_xor (bool, bool -> bool),
//   bitwise_and bitwise_or bitwise_xor (integers, same dtype), bitwise_not (integers),
//   bit_shift(direction "left"/"right") (integers: a shifted by b bits; unsigned shifts are
//     logical, signed ones arithmetic; a shift by b < 0 or b >= the type's bits gives 0, or -1
//     for a right shift of a negative value, as numpy's),
//   prelu (x, slope: slope broadcasts unidirectionally to x; x < 0 ? slope * x : x),
//   is_nan (floats -> bool), is_inf(detect_positive, detect_negative) (floats -> bool).
// Floats compare in double (exact); integers in int64 (exact for every Kiln integer dtype; a
// uint64 is compared as its unsigned value).
#include <algorithm>
#include <cmath>
#include <string>

#include "ir/ops/dtype_dispatch.h"
#include "ir/ops/op_util.h"

namespace kiln::ir::ops {
namespace {

bool is_integer(DType d) { return !is_float(d) && d != DType::kBool; }
bool is_unsigned(DType d) { return d == DType::kU8 || std::string(dtype_name(d)).rfind('u', 0) == 0; }

void require_integer(const std::string& op, int index, const std::string& name, DType d) {
  if (!is_integer(d)) fail_unsupported_dtype(op, index, name, d, "integer types");
}

// out[i] = fn(a[ia], b[ib]) over the broadcast shape, elements read through `read`.
template <typename TA, typename TB, typename TO, typename Fn>
void broadcast_map(const NDArray& a, const NDArray& b, NDArray& out, Fn&& fn) {
  auto pa = a.data<TA>();
  auto pb = b.data<TB>();
  auto po = out.mutable_data<TO>();
  const std::vector<int64_t> strides[2] = {broadcast_strides(a.shape(), out.shape()),
                                           broadcast_strides(b.shape(), out.shape())};
  for_each_strided(out.shape(), strides, [&](int64_t i, const int64_t* off) { po[i] = fn(pa[off[0]], pb[off[1]]); });
}

Bool as_bool(bool v) { return Bool{static_cast<uint8_t>(v ? 1 : 0)}; }

// ---- comparisons ----

enum class Cmp { kLess, kGreater, kLessEqual, kGreaterEqual };

template <typename V>
bool compare(Cmp c, V x, V y) {
  switch (c) {
    case Cmp::kLess: return x < y;
    case Cmp::kGreater: return x > y;
    case Cmp::kLessEqual: return x <= y;
    case Cmp::kGreaterEqual: return x >= y;
  }
  return false;
}

OpDef make_compare(const char* name, const char* doc, Cmp cmp) {
  OpDef d;
  d.name = name;
  d.doc = doc;
  d.min_inputs = d.max_inputs = 2;
  d.pattern = OpPattern::kBroadcast;
  const std::string op = name;
  d.infer_type = [op](const std::vector<TensorType>& in, const Attrs&) {
    require_dtype(op, 0, "a", in[0].dtype, DTypeSet::kNumeric);
    require_same_dtype(op, in, {"a", "b"});
    return std::vector<TensorType>{{DType::kBool, broadcast_shapes(op, {in[0].shape, in[1].shape}, {"a", "b"})}};
  };
  d.reference = [cmp](const std::vector<NDArray>& in, const Attrs&, const std::vector<TensorType>& out_types) {
    NDArray out = NDArray::empty(DType::kBool, out_types[0].shape);
    const bool unsigned_ints = is_unsigned(in[0].dtype());
    visit_dtype(in[0].dtype(), [&]<typename T>() {
      broadcast_map<T, T, Bool>(in[0], in[1], out, [&](T x, T y) {
        if constexpr (kIsFloatStorage<T>) {
          return as_bool(compare(cmp, to_double(x), to_double(y)));
        } else {
          if (unsigned_ints) {
            return as_bool(compare(cmp, static_cast<uint64_t>(to_int64(x)), static_cast<uint64_t>(to_int64(y))));
          }
          return as_bool(compare(cmp, to_int64(x), to_int64(y)));
        }
      });
    });
    return std::vector<NDArray>{out};
  };
  return with_arity_check(std::move(d));
}

// ---- logical (bool) and bitwise (integer) binaries ----

enum class Bits { kAnd, kOr, kXor };

int64_t bits_apply(Bits k, int64_t x, int64_t y) {
  switch (k) {
    case Bits::kAnd: return x & y;
    case Bits::kOr: return x | y;
    case Bits::kXor: return x ^ y;
  }
  return 0;
}

OpDef make_logical(const char* name, const char* doc, Bits k) {
  OpDef d;
  d.name = name;
  d.doc = doc;
  d.min_inputs = d.max_inputs = 2;
  d.pattern = OpPattern::kBroadcast;
  const std::string op = name;
  d.infer_type = [op](const std::vector<TensorType>& in, const Attrs&) {
    for (int i = 0; i < 2; ++i) {
      if (in[i].dtype != DType::kBool) fail_unsupported_dtype(op, i, i == 0 ? "a" : "b", in[i].dtype, "bool");
    }
    return std::vector<TensorType>{{DType::kBool, broadcast_shapes(op, {in[0].shape, in[1].shape}, {"a", "b"})}};
  };
  d.reference = [k](const std::vector<NDArray>& in, const Attrs&, const std::vector<TensorType>& out_types) {
    NDArray out = NDArray::empty(DType::kBool, out_types[0].shape);
    broadcast_map<Bool, Bool, Bool>(in[0], in[1], out, [&](Bool x, Bool y) {
      return as_bool(bits_apply(k, x.value != 0, y.value != 0) != 0);
    });
    return std::vector<NDArray>{out};
  };
  return with_arity_check(std::move(d));
}

OpDef make_bitwise(const char* name, const char* doc, Bits k) {
  OpDef d;
  d.name = name;
  d.doc = doc;
  d.min_inputs = d.max_inputs = 2;
  d.pattern = OpPattern::kBroadcast;
  const std::string op = name;
  d.infer_type = [op](const std::vector<TensorType>& in, const Attrs&) {
    require_integer(op, 0, "a", in[0].dtype);
    require_same_dtype(op, in, {"a", "b"});
    return std::vector<TensorType>{{in[0].dtype, broadcast_shapes(op, {in[0].shape, in[1].shape}, {"a", "b"})}};
  };
  d.reference = [k](const std::vector<NDArray>& in, const Attrs&, const std::vector<TensorType>& out_types) {
    NDArray out = NDArray::empty(in[0].dtype(), out_types[0].shape);
    visit_dtype(in[0].dtype(), [&]<typename T>() {
      if constexpr (kIsIntStorage<T>) {
        broadcast_map<T, T, T>(in[0], in[1], out,
                               [&](T x, T y) { return from_int64<T>(bits_apply(k, to_int64(x), to_int64(y))); });
      } else {
        KILN_IFAIL() << "bitwise op on " << dtype_name(in[0].dtype());
      }
    });
    return std::vector<NDArray>{out};
  };
  return with_arity_check(std::move(d));
}

// a shifted by n bits within a `bits`-wide integer (see the file comment).
int64_t shift(bool left, bool unsigned_type, int bits, int64_t a, int64_t n) {
  uint64_t ua = static_cast<uint64_t>(a);
  if (unsigned_type && bits < 64) ua &= (uint64_t{1} << bits) - 1;
  if (n < 0 || n >= bits) return (!left && !unsigned_type && a < 0) ? -1 : 0;
  if (left) return static_cast<int64_t>(ua << n);
  return unsigned_type ? static_cast<int64_t>(ua >> n) : a >> n;
}

// ---- unary: bitwise_not, is_nan, is_inf ----

template <typename TO, typename Fn>
NDArray map_unary(const NDArray& x, DType out_dtype, Fn&& fn) {
  NDArray out = NDArray::empty(out_dtype, x.shape());
  auto o = out.mutable_data<TO>();
  visit_dtype(x.dtype(), [&]<typename T>() {
    auto in = x.data<T>();
    for (size_t i = 0; i < in.size(); ++i) o[i] = fn(in[i]);
  });
  return out;
}

}  // namespace

KILN_REGISTER_OP(less) { return make_compare("less", "a < b elementwise, bool result", Cmp::kLess); }
KILN_REGISTER_OP(greater) { return make_compare("greater", "a > b elementwise, bool result", Cmp::kGreater); }
KILN_REGISTER_OP(less_equal) { return make_compare("less_equal", "a <= b elementwise, bool result", Cmp::kLessEqual); }
KILN_REGISTER_OP(greater_equal) {
  return make_compare("greater_equal", "a >= b elementwise, bool result", Cmp::kGreaterEqual);
}
KILN_REGISTER_OP(logical_and) { return make_logical("logical_and", "a and b (bool)", Bits::kAnd); }
KILN_REGISTER_OP(logical_or) { return make_logical("logical_or", "a or b (bool)", Bits::kOr); }
KILN_REGISTER_OP(logical_xor) { return make_logical("logical_xor", "a xor b (bool)", Bits::kXor); }
KILN_REGISTER_OP(bitwise_and) { return make_bitwise("bitwise_and", "a & b (integers)", Bits::kAnd); }
KILN_REGISTER_OP(bitwise_or) { return make_bitwise("bitwise_or", "a | b (integers)", Bits::kOr); }
KILN_REGISTER_OP(bitwise_xor) { return make_bitwise("bitwise_xor", "a ^ b (integers)", Bits::kXor); }

KILN_REGISTER_OP(bit_shift) {
  OpDef d;
  d.name = "bit_shift";
  d.doc = "a << b or a >> b (integers; wide shifts give 0)";
  d.min_inputs = d.max_inputs = 2;
  d.pattern = OpPattern::kBroadcast;
  d.attrs = {{"direction", AttrKind::kString, std::nullopt, "\"left\" or \"right\""}};
  d.infer_type = [](const std::vector<TensorType>& in, const Attrs& attrs) {
    require_integer("bit_shift", 0, "a", in[0].dtype);
    require_same_dtype("bit_shift", in, {"a", "b"});
    const std::string& dir = attrs.get_string("direction");
    if (dir != "left" && dir != "right") fail_attr("bit_shift", "direction", "is \"" + dir + "\"", "expected \"left\" or \"right\"");
    return std::vector<TensorType>{{in[0].dtype, broadcast_shapes("bit_shift", {in[0].shape, in[1].shape}, {"a", "b"})}};
  };
  d.reference = [](const std::vector<NDArray>& in, const Attrs& attrs, const std::vector<TensorType>& out_types) {
    const bool left = attrs.get_string("direction") == "left";
    const DType dt = in[0].dtype();
    const bool uns = is_unsigned(dt);
    const int bits = static_cast<int>(dtype_size(dt)) * 8;
    NDArray out = NDArray::empty(dt, out_types[0].shape);
    visit_dtype(dt, [&]<typename T>() {
      if constexpr (kIsIntStorage<T>) {
        broadcast_map<T, T, T>(in[0], in[1], out, [&](T x, T y) {
          const int64_t n = uns ? static_cast<int64_t>(std::min<uint64_t>(static_cast<uint64_t>(to_int64(y)), 64))
                                : to_int64(y);
          return from_int64<T>(shift(left, uns, bits, to_int64(x), n));
        });
      } else {
        KILN_IFAIL() << "bit_shift on " << dtype_name(dt);
      }
    });
    return std::vector<NDArray>{out};
  };
  return with_arity_check(std::move(d));
}

KILN_REGISTER_OP(bitwise_not) {
  OpDef d;
  d.name = "bitwise_not";
  d.doc = "~x (integers)";
  d.pattern = OpPattern::kElemwise;
  d.infer_type = [](const std::vector<TensorType>& in, const Attrs&) {
    require_integer("bitwise_not", 0, "x", in[0].dtype);
    return std::vector<TensorType>{in[0]};
  };
  d.reference = [](const std::vector<NDArray>& in, const Attrs&, const std::vector<TensorType>&) {
    NDArray out = NDArray::empty(in[0].dtype(), in[0].shape());
    visit_dtype(in[0].dtype(), [&]<typename T>() {
      if constexpr (kIsIntStorage<T>) {
        auto x = in[0].data<T>();
        auto o = out.mutable_data<T>();
        for (size_t i = 0; i < x.size(); ++i) o[i] = from_int64<T>(~to_int64(x[i]));
      } else {
        KILN_IFAIL() << "bitwise_not on " << dtype_name(in[0].dtype());
      }
    });
    return std::vector<NDArray>{out};
  };
  return with_arity_check(std::move(d));
}

KILN_REGISTER_OP(is_nan) {
  OpDef d;
  d.name = "is_nan";
  d.doc = "x is nan (bool)";
  d.pattern = OpPattern::kElemwise;
  d.infer_type = [](const std::vector<TensorType>& in, const Attrs&) {
    require_dtype("is_nan", 0, "x", in[0].dtype, DTypeSet::kFloat);
    return std::vector<TensorType>{{DType::kBool, in[0].shape}};
  };
  d.reference = [](const std::vector<NDArray>& in, const Attrs&, const std::vector<TensorType>&) {
    return std::vector<NDArray>{map_unary<Bool>(in[0], DType::kBool, [](auto v) { return as_bool(std::isnan(to_double(v))); })};
  };
  return with_arity_check(std::move(d));
}

KILN_REGISTER_OP(is_inf) {
  OpDef d;
  d.name = "is_inf";
  d.doc = "x is +inf (detect_positive) or -inf (detect_negative) (bool)";
  d.pattern = OpPattern::kElemwise;
  d.attrs = {{"detect_positive", AttrKind::kInt, AttrValue(int64_t{1}), "1: +inf counts"},
             {"detect_negative", AttrKind::kInt, AttrValue(int64_t{1}), "1: -inf counts"}};
  d.infer_type = [](const std::vector<TensorType>& in, const Attrs&) {
    require_dtype("is_inf", 0, "x", in[0].dtype, DTypeSet::kFloat);
    return std::vector<TensorType>{{DType::kBool, in[0].shape}};
  };
  d.reference = [](const std::vector<NDArray>& in, const Attrs& attrs, const std::vector<TensorType>&) {
    const bool pos = attrs.get_int("detect_positive") != 0, neg = attrs.get_int("detect_negative") != 0;
    return std::vector<NDArray>{map_unary<Bool>(in[0], DType::kBool, [&](auto v) {
      const double x = to_double(v);
      return as_bool(std::isinf(x) && ((x > 0 && pos) || (x < 0 && neg)));
    })};
  };
  return with_arity_check(std::move(d));
}

KILN_REGISTER_OP(prelu) {
  OpDef d;
  d.name = "prelu";
  d.doc = "x < 0 ? slope * x : x (slope broadcasts to x)";
  d.min_inputs = d.max_inputs = 2;
  d.pattern = OpPattern::kBroadcast;
  d.infer_type = [](const std::vector<TensorType>& in, const Attrs&) {
    require_dtype("prelu", 0, "x", in[0].dtype, DTypeSet::kNumeric);
    require_same_dtype("prelu", in, {"x", "slope"});
    if (!broadcasts_to(in[1].shape, in[0].shape)) {
      fail_input("prelu", 1, "slope",
                 "has shape " + shape_to_string(in[1].shape) + ", which does not broadcast to x's shape " +
                     shape_to_string(in[0].shape),
                 "PRelu's slope broadcasts unidirectionally to x (e.g. [C, 1, 1] for NCHW)");
    }
    return std::vector<TensorType>{in[0]};
  };
  d.reference = [](const std::vector<NDArray>& in, const Attrs&, const std::vector<TensorType>& out_types) {
    NDArray out = NDArray::empty(in[0].dtype(), out_types[0].shape);
    visit_dtype(in[0].dtype(), [&]<typename T>() {
      if constexpr (kIsFloatStorage<T>) {
        broadcast_map<T, T, T>(in[0], in[1], out, [](T x, T s) {
          const double v = to_double(x);
          return from_double<T>(v < 0 ? v * to_double(s) : v);
        });
      } else if constexpr (kIsIntStorage<T>) {
        broadcast_map<T, T, T>(in[0], in[1], out, [](T x, T s) {
          const int64_t v = to_int64(x);
          return from_int64<T>(v < 0 ? static_cast<int64_t>(static_cast<uint64_t>(v) * static_cast<uint64_t>(to_int64(s))) : v);
        });
      } else {
        KILN_IFAIL() << "prelu on bool";
      }
    });
    return std::vector<NDArray>{out};
  };
  return with_arity_check(std::move(d));
}

}  // namespace kiln::ir::ops
