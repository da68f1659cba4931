// softmax and log_softmax over one (resolved) axis: exp(x - max) / sum(exp(x - max)) and
// x - max - log(sum(exp(x - max))), computed in double per slice along the axis.
#include <cmath>
#include <limits>

#include "ir/ops/dtype_dispatch.h"
#include "ir/ops/op_util.h"

namespace kiln::ir::ops {
namespace {

NDArray softmax(const NDArray& x, int axis, bool log) {
  NDArray out = NDArray::empty(x.dtype(), x.shape());
  const AxisSplit s = split_at_axis(x.shape(), axis);
  std::vector<double> row(static_cast<size_t>(s.size));
  visit_dtype(x.dtype(), [&]<typename T>() {
    if constexpr (kIsFloatStorage<T>) {
      auto in = x.data<T>();
      auto o = out.mutable_data<T>();
      for (int64_t outer = 0; outer < s.outer; ++outer) {
        for (int64_t inner = 0; inner < s.inner; ++inner) {
          const int64_t base = outer * s.size * s.inner + inner;
          double mx = -std::numeric_limits<double>::infinity();
          for (int64_t i = 0; i < s.size; ++i) {
            row[i] = to_double(in[base + i * s.inner]);
            mx = std::max(mx, row[i]);
          }
          double sum = 0;
          for (int64_t i = 0; i < s.size; ++i) sum += std::exp(row[i] - mx);
          for (int64_t i = 0; i < s.size; ++i) {
            const double v = log ? row[i] - mx - std::log(sum) : std::exp(row[i] - mx) / sum;
            o[base + i * s.inner] = from_double<T>(v);
          }
        }
      }
    } else {
      KILN_IFAIL() << "softmax on " << dtype_name(x.dtype());
    }
  });
  return out;
}

OpDef make_softmax(const char* name, bool log) {
  OpDef d;
  d.name = name;
  d.doc = log ? "log of softmax over one axis" : "softmax over one axis";
  d.attrs = {{"axis", AttrKind::kInt, std::nullopt, "the axis (non-negative)"}};
  const std::string op = name;
  d.infer_type = [op](const std::vector<TensorType>& in, const Attrs& attrs) {
    require_dtype(op, 0, "x", in[0].dtype, DTypeSet::kFloat);
    axis_attr(op, attrs, "axis", in[0].rank());
    return std::vector<TensorType>{in[0]};
  };
  d.reference = [log](const std::vector<NDArray>& in, const Attrs& attrs, const std::vector<TensorType>&) {
    return std::vector<NDArray>{softmax(in[0], static_cast<int>(attrs.get_int("axis")), log)};
  };
  d.pattern = OpPattern::kOpaque;
  return with_arity_check(std::move(d));
}

}  // namespace

KILN_REGISTER_OP(softmax) { return make_softmax("softmax", false); }
KILN_REGISTER_OP(log_softmax) { return make_softmax("log_softmax", true); }

}  // namespace kiln::ir::ops
