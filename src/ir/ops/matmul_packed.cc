// Matrix products with the right operand pre-packed (PackMatmulWeights, docs/passes.md), so that
// constant weights are packed once at compile time (FoldConstant) instead of in every kernel call:
//   pack_matmul_b(b; n_block, trans_b): b [K, N] (or [N, K] with trans_b) -> panels
//     [ceil(N / n_block), K, n_block], panel[jo, k, jj] = b[k, jo * n_block + jj], 0 past N.
//     Pattern injective, any numeric dtype.
//   matmul_packed(a, bp; n): a [.., M, K] times the unpacked [K, n] -> [.., M, n] (the batch axes of
//     a kept; bp has none). Float dtypes; the reference accumulates in double like matmul's.
#include <algorithm>
#include <cstring>

#include "ir/ops/cast.h"
#include "ir/ops/dtype_dispatch.h"
#include "ir/ops/op_util.h"

namespace kiln::ir::ops {
namespace {

std::vector<TensorType> infer_pack(const std::vector<TensorType>& in, const Attrs& attrs) {
  require_dtype("pack_matmul_b", 0, "b", in[0].dtype, DTypeSet::kNumeric);
  require_rank("pack_matmul_b", 0, "b", in[0], 2, "([K, N], or [N, K] with trans_b)");
  const int64_t nb = attrs.get_int("n_block");
  if (nb < 1) fail_attr("pack_matmul_b", "n_block", "is " + std::to_string(nb) + ", expected >= 1");
  const bool tb = attrs.get_int("trans_b") != 0;
  const int64_t k = tb ? in[0].shape[1] : in[0].shape[0], n = tb ? in[0].shape[0] : in[0].shape[1];
  return {{in[0].dtype, {(n + nb - 1) / nb, k, nb}}};
}

std::vector<NDArray> reference_pack(const std::vector<NDArray>& in, const Attrs& attrs,
                                    const std::vector<TensorType>& out_types) {
  const NDArray& b = in[0];
  const bool tb = attrs.get_int("trans_b") != 0;
  const Shape& os = out_types[0].shape;
  const int64_t panels = os[0], k = os[1], nb = os[2];
  const int64_t n = tb ? b.shape()[0] : b.shape()[1];
  NDArray out = NDArray::empty(b.dtype(), os);  // zero-filled
  const size_t es = dtype_size(b.dtype());
  const auto* src = static_cast<const uint8_t*>(b.raw_data());
  auto* dst = static_cast<uint8_t*>(out.mutable_raw_data());
  for (int64_t jo = 0; jo < panels; ++jo) {
    for (int64_t kk = 0; kk < k; ++kk) {
      for (int64_t jj = 0; jj < nb && jo * nb + jj < n; ++jj) {
        const int64_t j = jo * nb + jj;
        const int64_t from = tb ? j * k + kk : kk * n + j;
        std::memcpy(dst + static_cast<size_t>((jo * k + kk) * nb + jj) * es, src + static_cast<size_t>(from) * es, es);
      }
    }
  }
  return {out};
}

std::vector<TensorType> infer_matmul_packed(const std::vector<TensorType>& in, const Attrs& attrs) {
  const TensorType& a = in[0];
  const TensorType& bp = in[1];
  require_dtype("matmul_packed", 0, "a", a.dtype, DTypeSet::kFloat);
  require_same_dtype("matmul_packed", in, {"a", "bp"});
  if (a.rank() < 2) fail_input("matmul_packed", 0, "a", "has rank " + std::to_string(a.rank()) + ", expected >= 2");
  require_rank("matmul_packed", 1, "bp", bp, 3, "([ceil(N / n_block), K, n_block], from pack_matmul_b)");
  const int64_t n = attrs.get_int("n");
  if (bp.shape[1] != a.shape.back()) {
    fail_input("matmul_packed", 1, "bp",
               "has K = " + std::to_string(bp.shape[1]) + ", a's last dimension is " + std::to_string(a.shape.back()));
  }
  if (n < 1 || n > bp.shape[0] * bp.shape[2] || n <= (bp.shape[0] - 1) * bp.shape[2]) {
    fail_attr("matmul_packed", "n",
              "is " + std::to_string(n) + ", which does not fit " + std::to_string(bp.shape[0]) + " panels of " +
                  std::to_string(bp.shape[2]) + " columns");
  }
  Shape out = a.shape;
  out.back() = n;
  return {{a.dtype, out}};
}

std::vector<NDArray> reference_matmul_packed(const std::vector<NDArray>& in, const Attrs& attrs,
                                             const std::vector<TensorType>& out_types) {
  const NDArray a = cast_array(in[0], DType::kF64), bp = cast_array(in[1], DType::kF64);
  const int64_t k = a.shape().back(), m = a.shape()[a.shape().size() - 2], n = attrs.get_int("n");
  const int64_t nb = bp.shape()[2];
  int64_t batches = 1;
  for (size_t d = 0; d + 2 < a.shape().size(); ++d) batches *= a.shape()[d];
  const double* pa = a.data<double>().data();
  const double* pb = bp.data<double>().data();
  NDArray y = NDArray::empty(DType::kF64, out_types[0].shape);
  double* py = y.mutable_data<double>().data();
  std::vector<double> acc(static_cast<size_t>(n));
  for (int64_t b = 0; b < batches; ++b) {
    for (int64_t i = 0; i < m; ++i) {
      std::fill(acc.begin(), acc.end(), 0.0);
      for (int64_t kk = 0; kk < k; ++kk) {
        const double av = pa[(b * m + i) * k + kk];
        for (int64_t j = 0; j < n; ++j) acc[j] += av * pb[((j / nb) * k + kk) * nb + j % nb];
      }
      std::copy(acc.begin(), acc.end(), py + (b * m + i) * n);
    }
  }
  return {cast_array(y, out_types[0].dtype)};
}

}  // namespace

KILN_REGISTER_OP(pack_matmul_b) {
  OpDef d;
  d.name = "pack_matmul_b";
  d.doc = "b [K, N] (or [N, K] with trans_b) as zero-padded panels [ceil(N/n_block), K, n_block] for matmul_packed";
  d.min_inputs = d.max_inputs = 1;
  d.attrs = {
      {"n_block", AttrKind::kInt, std::nullopt, "columns per panel"},
      {"trans_b", AttrKind::kInt, AttrValue(int64_t{0}), "1: b is [N, K]"},
  };
  d.infer_type = infer_pack;
  d.reference = reference_pack;
  d.pattern = OpPattern::kInjective;
  return with_arity_check(std::move(d));
}

KILN_REGISTER_OP(matmul_packed) {
  OpDef d;
  d.name = "matmul_packed";
  d.doc = "a [.., M, K] times b given as pack_matmul_b panels: [.., M, n]";
  d.min_inputs = d.max_inputs = 2;
  d.attrs = {{"n", AttrKind::kInt, std::nullopt, "columns of the product (N before padding to whole panels)"}};
  d.infer_type = infer_matmul_packed;
  d.reference = reference_matmul_packed;
  d.pattern = OpPattern::kOutEWiseFusable;
  return with_arity_check(std::move(d));
}

}  // namespace kiln::ir::ops
