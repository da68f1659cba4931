// Lowering of each schedule primitive: the loop nest it produces (printed form) and the numbers
// it computes (interpreted, compared with a direct C++ evaluation) at odd sizes for tail handling.
#include <gtest/gtest.h>

#include <functional>

#include "kiln/support/error.h"
#include "kiln/support/logging.h"
#include "kiln/tir/interpreter.h"
#include "kiln/tir/lower.h"
#include "kiln/tir/printer.h"
#include "tir_test_util.h"

namespace kiln::tir {
namespace {

using testing::all_close;
using testing::random_array;

bool contains(const std::string& text, const std::string& piece) { return text.find(piece) != std::string::npos; }

struct Elementwise {
  Tensor a, b, c;
  explicit Elementwise(int64_t n) {
    a = placeholder({n}, DType::kF32, "A");
    b = placeholder({n}, DType::kF32, "B");
    c = compute({n}, [&](const std::vector<Var>& i) { return a(i[0]) * 2.0f + b(i[0]); }, "C", {"i"});
  }
  // Lowers with `sched_fn`, runs, checks C = 2A + B.
  std::string run(int64_t n, const std::function<void(Schedule&)>& sched_fn) {
    Schedule s({c});
    sched_fn(s);
    PrimFunc f = lower(s, {a, b, c}, "ew");
    ir::NDArray av = random_array(DType::kF32, {n}, 1), bv = random_array(DType::kF32, {n}, 2);
    ir::NDArray cv = ir::NDArray::empty(DType::kF32, {n});
    interpret(f, {av, bv, cv});
    EXPECT_TRUE(all_close(cv, [&](int64_t i) { return 2.0 * av.get_as_double(i) + bv.get_as_double(i); }, 1e-6)) << f;
    return to_string(f);
  }
};

TEST(LowerTest, DefaultScheduleIsOneLoopPerAxis) {
  Elementwise e(7);
  EXPECT_EQ(e.run(7, [](Schedule&) {}),
            "func ew(A: f32[7], B: f32[7], C: f32[7]) {\n"
            "  for (i, 0, 7) {\n"
            "    C[i] = A[i] * 2.0f + B[i]\n"
            "  }\n"
            "}\n");
}

TEST(LowerTest, SplitByExactDivisorHasNoGuard) {
  Elementwise e(16);
  std::string text = e.run(16, [&](Schedule& s) { s[e.c].split(s[e.c].axis(0), 8); });
  EXPECT_EQ(text,
            "func ew(A: f32[16], B: f32[16], C: f32[16]) {\n"
            "  for (i.outer, 0, 2) {\n"
            "    for (i.inner, 0, 8) {\n"
            "      C[i.outer * 8 + i.inner] = A[i.outer * 8 + i.inner] * 2.0f + B[i.outer * 8 + i.inner]\n"
            "    }\n"
            "  }\n"
            "}\n");
}

TEST(LowerTest, SplitWithTailIsGuardedThenPartitioned) {
  Elementwise g(13);
  set_log_spec("tir=debug");
  ::testing::internal::CaptureStderr();
  g.run(13, [&](Schedule& t) { t[g.c].split(t[g.c].axis(0), 8); });
  const std::string log = ::testing::internal::GetCapturedStderr();
  set_log_spec("warning");
  // Before partitioning: one guarded nest.
  EXPECT_TRUE(contains(log, "if (i.outer * 8 + i.inner < 13)")) << log;
  for (int64_t n : {7, 13, 1000}) {
    Elementwise e(n);
    std::string text = e.run(n, [&](Schedule& s) { s[e.c].split(s[e.c].axis(0), 8); });
    EXPECT_FALSE(contains(text, "if (")) << text;
    if (n == 7) {
      EXPECT_TRUE(contains(text, "for (i.inner, 0, 7)")) << text;  // one outer iteration, shortened
    } else if (n == 13) {
      // a guard-free main part and a shortened tail
      EXPECT_TRUE(contains(text, "  for (i.inner, 0, 8) {\n    C[i.inner] =")) << text;
      EXPECT_TRUE(contains(text, "  for (i.inner, 0, 5) {\n    C[i.inner + 8] =")) << text;
    } else {
      EXPECT_TRUE(contains(text, "for (i.outer, 0, 125)")) << text;  // 1000 = 125 * 8
    }
  }
}

TEST(LowerTest, SplitNparts) {
  for (int64_t n : {7, 13, 1000}) {
    Elementwise e(n);
    std::string text = e.run(n, [&](Schedule& s) { s[e.c].split_nparts(s[e.c].axis(0), 3); });
    EXPECT_TRUE(contains(text, "for (i.inner, 0, " + std::to_string((n + 2) / 3) + ")")) << text;
  }
}

TEST(LowerTest, VectorizeProducesRampsIncludingTheTail) {
  Elementwise e(16);
  std::string text = e.run(16, [&](Schedule& s) {
    auto [o, i] = s[e.c].split(s[e.c].axis(0), 8);
    s[e.c].vectorize(i);
  });
  EXPECT_TRUE(contains(text, "C[ramp(i.outer * 8, 1, 8)] = A[ramp(i.outer * 8, 1, 8)] * x8(2.0f) + B[ramp(i.outer * 8, 1, 8)]"))
      << text;
  Elementwise t(13);
  std::string tail = t.run(13, [&](Schedule& s) {
    auto [o, i] = s[t.c].split(s[t.c].axis(0), 8);
    s[t.c].vectorize(i);
  });
  EXPECT_EQ(tail,
            "func ew(A: f32[13], B: f32[13], C: f32[13]) {\n"
            "  C[ramp(0, 1, 8)] = A[ramp(0, 1, 8)] * x8(2.0f) + B[ramp(0, 1, 8)]\n"
            "  C[ramp(8, 1, 5)] = A[ramp(8, 1, 5)] * x5(2.0f) + B[ramp(8, 1, 5)]\n"
            "}\n");
}

TEST(LowerTest, UnrollCopiesTheBody) {
  Elementwise e(12);
  std::string text = e.run(12, [&](Schedule& s) {
    auto [o, i] = s[e.c].split(s[e.c].axis(0), 3);
    s[e.c].unroll(i);
  });
  EXPECT_TRUE(contains(text, "C[i.outer * 3 + 2] =")) << text;
  EXPECT_FALSE(contains(text, "i.inner")) << text;
}

TEST(LowerTest, ParallelMarksTheLoop) {
  Elementwise e(1000);
  std::string text = e.run(1000, [&](Schedule& s) {
    auto [o, i] = s[e.c].split(s[e.c].axis(0), 64);
    s[e.c].parallel(o);
  });
  EXPECT_TRUE(contains(text, "parallel for (i.outer, 0, 16)")) << text;
}

TEST(LowerTest, FuseAndReorderOn2D) {
  for (auto [m, n] : {std::pair<int64_t, int64_t>{7, 13}, {16, 8}}) {
    Tensor a = placeholder({m, n}, DType::kF32, "A");
    Tensor t = compute({n, m}, [&](const std::vector<Var>& i) { return a(i[1], i[0]); }, "T", {"x", "y"});
    ir::NDArray av = random_array(DType::kF32, {m, n}, 3);
    auto check = [&](const std::function<void(Schedule&)>& fn, const std::string& piece) {
      Schedule s({t});
      fn(s);
      PrimFunc f = lower(s, {a, t}, "transpose");
      ir::NDArray tv = ir::NDArray::empty(DType::kF32, {n, m});
      interpret(f, {av, tv});
      EXPECT_TRUE(all_close(tv, [&](int64_t k) { return av.get_as_double((k % m) * n + k / m); }, 0)) << f;
      EXPECT_TRUE(contains(to_string(f), piece)) << f;
    };
    check([&](Schedule& s) { s[t].reorder({s[t].axis(1), s[t].axis(0)}); }, "for (y, 0, " + std::to_string(m) + ")");
    check([&](Schedule& s) { s[t].fuse(s[t].axis(0), s[t].axis(1)); }, "for (x.y.fused, 0, " + std::to_string(m * n) + ")");
    check(
        [&](Schedule& s) {
          IterVar f = s[t].fuse(s[t].axis(0), s[t].axis(1));
          auto [o, i] = s[t].split(f, 4);
          s[t].parallel(o);
          s[t].unroll(i);
        },
        "parallel for (x.y.fused.outer");
  }
}

// C[i, j] = sum_k A[i, k] * B[k, j]
struct Matmul {
  int64_t m, n, k;
  Tensor a, b, c;
  IterVar rk;
  Matmul(int64_t m_, int64_t n_, int64_t k_) : m(m_), n(n_), k(k_) {
    a = placeholder({m, k}, DType::kF32, "A");
    b = placeholder({k, n}, DType::kF32, "B");
    rk = reduce_axis(k, "k");
    c = compute({m, n}, [&](const std::vector<Var>& i) { return sum(a(i[0], rk) * b(rk, i[1]), {rk}); }, "C",
                {"i", "j"});
  }
  PrimFunc check(Schedule& s) {
    PrimFunc f = lower(s, {a, b, c}, "matmul");
    ir::NDArray av = random_array(DType::kF32, {m, k}, 5), bv = random_array(DType::kF32, {k, n}, 6);
    ir::NDArray cv = ir::NDArray::empty(DType::kF32, {m, n});
    interpret(f, {av, bv, cv});
    EXPECT_TRUE(all_close(
        cv,
        [&](int64_t e) {
          double acc = 0;
          for (int64_t r = 0; r < k; ++r) acc += av.get_as_double((e / n) * k + r) * bv.get_as_double(r * n + e % n);
          return acc;
        },
        1e-5))
        << f;
    return f;
  }
};

TEST(LowerTest, MatmulDefaultInitsBeforeTheReduction) {
  Matmul mm(3, 5, 7);
  Schedule s({mm.c});
  EXPECT_EQ(to_string(mm.check(s)),
            "func matmul(A: f32[3, 7], B: f32[7, 5], C: f32[3, 5]) {\n"
            "  for (i, 0, 3) {\n"
            "    for (j, 0, 5) {\n"
            "      C[i * 5 + j] = 0.0f\n"
            "      for (k, 0, 7) {\n"
            "        C[i * 5 + j] = C[i * 5 + j] + A[i * 7 + k] * B[k * 5 + j]\n"
            "      }\n"
            "    }\n"
            "  }\n"
            "}\n");
}

TEST(LowerTest, MatmulReductionOutermostGetsASeparateInitNest) {
  Matmul mm(4, 6, 5);
  Schedule s({mm.c});
  s[mm.c].reorder({mm.rk, s[mm.c].axis(0), s[mm.c].axis(1)});
  std::string text = to_string(mm.check(s));
  EXPECT_TRUE(contains(text, "  for (i, 0, 4) {\n    for (j, 0, 6) {\n      C[i * 6 + j] = 0.0f\n")) << text;
}

// Register blocking: tile C, accumulate a tile in a local buffer attached inside the tile loop.
TEST(LowerTest, MatmulRegisterBlockingWithCacheWrite) {
  for (auto [m, n, k] : {std::tuple<int64_t, int64_t, int64_t>{16, 16, 8}, {13, 7, 29}, {37, 19, 5}}) {
    Matmul mm(m, n, k);
    Schedule s({mm.c});
    Tensor cl = s.cache_write(mm.c);
    Stage sc = s[mm.c];
    auto [io, ii] = sc.split(sc.axis(0), 4);
    auto [jo, ji] = sc.split(sc.axis(1), 8);
    sc.reorder({io, jo, ii, ji});
    sc.parallel(io);
    Stage sl = s[cl];
    sl.compute_at(sc, jo);
    sl.reorder({sl.reduce_axis(0), sl.axis(0), sl.axis(1)});
    sl.unroll(sl.axis(0));
    sl.vectorize(sl.axis(1));
    std::string text = to_string(mm.check(s));
    // The tile is 4 x 8, or the whole dimension when that is smaller (n = 7).
    EXPECT_TRUE(contains(text, "allocate C.local[f32 * " + std::to_string(4 * std::min<int64_t>(n, 8)) + "] stack align 64"))
        << text;
    if (m % 4 == 0 && n % 8 == 0) {
      EXPECT_FALSE(contains(text, "if (")) << text;
      EXPECT_TRUE(contains(text, "C.local[ramp(0, 1, 8)] = C.local[ramp(0, 1, 8)] + x8(A[")) << text;
    }
  }
  Matmul mm(8, 8, 4);
  Schedule s({mm.c});
  s.cache_write(mm.c);
  EXPECT_EQ(s.to_string(), "cache_write(C, stack) -> C.local\n");
}

// Stage::prefetch: the hint sits at the top of the named loop, the loops inside it at 0 and the
// axis shifted by the offset (here the whole reduction ahead: past the end of B, which a prefetch
// may reach; the interpreter ignores it); the values are unchanged, the step replays, and misuse
// is refused.
TEST(LowerTest, PrefetchHintsTheNextPanelAtTheTopOfItsLoop) {
  Matmul mm(6, 16, 10);
  Schedule s({mm.c});
  Tensor cl = s.cache_write(mm.c);
  Stage sc = s[mm.c];
  auto [jo, ji] = sc.split(sc.axis(1), 8);
  sc.reorder({jo, sc.axis(0), ji});
  Stage sl = s[cl];
  sl.compute_at(sc, sc.axis(0));
  sl.reorder({sl.reduce_axis(0), sl.axis(0), sl.axis(1)});
  sl.prefetch(mm.b, sl.reduce_axis(0), 10);
  const std::string text = to_string(mm.check(s));  // interpreted: C = A B exactly as without
  EXPECT_TRUE(contains(text, "for (k, 0, 10) {\n          prefetch(B[k * 16 + j.outer * 8 + 160])\n")) << text;
  EXPECT_TRUE(contains(s.to_string(), "prefetch(C.local, B, k, offset=10)\n")) << s.to_string();

  Schedule replay({mm.c});
  for (const std::string& step : s.steps()) replay.apply(step);
  EXPECT_EQ(replay.to_string(), s.to_string());
  EXPECT_EQ(to_string(lower(replay, {mm.a, mm.b, mm.c}, "matmul")), text);

  Schedule bad({mm.c});
  Tensor bl = bad.cache_write(mm.c);
  EXPECT_THROW(bad[bl].prefetch(mm.b, bad[bl].reduce_axis(0), 0), UserError);          // offset 0
  EXPECT_THROW(bad[bl].prefetch(mm.c, bad[bl].reduce_axis(0), 1), UserError);          // not read
  EXPECT_THROW(bad[bl].prefetch(mm.b, bad[mm.c].axis(0), 1), UserError);                // another stage's axis
  EXPECT_THROW(bad.apply("prefetch(C.local, X, k, offset=1)"), UserError);              // unknown tensor
  EXPECT_THROW(bad.apply("prefetch(C.local, B, k, 4)"), UserError);                      // malformed
  Schedule vec({mm.c});
  vec[mm.c].reorder({vec[mm.c].axis(0), mm.rk, vec[mm.c].axis(1)});
  vec[mm.c].vectorize(vec[mm.c].axis(1));
  vec[mm.c].prefetch(mm.b, vec[mm.c].axis(1), 1);
  EXPECT_THROW(lower(vec, {mm.a, mm.b, mm.c}, "matmul"), UserError);                   // inside a vectorized loop
}

// Stage::prefetch with a spread leaf: the span that the next iteration of `ko` reads of B (rows
// (ko + 1) * 8 .. + 7, 8 x 16 floats = 8 cache lines) is cut into parts of ceil(8 / 6) = 2
// lines, one part at the top of each of the 6 iterations of `i` (the address flat from the
// start); values unchanged; the step (with spread=) replays; misuse is refused.
TEST(LowerTest, SpreadPrefetchCutsTheNextSpanIntoLinesOverTheSpreadLoop) {
  Matmul mm(6, 16, 32);
  // The nest (k.outer, i, k.inner, j) with B's next chunk prefetched spread over the loops that
  // `pick` chooses from (i, k.inner): the lowered text (values checked by mm.check) and the
  // schedule's steps, which must replay to the same function.
  const auto spread_nest = [&](const std::function<std::vector<IterVar>(const IterVar&, const IterVar&)>& pick) {
    Schedule s({mm.c});
    Stage sc = s[mm.c];
    auto [ko, ki] = sc.split(mm.rk, 8);
    sc.reorder({ko, sc.axis(0), ki, sc.axis(1)});
    sc.prefetch(mm.b, ko, 1, pick(sc.axis(0), ki));
    const std::string text = to_string(mm.check(s));
    Schedule replay({mm.c});
    for (const std::string& step : s.steps()) replay.apply(step);
    EXPECT_EQ(to_string(lower(replay, {mm.a, mm.b, mm.c}, "matmul")), text);
    return std::make_pair(text, s.to_string());
  };
  const auto [text, steps] = spread_nest([](const IterVar& i, const IterVar&) { return std::vector<IterVar>{i}; });
  EXPECT_TRUE(contains(text, "for (i, 0, 6) {\n      prefetch(B[k.outer * 128 + i * 32 + 128])\n      prefetch(B[k.outer * 128 + i * 32 + 144])\n"))
      << text;
  EXPECT_TRUE(contains(steps, "prefetch(C, B, k.outer, offset=1, spread=i)\n")) << steps;

  // Two spread loops counted together: 6 x 8 iterations for 8 lines, one line each (the later
  // ones reach into the span after: a prefetch never faults).
  const auto [text2, steps2] =
      spread_nest([](const IterVar& i, const IterVar& ki) { return std::vector<IterVar>{i, ki}; });
  EXPECT_TRUE(contains(text2, "for (k.inner, 0, 8) {\n        prefetch(B[i * 128 + k.outer * 128 + k.inner * 16 + 128])\n")) << text2;
  EXPECT_TRUE(contains(steps2, "prefetch(C, B, k.outer, offset=1, spread=i+k.inner)\n")) << steps2;

  Schedule bad({mm.c});
  Stage bc = bad[mm.c];
  auto [bo, bi] = bc.split(mm.rk, 8);
  bc.reorder({bc.axis(0), bo, bi, bc.axis(1)});
  EXPECT_THROW(bc.prefetch(mm.b, bo, 1, {bo}), UserError);                                // spread over its own axis
  EXPECT_THROW(bad.apply("prefetch(C, B, k.outer, offset=1, i)"), UserError);               // malformed
  bc.prefetch(mm.b, bo, 1, {bc.axis(0)});                                                  // i is outside k.outer
  EXPECT_THROW(lower(bad, {mm.a, mm.b, mm.c}, "matmul"), UserError);
  Schedule order({mm.c});
  Stage oc = order[mm.c];
  auto [oo, oi] = oc.split(mm.rk, 8);
  oc.reorder({oo, oc.axis(0), oi, oc.axis(1)});
  oc.prefetch(mm.b, oo, 1, {oi, oc.axis(0)});                                               // inner before outer
  EXPECT_THROW(lower(order, {mm.a, mm.b, mm.c}, "matmul"), UserError);
}

TEST(LowerTest, ComputeInlineSubstitutesTheProducer) {
  Tensor a = placeholder({13}, DType::kF32, "A");
  Tensor b = compute({13}, [&](const std::vector<Var>& i) { return a(i[0]) + 1.0f; }, "B", {"i"});
  Tensor c = compute({13}, [&](const std::vector<Var>& i) { return max(b(i[0]), 0.0f); }, "C", {"i"});
  Schedule s({c});
  s[b].compute_inline();
  PrimFunc f = lower(s, {a, c}, "relu");
  EXPECT_EQ(to_string(f), "func relu(A: f32[13], C: f32[13]) {\n  for (i, 0, 13) {\n    C[i] = max(A[i] + 1.0f, 0.0f)\n  }\n}\n");
  ir::NDArray av = random_array(DType::kF32, {13}, 7), cv = ir::NDArray::empty(DType::kF32, {13});
  interpret(f, {av, cv});
  EXPECT_TRUE(all_close(cv, [&](int64_t i) { return std::max(av.get_as_double(i) + 1.0, 0.0); }, 1e-6));
}

TEST(LowerTest, RootIntermediateIsAllocatedOnTheHeap) {
  Tensor a = placeholder({10}, DType::kF32, "A");
  Tensor b = compute({10}, [&](const std::vector<Var>& i) { return a(i[0]) * 3.0f; }, "B", {"i"});
  Tensor c = compute({9}, [&](const std::vector<Var>& i) { return b(i[0]) + b(i[0] + 1); }, "C", {"i"});
  Schedule s({c});
  PrimFunc f = lower(s, {a, c}, "stencil");
  EXPECT_TRUE(contains(to_string(f), "allocate B[f32 * 10] heap align 64")) << f;
  ir::NDArray av = random_array(DType::kF32, {10}, 8), cv = ir::NDArray::empty(DType::kF32, {9});
  interpret(f, {av, cv});
  EXPECT_TRUE(all_close(cv, [&](int64_t i) { return 3.0 * (av.get_as_double(i) + av.get_as_double(i + 1)); }, 1e-6));
}

TEST(LowerTest, ComputeAtRealizesOnlyTheRegionTheTileReads) {
  for (int64_t n : {16, 13}) {
    Tensor a = placeholder({n + 1}, DType::kF32, "A");
    Tensor b = compute({n + 1}, [&](const std::vector<Var>& i) { return a(i[0]) * 3.0f; }, "B", {"i"});
    Tensor c = compute({n}, [&](const std::vector<Var>& i) { return b(i[0]) + b(i[0] + 1); }, "C", {"i"});
    Schedule s({c});
    auto [o, i] = s[c].split(s[c].axis(0), 4);
    s[b].compute_at(s[c], o);
    PrimFunc f = lower(s, {a, c}, "stencil");
    const std::string text = to_string(f);
    EXPECT_TRUE(contains(text, "allocate B[f32 * 5] stack align 64")) << text;  // 4 + 1 halo
    EXPECT_TRUE(contains(text, "B[i] = A[i.outer * 4 + i] * 3.0f")) << text;
    ir::NDArray av = random_array(DType::kF32, {n + 1}, 9), cv = ir::NDArray::empty(DType::kF32, {n});
    interpret(f, {av, cv});
    EXPECT_TRUE(all_close(cv, [&](int64_t k) { return 3.0 * (av.get_as_double(k) + av.get_as_double(k + 1)); }, 1e-6))
        << f;
  }
}

TEST(LowerTest, MaxAndMinReductions) {
  Tensor a = placeholder({5, 13}, DType::kF32, "A");
  IterVar r = reduce_axis(13, "r");
  Tensor mx = compute({5}, [&](const std::vector<Var>& i) { return max_reduce(a(i[0], r), {r}); }, "Mx");
  IterVar r2 = reduce_axis(13, "r2");
  Tensor mn = compute({5}, [&](const std::vector<Var>& i) { return min_reduce(a(i[0], r2), {r2}); }, "Mn");
  Schedule s({mx, mn});
  s[mx].split(s[mx].reduce_axis(0), 4);
  PrimFunc f = lower(s, {a, mx, mn}, "minmax");
  ir::NDArray av = random_array(DType::kF32, {5, 13}, 10);
  ir::NDArray xv = ir::NDArray::empty(DType::kF32, {5}), nv = ir::NDArray::empty(DType::kF32, {5});
  interpret(f, {av, xv, nv});
  auto ref = [&](int64_t row, bool is_max) {
    double best = av.get_as_double(row * 13);
    for (int k = 1; k < 13; ++k) best = is_max ? std::max(best, av.get_as_double(row * 13 + k)) : std::min(best, av.get_as_double(row * 13 + k));
    return best;
  };
  EXPECT_TRUE(all_close(xv, [&](int64_t i) { return ref(i, true); }, 0)) << f;
  EXPECT_TRUE(all_close(nv, [&](int64_t i) { return ref(i, false); }, 0)) << f;
  EXPECT_TRUE(contains(to_string(f), "Mx[i0] = (f32)-inf")) << f;
}

}  // namespace
}  // namespace kiln::tir

