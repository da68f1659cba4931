// Element-indexed data movement: `gather_elements` (ONNX GatherElements), `gather_nd` (GatherND
// with batch_dims), `scatter_elements` (ScatterElements / Scatter, reduction none/add/mul/max/min)
// and `reverse_sequence` (ReverseSequence). Indices are run-time tensors (i32/i64; negative = from
// the end of the axis); an index out of range is a UserError when the reference runs. The data
// moves as element bytes (any dtype) except scatter's reductions, which compute in double (floats)
// or int64 (integers, wrapping) and round once.
#include <cstring>

#include "ir/ops/dtype_dispatch.h"
#include "ir/ops/op_util.h"

namespace kiln::ir::ops {
namespace {

std::vector<int64_t> read_indices(const NDArray& a) {
  std::vector<int64_t> out(static_cast<size_t>(a.numel()));
  visit_dtype(a.dtype(), [&]<typename T>() {
    if constexpr (std::is_same_v<T, int32_t> || std::is_same_v<T, int64_t>) {
      auto p = a.data<T>();
      for (size_t i = 0; i < out.size(); ++i) out[i] = p[i];
    } else {
      KILN_IFAIL() << "indices of " << dtype_name(a.dtype());
    }
  });
  return out;
}

// An index in [-size, size) made non-negative; a UserError naming the op otherwise.
int64_t resolve_index(const std::string& op, int64_t idx, int64_t size, int64_t position, int64_t axis) {
  if (idx < -size || idx >= size) {
    throw UserError(UserErrorKind::kInvalidArgument, op + " input 1 (indices)",
                    "index " + std::to_string(idx) + " at position " + std::to_string(position) +
                        " is out of range for axis " + std::to_string(axis) + " of size " + std::to_string(size),
                    "indices must lie in [-size, size)");
  }
  return idx < 0 ? idx + size : idx;
}

// C-order multi-index of flat element `flat` of `shape`.
std::vector<int64_t> unravel_index(int64_t flat, const Shape& shape) {
  std::vector<int64_t> idx(shape.size());
  for (size_t d = shape.size(); d-- > 0;) {
    idx[d] = shape[d] == 0 ? 0 : flat % shape[d];
    flat = shape[d] == 0 ? 0 : flat / shape[d];
  }
  return idx;
}

int64_t ravel_index(const std::vector<int64_t>& idx, const Shape& shape) {
  int64_t flat = 0;
  for (size_t d = 0; d < shape.size(); ++d) flat = flat * shape[d] + idx[d];
  return flat;
}

// out[i] = src[source[i]] for every output element, moving element bytes.
NDArray gather_flat(const NDArray& src, const TensorType& out_type, const std::vector<int64_t>& source) {
  NDArray out = NDArray::empty(src.dtype(), out_type.shape);
  const size_t es = dtype_size(src.dtype());
  const auto* s = static_cast<const uint8_t*>(src.raw_data());
  auto* d = static_cast<uint8_t*>(out.mutable_raw_data());
  for (size_t i = 0; i < source.size(); ++i) std::memcpy(d + i * es, s + static_cast<size_t>(source[i]) * es, es);
  return out;
}

// Every dimension of `indices` but `axis` at most data's (ONNX GatherElements/ScatterElements).
void require_elementwise_indices(const std::string& op, const TensorType& data, const TensorType& indices, int64_t axis) {
  if (indices.rank() != data.rank()) {
    fail_input(op, 1, "indices", "indices has rank " + std::to_string(indices.rank()) + ", data has rank " + std::to_string(data.rank()),
               "indices must have data's rank");
  }
  for (int d = 0; d < data.rank(); ++d) {
    if (d != axis && indices.shape[d] > data.shape[d]) {
      fail_input(op, 1, "indices", "indices' dimension " + std::to_string(d) + " is " + std::to_string(indices.shape[d]) +
                                       ", larger than data's " + std::to_string(data.shape[d]));
    }
  }
}

}  // namespace

KILN_REGISTER_OP(gather_elements) {
  OpDef d;
  d.name = "gather_elements";
  d.doc = "out[i] = data[i with i[axis] = indices[i]] (ONNX GatherElements)";
  d.min_inputs = d.max_inputs = 2;
  d.attrs = {{"axis", AttrKind::kInt, AttrValue(int64_t{0}), "the axis of data (non-negative)"}};
  d.infer_type = [](const std::vector<TensorType>& in, const Attrs& attrs) {
    require_dtype("gather_elements", 1, "indices", in[1].dtype, DTypeSet::kIndex);
    if (in[0].rank() < 1) fail_input("gather_elements", 0, "data", "data is a scalar; it needs rank >= 1");
    const int64_t axis = axis_attr("gather_elements", attrs, "axis", in[0].rank());
    require_elementwise_indices("gather_elements", in[0], in[1], axis);
    return std::vector<TensorType>{{in[0].dtype, in[1].shape}};
  };
  d.reference = [](const std::vector<NDArray>& in, const Attrs& attrs, const std::vector<TensorType>& out_types) {
    const int64_t axis = attrs.get_int("axis");
    const std::vector<int64_t> idx = read_indices(in[1]);
    std::vector<int64_t> source(idx.size());
    for (size_t i = 0; i < idx.size(); ++i) {
      std::vector<int64_t> at = unravel_index(static_cast<int64_t>(i), in[1].shape());
      at[axis] = resolve_index("gather_elements", idx[i], in[0].shape()[axis], static_cast<int64_t>(i), axis);
      source[i] = ravel_index(at, in[0].shape());
    }
    return std::vector<NDArray>{gather_flat(in[0], out_types[0], source)};
  };
  d.pattern = OpPattern::kInjective;
  return with_arity_check(std::move(d));
}

KILN_REGISTER_OP(gather_nd) {
  OpDef d;
  d.name = "gather_nd";
  d.doc = "slices of data at the index tuples in indices' last axis (ONNX GatherND)";
  d.min_inputs = d.max_inputs = 2;
  d.attrs = {{"batch_dims", AttrKind::kInt, AttrValue(int64_t{0}), "leading dimensions shared by data and indices"}};
  d.infer_type = [](const std::vector<TensorType>& in, const Attrs& attrs) {
    require_dtype("gather_nd", 1, "indices", in[1].dtype, DTypeSet::kIndex);
    const int64_t b = attrs.get_int("batch_dims"), r = in[0].rank(), q = in[1].rank();
    if (q < 1) fail_input("gather_nd", 1, "indices", "indices is a scalar; it needs rank >= 1");
    if (b < 0 || b >= std::min(r, q)) {
      fail_attr("gather_nd", "batch_dims", "is " + std::to_string(b) + "; expected 0 <= batch_dims < min(rank(data), rank(indices))");
    }
    const int64_t k = in[1].shape.back();
    if (k < 1 || k > r - b) {
      fail_input("gather_nd", 1, "indices", "indices last dimension is " + std::to_string(k) + "; expected 1.." + std::to_string(r - b));
    }
    for (int64_t j = 0; j < b; ++j) {
      if (in[0].shape[j] != in[1].shape[j]) fail_input("gather_nd", 1, "indices", "indices batch dimension " + std::to_string(j) + " differs from data's");
    }
    Shape out(in[1].shape.begin(), in[1].shape.end() - 1);
    out.insert(out.end(), in[0].shape.begin() + b + k, in[0].shape.end());
    return std::vector<TensorType>{{in[0].dtype, out}};
  };
  d.reference = [](const std::vector<NDArray>& in, const Attrs& attrs, const std::vector<TensorType>& out_types) {
    const Shape& ds = in[0].shape();
    const Shape& is = in[1].shape();
    const int64_t b = attrs.get_int("batch_dims"), k = is.back(), q = static_cast<int64_t>(is.size());
    const std::vector<int64_t> idx = read_indices(in[1]);
    const Shape& os = out_types[0].shape;
    std::vector<int64_t> source(static_cast<size_t>(shape_numel(os)));
    for (size_t i = 0; i < source.size(); ++i) {
      const std::vector<int64_t> o = unravel_index(static_cast<int64_t>(i), os);
      // Which index tuple: o[0 .. q-1) index the leading dims of indices.
      int64_t tuple = 0;
      for (int64_t j = 0; j + 1 < q; ++j) tuple = tuple * is[j] + o[j];
      std::vector<int64_t> at(o.begin(), o.begin() + b);
      for (int64_t j = 0; j < k; ++j) at.push_back(resolve_index("gather_nd", idx[tuple * k + j], ds[b + j], tuple, b + j));
      at.insert(at.end(), o.begin() + (q - 1), o.end());
      source[i] = ravel_index(at, ds);
    }
    return std::vector<NDArray>{gather_flat(in[0], out_types[0], source)};
  };
  d.pattern = OpPattern::kInjective;
  return with_arity_check(std::move(d));
}

KILN_REGISTER_OP(scatter_elements) {
  OpDef d;
  d.name = "scatter_elements";
  d.doc = "data with updates written (or reduced) at data[i with i[axis] = indices[i]] (ONNX ScatterElements)";
  d.min_inputs = d.max_inputs = 3;
  d.attrs = {{"axis", AttrKind::kInt, AttrValue(int64_t{0}), "the axis of data (non-negative)"},
             {"reduction", AttrKind::kString, AttrValue(std::string("none")), "none, add, mul, max or min"}};
  d.infer_type = [](const std::vector<TensorType>& in, const Attrs& attrs) {
    const std::string op = "scatter_elements";
    require_dtype(op, 1, "indices", in[1].dtype, DTypeSet::kIndex);
    if (in[0].rank() < 1) fail_input(op, 0, "data", "data is a scalar; it needs rank >= 1");
    const int64_t axis = axis_attr(op, attrs, "axis", in[0].rank());
    require_elementwise_indices(op, in[0], in[1], axis);
    if (in[2].shape != in[1].shape) fail_input(op, 2, "updates", "updates shape " + shape_to_string(in[2].shape) + " differs from indices' " + shape_to_string(in[1].shape));
    if (in[2].dtype != in[0].dtype) fail_input(op, 2, "updates", "updates element type differs from data's");
    const std::string& r = attrs.get_string("reduction");
    if (r != "none" && r != "add" && r != "mul" && r != "max" && r != "min") {
      fail_attr(op, "reduction", "is \"" + r + "\"", "expected none, add, mul, max or min");
    }
    if (r != "none") require_dtype(op, 0, "data", in[0].dtype, DTypeSet::kNumeric);
    return std::vector<TensorType>{in[0]};
  };
  d.reference = [](const std::vector<NDArray>& in, const Attrs& attrs, const std::vector<TensorType>&) {
    const int64_t axis = attrs.get_int("axis");
    const std::string& r = attrs.get_string("reduction");
    const std::vector<int64_t> idx = read_indices(in[1]);
    NDArray out = in[0].copy();
    visit_dtype(out.dtype(), [&]<typename T>() {
      auto dst = out.mutable_data<T>();
      auto upd = in[2].data<T>();
      for (size_t i = 0; i < idx.size(); ++i) {
        std::vector<int64_t> at = unravel_index(static_cast<int64_t>(i), in[1].shape());
        at[axis] = resolve_index("scatter_elements", idx[i], in[0].shape()[axis], static_cast<int64_t>(i), axis);
        const int64_t t = ravel_index(at, in[0].shape());
        if (r == "none") {
          dst[t] = upd[i];
        } else if constexpr (kIsFloatStorage<T>) {
          const double a = to_double(dst[t]), u = to_double(upd[i]);
          const double v = r == "add" ? a + u : r == "mul" ? a * u : r == "max" ? std::fmax(a, u) : std::fmin(a, u);
          dst[t] = from_double<T>(std::isnan(a) || std::isnan(u) ? (r == "add" || r == "mul" ? v : NAN) : v);
        } else if constexpr (!std::is_same_v<T, Bool>) {
          const int64_t a = to_int64(dst[t]), u = to_int64(upd[i]);
          const int64_t v = r == "add"   ? static_cast<int64_t>(static_cast<uint64_t>(a) + static_cast<uint64_t>(u))
                            : r == "mul" ? static_cast<int64_t>(static_cast<uint64_t>(a) * static_cast<uint64_t>(u))
                            : r == "max" ? std::max(a, u)
                                         : std::min(a, u);
          dst[t] = from_int64<T>(v);
        }
      }
    });
    return std::vector<NDArray>{out};
  };
  d.pattern = OpPattern::kOpaque;
  return with_arity_check(std::move(d));
}

KILN_REGISTER_OP(reverse_sequence) {
  OpDef d;
  d.name = "reverse_sequence";
  d.doc = "reverses the first seq_lens[b] elements along time_axis of each batch b (ONNX ReverseSequence)";
  d.min_inputs = d.max_inputs = 2;
  d.attrs = {{"batch_axis", AttrKind::kInt, AttrValue(int64_t{1}), "0 or 1"},
             {"time_axis", AttrKind::kInt, AttrValue(int64_t{0}), "0 or 1, not batch_axis"}};
  d.infer_type = [](const std::vector<TensorType>& in, const Attrs& attrs) {
    const std::string op = "reverse_sequence";
    require_dtype(op, 1, "seq_lens", in[1].dtype, DTypeSet::kIndex);
    if (in[0].rank() < 2) fail_input(op, 0, "x", "x has rank " + std::to_string(in[0].rank()) + "; it needs rank >= 2");
    const int64_t b = attrs.get_int("batch_axis"), t = attrs.get_int("time_axis");
    if ((b != 0 && b != 1) || (t != 0 && t != 1) || b == t) {
      fail_attr(op, "batch_axis", "batch_axis " + std::to_string(b) + " and time_axis " + std::to_string(t), "one must be 0, the other 1");
    }
    if (in[1].shape != Shape{in[0].shape[b]}) fail_input(op, 1, "seq_lens", "seq_lens must have shape [" + std::to_string(in[0].shape[b]) + "] (the batch size)");
    return std::vector<TensorType>{in[0]};
  };
  d.reference = [](const std::vector<NDArray>& in, const Attrs& attrs, const std::vector<TensorType>& out_types) {
    const int64_t b = attrs.get_int("batch_axis"), t = attrs.get_int("time_axis");
    const std::vector<int64_t> lens = read_indices(in[1]);
    const Shape& s = in[0].shape();
    std::vector<int64_t> source(static_cast<size_t>(in[0].numel()));
    for (size_t i = 0; i < source.size(); ++i) {
      std::vector<int64_t> at = unravel_index(static_cast<int64_t>(i), s);
      const int64_t len = lens[at[b]];
      if (len < 0 || len > s[t]) {
        throw UserError(UserErrorKind::kInvalidArgument, "reverse_sequence input 1 (seq_lens)",
                        "length " + std::to_string(len) + " of batch " + std::to_string(at[b]) + " is outside [0, " + std::to_string(s[t]) + "]");
      }
      if (at[t] < len) at[t] = len - 1 - at[t];
      source[i] = ravel_index(at, s);
    }
    return std::vector<NDArray>{gather_flat(in[0], out_types[0], source)};
  };
  d.pattern = OpPattern::kInjective;
  return with_arity_check(std::move(d));
}

}  // namespace kiln::ir::ops
