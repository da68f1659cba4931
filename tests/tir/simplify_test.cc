// Table-driven simplifier tests: check(input, expected) compares printed forms, in the manner of
// Halide's test/correctness/simplify.cpp.
#include <gtest/gtest.h>

#include "kiln/tir/printer.h"
#include "kiln/tir/simplify.h"

namespace kiln::tir {
namespace {

class SimplifyTest : public ::testing::Test {
 protected:
  Var x{"x"}, y{"y"}, z{"z"}, i{"i"}, j{"j"}, k{"k"};
  Var f{"f", Type(DType::kF32)};
  VarBounds bounds;

  void check(const Expr& in, const Expr& expected) {
    Expr out = simplify(in, bounds);
    EXPECT_EQ(to_string(out), to_string(expected)) << "input: " << in;
  }
};

TEST_F(SimplifyTest, ConstantFoldingAndCanonicalOrder) {
  check(Expr(3) + 4, 7);
  check((x * 3) * 4, x * 12);
  check(x + 0, x);
  check(x * 1, x);
  check(x * 0, 0);
  check(x - x, 0);
  check(y + x, x + y);
  check((x + 3) + (y - 3), x + y);
  check((x + y) - (y - x), x * 2);
  check(2 * (x + 1) - 2, x * 2);
  check(x - (y + 5), x - y - 5);
  check(0 - x + y, y - x);
  check(floordiv(Expr(-7), 2), -4);
  check(floormod(Expr(-7), 2), 1);
  check(floormod(Expr(-1), 16), 15);
  check(min(Expr(3), 5), 3);
  check(max(x + 1, x + 3), x + 3);
  check(min(x + 1, x + 3), x + 1);
  check(min(x, y), min(x, y));
  check(Expr(2.0f) * 3.0f + 1.0f, 7.0f);
  check(f * 1.0f, f);
  check(cast(Type(DType::kF32), Expr(3)), 3.0f);
  check(cast(kIndexType, Expr(2.7f)), 2);
  check(exp(Expr(0.0f)), 1.0f);
}

TEST_F(SimplifyTest, DivisionAndModulusUseBounds) {
  bounds[i.node()] = Interval::range(0, 9);
  bounds[j.node()] = Interval::range(0, 15);
  // Blocked-layout index expressions fold.
  check(floordiv(i * 16 + j, 16), i);
  check(floormod(i * 16 + j, 16), j);
  check(floordiv(i * 16 + j + 32, 16), i + 2);
  check(floormod(i * 16 + j + 32, 16), j);
  check(floordiv(j, 16), 0);
  check(floormod(j, 16), j);
  check(floordiv(x * 8, 4), x * 2);
  check(floormod(x * 8, 4), 0);
  check(floormod(x * 5, 4), floormod(x, 4));
  check(floordiv(x * 5, 4), x + floordiv(x, 4));
  check(floordiv(floordiv(x, 4), 8), floordiv(x, 32));
  check(floormod(floormod(x, 32), 8), floormod(x, 8));
  check(floordiv(x, 1), x);
  check(floormod(x, 1), 0);
  // Not provable without bounds on x: stays.
  check(floordiv(x * 16 + j, 16), x);
  check(floordiv(x + j, 16), floordiv(j + x, 16));
  // Fuse's inverse: floordiv(f, n) * n + floormod(f, n) -> f.
  check(floordiv(x, 7) * 7 + floormod(x, 7), x);
  check(floordiv(x + 1, 7) * 14 + floormod(x + 1, 7) * 2, x * 2 + 2);
}

TEST_F(SimplifyTest, ComparisonsAreDecidedFromLoopBounds) {
  bounds[i.node()] = Interval::range(0, 1);  // outer of 16 split by 8
  bounds[j.node()] = Interval::range(0, 7);
  check(i * 8 + j < 16, make_bool(true));
  check(i * 8 + j < 13, i * 8 + j < 13);
  check(i * 8 + j >= 16, make_bool(false));
  check(i * 8 + j > 20, make_bool(false));
  check(j <= 7, make_bool(true));
  check(j == 8, make_bool(false));
  check(j != 8, make_bool(true));
  check(x + 1 > x, make_bool(true));
  check(x < x, make_bool(false));
  check(x + 2 < y + 5, x < y + 3);
  check(!(x < y), y <= x);
  check(x < y && make_bool(true), x < y);
  check(x < y || make_bool(true), make_bool(true));
  check(select(j < 8, x, y), x);
  check(select(x < y, z, z), z);
  check(min(j, 10), j);
  check(max(j, 10), 10);
  check(max(i * 8 + j, 0), i * 8 + j);
}

TEST_F(SimplifyTest, VectorIndicesStayRamps) {
  bounds[i.node()] = Interval::range(0, 9);
  Expr r = Ramp::make(make_int(0), make_int(1), 8);
  check(Broadcast::make(x * 16, 8) + r, Ramp::make(x * 16, make_int(1), 8));
  check(r * Broadcast::make(make_int(4), 8), Ramp::make(make_int(0), make_int(4), 8));
  check(Broadcast::make(x, 4) + Broadcast::make(y, 4), Broadcast::make(x + y, 4));
  // An 8-lane ramp inside one 16-block: floordiv is a broadcast, floormod a ramp.
  Expr idx = Ramp::make(i * 16 + 8, make_int(1), 8);
  check(floordiv(idx, Broadcast::make(make_int(16), 8)), Broadcast::make(i, 8));
  check(floormod(idx, Broadcast::make(make_int(16), 8)), Ramp::make(make_int(8), make_int(1), 8));
  // A ramp over a multiple of 8 stays inside one 16-block too (residue 0 or 8): re-blocking
  // NCHW16c to NCHW8c reads whole vectors, not gathers. Off by one lane it may straddle: kept.
  Expr half = Ramp::make(i * 8, make_int(1), 8);
  check(floordiv(half, Broadcast::make(make_int(16), 8)), Broadcast::make(floordiv(i * 8, make_int(16)), 8));
  check(floormod(half, Broadcast::make(make_int(16), 8)), Ramp::make(floormod(i * 8, make_int(16)), make_int(1), 8));
  Expr straddle = floordiv(Ramp::make(i * 8 + 1, make_int(1), 8), Broadcast::make(make_int(16), 8));
  EXPECT_EQ(simplify(straddle, bounds).as<Broadcast>(), nullptr);
}

TEST_F(SimplifyTest, StatementsDropDecidedGuardsAndTrivialLoops) {
  Buffer b = Buffer::make("B", DType::kI64, {16});
  Var io("io"), ii("ii");
  auto nest = [&](int64_t n) {
    return For::make(io, make_int(0), make_int(2), ForKind::kSerial,
                     For::make(ii, make_int(0), make_int(8), ForKind::kSerial,
                               IfThenElse::make(io * 8 + ii < make_int(n), Store::make(b, ii, io * 8 + ii))));
  };
  EXPECT_EQ(to_string(simplify(nest(16))), "for (io, 0, 2) {\n  for (ii, 0, 8) {\n    B[io * 8 + ii] = ii\n  }\n}\n");
  EXPECT_EQ(to_string(simplify(nest(13))),
            "for (io, 0, 2) {\n  for (ii, 0, 8) {\n    if (io * 8 + ii < 13) {\n      B[io * 8 + ii] = ii\n    }\n  }\n}\n");
  Stmt one = For::make(io, make_int(3), make_int(1), ForKind::kSerial, Store::make(b, io, io));
  EXPECT_EQ(to_string(simplify(one)), "B[3] = 3\n");
  Stmt none = For::make(io, make_int(0), make_int(0), ForKind::kSerial, Store::make(b, io, io));
  EXPECT_TRUE(is_nop(simplify(none)));
  Stmt let = LetStmt::make(x, make_int(4), Store::make(b, x * 2, x));
  EXPECT_EQ(to_string(simplify(let)), "B[4] = 8\n");
}

TEST_F(SimplifyTest, IntervalAnalysis) {
  bounds[i.node()] = Interval::range(0, 9);
  bounds[j.node()] = Interval::range(-3, 4);
  EXPECT_EQ(bound_of(i * 2 - j, bounds), Interval::range(-4, 21));
  EXPECT_EQ(bound_of(i * j, bounds), Interval::range(-27, 36));
  EXPECT_EQ(bound_of(floordiv(j, 2), bounds), Interval::range(-2, 2));
  EXPECT_EQ(bound_of(floormod(x, 8), bounds), Interval::range(0, 7));
  EXPECT_EQ(bound_of(min(i, j), bounds), Interval::range(-3, 4));
  EXPECT_FALSE(bound_of(x, bounds).has_lo());
  EXPECT_EQ(bound_of(cast(Type(DType::kU8), x), bounds), Interval::range(0, 255));
  EXPECT_TRUE(can_prove(i < 10, bounds));
  EXPECT_FALSE(can_prove(i < 9, bounds));
}

}  // namespace
}  // namespace kiln::tir

namespace kiln::tir {
namespace {

TEST(SimplifyIdentityTest, SimplifiedIrIsAFixedPoint) {
  Var i("i"), j("j");
  Buffer b = Buffer::make("B", DType::kI64, {64});
  Stmt s = For::make(i, make_int(0), make_int(4), ForKind::kSerial,
                     For::make(j, make_int(0), make_int(16), ForKind::kSerial,
                               IfThenElse::make(i * 16 + j < 60, Store::make(b, floordiv(i * 16 + j, 16) + floormod(j + 16, 16), j + i * 16))));
  Stmt once = simplify(s);
  EXPECT_FALSE(once.same_as(s));
  EXPECT_TRUE(simplify(once).same_as(once)) << once << "\nvs\n" << simplify(once);
  Expr e = i * 16 + j;
  EXPECT_TRUE(simplify(e).same_as(e));
}

}  // namespace
}  // namespace kiln::tir
