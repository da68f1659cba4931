// The integer compute operators (TVM QNN style; docs/int8.md): exact i32 accumulators of
// zero-point-shifted 8-bit operands.
//   qnn_conv2d(x u8|i8 [N,C,H,W], w i8|u8 [M,C/g,kh,kw], x_zero_point (scalar), w_zero_point (scalar or [M]))
//     -> i32 [N,M,OH,OW] = sum over the taps inside the input of (x - xzp) * (w - wzp[m])
//     (padding contributes 0, i.e. pads hold the zero point); conv2d's attributes.
//   qnn_matmul(a u8|i8 [..,M,K], b i8|u8 [..,K,N], a_zero_point (scalar or [M]), b_zero_point (scalar or [N]))
//     -> i32 [batch..,M,N] = sum_k (a - azp[m]) * (b - bzp[n]), numpy batch broadcasting.
// The reference accumulates in int64 and wraps to i32 (ONNX ConvInteger/MatMulInteger). The
// requantization epilogue is a separate `requantize` (quantize.cc) that FuseOps fuses.
#include <algorithm>

#include "ir/ops/conv2d_attrs.h"
#include "ir/ops/dtype_dispatch.h"
#include "ir/ops/op_util.h"
#include "ir/ops/quantize_params.h"

namespace kiln::ir::ops {
namespace {

bool is_8bit(DType d) { return d == DType::kI8 || d == DType::kU8; }

void require_8bit(const std::string& op, int index, const std::string& name, const TensorType& t) {
  if (!is_8bit(t.dtype)) fail_unsupported_dtype(op, index, name, t.dtype, "i8 u8");
}

void require_zero_point_of(const std::string& op, int index, const std::string& name, const TensorType& zp,
                           const TensorType& data, const std::string& data_name) {
  if (zp.dtype != data.dtype) {
    fail_input(op, index, name, std::string("is ") + dtype_name(zp.dtype) + " but " + data_name + " is " +
                                    dtype_name(data.dtype),
               "a zero point has its tensor's element type");
  }
}

// The operand as int32 values minus its zero point (per `axis` when the zero point is 1-D).
std::vector<int32_t> shifted(const NDArray& a, const NDArray& zp, int64_t axis) {
  std::vector<int64_t> z(zp.numel());
  std::vector<int32_t> out(a.numel());
  visit_dtype(a.dtype(), [&]<typename T>() {
    if constexpr (kIsIntStorage<T>) {
      auto zd = zp.data<T>();
      for (size_t i = 0; i < zd.size(); ++i) z[i] = zd[i];
      const ParamIndexer pi(a.shape(), axis, static_cast<int64_t>(z.size()));
      auto d = a.data<T>();
      for (size_t i = 0; i < d.size(); ++i) out[i] = static_cast<int32_t>(d[i] - z[pi(static_cast<int64_t>(i))]);
    } else {
      KILN_IFAIL() << "quantized operand of dtype " << dtype_name(a.dtype());
    }
  });
  return out;
}

// ---- qnn_conv2d ------------------------------------------------------------------------------

constexpr const char* kConv = "qnn_conv2d";

std::vector<TensorType> infer_qnn_conv2d(const std::vector<TensorType>& in, const Attrs& attrs) {
  const TensorType &x = in[0], &w = in[1];
  require_8bit(kConv, 0, "x", x);
  require_8bit(kConv, 1, "w", w);
  require_rank(kConv, 0, "x", x, 4, "[N, C, H, W]");
  require_rank(kConv, 1, "w", w, 4, "[M, C/groups, kh, kw]");
  require_zero_point_of(kConv, 2, "x_zero_point", in[2], x, "x");
  require_zero_point_of(kConv, 3, "w_zero_point", in[3], w, "w");
  if (shape_numel(in[2].shape) != 1 || in[2].rank() > 1) fail_input(kConv, 2, "x_zero_point", "must be a scalar");
  check_quant_param(kConv, 3, "w_zero_point", in[3], w.shape, 0);
  const auto& strides = ints_of_size(kConv, attrs, "strides", 2);
  const auto& pads = ints_of_size(kConv, attrs, "pads", 4);
  const auto& dilations = ints_of_size(kConv, attrs, "dilations", 2);
  require_all_at_least(kConv, "strides", strides, 1);
  require_all_at_least(kConv, "dilations", dilations, 1);
  require_all_at_least(kConv, "pads", pads, 0);
  const int64_t groups = attrs.get_int("groups"), c = x.shape[1], m = w.shape[0];
  if (groups < 1 || c % groups != 0 || m % groups != 0) {
    fail_attr(kConv, "groups", "is " + std::to_string(groups) + ": it must be >= 1 and divide C = " +
                                   std::to_string(c) + " and M = " + std::to_string(m));
  }
  if (w.shape[1] * groups != c) {
    fail_input(kConv, 1, "w", "has shape " + shape_to_string(w.shape) + ": dimension 1 must be C/groups = " +
                                  std::to_string(c / groups));
  }
  const int64_t oh = sliding_output_size(kConv, 0, x.shape[2], w.shape[2], strides[0], dilations[0], pads[0], pads[2], false);
  const int64_t ow = sliding_output_size(kConv, 1, x.shape[3], w.shape[3], strides[1], dilations[1], pads[1], pads[3], false);
  return {{DType::kI32, {x.shape[0], m, oh, ow}}};
}

std::vector<NDArray> reference_qnn_conv2d(const std::vector<NDArray>& in, const Attrs& attrs,
                                          const std::vector<TensorType>& out) {
  const std::vector<int32_t> x = shifted(in[0], in[2], 0), w = shifted(in[1], in[3], 0);
  const auto& s = attrs.get_ints("strides");
  const auto& p = attrs.get_ints("pads");
  const auto& dl = attrs.get_ints("dilations");
  const Shape &xs = in[0].shape(), &ws = in[1].shape(), &os = out[0].shape;
  const int64_t N = xs[0], C = xs[1], H = xs[2], W = xs[3], M = ws[0], KH = ws[2], KW = ws[3];
  const int64_t OH = os[2], OW = os[3], groups = attrs.get_int("groups"), cg = C / groups, mg = M / groups;
  NDArray y = NDArray::empty(DType::kI32, os);
  auto o = y.mutable_data<int32_t>();
  std::vector<int64_t> acc(static_cast<size_t>(OH * OW));
  for (int64_t n = 0; n < N; ++n) {
    for (int64_t m = 0; m < M; ++m) {
      std::fill(acc.begin(), acc.end(), 0);
      const int64_t g = m / mg;
      for (int64_t c = 0; c < cg; ++c) {
        const int32_t* plane = x.data() + ((n * C + g * cg + c) * H) * W;
        for (int64_t ky = 0; ky < KH; ++ky) {
          for (int64_t kx = 0; kx < KW; ++kx) {
            const int64_t wv = w[((m * cg + c) * KH + ky) * KW + kx];
            for (int64_t oy = 0; oy < OH; ++oy) {
              const int64_t iy = oy * s[0] - p[0] + ky * dl[0];
              if (iy < 0 || iy >= H) continue;
              for (int64_t ox = 0; ox < OW; ++ox) {
                const int64_t ix = ox * s[1] - p[1] + kx * dl[1];
                if (ix >= 0 && ix < W) acc[oy * OW + ox] += wv * plane[iy * W + ix];
              }
            }
          }
        }
      }
      int32_t* dst = o.data() + (n * M + m) * OH * OW;
      for (size_t i = 0; i < acc.size(); ++i) dst[i] = static_cast<int32_t>(static_cast<uint32_t>(acc[i]));
    }
  }
  return {y};
}

// ---- qnn_matmul ------------------------------------------------------------------------------

constexpr const char* kMatmul = "qnn_matmul";

std::vector<TensorType> infer_qnn_matmul(const std::vector<TensorType>& in, const Attrs&) {
  const TensorType &a = in[0], &b = in[1];
  require_8bit(kMatmul, 0, "a", a);
  require_8bit(kMatmul, 1, "b", b);
  if (a.rank() < 2) fail_input(kMatmul, 0, "a", "has rank " + std::to_string(a.rank()) + ", expected >= 2");
  if (b.rank() < 2) fail_input(kMatmul, 1, "b", "has rank " + std::to_string(b.rank()) + ", expected >= 2");
  require_zero_point_of(kMatmul, 2, "a_zero_point", in[2], a, "a");
  require_zero_point_of(kMatmul, 3, "b_zero_point", in[3], b, "b");
  check_quant_param(kMatmul, 2, "a_zero_point", in[2], a.shape, a.rank() - 2);
  check_quant_param(kMatmul, 3, "b_zero_point", in[3], b.shape, b.rank() - 1);
  const int64_t k = a.shape.back();
  if (b.shape[b.rank() - 2] != k) {
    throw UserError(UserErrorKind::kInvalidArgument, "qnn_matmul inputs 0 (a) and 1 (b)",
                    "shapes " + shape_to_string(a.shape) + " and " + shape_to_string(b.shape) + " do not match in K");
  }
  Shape out = broadcast_shapes(kMatmul, {Shape(a.shape.begin(), a.shape.end() - 2), Shape(b.shape.begin(), b.shape.end() - 2)},
                               {"a", "b"});
  out.push_back(a.shape[a.rank() - 2]);
  out.push_back(b.shape.back());
  return {{DType::kI32, out}};
}

std::vector<NDArray> reference_qnn_matmul(const std::vector<NDArray>& in, const Attrs&,
                                          const std::vector<TensorType>& out) {
  const Shape &as = in[0].shape(), &bs = in[1].shape(), &os = out[0].shape;
  const std::vector<int32_t> a = shifted(in[0], in[2], static_cast<int64_t>(as.size()) - 2);
  const std::vector<int32_t> b = shifted(in[1], in[3], static_cast<int64_t>(bs.size()) - 1);
  const int64_t M = as[as.size() - 2], K = as.back(), N = bs.back();
  const Shape batch(os.begin(), os.end() - 2);
  std::vector<int64_t> strides[2] = {broadcast_strides(Shape(as.begin(), as.end() - 2), batch),
                                     broadcast_strides(Shape(bs.begin(), bs.end() - 2), batch)};
  for (auto& st : strides[0]) st *= M * K;
  for (auto& st : strides[1]) st *= K * N;
  NDArray y = NDArray::empty(DType::kI32, os);
  auto o = y.mutable_data<int32_t>();
  std::vector<int64_t> row(static_cast<size_t>(N));
  for_each_strided(batch, strides, [&](int64_t bi, const int64_t* off) {
    for (int64_t i = 0; i < M; ++i) {
      std::fill(row.begin(), row.end(), 0);
      for (int64_t k = 0; k < K; ++k) {
        const int64_t av = a[off[0] + i * K + k];
        const int32_t* brow = b.data() + off[1] + k * N;
        for (int64_t j = 0; j < N; ++j) row[j] += av * brow[j];
      }
      int32_t* dst = o.data() + (bi * M + i) * N;
      for (int64_t j = 0; j < N; ++j) dst[j] = static_cast<int32_t>(static_cast<uint32_t>(row[j]));
    }
  });
  return {y};
}

}  // namespace

KILN_REGISTER_OP(qnn_conv2d) {
  OpDef d;
  d.name = kConv;
  d.doc = "integer 2-D convolution: i32 sum of (x - x_zero_point) * (w - w_zero_point[m]), pads hold the zero point";
  d.min_inputs = d.max_inputs = 4;
  d.attrs = conv2d_attr_specs();
  d.infer_type = infer_qnn_conv2d;
  d.reference = reference_qnn_conv2d;
  d.pattern = OpPattern::kOutEWiseFusable;
  return with_arity_check(std::move(d));
}

KILN_REGISTER_OP(qnn_matmul) {
  OpDef d;
  d.name = kMatmul;
  d.doc = "integer matmul: i32 sum over k of (a - a_zero_point[m]) * (b - b_zero_point[n]), batch broadcasting";
  d.min_inputs = d.max_inputs = 4;
  d.infer_type = infer_qnn_matmul;
  d.reference = reference_qnn_matmul;
  d.pattern = OpPattern::kOutEWiseFusable;
  return with_arity_check(std::move(d));
}

}  // namespace kiln::ir::ops
