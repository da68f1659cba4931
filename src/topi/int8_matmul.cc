// Int8 matmul on packed weight panels with a fused requantize epilogue (contract in
// include/kiln/topi/int8.h; docs/int8.md, "Integer kernels").
#include <algorithm>

#include "kiln/support/error.h"
#include "kiln/topi/int8.h"
#include "topi/int8_words.h"

namespace kiln::topi::int8 {

using namespace tir;

Tensor pack_matmul_weights(const Tensor& w, int64_t nb) {
  KILN_ICHECK(w->shape.size() == 2 && w->dtype == DType::kI8) << "pack_matmul_weights takes s8 [K, N]";
  const int64_t k = w->shape[0], n = w->shape[1];
  return compute({(n + nb - 1) / nb, (k + 3) / 4, nb}, [&](const std::vector<Var>& i) {
    std::vector<Expr> bytes;
    for (int b = 0; b < 4; ++b) {
      bytes.push_back(cast(Type(DType::kI32), read_or(w, {i[1] * 4 + b, i[0] * nb + i[2]}, make_const(Type(DType::kI8), 0))));
    }
    return word_of(bytes);
  }, "int8_panels", {"p", "k4", "j"});
}

Tensor weight_column_sums(const Tensor& w) {
  const int64_t k = w->shape[0], n = w->shape[1];
  IterVar r = reduce_axis(k, "k");
  return compute({n}, [&](const std::vector<Var>& i) { return sum(cast(Type(DType::kI32), w(r, i[0])), {r}); },
                 "int8_colsum", {"n"});
}

bool weights_fit_narrow(const int8_t* w, int64_t count) {
  return std::all_of(w, w + count, [](int8_t v) { return v >= -64 && v <= 64; });
}

namespace {

// A's words and the accumulator tile of A u8 [M, K] x panels (r.out left to the caller).
Int8Matmul product(const Tensor& a, const Tensor& panels, int64_t n, const MatmulKnobs& knobs) {
  KILN_ICHECK(a->shape.size() == 2 && a->dtype == DType::kU8) << "int8_matmul: A must be u8 [M, K]";
  const int64_t m = a->shape[0], k = a->shape[1], k4 = (k + 3) / 4, nb = knobs.nb;
  KILN_ICHECK(panels->shape == std::vector<int64_t>({(n + nb - 1) / nb, k4, nb}) && panels->dtype == DType::kI32)
      << "int8_matmul: panels do not match K=" << k << ", N=" << n << ", nb=" << nb;
  Int8Matmul r;
  r.a_words = compute({m, k4}, [&](const std::vector<Var>& i) {
    std::vector<Expr> bytes;
    for (int b = 0; b < 4; ++b) bytes.push_back(cast(Type(DType::kI32), read_or(a, {i[0], i[1] * 4 + b}, make_const(Type(DType::kU8), 0))));
    return word_of(bytes);
  }, "int8_a_words", {"m", "k4"});
  IterVar rk = reduce_axis(k4, "k4");
  r.acc = compute({m, n}, [&](const std::vector<Var>& i) {
    return sum(dot4_u8s8(r.a_words(i[0], rk), panels(i[1] / nb, rk, i[1] % nb), knobs.narrow), {rk});
  }, "int8_acc", {"m", "n"});
  return r;
}

}  // namespace

Int8Matmul int8_matmul(const Tensor& a, const Tensor& panels, const Tensor& colsum, const Tensor& bias,
                       const Tensor& scale, int64_t n, const Requantize& rq, const MatmulKnobs& knobs,
                       const Residual& residual) {
  const int64_t m = a->shape[0];
  KILN_ICHECK(!residual.tensor.defined() || (residual.tensor->dtype == DType::kU8 && residual.tensor->shape == std::vector<int64_t>({m, n})))
      << "int8_matmul: the residual must be u8 [" << m << ", " << n << "]";
  Int8Matmul r = product(a, panels, n, knobs);
  r.out = compute({m, n}, [&](const std::vector<Var>& i) {
    Expr y = r.acc(i[0], i[1]) - colsum(i[1]) * i32_const(rq.a_zero_point) + bias(i[1]);
    Expr res = residual.tensor.defined() ? residual.tensor(i[0], i[1]) : Expr();
    return requantize_u8(y, scale(i[1]), rq.out_zero_point, rq.lo, rq.hi, res, residual.zero_point, residual.scale);
  }, "int8_out", {"m", "n"});
  return r;
}

Int8Matmul int8_matmul_i32(const Tensor& a, const Tensor& panels, const Tensor& colsum, const Tensor& a_zero_point,
                           int64_t n, const MatmulKnobs& knobs) {
  KILN_ICHECK(a_zero_point->dtype == DType::kU8 && a_zero_point->shape.size() <= 1)
      << "int8_matmul_i32: the zero point must be one u8 value";
  Int8Matmul r = product(a, panels, n, knobs);
  const Expr zp = cast(Type(DType::kI32), a_zero_point(std::vector<Expr>(a_zero_point->shape.size(), i32_const(0))));
  r.out = compute({a->shape[0], n}, [&](const std::vector<Var>& i) {
    return r.acc(i[0], i[1]) - colsum(i[1]) * zp;
  }, "int8_out_i32", {"m", "n"});
  return r;
}

void schedule_int8_matmul(Schedule& s, const Int8Matmul& mm, const MatmulKnobs& knobs) {
  // A's words: one pass, rows parallel.
  s[mm.a_words].parallel(s[mm.a_words].axis(0));
  // Output tiles tile_m x nb; the accumulator tile lives in registers at the column-tile loop.
  Stage out = s[mm.out];
  std::vector<IterVar> t = out.tile(out.axis(0), out.axis(1), knobs.tile_m, knobs.nb);
  IterVar fused = out.fuse(t[0], t[1]);
  out.parallel(fused);
  out.unroll(t[2]);
  out.vectorize(t[3]);
  Stage acc = s[mm.acc];
  acc.compute_at(out, fused);
  acc.reorder({acc.reduce_axis(0), acc.axis(0), acc.axis(1)});
  acc.unroll(acc.axis(0));
  acc.vectorize(acc.axis(1));
}

}  // namespace kiln::topi::int8
