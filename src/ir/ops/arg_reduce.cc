// Index reductions: argmax, argmin (ONNX ArgMax/ArgMin) along one resolved axis, i64 result.
// keepdims=1 keeps the axis as size 1. Ties give the first index, or the last with
// select_last_index=1. A nan counts as larger (argmax) or smaller (argmin) than every number, the
// first nan winning, as numpy's argmax/argmin. The axis must not be empty.
#include <cmath>

#include "ir/ops/dtype_dispatch.h"
#include "ir/ops/op_util.h"

namespace kiln::ir::ops {
namespace {

std::vector<TensorType> infer_arg(const std::string& op, const std::vector<TensorType>& in, const Attrs& attrs) {
  require_dtype(op, 0, "x", in[0].dtype, DTypeSet::kNumeric);
  const int64_t axis = axis_attr(op, attrs, "axis", in[0].rank());
  for (const char* flag : {"keepdims", "select_last_index"}) {
    const int64_t v = attrs.get_int(flag);
    if (v != 0 && v != 1) fail_attr(op, flag, "is " + std::to_string(v) + ", expected 0 or 1");
  }
  if (in[0].shape[axis] == 0) {
    fail_input(op, 0, "x", "has an empty axis " + std::to_string(axis) + " (shape " + shape_to_string(in[0].shape) + ")",
               "an index reduction over no elements has no result");
  }
  Shape out;
  for (int d = 0; d < in[0].rank(); ++d) {
    if (d != axis) out.push_back(in[0].shape[d]);
    else if (attrs.get_int("keepdims")) out.push_back(1);
  }
  return {{DType::kI64, out}};
}

NDArray arg_reduce(bool is_max, const NDArray& x, const Attrs& attrs, const TensorType& out_type) {
  const int axis = static_cast<int>(attrs.get_int("axis"));
  const bool last = attrs.get_int("select_last_index") != 0;
  const AxisSplit s = split_at_axis(x.shape(), axis);
  NDArray out = NDArray::empty(DType::kI64, out_type.shape);
  auto o = out.mutable_data<int64_t>();
  visit_dtype(x.dtype(), [&]<typename T>() {
    if constexpr (std::is_same_v<T, Bool>) {
      KILN_IFAIL() << "arg reduction on bool";
    } else {
      auto in = x.data<T>();
      // true when v should replace the best so far (index order: earlier indices first)
      auto better = [&](T v, T best) {
        if constexpr (kIsFloatStorage<T>) {
          const double a = to_double(v), b = to_double(best);
          if (std::isnan(b)) return false;  // the first nan stays
          if (std::isnan(a)) return true;
          return last ? (is_max ? a >= b : a <= b) : (is_max ? a > b : a < b);
        } else {
          const int64_t a = to_int64(v), b = to_int64(best);
          return last ? (is_max ? a >= b : a <= b) : (is_max ? a > b : a < b);
        }
      };
      for (int64_t outer = 0; outer < s.outer; ++outer) {
        for (int64_t inner = 0; inner < s.inner; ++inner) {
          const int64_t base = outer * s.size * s.inner + inner;
          int64_t best = 0;
          for (int64_t k = 1; k < s.size; ++k) {
            if (better(in[base + k * s.inner], in[base + best * s.inner])) best = k;
          }
          o[outer * s.inner + inner] = best;
        }
      }
    }
  });
  return out;
}

OpDef make_arg(const char* name, const char* doc, bool is_max) {
  OpDef d;
  d.name = name;
  d.doc = doc;
  d.attrs = {
      {"axis", AttrKind::kInt, std::nullopt, "the reduced axis (non-negative)"},
      {"keepdims", AttrKind::kInt, AttrValue(int64_t{1}), "1: keep the axis as size 1"},
      {"select_last_index", AttrKind::kInt, AttrValue(int64_t{0}), "1: ties give the last index"},
  };
  const std::string op = name;
  d.infer_type = [op](const std::vector<TensorType>& in, const Attrs& attrs) { return infer_arg(op, in, attrs); };
  d.reference = [is_max](const std::vector<NDArray>& in, const Attrs& attrs, const std::vector<TensorType>& out) {
    return std::vector<NDArray>{arg_reduce(is_max, in[0], attrs, out[0])};
  };
  d.pattern = OpPattern::kOpaque;
  return with_arity_check(std::move(d));
}

}  // namespace

KILN_REGISTER_OP(argmax) { return make_arg("argmax", "index of the maximum along axis (i64)", true); }
KILN_REGISTER_OP(argmin) { return make_arg("argmin", "index of the minimum along axis (i64)", false); }

}  // namespace kiln::ir::ops
