// `pad` (ONNX Pad with constant pads): pads [begin_0..begin_{r-1}, end_0..end_{r-1}], negative
// values crop. Modes: constant (`value`, converted to x's dtype), edge (repeat the border), reflect
// (mirror without repeating the border, as numpy's "reflect"; repeats for pads longer than the
// axis), wrap (periodic). Moves element bytes, so any dtype works.
#include <cstring>

#include "ir/ops/dtype_dispatch.h"
#include "ir/ops/op_util.h"

namespace kiln::ir::ops {
namespace {

enum class PadMode { kConstant, kEdge, kReflect, kWrap };

PadMode parse_mode(const std::string& mode) {
  if (mode == "constant") return PadMode::kConstant;
  if (mode == "edge") return PadMode::kEdge;
  if (mode == "reflect") return PadMode::kReflect;
  if (mode == "wrap") return PadMode::kWrap;
  fail_attr("pad", "mode", "is \"" + mode + "\"", "expected \"constant\", \"reflect\", \"edge\" or \"wrap\"");
}

// Input coordinate for output coordinate `o` of one axis, or -1 for the constant value.
int64_t source_index(int64_t o, int64_t pad_begin, int64_t dim, PadMode mode) {
  const int64_t i = o - pad_begin;
  if (i >= 0 && i < dim) return i;
  switch (mode) {
    case PadMode::kConstant: return -1;
    case PadMode::kEdge: return i < 0 ? 0 : dim - 1;
    case PadMode::kWrap: return ((i % dim) + dim) % dim;
    case PadMode::kReflect: {
      if (dim == 1) return 0;
      const int64_t period = 2 * (dim - 1);
      const int64_t m = ((i % period) + period) % period;
      return m < dim ? m : period - m;
    }
  }
  return -1;
}

std::vector<TensorType> infer_pad(const std::vector<TensorType>& in, const Attrs& attrs) {
  const TensorType& x = in[0];
  const int rank = x.rank();
  const auto& pads = ints_of_size("pad", attrs, "pads", 2 * static_cast<size_t>(rank));
  const PadMode mode = parse_mode(attrs.get_string("mode"));
  Shape out(rank);
  for (int d = 0; d < rank; ++d) {
    out[d] = x.shape[d] + pads[d] + pads[d + rank];
    if (out[d] < 0) {
      fail_attr("pad", "pads",
                "crops axis " + std::to_string(d) + " (size " + std::to_string(x.shape[d]) + ") below zero with " +
                    shape_to_string(pads));
    }
    if (mode != PadMode::kConstant && x.shape[d] == 0 && out[d] > 0) {
      fail_attr("pad", "mode", "is \"" + attrs.get_string("mode") + "\", but axis " + std::to_string(d) +
                                   " is empty: there is nothing to repeat");
    }
  }
  return {{x.dtype, out}};
}

std::vector<NDArray> reference_pad(const std::vector<NDArray>& in, const Attrs& attrs, const std::vector<TensorType>& out_types) {
  const NDArray& x = in[0];
  const int rank = static_cast<int>(x.shape().size());
  const auto& pads = attrs.get_ints("pads");
  const PadMode mode = parse_mode(attrs.get_string("mode"));
  const Shape& os = out_types[0].shape;
  const std::vector<int64_t> strides = contiguous_strides(x.shape());
  // Per axis: the input element offset of each output coordinate, or -1.
  std::vector<std::vector<int64_t>> offsets(rank);
  for (int d = 0; d < rank; ++d) {
    for (int64_t o = 0; o < os[d]; ++o) {
      const int64_t i = source_index(o, pads[d], x.shape()[d], mode);
      offsets[d].push_back(i < 0 ? -1 : i * strides[d]);
    }
  }
  // The fill value in x's dtype (integers: truncated and saturated, never undefined behaviour).
  NDArray value = NDArray::empty(x.dtype(), {});
  visit_dtype(x.dtype(), [&]<typename T>() { value.mutable_data<T>()[0] = from_double<T>(attrs.get_float("value")); });
  const size_t es = dtype_size(x.dtype());
  NDArray out = NDArray::empty(x.dtype(), os);
  auto* dst = static_cast<uint8_t*>(out.mutable_raw_data());
  const auto* src = static_cast<const uint8_t*>(x.raw_data());
  std::vector<int64_t> counter(rank, 0);
  for (int64_t i = 0; i < out.numel(); ++i) {
    int64_t off = 0;
    bool constant = false;
    for (int d = 0; d < rank; ++d) {
      const int64_t o = offsets[d][counter[d]];
      constant = constant || o < 0;
      off += o;
    }
    std::memcpy(dst + i * es, constant ? value.raw_data() : src + off * es, es);
    for (int d = rank - 1; d >= 0; --d) {
      if (++counter[d] < os[d]) break;
      counter[d] = 0;
    }
  }
  return {out};
}

}  // namespace

KILN_REGISTER_OP(pad) {
  OpDef d;
  d.name = "pad";
  d.doc = "pads (or, with negative pads, crops) every axis";
  d.attrs = {
      {"pads", AttrKind::kInts, std::nullopt, "[begin_0, ..., end_0, ...], 2 * rank values"},
      {"mode", AttrKind::kString, AttrValue(std::string("constant")), "constant, reflect, edge or wrap"},
      {"value", AttrKind::kFloat, AttrValue(0.0), "fill value of constant mode"},
  };
  d.infer_type = infer_pad;
  d.reference = reference_pad;
  d.pattern = OpPattern::kInjective;
  return with_arity_check(std::move(d));
}

}  // namespace kiln::ir::ops
