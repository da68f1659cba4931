// Random schedules of a matmul (splits with and without tails, any loop order, vectorize, unroll,
// parallel, cache_write attached at any data-parallel loop) must all compute the same numbers as
// a direct C++ evaluation.
#include <gtest/gtest.h>

#include <algorithm>
#include <random>

#include "kiln/tir/interpreter.h"
#include "kiln/tir/lower.h"
#include "kiln/tir/printer.h"
#include "kiln/tir/simplify.h"
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
    // Maybe fuse an adjacent pair of the same kind.
    if (pick(2) == 0) {
      const auto& leaf = work.leaf_axes();
      for (size_t q = 0; q + 1 < leaf.size(); ++q) {
        if (leaf[q]->kind == leaf[q + 1]->kind) {
          work.fuse(leaf[q], leaf[q + 1]);
          break;
        }
      }
    }
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
    EXPECT_TRUE(simplify(f->body).same_as(f->body)) << "simplify is not idempotent on\n" << f;
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

namespace kiln::tir {
namespace {

// A padded 1-D convolution: Out[x] = sum_r pad(A)[x + r] * W[r], with the padding stage and a
// cache_write tile attached at random loops (directly or through the tile).
TEST(ScheduleFuzzTest, RandomStencilAttachmentsMatchTheReference) {
  std::mt19937 rng(11);
  auto pick = [&](int n) { return static_cast<int>(rng() % n); };
  const int64_t factors[] = {1, 2, 3, 4, 8};
  for (int trial = 0; trial < 120; ++trial) {
    const int64_t n = 1 + pick(20), kw = 1 + pick(4), padl = pick(3);
    Tensor a = placeholder({n}, DType::kF32, "A");
    Tensor w = placeholder({kw}, DType::kF32, "W");
    const int64_t np = n + kw - 1;
    Tensor p = compute({np}, [&](const std::vector<Var>& i) { return read_or(a, {i[0] - padl}, 0.0f); }, "P", {"q"});
    IterVar r = reduce_axis(kw, "r");
    Tensor out = compute({n}, [&](const std::vector<Var>& i) { return sum(p(i[0] + r) * w(r), {r}); }, "Out", {"x"});
    Schedule s({out});
    const int mode = pick(4);
    Tensor local;
    if (mode >= 2) local = s.cache_write(out);
    Stage so = s[out];
    auto [xo, xi] = so.split(so.axis(0), factors[pick(5)]);
    if (mode == 0) {
      s[p].compute_inline();
    } else if (mode == 1) {
      s[p].compute_at(so, pick(2) ? xo : xi);
    } else {
      Stage sl = s[local];
      sl.compute_at(so, pick(2) ? xo : xi);
      if (pick(2)) sl.reorder({sl.reduce_axis(0), sl.axis(0)});
      if (mode == 2) {
        s[p].compute_at(so, xo);  // read through the attached tile
      } else {
        s[p].compute_at(sl, sl.leaf_axes()[pick(2)]);
      }
    }
    if (mode != 0 && pick(2)) {
      auto [po, pi] = s[p].split(s[p].axis(0), factors[pick(5)]);
      if (pick(2)) s[p].vectorize(pi);
    } else if (mode != 0 && pick(2)) {
      s[p].vectorize(s[p].axis(0));
    }
    PrimFunc f = lower(s, {a, w, out}, "stencil");
    EXPECT_TRUE(simplify(f->body).same_as(f->body)) << "simplify is not idempotent on\n" << f;
    ir::NDArray av = testing::random_array(DType::kF32, {n}, trial), wv = testing::random_array(DType::kF32, {kw}, trial + 77);
    ir::NDArray ov = ir::NDArray::empty(DType::kF32, {n});
    interpret(f, {av, wv, ov});
    ASSERT_TRUE(testing::all_close(
        ov,
        [&](int64_t x) {
          double acc = 0;
          for (int64_t k = 0; k < kw; ++k) {
            const int64_t src = x + k - padl;
            if (src >= 0 && src < n) acc += av.get_as_double(src) * wv.get_as_double(k);
          }
          return acc;
        },
        1e-5))
        << "trial " << trial << " n=" << n << " kw=" << kw << " pad=" << padl << "\nschedule:\n" << s.to_string() << f;
  }
}

}  // namespace
}  // namespace kiln::tir
