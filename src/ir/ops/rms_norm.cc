// rms_norm: root-mean-square normalization over the trailing axes from `axis` (ONNX
// RMSNormalization, LLaMA-style models):
//   y = x / sqrt(mean(x^2 over x.shape[axis:]) + epsilon) * scale,
// scale broadcast (unidirectionally) to x.shape[axis:]. Reference computed in double, rounded once.
#include <cmath>

#include "ir/ops/dtype_dispatch.h"
#include "ir/ops/op_util.h"

namespace kiln::ir::ops {
namespace {

std::vector<TensorType> infer_rms_norm(const std::vector<TensorType>& in, const Attrs& attrs) {
  require_dtype("rms_norm", 0, "x", in[0].dtype, DTypeSet::kFloat);
  require_same_dtype("rms_norm", in, {"x", "scale"});
  const int64_t axis = axis_attr("rms_norm", attrs, "axis", in[0].rank());
  const Shape normalized(in[0].shape.begin() + axis, in[0].shape.end());
  if (!broadcasts_to(in[1].shape, normalized)) {
    fail_input("rms_norm", 1, "scale",
               "has shape " + shape_to_string(in[1].shape) + ", which does not broadcast to the normalized shape " +
                   shape_to_string(normalized) + " (x's axes from axis=" + std::to_string(axis) + ")");
  }
  if (attrs.get_float("epsilon") < 0) fail_attr("rms_norm", "epsilon", "is negative");
  return {in[0]};
}

std::vector<NDArray> reference_rms_norm(const std::vector<NDArray>& in, const Attrs& attrs,
                                        const std::vector<TensorType>&) {
  const NDArray& x = in[0];
  const int64_t axis = attrs.get_int("axis");
  const Shape normalized(x.shape().begin() + axis, x.shape().end());
  const int64_t size = shape_numel(normalized);
  const int64_t rows = size == 0 ? 0 : x.numel() / size;
  std::vector<double> scale(static_cast<size_t>(size));
  {
    const std::vector<int64_t> strides[1] = {broadcast_strides(in[1].shape(), normalized)};
    for_each_strided(normalized, strides, [&](int64_t i, const int64_t* off) { scale[i] = in[1].get_as_double(off[0]); });
  }
  const double eps = attrs.get_float("epsilon");
  NDArray y = NDArray::empty(x.dtype(), x.shape());
  visit_dtype(x.dtype(), [&]<typename T>() {
    if constexpr (kIsFloatStorage<T>) {
      auto px = x.data<T>();
      auto py = y.mutable_data<T>();
      for (int64_t r = 0; r < rows; ++r) {
        double sq = 0;
        for (int64_t i = 0; i < size; ++i) {
          const double v = to_double(px[r * size + i]);
          sq += v * v;
        }
        const double inv = 1.0 / std::sqrt(sq / static_cast<double>(size) + eps);
        for (int64_t i = 0; i < size; ++i) {
          py[r * size + i] = from_double<T>(to_double(px[r * size + i]) * inv * scale[i]);
        }
      }
    } else {
      KILN_IFAIL() << "rms_norm on " << dtype_name(x.dtype());
    }
  });
  return {y};
}

}  // namespace

KILN_REGISTER_OP(rms_norm) {
  OpDef d;
  d.name = "rms_norm";
  d.doc = "root-mean-square normalization over the axes from `axis` to the last, times scale";
  d.min_inputs = d.max_inputs = 2;
  d.attrs = {
      {"axis", AttrKind::kInt, std::nullopt, "first normalized axis (non-negative)"},
      {"epsilon", AttrKind::kFloat, AttrValue(1e-5), "added to the mean square"},
  };
  d.infer_type = infer_rms_norm;
  d.reference = reference_rms_norm;
  d.pattern = OpPattern::kOpaque;
  return with_arity_check(std::move(d));
}

}  // namespace kiln::ir::ops
