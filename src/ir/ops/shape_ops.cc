// Data-movement operators that work on any element type (bytes are moved, never converted):
//   reshape(shape), transpose(perm), expand(shape; numpy broadcast of x and shape),
//   concat(axis; variadic), split(axis, sizes; one output per size).
//   shape_of(start, end): x's dimensions [start, end) as an i64 vector (ONNX Shape). The importer
//     folds it to a constant where x's shape is static, so it remains only on symbolic shapes
//     (docs/dynamic.md).
#include <cstring>
#include <numeric>

#include "ir/ops/op_util.h"

namespace kiln::ir::ops {

namespace {

// out[i] = in[offsets[i]] for an element gather driven by strides over `out_shape`.
void gather_elements(const NDArray& in, NDArray& out, const std::vector<int64_t>& in_strides, int64_t base = 0) {
  const size_t es = dtype_size(in.dtype());
  const auto* src = static_cast<const uint8_t*>(in.raw_data());
  auto* dst = static_cast<uint8_t*>(out.mutable_raw_data());
  const std::vector<int64_t> strides[1] = {in_strides};
  for_each_strided(out.shape(), strides, [&](int64_t i, const int64_t* off) {
    std::memcpy(dst + static_cast<size_t>(i) * es, src + static_cast<size_t>(base + off[0]) * es, es);
  });
}

}  // namespace

void copy_strided(const NDArray& in, NDArray& out, const std::vector<int64_t>& in_strides, int64_t base) {
  gather_elements(in, out, in_strides, base);
}

KILN_REGISTER_OP(reshape) {
  OpDef d;
  d.name = "reshape";
  d.doc = "same elements, another shape (fully resolved: no -1 or 0 placeholders)";
  d.attrs = {{"shape", AttrKind::kShape, std::nullopt, "the output shape (static or symbolic dimensions)"}};
  d.infer_type = [](const std::vector<TensorType>& in, const Attrs& attrs) {
    const Shape& shape = attrs.get_shape("shape");
    const Dim want = shape_numel_dim(shape), have = shape_numel_dim(in[0].shape);
    if (!(want == have)) {
      const std::string counts = "is " + shape_to_string(shape) + " (" + want.to_string() + " elements), but x is " +
                                 in[0].to_string() + " (" + have.to_string() + " elements)";
      if (dims_provably_differ(want, have)) fail_attr("reshape", "shape", counts);
      throw UserError(UserErrorKind::kUnsupported, attr_subject("reshape", "shape"),
                      counts + ", which Kiln cannot prove equal",
                      "write the target shape in the input's size variables, or pin them with --input-shape");
    }
    return std::vector<TensorType>{{in[0].dtype, shape}};
  };
  d.reference = [](const std::vector<NDArray>& in, const Attrs&, const std::vector<TensorType>& out) {
    return std::vector<NDArray>{in[0].reshaped(out[0].shape)};
  };
  d.pattern = OpPattern::kInjective;
  return with_arity_check(std::move(d));
}

KILN_REGISTER_OP(shape_of) {
  OpDef d;
  d.name = "shape_of";
  d.doc = "x's dimensions [start, end) as an i64 vector (ONNX Shape)";
  d.attrs = {{"start", AttrKind::kInt, AttrValue(int64_t{0}), "the first axis, in [0, rank]"},
             {"end", AttrKind::kInt, std::nullopt, "one past the last axis, in [start, rank]"}};
  d.infer_type = [](const std::vector<TensorType>& in, const Attrs& attrs) {
    const int64_t start = attrs.get_int("start"), end = attrs.get_int("end"), rank = in[0].rank();
    if (start < 0 || start > rank) fail_attr("shape_of", "start", "is " + std::to_string(start) + " for rank " + std::to_string(rank));
    if (end < start || end > rank) {
      fail_attr("shape_of", "end", "is " + std::to_string(end) + " for start " + std::to_string(start) + " and rank " + std::to_string(rank));
    }
    return std::vector<TensorType>{{DType::kI64, Shape{end - start}}};
  };
  d.reference = [](const std::vector<NDArray>& in, const Attrs& attrs, const std::vector<TensorType>& out_types) {
    NDArray out = NDArray::empty(DType::kI64, out_types[0].shape);
    const int64_t start = attrs.get_int("start");
    for (int64_t i = 0; i < out.numel(); ++i) out.mutable_data<int64_t>()[i] = in[0].shape()[start + i];
    return std::vector<NDArray>{out};
  };
  d.pattern = OpPattern::kOpaque;
  return with_arity_check(std::move(d));
}

KILN_REGISTER_OP(transpose) {
  OpDef d;
  d.name = "transpose";
  d.doc = "permutes the axes: out.shape[i] = x.shape[perm[i]]";
  d.attrs = {{"perm", AttrKind::kInts, std::nullopt, "a permutation of 0..rank-1"}};
  d.infer_type = [](const std::vector<TensorType>& in, const Attrs& attrs) {
    const auto& perm = ints_of_size("transpose", attrs, "perm", in[0].shape.size());
    std::vector<bool> seen(perm.size(), false);
    for (int64_t p : perm) {
      if (p < 0 || p >= static_cast<int64_t>(perm.size()) || seen[p]) {
        fail_attr("transpose", "perm", shape_to_string(perm) + " is not a permutation of 0.." +
                                           std::to_string(perm.size() - 1));
      }
      seen[p] = true;
    }
    Shape out;
    for (int64_t p : perm) out.push_back(in[0].shape[p]);
    return std::vector<TensorType>{{in[0].dtype, out}};
  };
  d.reference = [](const std::vector<NDArray>& in, const Attrs& attrs, const std::vector<TensorType>& out_types) {
    const auto& perm = attrs.get_ints("perm");
    const std::vector<int64_t> own = contiguous_strides(in[0].shape());
    std::vector<int64_t> strides;
    for (int64_t p : perm) strides.push_back(own[p]);
    NDArray out = NDArray::empty(in[0].dtype(), out_types[0].shape);
    gather_elements(in[0], out, strides);
    return std::vector<NDArray>{out};
  };
  d.pattern = OpPattern::kInjective;
  return with_arity_check(std::move(d));
}

KILN_REGISTER_OP(expand) {
  OpDef d;
  d.name = "expand";
  d.doc = "broadcasts x to broadcast(x.shape, shape) (ONNX Expand)";
  d.attrs = {{"shape", AttrKind::kShape, std::nullopt, "target shape (numpy-broadcast with x's)"}};
  d.infer_type = [](const std::vector<TensorType>& in, const Attrs& attrs) {
    const Shape& shape = attrs.get_shape("shape");
    return std::vector<TensorType>{{in[0].dtype, broadcast_shapes("expand", {in[0].shape, shape}, {"x", "shape"})}};
  };
  d.reference = [](const std::vector<NDArray>& in, const Attrs&, const std::vector<TensorType>& out_types) {
    NDArray out = NDArray::empty(in[0].dtype(), out_types[0].shape);
    gather_elements(in[0], out, broadcast_strides(in[0].shape(), out.shape()));
    return std::vector<NDArray>{out};
  };
  d.pattern = OpPattern::kBroadcast;
  return with_arity_check(std::move(d));
}

KILN_REGISTER_OP(concat) {
  OpDef d;
  d.name = "concat";
  d.doc = "joins the inputs along `axis`";
  d.min_inputs = 1;
  d.max_inputs = -1;
  d.attrs = {{"axis", AttrKind::kInt, std::nullopt, "the axis (non-negative)"}};
  d.infer_type = [](const std::vector<TensorType>& in, const Attrs& attrs) {
    const int64_t axis = axis_attr("concat", attrs, "axis", in[0].rank());
    Shape out = in[0].shape;
    for (size_t i = 1; i < in.size(); ++i) {
      std::string name = "x";  // (not "x" + to_string: GCC 12 -Wrestrict false positive)
      name += std::to_string(i);
      if (in[i].dtype != in[0].dtype) {
        fail_input("concat", static_cast<int>(i), name,
                   std::string("has element type ") + dtype_name(in[i].dtype) + ", but input 0 has " +
                       dtype_name(in[0].dtype));
      }
      bool ok = in[i].rank() == in[0].rank();
      for (int dd = 0; ok && dd < in[0].rank(); ++dd) ok = dd == axis || in[i].shape[dd] == in[0].shape[dd];
      if (!ok) {
        fail_input("concat", static_cast<int>(i), name,
                   "has shape " + shape_to_string(in[i].shape) + ", which differs from input 0's " +
                       shape_to_string(in[0].shape) + " outside axis " + std::to_string(axis));
      }
      out[axis] = dim_add(out[axis], in[i].shape[axis]);
    }
    return std::vector<TensorType>{{in[0].dtype, out}};
  };
  d.reference = [](const std::vector<NDArray>& in, const Attrs& attrs, const std::vector<TensorType>& out_types) {
    const int axis = static_cast<int>(attrs.get_int("axis"));
    NDArray out = NDArray::empty(in[0].dtype(), out_types[0].shape);
    const size_t es = dtype_size(out.dtype());
    const AxisSplit os = split_at_axis(out.shape(), axis);
    auto* dst = static_cast<uint8_t*>(out.mutable_raw_data());
    int64_t at = 0;  // position along the axis
    for (const NDArray& x : in) {
      const AxisSplit xs = split_at_axis(x.shape(), axis);
      const size_t chunk = static_cast<size_t>(xs.size * xs.inner) * es;
      for (int64_t o = 0; o < xs.outer; ++o) {
        std::memcpy(dst + static_cast<size_t>((o * os.size + at) * os.inner) * es,
                    static_cast<const uint8_t*>(x.raw_data()) + o * chunk, chunk);
      }
      at += xs.size;
    }
    return std::vector<NDArray>{out};
  };
  d.pattern = OpPattern::kInjective;
  return with_arity_check(std::move(d));
}

KILN_REGISTER_OP(split) {
  OpDef d;
  d.name = "split";
  d.doc = "splits x along `axis` into pieces of `sizes` (one output each)";
  d.attrs = {{"axis", AttrKind::kInt, std::nullopt, "the axis (non-negative)"},
             {"sizes", AttrKind::kInts, std::nullopt, "piece sizes along the axis (sum = the axis size)"}};
  d.infer_type = [](const std::vector<TensorType>& in, const Attrs& attrs) {
    const int64_t axis = axis_attr("split", attrs, "axis", in[0].rank());
    const auto& sizes = attrs.get_ints("sizes");
    if (sizes.empty()) fail_attr("split", "sizes", "is empty", "give at least one piece size");
    require_all_at_least("split", "sizes", sizes, 0);
    const int64_t total = std::accumulate(sizes.begin(), sizes.end(), int64_t{0});
    if (total != in[0].shape[axis]) {
      fail_attr("split", "sizes",
                shape_to_string(sizes) + " sums to " + std::to_string(total) + ", but x's axis " +
                    std::to_string(axis) + " has size " + std::to_string(in[0].shape[axis]));
    }
    std::vector<TensorType> out;
    for (int64_t s : sizes) {
      Shape shape = in[0].shape;
      shape[axis] = s;
      out.push_back({in[0].dtype, shape});
    }
    return out;
  };
  d.reference = [](const std::vector<NDArray>& in, const Attrs& attrs, const std::vector<TensorType>& out_types) {
    const int axis = static_cast<int>(attrs.get_int("axis"));
    const size_t es = dtype_size(in[0].dtype());
    const AxisSplit xs = split_at_axis(in[0].shape(), axis);
    const auto* src = static_cast<const uint8_t*>(in[0].raw_data());
    std::vector<NDArray> outs;
    int64_t at = 0;
    for (const TensorType& t : out_types) {
      NDArray o = NDArray::empty(t.dtype, t.shape);
      const int64_t size = t.shape[axis];
      const size_t chunk = static_cast<size_t>(size * xs.inner) * es;
      for (int64_t i = 0; i < xs.outer; ++i) {
        std::memcpy(static_cast<uint8_t*>(o.mutable_raw_data()) + i * chunk,
                    src + static_cast<size_t>((i * xs.size + at) * xs.inner) * es, chunk);
      }
      at += size;
      outs.push_back(o);
    }
    return outs;
  };
  d.pattern = OpPattern::kInjective;
  return with_arity_check(std::move(d));
}

}  // namespace kiln::ir::ops
