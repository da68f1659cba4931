// `cast`: element-type conversion (ONNX Cast).
#include "ir/ops/cast.h"

#include "ir/ops/dtype_dispatch.h"
#include "ir/ops/op_util.h"

namespace kiln::ir::ops {
namespace {

template <typename S, typename D>
D convert(S v) {
  if constexpr (std::is_same_v<S, D>) {
    return v;
  } else if constexpr (std::is_same_v<D, Bool>) {
    return Bool{static_cast<uint8_t>(to_double(v) != 0.0)};  // NaN != 0 is true, as in numpy
  } else if constexpr (kIsIntStorage<D> && (kIsIntStorage<S> || std::is_same_v<S, Bool>)) {
    return from_int64<D>(to_int64(v));
  } else if constexpr (std::is_floating_point_v<D> && kIsIntStorage<S>) {
    return static_cast<D>(v);  // one rounding, also for i64 -> f32
  } else {
    return from_double<D>(to_double(v));  // f16/bf16 through f32, exact where it matters
  }
}

}  // namespace

NDArray cast_array(const NDArray& a, DType dtype) {
  if (a.dtype() == dtype) return a;
  NDArray out = NDArray::empty(dtype, a.shape());
  visit_dtype(a.dtype(), [&]<typename S>() {
    visit_dtype(dtype, [&]<typename D>() {
      auto in = a.data<S>();
      auto o = out.mutable_data<D>();
      for (size_t i = 0; i < in.size(); ++i) o[i] = convert<S, D>(in[i]);
    });
  });
  return out;
}

KILN_REGISTER_OP(cast) {
  OpDef d;
  d.name = "cast";
  d.doc = "converts the element type (ONNX Cast; float->int truncates toward zero, saturating)";
  d.attrs = {{"dtype", AttrKind::kDType, std::nullopt, "target element type"}};
  d.infer_type = [](const std::vector<TensorType>& in, const Attrs& attrs) {
    return std::vector<TensorType>{{attrs.get_dtype("dtype"), in[0].shape}};
  };
  d.reference = [](const std::vector<NDArray>& in, const Attrs& attrs, const std::vector<TensorType>&) {
    // Same dtype: the input itself (arrays are never written after they are produced).
    return std::vector<NDArray>{cast_array(in[0], attrs.get_dtype("dtype"))};
  };
  d.pattern = OpPattern::kElemwise;
  return with_arity_check(std::move(d));
}

}  // namespace kiln::ir::ops