namespace kiln::tir {
namespace {

// A fused kernel: relu(matmul + bias), the matmul tile accumulated locally inside the
// elementwise output's tile loop (the shape FuseOps produces for dense + bias + relu).
TEST(LowerTest, ReductionComputedAtAnElementwiseConsumer) {
  for (auto [m, n, k] : {std::tuple<int64_t, int64_t, int64_t>{8, 16, 4}, {7, 13, 9}}) {
    Matmul mm(m, n, k);
    Tensor bias = placeholder({n}, DType::kF32, "bias");
    Tensor out = compute({m, n}, [&](const std::vector<Var>& i) { return max(mm.c(i[0], i[1]) + bias(i[1]), 0.0f); },
                         "Out", {"y", "x"});
    Schedule s({out});
    Stage so = s[out];
    auto [yo, yi] = so.split(so.axis(0), 4);
    auto [xo, xi] = so.split(so.axis(1), 8);
    so.reorder({yo, xo, yi, xi});
    so.vectorize(xi);
    Stage sc = s[mm.c];
    sc.compute_at(so, xo);
    sc.reorder({sc.reduce_axis(0), sc.axis(0), sc.axis(1)});
    sc.vectorize(sc.axis(1));
    PrimFunc f = lower(s, {mm.a, mm.b, bias, out}, "dense_bias_relu");
    const std::string text = to_string(f);
    EXPECT_TRUE(contains(text, "allocate C[f32 * " + std::to_string(std::min<int64_t>(m, 4) * std::min<int64_t>(n, 8)) + "] stack"))
        << text;
    ir::NDArray av = random_array(DType::kF32, {m, k}, 21), bv = random_array(DType::kF32, {k, n}, 22);
    ir::NDArray biasv = random_array(DType::kF32, {n}, 23), ov = ir::NDArray::empty(DType::kF32, {m, n});
    interpret(f, {av, bv, biasv, ov});
    EXPECT_TRUE(all_close(
        ov,
        [&](int64_t e) {
          double acc = 0;
          for (int64_t r = 0; r < k; ++r) acc += av.get_as_double((e / n) * k + r) * bv.get_as_double(r * n + e % n);
          return std::max(acc + biasv.get_as_double(e % n), 0.0);
        },
        1e-5))
        << f;
  }
}

}  // namespace
}  // namespace kiln::tir

