// Operator patterns the operator library needs, written as tensor expressions and scheduled:
// softmax (three reductions/elementwise stages attached per row) and strided, padded max pooling.
#include <gtest/gtest.h>

#include <cmath>

#include "kiln/tir/interpreter.h"
#include "kiln/tir/lower.h"
#include "kiln/tir/printer.h"
#include "tir_test_util.h"

namespace kiln::tir {
namespace {

using testing::all_close;
using testing::random_array;

TEST(PatternsTest, SoftmaxWithStagesAttachedPerRow) {
  const int64_t rows = 5, cols = 13;
  Tensor x = placeholder({rows, cols}, DType::kF32, "X");
  IterVar k1 = reduce_axis(cols, "k1"), k2 = reduce_axis(cols, "k2");
  Tensor mx = compute({rows}, [&](const std::vector<Var>& i) { return max_reduce(x(i[0], k1), {k1}); }, "Max", {"i"});
  Tensor e = compute({rows, cols}, [&](const std::vector<Var>& i) { return exp(x(i[0], i[1]) - mx(i[0])); }, "E",
                     {"i", "j"});
  Tensor sm = compute({rows}, [&](const std::vector<Var>& i) { return sum(e(i[0], k2), {k2}); }, "Sum", {"i"});
  Tensor out = compute({rows, cols}, [&](const std::vector<Var>& i) { return e(i[0], i[1]) / sm(i[0]); }, "Out",
                       {"i", "j"});
  Schedule s({out});
  Stage so = s[out];
  so.parallel(so.axis(0));
  auto [jo, ji] = so.split(so.axis(1), 8);
  so.vectorize(ji);
  s[mx].compute_at(so, so.axis(0));
  s[e].compute_at(so, so.axis(0));
  s[sm].compute_at(so, so.axis(0));
  PrimFunc f = lower(s, {x, out}, "softmax");
  const std::string text = to_string(f);
  EXPECT_TRUE(text.find("allocate E[f32 * 13] stack") != std::string::npos) << text;    // one row
  EXPECT_TRUE(text.find("allocate Max[f32 * 1] stack") != std::string::npos) << text;
  ir::NDArray xv = random_array(DType::kF32, {rows, cols}, 41), ov = ir::NDArray::empty(DType::kF32, {rows, cols});
  interpret(f, {xv, ov});
  EXPECT_TRUE(all_close(
      ov,
      [&](int64_t idx) {
        const int64_t r = idx / cols;
        double m = -INFINITY, total = 0;
        for (int64_t c = 0; c < cols; ++c) m = std::max(m, xv.get_as_double(r * cols + c));
        for (int64_t c = 0; c < cols; ++c) total += std::exp(xv.get_as_double(r * cols + c) - m);
        return std::exp(xv.get_as_double(idx) - m) / total;
      },
      1e-5))
      << f;
}

TEST(PatternsTest, MaxPoolStride2WithPadding) {
  const int64_t h = 9, w = 7, k = 3, stride = 2, pad = 1;
  const int64_t oh = (h + 2 * pad - k) / stride + 1, ow = (w + 2 * pad - k) / stride + 1;
  Tensor x = placeholder({h, w}, DType::kF32, "X");
  IterVar ry = reduce_axis(k, "ry"), rx = reduce_axis(k, "rx");
  Tensor out = compute({oh, ow},
                       [&](const std::vector<Var>& i) {
                         return max_reduce(read_or(x, {i[0] * stride + ry - pad, i[1] * stride + rx - pad},
                                                   -INFINITY * 1.0f),
                                           {ry, rx});
                       },
                       "Pool", {"y", "x"});
  Schedule s({out});
  s[out].reorder({s[out].axis(0), s[out].reduce_axis(0), s[out].reduce_axis(1), s[out].axis(1)});
  PrimFunc f = lower(s, {x, out}, "maxpool");
  ir::NDArray xv = random_array(DType::kF32, {h, w}, 42), ov = ir::NDArray::empty(DType::kF32, {oh, ow});
  interpret(f, {xv, ov});
  EXPECT_TRUE(all_close(
      ov,
      [&](int64_t idx) {
        const int64_t y = idx / ow, xx = idx % ow;
        double m = -INFINITY;
        for (int64_t a = 0; a < k; ++a)
          for (int64_t b = 0; b < k; ++b) {
            const int64_t sy = y * stride + a - pad, sx = xx * stride + b - pad;
            if (sy >= 0 && sy < h && sx >= 0 && sx < w) m = std::max(m, xv.get_as_double(sy * w + sx));
          }
        return m;
      },
      0))
      << f;
}

}  // namespace
}  // namespace kiln::tir

namespace kiln::tir {
namespace {

TEST(PatternsTest, TileIsSplitSplitReorder) {
  Tensor a = placeholder({10, 12}, DType::kF32, "A");
  Tensor b = compute({10, 12}, [&](const std::vector<Var>& i) { return a(i[0], i[1]) + 1.0f; }, "B", {"y", "x"});
  Schedule s({b});
  std::vector<IterVar> t = s[b].tile(s[b].axis(0), s[b].axis(1), 4, 4);
  ASSERT_EQ(t.size(), 4u);
  EXPECT_EQ(s.to_string(),
            "split(B, y, factor=4) -> y.outer, y.inner\n"
            "split(B, x, factor=4) -> x.outer, x.inner\n"
            "reorder(B, y.outer, x.outer, y.inner, x.inner)\n");
  PrimFunc f = lower(s, {a, b}, "tiled");
  ir::NDArray av = random_array(DType::kF32, {10, 12}, 43), bv = ir::NDArray::empty(DType::kF32, {10, 12});
  interpret(f, {av, bv});
  EXPECT_TRUE(all_close(bv, [&](int64_t i) { return av.get_as_double(i) + 1.0; }, 1e-6)) << f;
}

TEST(PatternsTest, HalfPrecisionRoundsAfterEachOperation) {
  for (DType dt : {DType::kF16, DType::kBF16}) {
    Tensor a = placeholder({64}, dt, "A");
    Tensor b = placeholder({64}, dt, "B");
    Tensor c = compute({64}, [&](const std::vector<Var>& i) { return a(i[0]) * b(i[0]) + a(i[0]); }, "C");
    Schedule s({c});
    auto [o, i] = s[c].split(s[c].axis(0), 16);
    s[c].vectorize(i);
    PrimFunc f = lower(s, {a, b, c}, "half");
    ir::NDArray av = random_array(dt, {64}, 44), bv = random_array(dt, {64}, 45), cv = ir::NDArray::empty(dt, {64});
    interpret(f, {av, bv, cv});
    auto round_to = [&](double v) {
      ir::NDArray t = ir::NDArray::scalar(dt, v);
      return t.get_as_double(0);
    };
    EXPECT_TRUE(all_close(
        cv, [&](int64_t k) { return round_to(round_to(av.get_as_double(k) * bv.get_as_double(k)) + av.get_as_double(k)); },
        0))
        << f;
  }
}

}  // namespace
}  // namespace kiln::tir
