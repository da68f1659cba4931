// Reductions over a set of axes: reduce_sum, reduce_mean, reduce_max, reduce_min, reduce_prod
// (ONNX ReduceSum/Mean/Max/Min/Prod; the importer writes ReduceL1/L2/LogSum/LogSumExp/SumSquare
// with these and elementwise ops).
// `axes` is resolved (non-negative, unique); empty means every axis. keepdims=1 keeps reduced axes
// as size 1. Floats accumulate in double (max propagates nan); integers in int64 (sum wraps, mean
// truncates toward zero). An empty reduction gives 0 (sum), nan (float mean; 0 for integers) or
// the lowest value (max: -inf for floats), the highest (min: +inf for floats) or 1 (prod; integer
// products wrap).
#include <cmath>
#include <limits>

#include "ir/ops/dtype_dispatch.h"
#include "ir/ops/op_util.h"

namespace kiln::ir::ops {
namespace {

enum class ReduceKind { kSum, kMean, kMax, kMin, kProd };

// The reduced-axis flags of x for the `axes` attribute (validated).
std::vector<bool> reduced_axes(const std::string& op, const Attrs& attrs, int rank) {
  const auto& axes = attrs.get_ints("axes");
  std::vector<bool> reduced(rank, axes.empty());
  for (int64_t a : axes) {
    if (a < 0 || a >= rank) {
      fail_attr(op, "axes", "contains " + std::to_string(a) + ", expected axes in [0, " + std::to_string(rank) + ")",
                "negative axes are resolved by the importer");
    }
    if (reduced[a]) fail_attr(op, "axes", "contains axis " + std::to_string(a) + " twice");
    reduced[a] = true;
  }
  return reduced;
}

std::vector<TensorType> infer_reduce(const std::string& op, const std::vector<TensorType>& in, const Attrs& attrs) {
  require_dtype(op, 0, "x", in[0].dtype, DTypeSet::kNumeric);
  const int64_t keepdims = attrs.get_int("keepdims");
  if (keepdims != 0 && keepdims != 1) fail_attr(op, "keepdims", "is " + std::to_string(keepdims) + ", expected 0 or 1");
  const std::vector<bool> reduced = reduced_axes(op, attrs, in[0].rank());
  Shape out;
  for (int d = 0; d < in[0].rank(); ++d) {
    if (!reduced[d]) out.push_back(in[0].shape[d]);
    else if (keepdims) out.push_back(1);
  }
  return {{in[0].dtype, out}};
}

NDArray reduce(ReduceKind kind, const NDArray& x, const Attrs& attrs, const TensorType& out_type) {
  const std::vector<bool> reduced = reduced_axes("reduce", attrs, static_cast<int>(x.shape().size()));
  Shape kept = x.shape();  // keepdims form: the accumulator layout
  int64_t count = 1;
  for (size_t d = 0; d < kept.size(); ++d) {
    if (reduced[d]) {
      count *= kept[d];
      kept[d] = 1;
    }
  }
  const std::vector<int64_t> strides[1] = {broadcast_strides(kept, x.shape())};
  NDArray out = NDArray::empty(x.dtype(), out_type.shape);
  visit_dtype(x.dtype(), [&]<typename T>() {
    if constexpr (std::is_same_v<T, Bool>) {
      KILN_IFAIL() << "reduce on bool";
    } else {
      constexpr bool kFloat = kIsFloatStorage<T>;
      using Acc = std::conditional_t<kFloat, double, int64_t>;
      Acc init = 0;
      if (kind == ReduceKind::kMax) {
        if constexpr (kFloat) init = -std::numeric_limits<double>::infinity();
        else init = std::numeric_limits<T>::lowest();
      } else if (kind == ReduceKind::kMin) {
        if constexpr (kFloat) init = std::numeric_limits<double>::infinity();
        else init = std::numeric_limits<T>::max();
      } else if (kind == ReduceKind::kProd) {
        init = 1;
      }
      std::vector<Acc> acc(static_cast<size_t>(shape_numel(kept)), init);
      auto in = x.data<T>();
      for_each_strided(x.shape(), strides, [&](int64_t i, const int64_t* off) {
        Acc& a = acc[off[0]];
        if constexpr (kFloat) {
          const double v = to_double(in[i]);
          if (kind == ReduceKind::kProd) a *= v;
          else if (kind != ReduceKind::kMax && kind != ReduceKind::kMin) a += v;
          else if (std::isnan(v) || std::isnan(a)) a = std::numeric_limits<double>::quiet_NaN();
          else a = kind == ReduceKind::kMax ? std::max(a, v) : std::min(a, v);
        } else {
          const int64_t v = to_int64(in[i]);
          if (kind == ReduceKind::kProd) a = static_cast<int64_t>(static_cast<uint64_t>(a) * static_cast<uint64_t>(v));
          else if (kind == ReduceKind::kMax) a = std::max(a, v);
          else if (kind == ReduceKind::kMin) a = std::min(a, v);
          else a = static_cast<int64_t>(static_cast<uint64_t>(a) + static_cast<uint64_t>(v));
        }
      });
      auto o = out.mutable_data<T>();
      for (size_t i = 0; i < acc.size(); ++i) {
        if constexpr (kFloat) {
          o[i] = from_double<T>(kind == ReduceKind::kMean ? acc[i] / static_cast<double>(count) : acc[i]);
        } else {
          o[i] = from_int64<T>(kind == ReduceKind::kMean ? (count == 0 ? 0 : acc[i] / count) : acc[i]);
        }
      }
    }
  });
  return out;
}

OpDef make_reduce(const char* name, const char* doc, ReduceKind kind) {
  OpDef d;
  d.name = name;
  d.doc = doc;
  d.attrs = {
      {"axes", AttrKind::kInts, AttrValue(std::vector<int64_t>{}), "axes to reduce (empty: all)"},
      {"keepdims", AttrKind::kInt, AttrValue(int64_t{1}), "1: keep reduced axes as size 1"},
  };
  const std::string op = name;
  d.infer_type = [op](const std::vector<TensorType>& in, const Attrs& attrs) { return infer_reduce(op, in, attrs); };
  d.reference = [kind](const std::vector<NDArray>& in, const Attrs& attrs, const std::vector<TensorType>& out) {
    return std::vector<NDArray>{reduce(kind, in[0], attrs, out[0])};
  };
  d.pattern = OpPattern::kCommReduce;
  return with_arity_check(std::move(d));
}

}  // namespace

KILN_REGISTER_OP(reduce_sum) { return make_reduce("reduce_sum", "sum over axes", ReduceKind::kSum); }
KILN_REGISTER_OP(reduce_mean) { return make_reduce("reduce_mean", "mean over axes", ReduceKind::kMean); }
KILN_REGISTER_OP(reduce_max) { return make_reduce("reduce_max", "max over axes (nan propagates)", ReduceKind::kMax); }
KILN_REGISTER_OP(reduce_min) { return make_reduce("reduce_min", "min over axes (nan propagates)", ReduceKind::kMin); }
KILN_REGISTER_OP(reduce_prod) { return make_reduce("reduce_prod", "product over axes", ReduceKind::kProd); }

}  // namespace kiln::ir::ops
