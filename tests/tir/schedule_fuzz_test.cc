// Random schedules of a matmul (splits with and without tails, any loop order, vectorize, unroll,
// parallel, cache_write attached at any data-parallel loop) must all compute the same numbers as
// a direct C++ evaluation.
#include <gtest/gtest.h>

#include <algorithm>
#include <random>

#include "kiln/tir/interpreter.h"
#include "kiln/tir/lower.h"
#include "kiln/tir/printer.h"
#include "tir_test_util.h"

namespace kiln::tir {
namespace {

TEST(ScheduleFuzzTest, RandomMatmulSchedulesMatchTheReference) {
  std::mt19937 rng(7);
  auto pick = [&](int n) { return static_cast<int>(rng() % n); };
  const int64_t sizes[] = {1, 5, 8, 13};
  const int64_t factors[] = {1, 2, 3, 4, 8};
  for (int trial = 0; trial < 120; ++trial) {
    const int64_t m = sizes[pick(4)], n = sizes[pick(4)], kk = sizes[pick(4)];
    Tensor a = placeholder({m, kk}, DType::kF32, "A");
    Tensor b = placeholder({kk, n}, DType::kF32, "B");
    IterVar rk = reduce_axis(kk, "k");
    Tensor c = compute({m, n}, [&](const std::vector<Var>& i) { return sum(a(i[0], rk) * b(rk, i[1]), {rk}); }, "C",
                       {"i", "j"});
    Schedule s({c});
    const bool cache = pick(2) == 0;
    Tensor local;
    if (cache) local = s.cache_write(c);
    Stage work = cache ? s[local] : s[c];
    // Split some axes of the reducing stage.
    for (const IterVar& ax : std::vector<IterVar>(work.leaf_axes())) {
      if (pick(2) == 0) {
        if (pick(2) == 0) {
          work.split(ax, factors[pick(5)]);
        } else {
          work.split_nparts(ax, factors[pick(5)]);
        }
      }
    }
    std::vector<IterVar> order = work.leaf_axes();
    std::shuffle(order.begin(), order.end(), rng);
    work.reorder(order);
    const IterVar& last = work.leaf_axes().back();
    if (last->kind == IterKind::kDataPar && pick(2) == 0) {
      work.vectorize(last);
    } else if (pick(2) == 0) {
      work.unroll(last);
    }
    if (cache) {
      Stage sc = s[c];
      auto [io, ii] = sc.split(sc.axis(0), factors[pick(5)]);
      auto [jo, ji] = sc.split(sc.axis(1), factors[pick(5)]);
      sc.reorder({io, jo, ii, ji});
      if (pick(2) == 0) sc.parallel(io);
      const IterVar at[] = {io, jo, ii, ji};
      work.compute_at(sc, at[pick(4)]);
    } else if (work.leaf_axes().front()->kind == IterKind::kDataPar && pick(2) == 0) {
      work.parallel(work.leaf_axes().front());
    }
    PrimFunc f = lower(s, {a, b, c}, "mm");
    ir::NDArray av = testing::random_array(DType::kF32, {m, kk}, trial), bv = testing::random_array(DType::kF32, {kk, n}, trial + 1000);
    ir::NDArray cv = ir::NDArray::empty(DType::kF32, {m, n});
    interpret(f, {av, bv, cv});
    ASSERT_TRUE(testing::all_close(
        cv,
        [&](int64_t e) {
          double acc = 0;
          for (int64_t r = 0; r < kk; ++r) acc += av.get_as_double((e / n) * kk + r) * bv.get_as_double(r * n + e % n);
          return acc;
        },
        1e-5))
        << "trial " << trial << " (" << m << "x" << n << "x" << kk << ")\nschedule:\n" << s.to_string() << f;
  }
}

}  // namespace
}  // namespace kiln::tir
