// strided_slice (ONNX Slice with constant starts/ends/axes/steps) and gather (ONNX Gather).
//   strided_slice: for each listed axis, begin/end may be negative (counted from the end) or out
//     of range (clamped: to [0, dim] for step > 0, to [-1, dim - 1] for step < 0); steps != 0.
//     `axes` empty means 0..len(begins)-1, `steps` empty means all 1.
//   gather: out = data[..., indices[...], ...] along `axis`; indices i32/i64, negative ones count
//     from the end; an index out of range is a UserError when the reference runs.
#include <algorithm>
#include <cstring>

#include "ir/ops/dtype_dispatch.h"
#include "ir/ops/op_util.h"

namespace kiln::ir::ops {
namespace {

// An axis that is not sliced keeps its dimension (symbolic or not); a sliced one needs its size.
struct AxisSlice {
  int64_t start = 0, step = 1;
  Dim count = 0;
};

// The resolved slice of every axis of `shape`; validates the attributes.
std::vector<AxisSlice> resolve_slices(const Shape& shape, const Attrs& attrs) {
  const std::string op = "strided_slice";
  const auto& begins = attrs.get_ints("begins");
  const auto& ends = attrs.get_ints("ends");
  std::vector<int64_t> axes = attrs.get_ints("axes");
  std::vector<int64_t> steps = attrs.get_ints("steps");
  const int rank = static_cast<int>(shape.size());
  if (axes.empty()) {
    for (size_t i = 0; i < begins.size(); ++i) axes.push_back(static_cast<int64_t>(i));
  }
  if (steps.empty()) steps.assign(begins.size(), 1);
  if (ends.size() != begins.size() || axes.size() != begins.size() || steps.size() != begins.size()) {
    fail_attr(op, "begins",
              "begins, ends, axes and steps have " + std::to_string(begins.size()) + ", " +
                  std::to_string(ends.size()) + ", " + std::to_string(axes.size()) + " and " +
                  std::to_string(steps.size()) + " values; they must have the same number");
  }
  std::vector<AxisSlice> slices(rank);
  for (int d = 0; d < rank; ++d) slices[d] = {0, 1, shape[d]};
  std::vector<bool> seen(rank, false);
  for (size_t i = 0; i < begins.size(); ++i) {
    const int64_t axis = axes[i];
    if (axis < 0 || axis >= rank) {
      fail_attr(op, "axes", "contains " + std::to_string(axis) + ", expected axes in [0, " + std::to_string(rank) + ")");
    }
    if (seen[axis]) fail_attr(op, "axes", "contains axis " + std::to_string(axis) + " twice");
    seen[axis] = true;
    const int64_t step = steps[i], dim = shape[axis];
    if (step == 0) fail_attr(op, "steps", "contains 0 (for axis " + std::to_string(axis) + ")");
    int64_t start = begins[i], end = ends[i];
    if (start < 0) start += dim;  // cannot overflow: dim >= 0
    if (end < 0) end += dim;
    int64_t count;
    if (dim == 0) {
      count = 0;
    } else if (step > 0) {
      start = std::clamp<int64_t>(start, 0, dim);
      end = std::clamp<int64_t>(end, 0, dim);
      count = end > start ? (end - start + step - 1) / step : 0;
    } else {
      start = std::clamp<int64_t>(start, 0, dim - 1);
      end = std::clamp<int64_t>(end, -1, dim - 1);
      count = start > end ? (start - end - step - 1) / -step : 0;
    }
    slices[axis] = {start, step, count};
  }
  return slices;
}

}  // namespace

KILN_REGISTER_OP(strided_slice) {
  OpDef d;
  d.name = "strided_slice";
  d.doc = "x[begin:end:step] on the listed axes (ONNX Slice rules)";
  d.attrs = {
      {"begins", AttrKind::kInts, std::nullopt, "start per listed axis (negative: from the end)"},
      {"ends", AttrKind::kInts, std::nullopt, "end (exclusive) per listed axis, clamped"},
      {"axes", AttrKind::kInts, AttrValue(std::vector<int64_t>{}), "axes (empty: 0..len(begins)-1)"},
      {"steps", AttrKind::kInts, AttrValue(std::vector<int64_t>{}), "steps, nonzero (empty: all 1)"},
  };
  d.infer_type = [](const std::vector<TensorType>& in, const Attrs& attrs) {
    Shape out;
    for (const AxisSlice& s : resolve_slices(in[0].shape, attrs)) out.push_back(s.count);
    return std::vector<TensorType>{{in[0].dtype, out}};
  };
  d.reference = [](const std::vector<NDArray>& in, const Attrs& attrs, const std::vector<TensorType>& out_types) {
    const std::vector<AxisSlice> slices = resolve_slices(in[0].shape(), attrs);
    const std::vector<int64_t> own = contiguous_strides(in[0].shape());
    std::vector<int64_t> strides;
    int64_t base = 0;
    for (size_t dd = 0; dd < slices.size(); ++dd) {
      strides.push_back(own[dd] * slices[dd].step);
      if (static_cast<int64_t>(slices[dd].count) > 0) base += own[dd] * slices[dd].start;
    }
    NDArray out = NDArray::empty(in[0].dtype(), out_types[0].shape);
    copy_strided(in[0], out, strides, base);
    return std::vector<NDArray>{out};
  };
  d.pattern = OpPattern::kInjective;
  return with_arity_check(std::move(d));
}

KILN_REGISTER_OP(gather) {
  OpDef d;
  d.name = "gather";
  d.doc = "takes slices of data along `axis` at `indices` (ONNX Gather)";
  d.min_inputs = d.max_inputs = 2;
  d.attrs = {{"axis", AttrKind::kInt, AttrValue(int64_t{0}), "the axis of data (non-negative)"}};
  d.infer_type = [](const std::vector<TensorType>& in, const Attrs& attrs) {
    require_dtype("gather", 1, "indices", in[1].dtype, DTypeSet::kIndex);
    if (in[0].rank() < 1) fail_input("gather", 0, "data", "is a scalar; gather needs rank >= 1");
    const int64_t axis = axis_attr("gather", attrs, "axis", in[0].rank());
    Shape out(in[0].shape.begin(), in[0].shape.begin() + axis);
    out.insert(out.end(), in[1].shape.begin(), in[1].shape.end());
    out.insert(out.end(), in[0].shape.begin() + axis + 1, in[0].shape.end());
    return std::vector<TensorType>{{in[0].dtype, out}};
  };
  d.reference = [](const std::vector<NDArray>& in, const Attrs& attrs, const std::vector<TensorType>& out_types) {
    const NDArray& data = in[0];
    const NDArray& indices = in[1];
    const int axis = static_cast<int>(attrs.get_int("axis"));
    const AxisSplit s = split_at_axis(data.shape(), axis);
    const size_t chunk = static_cast<size_t>(s.inner) * dtype_size(data.dtype());
    const int64_t n = indices.numel();
    std::vector<int64_t> idx(static_cast<size_t>(n));
    visit_dtype(indices.dtype(), [&]<typename T>() {
      if constexpr (std::is_same_v<T, int32_t> || std::is_same_v<T, int64_t>) {
        auto p = indices.data<T>();
        for (int64_t i = 0; i < n; ++i) idx[i] = p[i];
      } else {
        KILN_IFAIL() << "gather indices of " << dtype_name(indices.dtype());
      }
    });
    for (int64_t i = 0; i < n; ++i) {
      if (idx[i] < -s.size || idx[i] >= s.size) {
        throw UserError(UserErrorKind::kInvalidArgument, "gather input 1 (indices)",
                        "index " + std::to_string(idx[i]) + " at position " + std::to_string(i) +
                            " is out of range for axis " + std::to_string(axis) + " of size " + std::to_string(s.size),
                        "indices must lie in [-size, size)");
      }
      if (idx[i] < 0) idx[i] += s.size;
    }
    NDArray out = NDArray::empty(data.dtype(), out_types[0].shape);
    const auto* src = static_cast<const uint8_t*>(data.raw_data());
    auto* dst = static_cast<uint8_t*>(out.mutable_raw_data());
    for (int64_t o = 0; o < s.outer; ++o) {
      for (int64_t i = 0; i < n; ++i) {
        std::memcpy(dst + (o * n + i) * chunk, src + (o * s.size + idx[i]) * chunk, chunk);
      }
    }
    return std::vector<NDArray>{out};
  };
  d.pattern = OpPattern::kInjective;
  return with_arity_check(std::move(d));
}

}  // namespace kiln::ir::ops
