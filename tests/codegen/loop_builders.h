// Hand-built loop-IR functions in the form that scheduling and lowering produce (split loops with
// vector bodies and scalar tails, register-blocked accumulators in stack buffers, parallel outer
// loops). Used by the code generator's tests and by bench/kiln_bench_kernels until the schedule
// primitives generate them.
#ifndef KILN_TESTS_CODEGEN_LOOP_BUILDERS_H_
#define KILN_TESTS_CODEGEN_LOOP_BUILDERS_H_

#include <string>
#include <vector>

#include "kiln/tir/stmt.h"

namespace kiln::codegen::testing {

using namespace kiln::tir;  // NOLINT

// Contiguous V-lane slice starting at element `base`.
inline Expr vec(Expr base, int lanes) { return Ramp::make(std::move(base), make_int(1), lanes); }

// out[i] = f(in[i]) for i < n: a vector loop of `lanes` lanes over the first floor(n/lanes)*lanes
// elements and a scalar tail loop for the rest. `f` builds the body for a given loaded value.
template <typename F>
PrimFunc elementwise(const std::string& name, int64_t n, int lanes, int num_inputs, F f) {
  std::vector<tir::Buffer> params;
  for (int k = 0; k < num_inputs; ++k) {
    params.push_back(tir::Buffer::make("in" + std::to_string(k), DType::kF32, {n}));
  }
  tir::Buffer out = tir::Buffer::make("out", DType::kF32, {n});
  params.push_back(out);
  const int64_t main = n / lanes;
  Var io("io"), t("t");
  std::vector<Expr> vin, sin;
  for (int k = 0; k < num_inputs; ++k) {
    vin.push_back(Load::make(params[k], vec(io * lanes, lanes)));
    sin.push_back(Load::make(params[k], t));
  }
  std::vector<Stmt> body;
  if (main > 0) body.push_back(For::make(io, 0, main, ForKind::kSerial, Store::make(out, f(vin), vec(io * lanes, lanes))));
  if (n % lanes != 0) body.push_back(For::make(t, main * lanes, n - main * lanes, ForKind::kSerial, Store::make(out, f(sin), t)));
  return PrimFunc::make(name, params, Block::make(body));
}

// C[M, N] = A[M, K] * B[K, N] (row-major f32). Rows in blocks of `mr` (parallel over blocks when
// `parallel`), columns in blocks of `nv` vectors of `lanes`; the mr x nv accumulator vectors live
// in a stack buffer that LLVM promotes to registers; k innermost with a broadcast of A times a
// vector of B (one FMA per accumulator). Leftover rows and columns run in a scalar loop.
inline PrimFunc matmul(const std::string& name, int64_t M, int64_t N, int64_t K, int lanes, int mr, int nv,
                       bool parallel) {
  tir::Buffer A = tir::Buffer::make("A", DType::kF32, {M, K});
  tir::Buffer B = tir::Buffer::make("B", DType::kF32, {K, N});
  tir::Buffer C = tir::Buffer::make("C", DType::kF32, {M, N});
  tir::Buffer acc = tir::Buffer::make("acc", DType::kF32, {int64_t{mr} * nv * lanes});
  const int64_t nb = int64_t{nv} * lanes;
  const int64_t mblocks = M / mr, nblocks = N / nb;
  Var io("io"), jo("jo"), k("k"), ii("ii"), jv("jv");
  Var a("a", Type(DType::kF32, lanes));
  auto acc_at = [&] { return vec((ii * nv + jv) * lanes, lanes); };
  Expr row = io * mr + ii;
  Expr col = jo * nb + jv * lanes;
  Stmt init = For::make(ii, 0, mr, ForKind::kUnrolled,
                        For::make(jv, 0, nv, ForKind::kUnrolled, Store::make(acc, Broadcast::make(0.0f, lanes), acc_at())));
  Stmt update = For::make(
      k, 0, K, ForKind::kSerial,
      For::make(ii, 0, mr, ForKind::kUnrolled,
                LetStmt::make(a, Broadcast::make(Load::make(A, row * K + k), lanes),
                              For::make(jv, 0, nv, ForKind::kUnrolled,
                                        Store::make(acc, Load::make(acc, acc_at()) + a * Load::make(B, vec(k * N + col, lanes)),
                                                    acc_at())))));
  Stmt write = For::make(ii, 0, mr, ForKind::kUnrolled,
                         For::make(jv, 0, nv, ForKind::kUnrolled, Store::make(C, Load::make(acc, acc_at()), vec(row * N + col, lanes))));
  Stmt block = Allocate::make(acc, MemoryScope::kStack, 64, Block::make({init, update, write}));
  std::vector<Stmt> body;
  if (mblocks > 0 && nblocks > 0) {
    body.push_back(For::make(io, 0, mblocks, parallel ? ForKind::kParallel : ForKind::kSerial,
                             For::make(jo, 0, nblocks, ForKind::kSerial, block)));
  }
  // Scalar remainder: every (i, j) not covered by the blocks above.
  Var i("i"), j("j"), kk("kk");
  tir::Buffer s = tir::Buffer::make("s", DType::kF32, {1});
  auto scalar_cell = [&](Expr ie, Expr je) {
    return Allocate::make(
        s, MemoryScope::kStack, 64,
        Block::make({Store::make(s, 0.0f, make_int(0)),
                     For::make(kk, 0, K, ForKind::kSerial,
                               Store::make(s, Load::make(s, make_int(0)) + Load::make(A, ie * K + kk) * Load::make(B, kk * N + je),
                                           make_int(0))),
                     Store::make(C, Load::make(s, make_int(0)), ie * N + je)}));
  };
  const int64_t mcov = mblocks * mr, ncov = nblocks * nb;
  if (ncov < N && mcov > 0) {
    body.push_back(For::make(i, 0, mcov, ForKind::kSerial, For::make(j, ncov, N - ncov, ForKind::kSerial, scalar_cell(i, j))));
  }
  if (mcov < M) {
    Var i2("i2"), j2("j2");
    body.push_back(For::make(i2, mcov, M - mcov, ForKind::kSerial, For::make(j2, 0, N, ForKind::kSerial, scalar_cell(i2, j2))));
  }
  return PrimFunc::make(name, {A, B, C}, Block::make(body));
}


// C[M, N] = A[M, K] * B[K, N] with B first packed into column panels of nv*lanes columns
// (Bp[jo][k][nv*lanes], a heap buffer) so the micro-kernel streams B contiguously, and k split
// into blocks of kc (the accumulators carry over through C between blocks). Rows go in blocks of
// mr (parallel over blocks) and the M % mr leftover rows in one smaller block. Requires
// N % (nv*lanes) == 0 and K % kc == 0.
inline PrimFunc matmul_packed(const std::string& name, int64_t M, int64_t N, int64_t K, int lanes, int mr,
                              int nv, int64_t kc, bool parallel) {
  tir::Buffer A = tir::Buffer::make("A", DType::kF32, {M, K});
  tir::Buffer B = tir::Buffer::make("B", DType::kF32, {K, N});
  tir::Buffer C = tir::Buffer::make("C", DType::kF32, {M, N});
  tir::Buffer Bp = tir::Buffer::make("Bp", DType::kF32, {N * K});
  const int64_t nb = int64_t{nv} * lanes;
  const ForKind outer = parallel ? ForKind::kParallel : ForKind::kSerial;
  Var po("po"), pk("pk"), pj("pj");
  Stmt pack = For::make(po, 0, N / nb, outer,
                        For::make(pk, 0, K, ForKind::kSerial,
                                  For::make(pj, 0, nv, ForKind::kUnrolled,
                                            Store::make(Bp, Load::make(B, vec(pk * N + po * nb + pj * lanes, lanes)),
                                                        vec((po * K + pk) * nb + pj * lanes, lanes)))));
  // Rows [row0, row0 + blocks * rows) in blocks of `rows`.
  auto nest = [&](int64_t row0, int64_t blocks, int rows) {
    tir::Buffer acc = tir::Buffer::make("acc", DType::kF32, {int64_t{rows} * nv * lanes});
    Var io("io"), jo("jo"), ko("ko"), k("k"), ii("ii"), jv("jv");
    Var a("a", Type(DType::kF32, lanes));
    auto acc_at = [&] { return vec((ii * nv + jv) * lanes, lanes); };
    Expr row = io * rows + ii + row0;
    Expr c_at = vec(row * N + jo * nb + jv * lanes, lanes);
    Expr kk = ko * kc + k;
    Stmt init = For::make(ii, 0, rows, ForKind::kUnrolled,
                          For::make(jv, 0, nv, ForKind::kUnrolled,
                                    Store::make(acc, select(ko == 0, Broadcast::make(0.0f, lanes), Load::make(C, c_at)), acc_at())));
    Stmt update = For::make(
        k, 0, kc, ForKind::kSerial,
        For::make(ii, 0, rows, ForKind::kUnrolled,
                  LetStmt::make(a, Broadcast::make(Load::make(A, row * K + kk), lanes),
                                For::make(jv, 0, nv, ForKind::kUnrolled,
                                          Store::make(acc, Load::make(acc, acc_at()) +
                                                               a * Load::make(Bp, vec((jo * K + kk) * nb + jv * lanes, lanes)),
                                                      acc_at())))));
    Stmt write = For::make(ii, 0, rows, ForKind::kUnrolled,
                           For::make(jv, 0, nv, ForKind::kUnrolled, Store::make(C, Load::make(acc, acc_at()), c_at)));
    Stmt micro = Allocate::make(acc, MemoryScope::kStack, 64, Block::make({init, update, write}));
    return For::make(io, 0, blocks, outer,
                     For::make(jo, 0, N / nb, ForKind::kSerial, For::make(ko, 0, K / kc, ForKind::kSerial, micro)));
  };
  std::vector<Stmt> body{pack};
  if (M / mr > 0) body.push_back(nest(0, M / mr, mr));
  if (M % mr != 0) body.push_back(nest(M / mr * mr, 1, static_cast<int>(M % mr)));
  return PrimFunc::make(name, {A, B, C}, Allocate::make(Bp, MemoryScope::kHeap, 64, Block::make(body)));
}

}  // namespace kiln::codegen::testing

#endif  // KILN_TESTS_CODEGEN_LOOP_BUILDERS_H_
