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