namespace kiln::tir {
namespace {

TEST(LowerTest, ReductionToAScalarOverTwoAxes) {
  Tensor a = placeholder({7, 13}, DType::kF32, "A");
  IterVar r0 = reduce_axis(7, "r0"), r1 = reduce_axis(13, "r1");
  Tensor total = compute({}, [&](const std::vector<Var>&) { return sum(a(r0, r1), {r0, r1}); }, "Total");
  Schedule s({total});
  s[total].split(s[total].reduce_axis(1), 4);
  PrimFunc f = lower(s, {a, total}, "total");
  ir::NDArray av = random_array(DType::kF32, {7, 13}, 31), tv = ir::NDArray::empty(DType::kF32, {});
  interpret(f, {av, tv});
  double ref = 0;
  for (int64_t i = 0; i < av.numel(); ++i) ref += av.get_as_double(i);
  EXPECT_TRUE(all_close(tv, [&](int64_t) { return ref; }, 1e-5)) << f;
  EXPECT_TRUE(contains(to_string(f), "Total[0] = 0.0f")) << f;
}

TEST(LowerTest, IntegerComputesWrapAndCast) {
  Tensor a = placeholder({10}, DType::kU8, "A");
  IterVar r = reduce_axis(10, "r");
  Tensor widened = compute({10}, [&](const std::vector<Var>& i) { return cast(Type(DType::kI32), a(i[0])) * 300; }, "W");
  Tensor s32 = compute({1}, [&](const std::vector<Var>&) { return sum(widened(r), {r}); }, "S");
  Schedule s({s32});
  s[widened].compute_inline();
  PrimFunc f = lower(s, {a, s32}, "isum");
  ir::NDArray av = ir::NDArray::empty(DType::kU8, {10}), sv = ir::NDArray::empty(DType::kI32, {1});
  for (int i = 0; i < 10; ++i) av.set_from_double(i, 250 + i % 6);
  interpret(f, {av, sv});
  int64_t ref = 0;
  for (int i = 0; i < 10; ++i) ref += (250 + i % 6) * 300;
  EXPECT_EQ(sv.data<int32_t>()[0], ref) << f;
  EXPECT_TRUE(contains(to_string(f), "i32(A[r]) * (i32)300")) << f;
}

}  // namespace
}  // namespace kiln::tir
