// Normalizations, computed in double:
//   batch_norm (inference): y = (x - mean[c]) / sqrt(var[c] + epsilon) * scale[c] + bias[c], c = axis 1.
//   layer_norm: over the trailing axes from `axis`, y = (x - mean) / sqrt(var + epsilon) * scale + bias,
//     var the biased variance; scale and bias broadcast (unidirectionally) to x.shape[axis:].
#include <cmath>

#include "ir/ops/cast.h"
#include "ir/ops/dtype_dispatch.h"
#include "ir/ops/op_util.h"

namespace kiln::ir::ops {
namespace {

std::vector<TensorType> infer_batch_norm(const std::vector<TensorType>& in, const Attrs& attrs) {
  static const std::vector<std::string> names = {"x", "scale", "bias", "mean", "var"};
  require_dtype("batch_norm", 0, "x", in[0].dtype, DTypeSet::kFloat);
  require_same_dtype("batch_norm", in, names);
  if (in[0].rank() < 2) {
    fail_input("batch_norm", 0, "x", "has shape " + shape_to_string(in[0].shape) + ", expected rank >= 2 ([N, C, ...])");
  }
  const int64_t c = in[0].shape[1];
  for (int i = 1; i < 5; ++i) {
    if (in[i].shape != Shape{c}) {
      fail_input("batch_norm", i, names[i],
                 "has shape " + shape_to_string(in[i].shape) + ", expected [" + std::to_string(c) + "] (x's channels)");
    }
  }
  if (attrs.get_float("epsilon") < 0) fail_attr("batch_norm", "epsilon", "is negative");
  return {in[0]};
}

std::vector<NDArray> reference_batch_norm(const std::vector<NDArray>& in, const Attrs& attrs,
                                          const std::vector<TensorType>&) {
  const NDArray& x = in[0];
  const int64_t c = x.shape()[1];
  const AxisSplit s = split_at_axis(x.shape(), 1);
  const double eps = attrs.get_float("epsilon");
  // Per-channel affine form in double: y = x * a[c] + b[c].
  std::vector<double> a(c), b(c);
  for (int64_t ch = 0; ch < c; ++ch) {
    a[ch] = in[1].get_as_double(ch) / std::sqrt(in[4].get_as_double(ch) + eps);
    b[ch] = in[2].get_as_double(ch) - in[3].get_as_double(ch) * a[ch];
  }
  NDArray y = NDArray::empty(x.dtype(), x.shape());
  visit_dtype(x.dtype(), [&]<typename T>() {
    if constexpr (kIsFloatStorage<T>) {
      auto px = x.data<T>();
      auto py = y.mutable_data<T>();
      for (int64_t o = 0; o < s.outer; ++o) {
        for (int64_t ch = 0; ch < c; ++ch) {
          const int64_t base = (o * c + ch) * s.inner;
          for (int64_t i = 0; i < s.inner; ++i) py[base + i] = from_double<T>(to_double(px[base + i]) * a[ch] + b[ch]);
        }
      }
    } else {
      KILN_IFAIL() << "batch_norm on " << dtype_name(x.dtype());
    }
  });
  return {y};
}

std::vector<TensorType> infer_layer_norm(const std::vector<TensorType>& in, const Attrs& attrs) {
  require_dtype("layer_norm", 0, "x", in[0].dtype, DTypeSet::kFloat);
  require_same_dtype("layer_norm", in, {"x", "scale", "bias"});
  const int64_t axis = axis_attr("layer_norm", attrs, "axis", in[0].rank());
  const Shape normalized(in[0].shape.begin() + axis, in[0].shape.end());
  for (size_t i = 1; i < in.size(); ++i) {
    if (!broadcasts_to(in[i].shape, normalized)) {
      fail_input("layer_norm", static_cast<int>(i), i == 1 ? "scale" : "bias",
                 "has shape " + shape_to_string(in[i].shape) + ", which does not broadcast to the normalized shape " +
                     shape_to_string(normalized) + " (x's axes from axis=" + std::to_string(axis) + ")");
    }
  }
  if (attrs.get_float("epsilon") < 0) fail_attr("layer_norm", "epsilon", "is negative");
  return {in[0]};
}

// `p` broadcast to `shape`, as doubles.
std::vector<double> expand_to(const NDArray& p, const Shape& shape) {
  std::vector<double> out(static_cast<size_t>(shape_numel(shape)));
  const std::vector<int64_t> strides[1] = {broadcast_strides(p.shape(), shape)};
  for_each_strided(shape, strides, [&](int64_t i, const int64_t* off) { out[i] = p.get_as_double(off[0]); });
  return out;
}

std::vector<NDArray> reference_layer_norm(const std::vector<NDArray>& in, const Attrs& attrs,
                                          const std::vector<TensorType>&) {
  const NDArray& x = in[0];
  const int64_t axis = attrs.get_int("axis");
  const Shape normalized(x.shape().begin() + axis, x.shape().end());
  const int64_t size = shape_numel(normalized);
  const int64_t rows = size == 0 ? 0 : x.numel() / size;
  const std::vector<double> scale = expand_to(in[1], normalized);
  const std::vector<double> bias = in.size() > 2 ? expand_to(in[2], normalized) : std::vector<double>(size, 0.0);
  const double eps = attrs.get_float("epsilon");
  NDArray y = NDArray::empty(x.dtype(), x.shape());
  std::vector<double> row(static_cast<size_t>(size));
  visit_dtype(x.dtype(), [&]<typename T>() {
    if constexpr (kIsFloatStorage<T>) {
      auto px = x.data<T>();
      auto py = y.mutable_data<T>();
      for (int64_t r = 0; r < rows; ++r) {
        double mean = 0;
        for (int64_t i = 0; i < size; ++i) mean += row[i] = to_double(px[r * size + i]);
        mean /= static_cast<double>(size);
        double var = 0;
        for (int64_t i = 0; i < size; ++i) var += (row[i] - mean) * (row[i] - mean);
        var /= static_cast<double>(size);
        const double inv = 1.0 / std::sqrt(var + eps);
        for (int64_t i = 0; i < size; ++i) py[r * size + i] = from_double<T>((row[i] - mean) * inv * scale[i] + bias[i]);
      }
    } else {
      KILN_IFAIL() << "layer_norm on " << dtype_name(x.dtype());
    }
  });
  return {y};
}

}  // namespace

KILN_REGISTER_OP(batch_norm) {
  OpDef d;
  d.name = "batch_norm";
  d.doc = "inference batch normalization over axis 1 with running mean/var";
  d.min_inputs = d.max_inputs = 5;
  d.attrs = {{"epsilon", AttrKind::kFloat, AttrValue(1e-5), "added to the variance"}};
  d.infer_type = infer_batch_norm;
  d.reference = reference_batch_norm;
  d.pattern = OpPattern::kBroadcast;
  return with_arity_check(std::move(d));
}

KILN_REGISTER_OP(layer_norm) {
  OpDef d;
  d.name = "layer_norm";
  d.doc = "layer normalization over the axes from `axis` to the last";
  d.min_inputs = 2;
  d.max_inputs = 3;
  d.attrs = {
      {"axis", AttrKind::kInt, std::nullopt, "first normalized axis (non-negative)"},
      {"epsilon", AttrKind::kFloat, AttrValue(1e-5), "added to the variance"},
  };
  d.infer_type = infer_layer_norm;
  d.reference = reference_layer_norm;
  d.pattern = OpPattern::kOpaque;
  return with_arity_check(std::move(d));
}

}  // namespace kiln::ir::ops
