// `conv2d`: 2-D convolution in NCHW with groups, strides, dilations and explicit pads (ONNX Conv
// with a 2-D kernel). Reference loop nest, per (image, output channel): a double accumulator plane
// starts at the bias, then for each input channel of the group and each kernel tap, a contiguous
// run of output columns accumulates weight * input. The valid column range is computed per tap so
// the inner loop has no bounds checks. f16/bf16 inputs are converted to f32, computed like f32
// (double accumulation), and the result is rounded to f16/bf16.
#include <algorithm>

#include "ir/ops/cast.h"
#include "ir/ops/dtype_dispatch.h"
#include "ir/ops/conv2d_attrs.h"
#include "ir/ops/op_util.h"

namespace kiln::ir::ops {

Dim sliding_output_size(const std::string& op, int dim, const Dim& in_dim, int64_t kernel, int64_t stride,
                        int64_t dilation, int64_t pad_begin, int64_t pad_end, bool ceil_mode) {
  const int64_t effective = (kernel - 1) * dilation + 1;
  if (in_dim.is_symbolic()) {
    // floor((in + pads - effective) / stride) + 1; with ceil_mode, rounded up but never past a
    // window that starts in the end padding: min(ceil(...), floor((in + pad_begin - 1) / stride) + 1).
    const Dim span = dim_add(in_dim, Dim(pad_begin + pad_end - effective));
    if (!ceil_mode) return dim_add(dim_floordiv(span, Dim(stride)), Dim(1));
    return dim_min(dim_add(dim_ceildiv(span, Dim(stride)), Dim(1)),
                   dim_add(dim_floordiv(dim_add(in_dim, Dim(pad_begin - 1)), Dim(stride)), Dim(1)));
  }
  const int64_t in = in_dim.value();
  const int64_t span = in + pad_begin + pad_end - effective;
  if (span < 0) {
    throw UserError(UserErrorKind::kInvalidArgument, op + " spatial dimension " + std::to_string(dim),
                    "the dilated kernel (" + std::to_string(effective) + ") is larger than the padded input (" +
                        std::to_string(in + pad_begin + pad_end) + ")",
                    "check the kernel size, dilations and pads");
  }
  int64_t out = (ceil_mode ? (span + stride - 1) / stride : span / stride) + 1;
  if (ceil_mode && (out - 1) * stride >= in + pad_begin) --out;
  return out;
}

namespace {

constexpr const char* kOp = "conv2d";

struct ConvGeometry {
  int64_t n, c, h, w, m, kh, kw, oh, ow, groups;
  int64_t sh, sw, dh, dw, pt, pl;
};

template <typename T>
void conv2d_kernel(const ConvGeometry& g, const T* x, const T* w, const T* bias, T* y) {
  const int64_t cg = g.c / g.groups, mg = g.m / g.groups;
  std::vector<double> acc(static_cast<size_t>(g.oh * g.ow));
  for (int64_t n = 0; n < g.n; ++n) {
    for (int64_t m = 0; m < g.m; ++m) {
      const int64_t group = m / mg;
      std::fill(acc.begin(), acc.end(), bias ? static_cast<double>(bias[m]) : 0.0);
      for (int64_t c = 0; c < cg; ++c) {
        const T* plane = x + ((n * g.c + group * cg + c) * g.h) * g.w;
        for (int64_t ky = 0; ky < g.kh; ++ky) {
          for (int64_t kx = 0; kx < g.kw; ++kx) {
            const double wv = static_cast<double>(w[((m * cg + c) * g.kh + ky) * g.kw + kx]);
            // Input column of output column ow: ow * sw - shift; keep it in [0, w).
            const int64_t shift = g.pl - kx * g.dw;
            const int64_t ow_lo = shift <= 0 ? 0 : (shift + g.sw - 1) / g.sw;
            const int64_t last = g.w - 1 + shift;
            const int64_t ow_hi = last < 0 ? 0 : std::min(g.ow, last / g.sw + 1);
            if (ow_lo >= ow_hi) continue;
            for (int64_t oy = 0; oy < g.oh; ++oy) {
              const int64_t iy = oy * g.sh - g.pt + ky * g.dh;
              if (iy < 0 || iy >= g.h) continue;
              const T* row = plane + iy * g.w - shift;  // row[ow * sw] is input column ow * sw - shift
              double* out = acc.data() + oy * g.ow;
              for (int64_t ox = ow_lo; ox < ow_hi; ++ox) out[ox] += wv * static_cast<double>(row[ox * g.sw]);
            }
          }
        }
      }
      T* dst = y + (n * g.m + m) * g.oh * g.ow;
      for (size_t i = 0; i < acc.size(); ++i) dst[i] = static_cast<T>(acc[i]);
    }
  }
}

std::vector<TensorType> infer_conv2d(const std::vector<TensorType>& in, const Attrs& attrs) {
  const TensorType& x = in[0];
  const TensorType& w = in[1];
  require_dtype(kOp, 0, "x", x.dtype, DTypeSet::kFloat);
  require_rank(kOp, 0, "x", x, 4, "[N, C, H, W]");
  require_rank(kOp, 1, "w", w, 4, "[M, C/groups, kh, kw]");
  require_same_dtype(kOp, in, {"x", "w", "bias"});
  const auto& strides = ints_of_size(kOp, attrs, "strides", 2);
  const auto& pads = ints_of_size(kOp, attrs, "pads", 4);
  const auto& dilations = ints_of_size(kOp, attrs, "dilations", 2);
  require_all_at_least(kOp, "strides", strides, 1);
  require_all_at_least(kOp, "dilations", dilations, 1);
  require_all_at_least(kOp, "pads", pads, 0);
  const int64_t groups = attrs.get_int("groups");
  if (groups < 1) fail_attr(kOp, "groups", "is " + std::to_string(groups) + ", expected >= 1");
  const int64_t c = x.shape[1], m = w.shape[0];
  if (c % groups != 0 || m % groups != 0) {
    fail_attr(kOp, "groups",
              "is " + std::to_string(groups) + ", which does not divide the input channels (" + std::to_string(c) +
                  ") and output channels (" + std::to_string(m) + ")");
  }
  if (w.shape[1] * groups != c) {
    fail_input(kOp, 1, "w",
               "has shape " + shape_to_string(w.shape) + ": dimension 1 must be C/groups = " + std::to_string(c) +
                   "/" + std::to_string(groups) + " = " + std::to_string(c / groups));
  }
  if (in.size() > 2 && in[2].shape != Shape{m}) {
    fail_input(kOp, 2, "bias", "has shape " + shape_to_string(in[2].shape) + ", expected [" + std::to_string(m) + "]");
  }
  const Dim oh = sliding_output_size(kOp, 0, x.shape[2], w.shape[2], strides[0], dilations[0], pads[0], pads[2], false);
  const Dim ow = sliding_output_size(kOp, 1, x.shape[3], w.shape[3], strides[1], dilations[1], pads[1], pads[3], false);
  return {{x.dtype, Shape{x.shape[0], m, oh, ow}}};
}

std::vector<NDArray> reference_conv2d(const std::vector<NDArray>& in, const Attrs& attrs,
                                      const std::vector<TensorType>& out_types) {
  const DType ct = compute_dtype(in[0].dtype());
  const NDArray x = cast_array(in[0], ct), w = cast_array(in[1], ct);
  const NDArray bias = in.size() > 2 ? cast_array(in[2], ct) : NDArray();
  const auto& s = attrs.get_ints("strides");
  const auto& p = attrs.get_ints("pads");
  const auto& d = attrs.get_ints("dilations");
  const Shape& os = out_types[0].shape;
  const ConvGeometry g{x.shape()[0], x.shape()[1], x.shape()[2], x.shape()[3], w.shape()[0], w.shape()[2], w.shape()[3],
                       os[2], os[3], attrs.get_int("groups"), s[0], s[1], d[0], d[1], p[0], p[1]};
  NDArray y = NDArray::empty(ct, os);
  visit_f32_f64(ct, [&]<typename T>() {
    conv2d_kernel<T>(g, x.data<T>().data(), w.data<T>().data(), bias.defined() ? bias.data<T>().data() : nullptr,
                     y.mutable_data<T>().data());
  });
  return {cast_array(y, out_types[0].dtype)};
}

}  // namespace

KILN_REGISTER_OP(conv2d) {
  OpDef d;
  d.name = kOp;
  d.doc = "2-D convolution, NCHW, weights [M, C/groups, kh, kw], optional bias [M]";
  d.min_inputs = 2;
  d.max_inputs = 3;
  d.attrs = conv2d_attr_specs();
  d.infer_type = infer_conv2d;
  d.reference = reference_conv2d;
  d.pattern = OpPattern::kOutEWiseFusable;
  return with_arity_check(std::move(d));
}

}  // namespace kiln::ir::ops
