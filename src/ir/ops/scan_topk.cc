// Scans and selection along one axis: `cumsum` / `cumprod` (ONNX CumSum, CumProd; `exclusive`
// leaves out the element itself, `reverse` runs from the end) and `topk` (ONNX TopK: the k largest
// or smallest elements along `axis` and their int64 indices, sorted; equal values keep their
// index order, NaN counts as larger than every number, as numpy's sort). Floats accumulate in
// double and round once; integers in int64, wrapping.
#include <algorithm>
#include <cmath>
#include <numeric>

#include "ir/ops/dtype_dispatch.h"
#include "ir/ops/op_util.h"

namespace kiln::ir::ops {
namespace {

std::vector<AttrSpec> scan_attrs() {
  return {{"axis", AttrKind::kInt, AttrValue(int64_t{0}), "the scanned axis (non-negative)"},
          {"exclusive", AttrKind::kInt, AttrValue(int64_t{0}), "1: out[i] leaves out x[i]"},
          {"reverse", AttrKind::kInt, AttrValue(int64_t{0}), "1: scan from the end of the axis"}};
}

template <bool kProduct>
OpDef scan_op(const std::string& name, const std::string& doc) {
  OpDef d;
  d.name = name;
  d.doc = doc;
  d.attrs = scan_attrs();
  d.infer_type = [name](const std::vector<TensorType>& in, const Attrs& attrs) {
    require_dtype(name, 0, "x", in[0].dtype, DTypeSet::kNumeric);
    if (in[0].rank() < 1) fail_input(name, 0, "x", "x is a scalar; it needs rank >= 1");
    axis_attr(name, attrs, "axis", in[0].rank());
    return std::vector<TensorType>{in[0]};
  };
  d.reference = [](const std::vector<NDArray>& in, const Attrs& attrs, const std::vector<TensorType>&) {
    const AxisSplit s = split_at_axis(in[0].shape(), static_cast<int>(attrs.get_int("axis")));
    const bool exclusive = attrs.get_int("exclusive") != 0, reverse = attrs.get_int("reverse") != 0;
    NDArray out = NDArray::empty(in[0].dtype(), in[0].shape());
    visit_dtype(in[0].dtype(), [&]<typename T>() {
      if constexpr (!std::is_same_v<T, Bool>) {
        auto x = in[0].data<T>();
        auto y = out.mutable_data<T>();
        for (int64_t o = 0; o < s.outer; ++o) {
          for (int64_t i = 0; i < s.inner; ++i) {
            using Acc = std::conditional_t<kIsFloatStorage<T>, double, uint64_t>;  // uint64: wrapping
            Acc acc = kProduct ? Acc(1) : Acc(0);
            for (int64_t step = 0; step < s.size; ++step) {
              const int64_t j = reverse ? s.size - 1 - step : step;
              const int64_t at = (o * s.size + j) * s.inner + i;
              Acc v;
              if constexpr (kIsFloatStorage<T>) {
                v = to_double(x[at]);
              } else {
                v = static_cast<uint64_t>(to_int64(x[at]));
              }
              if (!exclusive) acc = kProduct ? acc * v : acc + v;
              if constexpr (kIsFloatStorage<T>) {
                y[at] = from_double<T>(acc);
              } else {
                y[at] = from_int64<T>(static_cast<int64_t>(acc));
              }
              if (exclusive) acc = kProduct ? acc * v : acc + v;
            }
          }
        }
      }
    });
    return std::vector<NDArray>{out};
  };
  d.pattern = OpPattern::kOpaque;
  return with_arity_check(std::move(d));
}

}  // namespace

KILN_REGISTER_OP(cumsum) { return scan_op<false>("cumsum", "running sum along `axis` (ONNX CumSum)"); }
KILN_REGISTER_OP(cumprod) { return scan_op<true>("cumprod", "running product along `axis` (ONNX CumProd)"); }

KILN_REGISTER_OP(topk) {
  OpDef d;
  d.name = "topk";
  d.doc = "the k largest (or smallest) elements along `axis`, sorted, and their int64 indices (ONNX TopK)";
  d.attrs = {{"axis", AttrKind::kInt, AttrValue(int64_t{-1}), "the axis (non-negative; resolved by the importer)"},
             {"k", AttrKind::kInt, std::nullopt, "how many elements, 0..size of the axis"},
             {"largest", AttrKind::kInt, AttrValue(int64_t{1}), "1: largest first; 0: smallest first"},
             {"sorted", AttrKind::kInt, AttrValue(int64_t{1}), "accepted; the result is always sorted"}};
  d.infer_type = [](const std::vector<TensorType>& in, const Attrs& attrs) {
    require_dtype("topk", 0, "x", in[0].dtype, DTypeSet::kNumeric);
    if (in[0].rank() < 1) fail_input("topk", 0, "x", "x is a scalar; it needs rank >= 1");
    const int64_t axis = axis_attr("topk", attrs, "axis", in[0].rank());
    const int64_t k = attrs.get_int("k");
    if (k < 0 || k > in[0].shape[axis]) {
      fail_attr("topk", "k", "is " + std::to_string(k) + "; axis " + std::to_string(axis) + " has " +
                                 std::to_string(in[0].shape[axis]) + " elements");
    }
    Shape out = in[0].shape;
    out[axis] = k;
    return std::vector<TensorType>{{in[0].dtype, out}, {DType::kI64, out}};
  };
  d.reference = [](const std::vector<NDArray>& in, const Attrs& attrs, const std::vector<TensorType>& out_types) {
    const int64_t axis = attrs.get_int("axis"), k = attrs.get_int("k");
    const bool largest = attrs.get_int("largest") != 0;
    const AxisSplit s = split_at_axis(in[0].shape(), static_cast<int>(axis));
    NDArray values = NDArray::empty(out_types[0].dtype, out_types[0].shape);
    NDArray indices = NDArray::empty(DType::kI64, out_types[1].shape);
    auto idx_out = indices.mutable_data<int64_t>();
    visit_dtype(in[0].dtype(), [&]<typename T>() {
      auto x = in[0].data<T>();
      auto v = values.mutable_data<T>();
      std::vector<int64_t> order(static_cast<size_t>(s.size));
      for (int64_t o = 0; o < s.outer; ++o) {
        for (int64_t i = 0; i < s.inner; ++i) {
          auto at = [&](int64_t j) { return (o * s.size + j) * s.inner + i; };
          // Sort key: NaN above every number; ties by index.
          auto before = [&](int64_t a, int64_t b) {
            const double xa = kIsFloatStorage<T> ? to_double(x[at(a)]) : 0.0;
            const double xb = kIsFloatStorage<T> ? to_double(x[at(b)]) : 0.0;
            if constexpr (kIsFloatStorage<T>) {
              const bool na = std::isnan(xa), nb = std::isnan(xb);
              if (na || nb) return na && nb ? a < b : (largest ? na : nb);
              if (xa != xb) return largest ? xa > xb : xa < xb;
            } else {
              const int64_t ia = to_int64(x[at(a)]), ib = to_int64(x[at(b)]);
              if (ia != ib) return largest ? ia > ib : ia < ib;
            }
            return a < b;
          };
          std::iota(order.begin(), order.end(), int64_t{0});
          std::stable_sort(order.begin(), order.end(), before);
          for (int64_t j = 0; j < k; ++j) {
            const int64_t dst = (o * k + j) * s.inner + i;
            v[dst] = x[at(order[j])];
            idx_out[dst] = order[j];
          }
        }
      }
    });
    return std::vector<NDArray>{values, indices};
  };
  d.pattern = OpPattern::kOpaque;
  return with_arity_check(std::move(d));
}

}  // namespace kiln::ir::ops
