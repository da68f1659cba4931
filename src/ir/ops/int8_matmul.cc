// The fast int8 matmul as graph operators (docs/int8.md, "Int8 matmul"): what AlterInt8Matmul
// turns `qnn_matmul(a u8, w s8 constant [K, N], a_zp, w_zp = 0)` (and a requantize of it) into,
// backed by topi::int8::int8_matmul / int8_matmul_i32 (src/topi/int8_matmul_ops.cc).
//   int8_pack_matmul_weights(w s8 [K, N]; nb) -> i32 [ceil(N/nb), ceil(K/4), nb]: word (p, k4, j)
//     holds w[4*k4 + b, p*nb + j] as byte b (b = 0 lowest; 0 past K and N).
//   int8_matmul_weight_sums(w s8 [K, N]) -> i32 [N]: the sum of each column.
//   int8_matmul(a u8 [M, K], panels, colsum i32 [N], bias i32 [N], scale f32 [N]; n, a_zero_point,
//               y_zero_point, clamp_min, clamp_max, narrow)
//     -> u8 [M, N] = clamp(R(f32(sum_k (a - a_zp) * w + bias[n]) * scale[n]) + y_zp, clamp_min,
//        clamp_max): exactly requantize(qnn_matmul(a, w, a_zp, 0), x_scale, y_scale, y_zp, bias)
//        with scale[n] = x_scale[n] / y_scale (R: the rounding rule of requantize).
//   int8_matmul_i32(a u8 [M, K], panels, colsum i32 [N], a_zero_point u8 [] or [1]; n, narrow)
//     -> i32 [M, N] = sum_k (a - a_zp) * w: exactly qnn_matmul(a, w, a_zp, 0); the zero point is
//        a run-time value (dynamic quantization computes it from the activations).
// Integer sums wrap modulo 2^32 like qnn_matmul's. The references read the weights back from the
// packed words; `colsum` is the kernels' zero-point term (the references subtract the zero point
// from each element instead); `narrow` (weights proven in [-64, 64]) only selects the kernel's
// dot-product form.
#include <algorithm>

#include "ir/ops/op_util.h"
#include "ir/ops/quantize_params.h"

