// Pooling: max_pool2d and avg_pool2d (NCHW, kernel/strides/pads/dilations/ceil_mode; avg with
// count_include_pad), global_avg_pool and global_max_pool (over every spatial axis, keeping them as
// size 1). Max propagates nan; averages sum in double. max_pool2d also takes integer inputs.
// avg_pool2d's divisor: the taps of the window inside the input (count_include_pad=0) or inside
// the padded input (=1; taps past the end padding, possible with ceil_mode, never count).
#include <cmath>
#include <limits>

#include "ir/ops/cast.h"
#include "ir/ops/dtype_dispatch.h"
#include "ir/ops/op_util.h"
#include "ir/ops/pool_attrs.h"

namespace kiln::ir::ops {
namespace {

struct Window {
  int64_t kh, kw, sh, sw, dh, dw, pt, pl, pb, pr;
};

Window window_of(const Attrs& attrs) {
  const auto& k = attrs.get_ints("kernel");
  const auto& s = attrs.get_ints("strides");
  const auto& p = attrs.get_ints("pads");
  const auto& d = attrs.get_ints("dilations");
  return {k[0], k[1], s[0], s[1], d[0], d[1], p[0], p[1], p[2], p[3]};
}

std::vector<TensorType> infer_pool2d(const std::string& op, const std::vector<TensorType>& in, const Attrs& attrs,
                                     DTypeSet dtypes) {
  const TensorType& x = in[0];
  require_dtype(op, 0, "x", x.dtype, dtypes);
  require_rank(op, 0, "x", x, 4, "[N, C, H, W]");
  const auto& k = ints_of_size(op, attrs, "kernel", 2);
  const auto& s = ints_of_size(op, attrs, "strides", 2);
  const auto& p = ints_of_size(op, attrs, "pads", 4);
  const auto& d = ints_of_size(op, attrs, "dilations", 2);
  require_all_at_least(op, "kernel", k, 1);
  require_all_at_least(op, "strides", s, 1);
  require_all_at_least(op, "dilations", d, 1);
  require_all_at_least(op, "pads", p, 0);
  for (int i = 0; i < 2; ++i) {
    if (p[i] >= (k[i] - 1) * d[i] + 1 || p[i + 2] >= (k[i] - 1) * d[i] + 1) {
      fail_attr(op, "pads", "pad " + shape_to_string(p) + " is not smaller than the dilated kernel in dimension " +
                                std::to_string(i),
                "a window lying entirely in the padding has no input to pool");
    }
  }
  const bool ceil_mode = attrs.get_int("ceil_mode") != 0;
  const Dim oh = sliding_output_size(op, 0, x.shape[2], k[0], s[0], d[0], p[0], p[2], ceil_mode);
  const Dim ow = sliding_output_size(op, 1, x.shape[3], k[1], s[1], d[1], p[1], p[3], ceil_mode);
  return {{x.dtype, Shape{x.shape[0], x.shape[1], oh, ow}}};
}

// Calls fn(out_index, plane, oy, ox) for every output element.
template <typename Fn>
void for_each_window(const Shape& xs, const Shape& ys, Fn&& fn) {
  const int64_t planes = xs[0] * xs[1];
  for (int64_t pl = 0; pl < planes; ++pl) {
    for (int64_t oy = 0; oy < ys[2]; ++oy) {
      for (int64_t ox = 0; ox < ys[3]; ++ox) fn((pl * ys[2] + oy) * ys[3] + ox, pl, oy, ox);
    }
  }
}

template <typename T>
void max_pool_kernel(const Window& w, const Shape& xs, const Shape& ys, const T* x, T* y) {
  const int64_t h = xs[2], wd = xs[3];
  for_each_window(xs, ys, [&](int64_t o, int64_t pl, int64_t oy, int64_t ox) {
    T best = std::numeric_limits<T>::lowest();
    if constexpr (std::is_floating_point_v<T>) best = -std::numeric_limits<T>::infinity();
    for (int64_t ky = 0; ky < w.kh; ++ky) {
      const int64_t iy = oy * w.sh - w.pt + ky * w.dh;
      if (iy < 0 || iy >= h) continue;
      for (int64_t kx = 0; kx < w.kw; ++kx) {
        const int64_t ix = ox * w.sw - w.pl + kx * w.dw;
        if (ix < 0 || ix >= wd) continue;
        const T v = x[(pl * h + iy) * wd + ix];
        if constexpr (std::is_floating_point_v<T>) {
          if (std::isnan(v)) best = v;
          if (std::isnan(best)) continue;
        }
        if (v > best) best = v;
      }
    }
    y[o] = best;
  });
}

template <typename T>
void avg_pool_kernel(const Window& w, bool count_include_pad, const Shape& xs, const Shape& ys, const T* x, T* y) {
  const int64_t h = xs[2], wd = xs[3];
  for_each_window(xs, ys, [&](int64_t o, int64_t pl, int64_t oy, int64_t ox) {
    double sum = 0;
    int64_t count = 0;
    for (int64_t ky = 0; ky < w.kh; ++ky) {
      const int64_t iy = oy * w.sh - w.pt + ky * w.dh;
      if (iy < -w.pt || iy >= h + w.pb) continue;
      const bool row_inside = iy >= 0 && iy < h;
      for (int64_t kx = 0; kx < w.kw; ++kx) {
        const int64_t ix = ox * w.sw - w.pl + kx * w.dw;
        if (ix < -w.pl || ix >= wd + w.pr) continue;
        const bool inside = row_inside && ix >= 0 && ix < wd;
        if (inside) sum += static_cast<double>(x[(pl * h + iy) * wd + ix]);
        if (inside || count_include_pad) ++count;
      }
    }
    y[o] = static_cast<T>(sum / static_cast<double>(count));
  });
}

std::vector<TensorType> infer_global(const std::string& op, const std::vector<TensorType>& in) {
  const TensorType& x = in[0];
  require_dtype(op, 0, "x", x.dtype, DTypeSet::kFloat);
  if (x.rank() < 3) {
    fail_input(op, 0, "x", "has shape " + shape_to_string(x.shape) + ", expected rank >= 3 ([N, C, spatial...])");
  }
  Shape out = x.shape;
  for (size_t d = 2; d < out.size(); ++d) out[d] = 1;
  return {{x.dtype, out}};
}

NDArray global_pool(const NDArray& x_in, const TensorType& out_type, bool is_max) {
  const NDArray x = cast_array(x_in, compute_dtype(x_in.dtype()));
  NDArray y = NDArray::empty(x.dtype(), out_type.shape);
  const int64_t planes = x.shape()[0] * x.shape()[1];
  const int64_t size = planes == 0 ? 0 : x.numel() / planes;
  visit_f32_f64(x.dtype(), [&]<typename T>() {
    const T* px = x.data<T>().data();
    T* py = y.mutable_data<T>().data();
    for (int64_t p = 0; p < planes; ++p) {
      const T* v = px + p * size;
      double acc = is_max ? -std::numeric_limits<double>::infinity() : 0.0;
      for (int64_t i = 0; i < size; ++i) {
        const double e = static_cast<double>(v[i]);
        if (!is_max) acc += e;
        else if (std::isnan(e) || std::isnan(acc)) acc = std::numeric_limits<double>::quiet_NaN();
        else acc = std::max(acc, e);
      }
      py[p] = static_cast<T>(is_max ? acc : acc / static_cast<double>(size));
    }
  });
  return cast_array(y, out_type.dtype);
}

}  // namespace

KILN_REGISTER_OP(max_pool2d) {
  OpDef d;
  d.name = "max_pool2d";
  d.doc = "2-D max pooling, NCHW (padding never wins; nan propagates)";
  d.attrs = pool2d_attr_specs(false);
  d.infer_type = [](const std::vector<TensorType>& in, const Attrs& attrs) {
    return infer_pool2d("max_pool2d", in, attrs, DTypeSet::kNumeric);
  };
  d.reference = [](const std::vector<NDArray>& in, const Attrs& attrs, const std::vector<TensorType>& out_types) {
    const bool half = in[0].dtype() == DType::kF16 || in[0].dtype() == DType::kBF16;
    const NDArray x = half ? cast_array(in[0], DType::kF32) : in[0];
    NDArray y = NDArray::empty(x.dtype(), out_types[0].shape);
    visit_dtype(x.dtype(), [&]<typename T>() {
      if constexpr (std::is_arithmetic_v<T>) {
        max_pool_kernel<T>(window_of(attrs), x.shape(), y.shape(), x.data<T>().data(), y.mutable_data<T>().data());
      } else {
        KILN_IFAIL() << "max_pool2d on " << dtype_name(x.dtype());
      }
    });
    return std::vector<NDArray>{cast_array(y, out_types[0].dtype)};
  };
  d.pattern = OpPattern::kOutEWiseFusable;
  return with_arity_check(std::move(d));
}

KILN_REGISTER_OP(avg_pool2d) {
  OpDef d;
  d.name = "avg_pool2d";
  d.doc = "2-D average pooling, NCHW";
  d.attrs = pool2d_attr_specs(true);
  d.infer_type = [](const std::vector<TensorType>& in, const Attrs& attrs) {
    return infer_pool2d("avg_pool2d", in, attrs, DTypeSet::kFloat);
  };
  d.reference = [](const std::vector<NDArray>& in, const Attrs& attrs, const std::vector<TensorType>& out_types) {
    const NDArray x = cast_array(in[0], compute_dtype(in[0].dtype()));
    NDArray y = NDArray::empty(x.dtype(), out_types[0].shape);
    visit_f32_f64(x.dtype(), [&]<typename T>() {
      avg_pool_kernel<T>(window_of(attrs), attrs.get_int("count_include_pad") != 0, x.shape(), y.shape(),
                         x.data<T>().data(), y.mutable_data<T>().data());
    });
    return std::vector<NDArray>{cast_array(y, out_types[0].dtype)};
  };
  d.pattern = OpPattern::kOutEWiseFusable;
  return with_arity_check(std::move(d));
}

KILN_REGISTER_OP(global_avg_pool) {
  OpDef d;
  d.name = "global_avg_pool";
  d.doc = "mean over every spatial axis of [N, C, ...], kept as size 1";
  d.infer_type = [](const std::vector<TensorType>& in, const Attrs&) { return infer_global("global_avg_pool", in); };
  d.reference = [](const std::vector<NDArray>& in, const Attrs&, const std::vector<TensorType>& out_types) {
    return std::vector<NDArray>{global_pool(in[0], out_types[0], false)};
  };
  d.pattern = OpPattern::kCommReduce;
  return with_arity_check(std::move(d));
}

KILN_REGISTER_OP(global_max_pool) {
  OpDef d;
  d.name = "global_max_pool";
  d.doc = "max over every spatial axis of [N, C, ...], kept as size 1 (nan propagates)";
  d.infer_type = [](const std::vector<TensorType>& in, const Attrs&) { return infer_global("global_max_pool", in); };
  d.reference = [](const std::vector<NDArray>& in, const Attrs&, const std::vector<TensorType>& out_types) {
    return std::vector<NDArray>{global_pool(in[0], out_types[0], true)};
  };
  d.pattern = OpPattern::kCommReduce;
  return with_arity_check(std::move(d));
}

}  // namespace kiln::ir::ops
