// pack_matmul_b and matmul_packed (B packed at compile time by PackMatmulWeights): generated
// kernels vs the op references at odd sizes (panels padded past N, M not a multiple of the row
// tile, matrix-vector products with K split into slices, batch axes on a, one-vector and
// two-vector panels).
// Tolerance as nn_test's sums: rtol 1e-4, atol growing with sqrt(K).
#include <cmath>

#include "topi_test_util.h"

namespace kiln::topi::testing {
namespace {

using ir::Attrs;


TEST(TopiMatmulPacked, PackIsExact) {
  check_op({"pack_matmul_b", {tt({20, 37})}, Attrs().set("n_block", int64_t{16}), {}, {0, 0}});
  check_op({"pack_matmul_b", {tt({37, 20})}, Attrs().set("n_block", int64_t{8}).set("trans_b", int64_t{1}), {}, {0, 0}});
  check_op({"pack_matmul_b", {tt({5, 16})}, Attrs().set("n_block", int64_t{16}), {}, {0, 0}});
}

TEST(TopiMatmulPacked, ProductsAtOddSizes) {
  struct Case {
    ir::Shape a;
    int64_t panels, nb, n;
  };
  for (const Case& c : std::vector<Case>{{{13, 20}, 3, 16, 37},
                                         {{2, 5, 20}, 5, 8, 37},
                                         {{1, 300}, 13, 8, 100},
                                         {{1, 128, 64}, 4, 16, 64},
                                         {{7, 1}, 1, 16, 3},
                                         // M = 1, K >= 256: K split into 4 slices (a tail when 4 does not divide K)
                                         {{1, 301}, 13, 8, 100},
                                         {{2, 1, 513}, 2, 16, 20},
                                         {{1, 2048}, 4, 8, 32}}) {
    const int64_t k = c.a.back();
    check_op({"matmul_packed", {tt(c.a), tt({c.panels, k, c.nb})}, Attrs().set("n", c.n), {}, sum_tol(k)});
  }
}

}  // namespace
}  // namespace kiln::topi::testing

namespace kiln::topi::testing {
namespace {

// Remainder tiles (issue 18): products whose M, K and N are not multiples of the row tile, the
// vector width or the panel width (primes, 1, just past a multiple), small M (1..8), batched and
// gemm forms; each against the op's double-precision reference.
TEST(TopiMatmulPacked, RemainderTilesAtPrimeAndSmallSizes) {
  for (const int64_t m : {1, 2, 3, 7, 8, 11}) {
    for (const auto& [k, n] : std::vector<std::pair<int64_t, int64_t>>{{1, 1}, {3, 17}, {29, 31}, {259, 41}}) {
      const int64_t nb = n >= 16 ? 16 : 8;
      check_op({"matmul_packed", {tt({m, k}), tt({(n + nb - 1) / nb, k, nb})}, Attrs().set("n", n), {}, sum_tol(k)});
    }
  }
}

TEST(TopiMatmul, RemainderTilesBatchedAndGemm) {
  check_op({"matmul", {tt({3, 7, 29}), tt({3, 29, 19})}, {}, {}, sum_tol(29)});
  check_op({"matmul", {tt({2, 1, 257}), tt({257, 33})}, {}, {}, sum_tol(257)});
  check_op({"matmul", {tt({13, 1}), tt({1, 5})}, {}, {}, sum_tol(1)});
  check_op({"gemm", {tt({8, 77}), tt({31, 77}), tt({31})}, Attrs().set("trans_b", int64_t{1}), {}, sum_tol(77)});
  check_op({"gemm", {tt({11, 5}), tt({5, 3})}, Attrs().set("alpha", 0.5), {}, sum_tol(5)});
}

}  // namespace
}  // namespace kiln::topi::testing
