// Loop-IR nodes: validating factories, operators' type matching, printer, mutator identity.
#include <gtest/gtest.h>

#include "kiln/support/error.h"
#include "kiln/tir/ir_mutator.h"
#include "kiln/tir/ir_visitor.h"
#include "kiln/tir/printer.h"
#include "kiln/tir/tensor.h"

namespace kiln::tir {
namespace {

TEST(TirIRTest, OperatorsRetypeImmediatesAndPrintWithMinimalParens) {
  Var i("i"), j("j");
  EXPECT_EQ(to_string(i * 16 + j), "i * 16 + j");
  EXPECT_EQ(to_string((i + j) * 2), "(i + j) * 2");
  EXPECT_EQ(to_string(i - (j - 1)), "i - (j - 1)");
  EXPECT_EQ(to_string(floordiv(i, 4) + i % 4), "floordiv(i, 4) + floormod(i, 4)");
  Var x("x", Type(DType::kF32));
  Expr e = x * 2 + 1.5;
  EXPECT_EQ(e.type(), Type(DType::kF32));
  EXPECT_EQ(to_string(e), "x * 2.0f + 1.5f");
  EXPECT_EQ(to_string(x / 2.0f), "x / 2.0f");
  EXPECT_EQ(to_string(select(i < j && !(i == 0), exp(x), max(x, 0.0f))),
            "select(i < j && !(i == 0), exp(x), max(x, 0.0f))");
  EXPECT_EQ(to_string(cast(Type(DType::kI32), i)), "i32(i)");
}

TEST(TirIRTest, IntegerImmediatesWrapToTheirType) {
  int64_t v = 0;
  ASSERT_TRUE(as_const_int(IntImm::make(Type(DType::kI8), 200), &v));
  EXPECT_EQ(v, -56);
  ASSERT_TRUE(as_const_int(IntImm::make(Type(DType::kU8), -1), &v));
  EXPECT_EQ(v, 255);
}

TEST(TirIRTest, VectorsBroadcastScalarsInOperators) {
  Expr r = Ramp::make(make_int(0), make_int(1), 8);
  Expr e = r * 3;
  EXPECT_EQ(e.type(), Type(DType::kI64, 8));
  EXPECT_EQ(to_string(e), "ramp(0, 1, 8) * x8(3)");
  Buffer b = Buffer::make("B", DType::kF32, {64});
  Expr ld = Load::make(b, r);
  EXPECT_EQ(ld.type(), Type(DType::kF32, 8));
}

TEST(TirIRTest, MixedTypesAreAUserErrorNamingTheExpression) {
  Var i("i");
  Var x("x", Type(DType::kF32));
  try {
    (void)(i + x);
    FAIL() << "no error";
  } catch (const UserError& e) {
    EXPECT_NE(std::string(e.what()).find("mixes types i64 and f32"), std::string::npos) << e.what();
  }
  EXPECT_THROW((void)(i + 1.5f), UserError);  // a float constant where an integer is expected
}

TEST(TirIRTest, FactoriesRejectBrokenInvariants) {
  Var i("i");
  Var x("x", Type(DType::kF32));
  EXPECT_THROW(Div::make(i, i), InternalError);       // integer Div
  EXPECT_THROW(FloorDiv::make(x, x), InternalError);  // float floordiv
  EXPECT_THROW(Add::make(i, x), InternalError);
  EXPECT_THROW(Call::make(CallOp::kExp, {i}), InternalError);
  Buffer b = Buffer::make("B", DType::kF32, {4});
  EXPECT_THROW(Store::make(b, i, make_int(0)), InternalError);
  EXPECT_THROW(Allocate::make(b, MemoryScope::kStack, 3, make_nop()), InternalError);
}

TEST(TirIRTest, StatementsPrintAsAnIndentedLoopNest) {
  Buffer a = Buffer::make("A", DType::kF32, {4, 8});
  Buffer c = Buffer::make("C", DType::kF32, {4, 8});
  Var i("i"), j("j");
  Stmt s = For::make(i, make_int(0), make_int(4), ForKind::kParallel,
                     For::make(j, make_int(0), make_int(8), ForKind::kSerial,
                               Store::make(c, Load::make(a, i * 8 + j) * 2.0f, i * 8 + j)));
  PrimFunc f = PrimFunc::make("scale", {a, c}, s);
  EXPECT_EQ(to_string(f),
            "func scale(A: f32[4, 8], C: f32[4, 8]) {\n"
            "  parallel for (i, 0, 4) {\n"
            "    for (j, 0, 8) {\n"
            "      C[i * 8 + j] = A[i * 8 + j] * 2.0f\n"
            "    }\n"
            "  }\n"
            "}\n");
}

TEST(TirIRTest, BlockFlattensAndDropsNops) {
  Buffer c = Buffer::make("C", DType::kI64, {2});
  Stmt s0 = Store::make(c, make_int(1), make_int(0));
  Stmt s1 = Store::make(c, make_int(2), make_int(1));
  Stmt b = Block::make({Block::make({s0, make_nop()}), s1});
  ASSERT_NE(b.as<Block>(), nullptr);
  EXPECT_EQ(b.as<Block>()->stmts.size(), 2u);
  EXPECT_TRUE(Block::make({s0, make_nop()}).same_as(s0));
}

class RenameNothing : public IRMutator {};

class DoubleConstants : public IRMutator {
 protected:
  Expr visit(const IntImm* op) override { return make_int(op->value * 2, op->type); }
};

TEST(TirIRTest, MutatorPreservesIdentityWhenNothingChanges) {
  Buffer c = Buffer::make("C", DType::kI64, {16});
  Var i("i");
  Stmt s = For::make(i, make_int(0), make_int(16), ForKind::kSerial,
                     IfThenElse::make(i < 8, Store::make(c, i * 2, i), Store::make(c, i, i)));
  RenameNothing m;
  EXPECT_TRUE(m.mutate(s).same_as(s));
  DoubleConstants d;
  Stmt t = d.mutate(s);
  EXPECT_FALSE(t.same_as(s));
  EXPECT_EQ(to_string(t),
            "for (i, 0, 32) {\n  if (i < 16) {\n    C[i] = i * 4\n  }\n  else {\n    C[i] = i\n  }\n}\n");
}

TEST(TirIRTest, SubstituteAndStructuralEquality) {
  Var i("i"), j("j");
  Expr e = i * 4 + j;
  Expr f = substitute(e, {{i.node(), j + 1}});
  EXPECT_EQ(to_string(f), "(j + 1) * 4 + j");
  EXPECT_TRUE(equal(f, (j + 1) * 4 + j));
  EXPECT_FALSE(equal(f, (j + 1) * 4 + i));
  EXPECT_TRUE(substitute(e, {}).same_as(e));
}

TEST(TirIRTest, ComputeBuildsReductionsAndChecksIndexing) {
  Tensor a = placeholder({4, 6}, DType::kF32, "A");
  IterVar k = reduce_axis(6, "k");
  Tensor s = compute({4}, [&](const std::vector<Var>& i) { return sum(a(i[0], k) * 2.0f, {k}); }, "S", {"i"});
  EXPECT_EQ(to_string(s->body), "sum(A(i, k) * 2.0f, axis=[k])");
  EXPECT_EQ(s->reduce_axis().size(), 1u);
  ASSERT_EQ(s->inputs().size(), 1u);
  EXPECT_TRUE(s->inputs()[0] == a);
  EXPECT_THROW(a(1), UserError);
  EXPECT_THROW(placeholder({-1}, DType::kF32, "bad"), UserError);
  EXPECT_THROW(reduce_axis(0, "k0"), UserError);
  EXPECT_THROW(compute({4}, [&](const std::vector<Var>& i) { return sum(a(i[0], k), {k}) + 1.0f; }, "T"), UserError);
  Var d("d");
  IterVar dp = IterVar::make(d, Range::from_extent(3), IterKind::kDataPar);
  EXPECT_THROW(sum(a(0, 0), {dp}), UserError);
}

}  // namespace
}  // namespace kiln::tir
