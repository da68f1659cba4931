// `matmul` (numpy matmul: 1-D operands promoted and the added axis removed, batch dimensions
// broadcast) and `gemm` (alpha * A' B' + beta * C, A' = trans_a ? A^T : A, C broadcast to [M, N]).
// Reference loops run i-k-j over a double accumulator row (int64 for integer matmul, wrapping).
#include <algorithm>

#include "ir/ops/cast.h"
#include "ir/ops/dtype_dispatch.h"
#include "ir/ops/op_util.h"

namespace kiln::ir::ops {
namespace {

// a [M, K] with element strides (a_rs, a_cs) times b [K, N] with strides (b_rs, b_cs): transposes
// are strides, never copies.
struct MatrixArgs {
  int64_t m, k, n;
  int64_t a_rs, a_cs, b_rs, b_cs;
};

// For each row i: acc[j] = sum_k a[i, k] * b[k, j] (i-k-j order, b's rows read contiguously when
// b_cs is 1), then store(i, j, acc[j]) for every j.
template <typename T, typename Acc, typename Store>
void matmul_kernel(const MatrixArgs& g, const T* a, const T* b, std::vector<Acc>& acc, Store&& store) {
  acc.resize(static_cast<size_t>(g.n));
  for (int64_t i = 0; i < g.m; ++i) {
    std::fill(acc.begin(), acc.end(), Acc{0});
    for (int64_t kk = 0; kk < g.k; ++kk) {
      const Acc av = static_cast<Acc>(a[i * g.a_rs + kk * g.a_cs]);
      const T* brow = b + kk * g.b_rs;
      if constexpr (std::is_integral_v<Acc>) {  // wraps modulo 2^64 like numpy, then to T
        for (int64_t j = 0; j < g.n; ++j) {
          acc[j] = static_cast<Acc>(static_cast<uint64_t>(acc[j]) +
                                    static_cast<uint64_t>(av) * static_cast<uint64_t>(static_cast<Acc>(brow[j * g.b_cs])));
        }
      } else {
        for (int64_t j = 0; j < g.n; ++j) acc[j] += av * static_cast<Acc>(brow[j * g.b_cs]);
      }
    }
    for (int64_t j = 0; j < g.n; ++j) store(i, j, acc[j]);
  }
}

std::vector<TensorType> infer_matmul(const std::vector<TensorType>& in, const Attrs&) {
  const TensorType& a = in[0];
  const TensorType& b = in[1];
  require_dtype("matmul", 0, "a", a.dtype, DTypeSet::kNumeric);
  require_same_dtype("matmul", in, {"a", "b"});
  if (a.rank() < 1) fail_input("matmul", 0, "a", "is a scalar; matmul needs rank >= 1");
  if (b.rank() < 1) fail_input("matmul", 1, "b", "is a scalar; matmul needs rank >= 1");
  const Shape as = a.rank() == 1 ? Shape{1, a.shape[0]} : a.shape;
  const Shape bs = b.rank() == 1 ? Shape{b.shape[0], 1} : b.shape;
  require_same_dim("matmul inputs 0 (a) and 1 (b) of shapes " + shape_to_string(a.shape) + " and " + shape_to_string(b.shape),
                   as.back(), bs[bs.size() - 2], "a's last dimension and b's second-to-last");
  const Shape a_batch(as.begin(), as.end() - 2), b_batch(bs.begin(), bs.end() - 2);
  Shape out = broadcast_shapes("matmul", {a_batch, b_batch}, {"a", "b"});
  if (a.rank() > 1) out.push_back(as[as.size() - 2]);
  if (b.rank() > 1) out.push_back(bs.back());
  return {{a.dtype, out}};
}

std::vector<NDArray> reference_matmul(const std::vector<NDArray>& in, const Attrs&, const std::vector<TensorType>& out_types) {
  const bool lowp = in[0].dtype() == DType::kF16 || in[0].dtype() == DType::kBF16;
  const NDArray a = lowp ? cast_array(in[0], DType::kF32) : in[0];
  const NDArray b = lowp ? cast_array(in[1], DType::kF32) : in[1];
  const Shape as = a.shape().size() == 1 ? Shape{1, a.shape()[0]} : a.shape();
  const Shape bs = b.shape().size() == 1 ? Shape{b.shape()[0], 1} : b.shape();
  const int64_t m = as[as.size() - 2], k = as.back(), n = bs.back();
  const Shape a_batch(as.begin(), as.end() - 2), b_batch(bs.begin(), bs.end() - 2);
  Shape batch = a_batch.size() >= b_batch.size() ? a_batch : b_batch;
  for (size_t i = 0; i < std::min(a_batch.size(), b_batch.size()); ++i) {
    batch[batch.size() - 1 - i] =
        std::max<int64_t>(a_batch[a_batch.size() - 1 - i], b_batch[b_batch.size() - 1 - i]);
  }
  // Element strides of each operand's matrices over the broadcast batch.
  std::vector<int64_t> strides[2] = {broadcast_strides(a_batch, batch), broadcast_strides(b_batch, batch)};
  for (auto& s : strides[0]) s *= m * k;
  for (auto& s : strides[1]) s *= k * n;
  NDArray y = NDArray::empty(a.dtype(), out_types[0].shape);
  const MatrixArgs g{m, k, n, k, 1, n, 1};
  visit_dtype(a.dtype(), [&]<typename T>() {
    if constexpr (std::is_arithmetic_v<T>) {
      using Acc = std::conditional_t<std::is_floating_point_v<T>, double, int64_t>;
      std::vector<Acc> acc;
      const T* pa = a.data<T>().data();
      const T* pb = b.data<T>().data();
      T* py = y.mutable_data<T>().data();
      for_each_strided(batch, strides, [&](int64_t bi, const int64_t* off) {
        T* out = py + bi * m * n;
        matmul_kernel<T, Acc>(g, pa + off[0], pb + off[1], acc,
                              [&](int64_t i, int64_t j, Acc v) { out[i * n + j] = static_cast<T>(v); });
      });
    } else {
      KILN_IFAIL() << "matmul on " << dtype_name(a.dtype());
    }
  });
  return {cast_array(y, out_types[0].dtype)};
}

std::vector<TensorType> infer_gemm(const std::vector<TensorType>& in, const Attrs& attrs) {
  require_dtype("gemm", 0, "a", in[0].dtype, DTypeSet::kFloat);
  require_same_dtype("gemm", in, {"a", "b", "c"});
  require_rank("gemm", 0, "a", in[0], 2, "([M, K], or [K, M] with trans_a)");
  require_rank("gemm", 1, "b", in[1], 2, "([K, N], or [N, K] with trans_b)");
  const bool ta = attrs.get_int("trans_a") != 0, tb = attrs.get_int("trans_b") != 0;
  const Dim m = ta ? in[0].shape[1] : in[0].shape[0], k = ta ? in[0].shape[0] : in[0].shape[1];
  const Dim kb = tb ? in[1].shape[1] : in[1].shape[0], n = tb ? in[1].shape[0] : in[1].shape[1];
  require_same_dim("gemm inputs 0 (a) and 1 (b) of shapes " + shape_to_string(in[0].shape) + " and " +
                       shape_to_string(in[1].shape) + " (trans_a=" + std::to_string(ta) + ", trans_b=" + std::to_string(tb) + ")",
                   k, kb, "the inner dimensions");
  if (in.size() > 2 && !broadcasts_to(in[2].shape, Shape{m, n})) {
    fail_input("gemm", 2, "c", "has shape " + shape_to_string(in[2].shape) + ", which does not broadcast to " +
                                   shape_to_string(Shape{m, n}));
  }
  return {{in[0].dtype, Shape{m, n}}};
}

std::vector<NDArray> reference_gemm(const std::vector<NDArray>& in, const Attrs& attrs, const std::vector<TensorType>& out_types) {
  const DType ct = compute_dtype(in[0].dtype());
  const NDArray a = cast_array(in[0], ct), b = cast_array(in[1], ct);
  const bool ta = attrs.get_int("trans_a") != 0, tb = attrs.get_int("trans_b") != 0;
  const double alpha = attrs.get_float("alpha"), beta = attrs.get_float("beta");
  const int64_t m = out_types[0].shape[0], n = out_types[0].shape[1];
  const int64_t k = ta ? a.shape()[0] : a.shape()[1];
  const MatrixArgs g{m, k, n, ta ? 1 : k, ta ? m : 1, tb ? 1 : n, tb ? k : 1};
  NDArray y = NDArray::empty(ct, {m, n});
  NDArray c = in.size() > 2 ? cast_array(in[2], ct) : NDArray();
  visit_f32_f64(ct, [&]<typename T>() {
    // alpha * (a b) accumulated in double, plus beta * c, rounded once.
    const std::vector<int64_t> cs = c.defined() ? broadcast_strides(c.shape(), {m, n}) : std::vector<int64_t>{0, 0};
    const T* pc = c.defined() ? c.data<T>().data() : nullptr;
    T* py = y.mutable_data<T>().data();
    std::vector<double> acc;
    matmul_kernel<T, double>(g, a.data<T>().data(), b.data<T>().data(), acc, [&](int64_t i, int64_t j, double v) {
      double r = alpha * v;
      if (pc) r += beta * static_cast<double>(pc[i * cs[0] + j * cs[1]]);
      py[i * n + j] = static_cast<T>(r);
    });
  });
  return {cast_array(y, out_types[0].dtype)};
}

}  // namespace

KILN_REGISTER_OP(matmul) {
  OpDef d;
  d.name = "matmul";
  d.doc = "numpy matmul (1-D promotion, batch broadcasting)";
  d.min_inputs = d.max_inputs = 2;
  d.infer_type = infer_matmul;
  d.reference = reference_matmul;
  d.pattern = OpPattern::kOutEWiseFusable;
  return with_arity_check(std::move(d));
}

KILN_REGISTER_OP(gemm) {
  OpDef d;
  d.name = "gemm";
  d.doc = "alpha * op(a) op(b) + beta * c, op = optional transpose, c broadcast to [M, N]";
  d.min_inputs = 2;
  d.max_inputs = 3;
  d.attrs = {
      {"alpha", AttrKind::kFloat, AttrValue(1.0), "scale of the product"},
      {"beta", AttrKind::kFloat, AttrValue(1.0), "scale of c"},
      {"trans_a", AttrKind::kInt, AttrValue(int64_t{0}), "1: a is [K, M]"},
      {"trans_b", AttrKind::kInt, AttrValue(int64_t{0}), "1: b is [N, K]"},
  };
  d.infer_type = infer_gemm;
  d.reference = reference_gemm;
  d.pattern = OpPattern::kOutEWiseFusable;
  return with_arity_check(std::move(d));
}

}  // namespace kiln::ir::ops