namespace kiln::ir::ops {
namespace {

constexpr const char* kPack = "int8_pack_matmul_weights";
constexpr const char* kSums = "int8_matmul_weight_sums";
constexpr const char* kMatmul = "int8_matmul";
constexpr const char* kMatmulI32 = "int8_matmul_i32";

void require_dtype(const std::string& op, int index, const std::string& name, const TensorType& t, DType want) {
  if (t.dtype != want) fail_unsupported_dtype(op, index, name, t.dtype, dtype_name(want));
}

std::vector<TensorType> infer_pack(const std::vector<TensorType>& in, const Attrs& attrs) {
  require_dtype(kPack, 0, "w", in[0], DType::kI8);
  require_rank(kPack, 0, "w", in[0], 2, "[K, N]");
  const int64_t nb = attrs.get_int("nb"), k = in[0].shape[0], n = in[0].shape[1];
  if (nb < 1) fail_attr(kPack, "nb", "is " + std::to_string(nb) + ": it must be positive");
  return {{DType::kI32, {(n + nb - 1) / nb, (k + 3) / 4, nb}}};
}

std::vector<NDArray> reference_pack(const std::vector<NDArray>& in, const Attrs&, const std::vector<TensorType>& out) {
  const int64_t K = in[0].shape()[0], N = in[0].shape()[1];
  const Shape& os = out[0].shape;
  const int64_t K4 = os[1], nb = os[2];
  auto w = in[0].data<int8_t>();
  NDArray y = NDArray::empty(DType::kI32, os);
  auto o = y.mutable_data<int32_t>();
  for (int64_t p = 0; p < os[0]; ++p)
    for (int64_t k4 = 0; k4 < K4; ++k4)
      for (int64_t j = 0; j < nb; ++j) {
        uint32_t word = 0;
        for (int64_t b = 0; b < 4; ++b) {
          const int64_t k = 4 * k4 + b, n = p * nb + j;
          const int8_t v = k < K && n < N ? w[k * N + n] : int8_t{0};
          word |= static_cast<uint32_t>(static_cast<uint8_t>(v)) << (8 * b);
        }
        o[(p * K4 + k4) * nb + j] = static_cast<int32_t>(word);
      }
  return {y};
}

std::vector<TensorType> infer_sums(const std::vector<TensorType>& in, const Attrs&) {
  require_dtype(kSums, 0, "w", in[0], DType::kI8);
  require_rank(kSums, 0, "w", in[0], 2, "[K, N]");
  return {{DType::kI32, {in[0].shape[1]}}};
}

std::vector<NDArray> reference_sums(const std::vector<NDArray>& in, const Attrs&, const std::vector<TensorType>& out) {
  const int64_t K = in[0].shape()[0], N = in[0].shape()[1];
  auto w = in[0].data<int8_t>();
  NDArray y = NDArray::empty(DType::kI32, out[0].shape);
  auto o = y.mutable_data<int32_t>();
  for (int64_t n = 0; n < N; ++n) {
    int32_t s = 0;
    for (int64_t k = 0; k < K; ++k) s += w[k * N + n];
    o[n] = s;
  }
  return {y};
}

// Checks a, the panels and the [N] vectors (inputs 2.. named by `vectors`); returns {M, N}.
std::pair<int64_t, int64_t> check_operands(const char* op, const std::vector<TensorType>& in, const Attrs& attrs,
                                           const std::vector<std::pair<const char*, DType>>& vectors) {
  const TensorType &a = in[0], &pw = in[1];
  require_dtype(op, 0, "a", a, DType::kU8);
  require_rank(op, 0, "a", a, 2, "[M, K]");
  require_dtype(op, 1, "panels", pw, DType::kI32);
  require_rank(op, 1, "panels", pw, 3, "[ceil(N/nb), ceil(K/4), nb] (int8_pack_matmul_weights)");
  const int64_t n = attrs.get_int("n");
  if (n < 1 || pw.shape[0] != (n + pw.shape[2] - 1) / pw.shape[2]) {
    fail_attr(op, "n", "is " + std::to_string(n) + ": the panels hold " + std::to_string(pw.shape[0] * pw.shape[2]) + " padded columns");
  }
  if (pw.shape[1] != (a.shape[1] + 3) / 4) fail_input(op, 1, "panels", "do not hold ceil(K/4) words for K = " + std::to_string(a.shape[1]));
  for (size_t i = 0; i < vectors.size(); ++i) {
    const int index = static_cast<int>(i) + 2;
    require_dtype(op, index, vectors[i].first, in[index], vectors[i].second);
    if (in[index].shape != Shape{n}) fail_input(op, index, vectors[i].first, "must be [N] = [" + std::to_string(n) + "]");
  }
  return {a.shape[0], n};
}

std::vector<TensorType> infer_matmul(const std::vector<TensorType>& in, const Attrs& attrs) {
  const auto [m, n] = check_operands(kMatmul, in, attrs, {{"colsum", DType::kI32}, {"bias", DType::kI32}, {"scale", DType::kF32}});
  return {{DType::kU8, {m, n}}};
}

std::vector<TensorType> infer_matmul_i32(const std::vector<TensorType>& in, const Attrs& attrs) {
  const auto [m, n] = check_operands(kMatmulI32, in, attrs, {{"colsum", DType::kI32}});
  require_dtype(kMatmulI32, 3, "a_zero_point", in[3], DType::kU8);
  if (in[3].numel() != 1) fail_input(kMatmulI32, 3, "a_zero_point", "must be one value ([] or [1])");
  return {{DType::kI32, {m, n}}};
}

// acc[m, n] = sum_k (a[m, k] - a_zp) * w[k, n] (wrapping), w read back from the panels.
std::vector<int32_t> products(const NDArray& a_arr, const NDArray& panels, int64_t n_cols, int64_t a_zp) {
  const int64_t M = a_arr.shape()[0], K = a_arr.shape()[1], K4 = panels.shape()[1], nb = panels.shape()[2];
  auto a = a_arr.data<uint8_t>();
  auto pw = panels.data<int32_t>();
  std::vector<int32_t> acc(static_cast<size_t>(M * n_cols));
  for (int64_t m = 0; m < M; ++m)
    for (int64_t n = 0; n < n_cols; ++n) {
      int64_t s = 0;
      for (int64_t k = 0; k < K; ++k) {
        const auto word = static_cast<uint32_t>(pw[((n / nb) * K4 + k / 4) * nb + n % nb]);
        s += (int64_t{a[m * K + k]} - a_zp) * static_cast<int8_t>(static_cast<uint8_t>(word >> (8 * (k % 4))));
      }
      acc[m * n_cols + n] = static_cast<int32_t>(static_cast<uint32_t>(s));
    }
  return acc;
}

std::vector<NDArray> reference_matmul(const std::vector<NDArray>& in, const Attrs& attrs, const std::vector<TensorType>& out) {
  const int64_t M = out[0].shape[0], N = out[0].shape[1];
  const int64_t yzp = attrs.get_int("y_zero_point");
  const int64_t lo = std::max<int64_t>(0, attrs.get_int("clamp_min")), hi = std::min<int64_t>(255, attrs.get_int("clamp_max"));
  const std::vector<int32_t> acc = products(in[0], in[1], N, attrs.get_int("a_zero_point"));
  auto bias = in[3].data<int32_t>();
  auto scale = in[4].data<float>();
  NDArray y = NDArray::empty(DType::kU8, out[0].shape);
  auto o = y.mutable_data<uint8_t>();
  for (int64_t m = 0; m < M; ++m)
    for (int64_t n = 0; n < N; ++n) {
      const auto sum = static_cast<int32_t>(static_cast<uint32_t>(acc[m * N + n]) + static_cast<uint32_t>(bias[n]));
      o[m * N + n] = static_cast<uint8_t>(clamp_int(round_quant(static_cast<float>(sum) * scale[n]) + yzp, lo, hi));
    }
  return {y};
}

std::vector<NDArray> reference_matmul_i32(const std::vector<NDArray>& in, const Attrs&, const std::vector<TensorType>& out) {
  const std::vector<int32_t> acc = products(in[0], in[1], out[0].shape[1], in[3].data<uint8_t>()[0]);
  NDArray y = NDArray::empty(DType::kI32, out[0].shape);
  std::copy(acc.begin(), acc.end(), y.mutable_data<int32_t>().begin());
  return {y};
}

}  // namespace

KILN_REGISTER_OP(int8_pack_matmul_weights) {
  OpDef d;
  d.name = kPack;
  d.doc = "s8 matmul weights [K, N] -> i32 panels of 4-byte reduction words [ceil(N/nb), ceil(K/4), nb]";
  d.min_inputs = d.max_inputs = 1;
  d.attrs = {{"nb", AttrKind::kInt, AttrValue(int64_t{16}), "output columns per panel"}};
  d.infer_type = infer_pack;
  d.reference = reference_pack;
  d.pattern = OpPattern::kInjective;
  return with_arity_check(std::move(d));
}

KILN_REGISTER_OP(int8_matmul_weight_sums) {
  OpDef d;
  d.name = kSums;
  d.doc = "i32 sum of each column of s8 matmul weights [K, N]";
  d.min_inputs = d.max_inputs = 1;
  d.infer_type = infer_sums;
  d.reference = reference_sums;
  d.pattern = OpPattern::kCommReduce;
  return with_arity_check(std::move(d));
}

KILN_REGISTER_OP(int8_matmul) {
  OpDef d;
  d.name = kMatmul;
  d.doc = "u8 x s8 matmul on packed weight panels with the requantize epilogue, u8 output (the fast int8 kernel)";
  d.min_inputs = d.max_inputs = 5;
  d.attrs = {
      {"n", AttrKind::kInt, std::nullopt, "output columns N"},
      {"a_zero_point", AttrKind::kInt, AttrValue(int64_t{0}), "u8 activation zero point"},
      {"y_zero_point", AttrKind::kInt, AttrValue(int64_t{0}), "u8 output zero point"},
      {"clamp_min", AttrKind::kInt, AttrValue(int64_t{0}), "lowest output value"},
      {"clamp_max", AttrKind::kInt, AttrValue(int64_t{255}), "highest output value"},
      {"narrow", AttrKind::kInt, AttrValue(int64_t{0}), "1: weights proven in [-64, 64] (narrow dot product)"},
  };
  d.infer_type = infer_matmul;
  d.reference = reference_matmul;
  d.pattern = OpPattern::kOpaque;  // the epilogue is part of the kernel
  return with_arity_check(std::move(d));
}

KILN_REGISTER_OP(int8_matmul_i32) {
  OpDef d;
  d.name = kMatmulI32;
  d.doc = "u8 x s8 matmul on packed weight panels with a run-time activation zero point, i32 output (the fast int8 kernel)";
  d.min_inputs = d.max_inputs = 4;
  d.attrs = {
      {"n", AttrKind::kInt, std::nullopt, "output columns N"},
      {"narrow", AttrKind::kInt, AttrValue(int64_t{0}), "1: weights proven in [-64, 64] (narrow dot product)"},
  };
  d.infer_type = infer_matmul_i32;
  d.reference = reference_matmul_i32;
  d.pattern = OpPattern::kOpaque;
  return with_arity_check(std::move(d));
}

}  // namespace kiln::ir::ops
