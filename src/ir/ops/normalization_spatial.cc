// Normalizations over the spatial axes of [N, C, D...] tensors, computed in double:
//   instance_norm(x, scale?, bias?): for each (n, c), y = (x - mean) / sqrt(var + epsilon) *
//     scale[c] + bias[c] over the axes from 2 (var biased; absent scale = 1, bias = 0). ONNX
//     InstanceNormalization; the importer also writes GroupNormalization with it.
//   lrn: y = x / (bias + alpha / size * sum of x^2 over the channels
//     [c - floor((size-1)/2), c + ceil((size-1)/2)] inside [0, C)) ^ beta (ONNX LRN).
#include <algorithm>
#include <cmath>

#include "ir/ops/dtype_dispatch.h"
#include "ir/ops/op_util.h"

namespace kiln::ir::ops {
namespace {

void require_channels_first(const std::string& op, const TensorType& x) {
  require_dtype(op, 0, "x", x.dtype, DTypeSet::kFloat);
  if (x.rank() < 3) {
    fail_input(op, 0, "x", "has shape " + shape_to_string(x.shape) + ", expected rank >= 3 ([N, C, D...])");
  }
}

std::vector<TensorType> infer_instance_norm(const std::vector<TensorType>& in, const Attrs& attrs) {
  require_channels_first("instance_norm", in[0]);
  require_same_dtype("instance_norm", in, {"x", "scale", "bias"});
  const int64_t c = in[0].shape[1];
  for (size_t i = 1; i < in.size(); ++i) {
    if (in[i].shape != Shape{c}) {
      fail_input("instance_norm", static_cast<int>(i), i == 1 ? "scale" : "bias",
                 "has shape " + shape_to_string(in[i].shape) + ", expected [" + std::to_string(c) + "] (x's channels)");
    }
  }
  if (attrs.get_float("epsilon") < 0) fail_attr("instance_norm", "epsilon", "is negative");
  return {in[0]};
}

std::vector<NDArray> reference_instance_norm(const std::vector<NDArray>& in, const Attrs& attrs,
                                             const std::vector<TensorType>&) {
  const NDArray& x = in[0];
  const int64_t channels = x.shape()[1];
  const int64_t size = x.numel() == 0 ? 0 : x.numel() / (x.shape()[0] * channels);
  const double eps = attrs.get_float("epsilon");
  NDArray y = NDArray::empty(x.dtype(), x.shape());
  std::vector<double> row(static_cast<size_t>(size));
  visit_dtype(x.dtype(), [&]<typename T>() {
    if constexpr (kIsFloatStorage<T>) {
      auto px = x.data<T>();
      auto py = y.mutable_data<T>();
      for (int64_t r = 0; r < x.shape()[0] * channels; ++r) {
        const int64_t c = r % channels;
        const double scale = in.size() > 1 ? in[1].get_as_double(c) : 1.0;
        const double bias = in.size() > 2 ? in[2].get_as_double(c) : 0.0;
        double mean = 0;
        for (int64_t i = 0; i < size; ++i) mean += row[i] = to_double(px[r * size + i]);
        mean /= static_cast<double>(size);
        double var = 0;
        for (int64_t i = 0; i < size; ++i) var += (row[i] - mean) * (row[i] - mean);
        var /= static_cast<double>(size);
        const double inv = 1.0 / std::sqrt(var + eps);
        for (int64_t i = 0; i < size; ++i) py[r * size + i] = from_double<T>((row[i] - mean) * inv * scale + bias);
      }
    } else {
      KILN_IFAIL() << "instance_norm on " << dtype_name(x.dtype());
    }
  });
  return {y};
}

std::vector<TensorType> infer_lrn(const std::vector<TensorType>& in, const Attrs& attrs) {
  require_channels_first("lrn", in[0]);
  if (attrs.get_int("size") < 1) fail_attr("lrn", "size", "is " + std::to_string(attrs.get_int("size")), "expected >= 1");
  return {in[0]};
}

std::vector<NDArray> reference_lrn(const std::vector<NDArray>& in, const Attrs& attrs, const std::vector<TensorType>&) {
  const NDArray& x = in[0];
  const AxisSplit s = split_at_axis(x.shape(), 1);
  const int64_t size = attrs.get_int("size");
  const double alpha = attrs.get_float("alpha"), beta = attrs.get_float("beta"), bias = attrs.get_float("bias");
  const int64_t before = (size - 1) / 2, after = size - 1 - before;
  const std::vector<double> v = to_doubles(x);
  NDArray y = NDArray::empty(x.dtype(), x.shape());
  visit_dtype(x.dtype(), [&]<typename T>() {
    if constexpr (kIsFloatStorage<T>) {
      auto py = y.mutable_data<T>();
      for (int64_t o = 0; o < s.outer; ++o) {
        for (int64_t c = 0; c < s.size; ++c) {
          for (int64_t i = 0; i < s.inner; ++i) {
            double sq = 0;
            for (int64_t k = std::max<int64_t>(0, c - before); k <= std::min(s.size - 1, c + after); ++k) {
              const double e = v[(o * s.size + k) * s.inner + i];
              sq += e * e;
            }
            const int64_t at = (o * s.size + c) * s.inner + i;
            py[at] = from_double<T>(v[at] / std::pow(bias + alpha / static_cast<double>(size) * sq, beta));
          }
        }
      }
    } else {
      KILN_IFAIL() << "lrn on " << dtype_name(x.dtype());
    }
  });
  return {y};
}

}  // namespace

KILN_REGISTER_OP(instance_norm) {
  OpDef d;
  d.name = "instance_norm";
  d.doc = "normalization of each (n, c) over the axes from 2, per-channel scale and bias";
  d.min_inputs = 1;
  d.max_inputs = 3;
  d.attrs = {{"epsilon", AttrKind::kFloat, AttrValue(1e-5), "added to the variance"}};
  d.infer_type = infer_instance_norm;
  d.reference = reference_instance_norm;
  // Reads x three times (sum, squares, output): like a conv, it takes index-only producers (a
  // layout transform back from NCHWc) and its elementwise consumers (ReLU, residual add) into its
  // kernel (FuseOps), never an elementwise producer that would be recomputed per read.
  d.pattern = OpPattern::kOutEWiseFusable;
  return with_arity_check(std::move(d));
}

KILN_REGISTER_OP(lrn) {
  OpDef d;
  d.name = "lrn";
  d.doc = "local response normalization across channels (axis 1)";
  d.attrs = {
      {"size", AttrKind::kInt, std::nullopt, "number of channels summed"},
      {"alpha", AttrKind::kFloat, AttrValue(1e-4), "scale of the sum"},
      {"beta", AttrKind::kFloat, AttrValue(0.75), "exponent"},
      {"bias", AttrKind::kFloat, AttrValue(1.0), "added to the scaled sum"},
  };
  d.infer_type = infer_lrn;
  d.reference = reference_lrn;
  d.pattern = OpPattern::kOpaque;
  return with_arity_check(std::move(d));
}

}  // namespace kiln::ir::ops
