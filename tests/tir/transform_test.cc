// The loop passes on hand-built IR: vectorize (and its serial fallback), unroll, partition_tails.
#include <gtest/gtest.h>

#include "kiln/tir/interpreter.h"
#include "kiln/tir/printer.h"
#include "kiln/tir/simplify.h"
#include "kiln/tir/transform.h"

namespace kiln::tir {
namespace {

TEST(TransformTest, VectorizeWidensLoadsStoresAndBroadcastsScalars) {
  Buffer a = Buffer::make("A", DType::kF32, {16}), c = Buffer::make("C", DType::kF32, {16});
  Var i("i"), x("x", Type(DType::kF32));
  Stmt s = For::make(i, make_int(8), make_int(8), ForKind::kVectorized,
                     LetStmt::make(x, Load::make(a, i) * 2.0f, Store::make(c, sqrt(x) + 1.0f, i)));
  EXPECT_EQ(to_string(vectorize_loops(s)),
            "let x = A[ramp(8, 1, 8)] * x8(2.0f)\nC[ramp(8, 1, 8)] = sqrt(x) + x8(1.0f)\n");
}

TEST(TransformTest, VectorizeKeepsALoopSerialWhenAConditionDependsOnIt) {
  Buffer c = Buffer::make("C", DType::kI64, {8});
  Var i("i");
  Stmt s = For::make(i, make_int(0), make_int(8), ForKind::kVectorized,
                     IfThenElse::make(floormod(i, 2) == 0, Store::make(c, i, i)));
  EXPECT_EQ(to_string(vectorize_loops(s)), "for (i, 0, 8) {\n  if (floormod(i, 2) == 0) {\n    C[i] = i\n  }\n}\n");
  // A store of a vector value to a scalar index cannot be widened either.
  Stmt red = For::make(i, make_int(0), make_int(8), ForKind::kVectorized,
                       Store::make(c, Load::make(c, make_int(0)) + i, make_int(0)));
  EXPECT_EQ(vectorize_loops(red).as<For>()->kind, ForKind::kSerial);
}

TEST(TransformTest, UnrollCopiesAndLongLoopsStaySerial) {
  Buffer c = Buffer::make("C", DType::kI64, {100});
  Var i("i");
  Stmt s = For::make(i, make_int(1), make_int(3), ForKind::kUnrolled, Store::make(c, i * 2, i));
  EXPECT_EQ(to_string(unroll_loops(s)), "C[1] = 2\nC[2] = 4\nC[3] = 6\n");
  Stmt big = For::make(i, make_int(0), make_int(100), ForKind::kUnrolled, Store::make(c, i, i));
  EXPECT_EQ(unroll_loops(big, 64).as<For>()->kind, ForKind::kSerial);
}

TEST(TransformTest, PartitionTailsSplitsAtTheLastProvablyGuardFreeIteration) {
  Buffer c = Buffer::make("C", DType::kI64, {30});
  Var o("o"), i("i");
  Stmt s = For::make(o, make_int(0), make_int(4), ForKind::kSerial,
                     For::make(i, make_int(0), make_int(8), ForKind::kSerial,
                               IfThenElse::make(o * 8 + i < 30, Store::make(c, i, o * 8 + i))));
  Stmt p = partition_tails(simplify(s));
  EXPECT_EQ(to_string(p),
            "for (o, 0, 3) {\n  for (i, 0, 8) {\n    C[o * 8 + i] = i\n  }\n}\n"
            "for (i, 0, 6) {\n  C[i + 24] = i\n}\n");
  ir::NDArray before = ir::NDArray::empty(DType::kI64, {30}), after = ir::NDArray::empty(DType::kI64, {30});
  interpret(PrimFunc::make("before", {c}, s), {before});
  interpret(PrimFunc::make("after", {c}, p), {after});
  EXPECT_TRUE(before.bitwise_equal(after));
  // A parallel loop is not partitioned.
  Stmt par = For::make(o, make_int(0), make_int(4), ForKind::kParallel, s.as<For>()->body);
  EXPECT_TRUE(partition_tails(par).same_as(par));
}

}  // namespace
}  // namespace kiln::tir

#include "kiln/support/error.h"
#include "kiln/tir/tensor.h"
#include "kiln/tir/verify.h"

namespace kiln::tir {
namespace {

template <typename Fn>
void expect_internal_error(Fn fn, const std::string& piece) {
  try {
    fn();
    ADD_FAILURE() << "no error; expected one mentioning '" << piece << "'";
  } catch (const InternalError& e) {
    EXPECT_NE(std::string(e.what()).find(piece), std::string::npos) << e.what();
  }
}

TEST(VerifyTest, RejectsContractViolations) {
  Buffer p = Buffer::make("P", DType::kI64, {8});
  Buffer stray = Buffer::make("Stray", DType::kI64, {8});
  Var i("i"), free_var("free");
  auto loop = [&](Stmt body) { return For::make(i, make_int(0), make_int(8), ForKind::kSerial, body); };
  EXPECT_NO_THROW(verify(PrimFunc::make("ok", {p}, loop(Store::make(p, i, i)))));
  EXPECT_NO_THROW(verify(PrimFunc::make("alloc", {p}, Allocate::make(stray, MemoryScope::kStack, 64,
                                                                   loop(Store::make(stray, i, i))))));
  expect_internal_error([&] { verify(PrimFunc::make("k", {p}, loop(Store::make(stray, i, i)))); },
                        "buffer 'Stray' is neither a parameter nor allocated");
  expect_internal_error([&] { verify(PrimFunc::make("k", {p}, loop(Store::make(p, free_var, i)))); },
                        "variable 'free' used outside its binding");
  expect_internal_error([&] { verify(PrimFunc::make("k", {p}, loop(loop(Store::make(p, i, i))))); },
                        "variable 'i' bound again");
  Var j("j");
  Stmt nested = For::make(j, make_int(0), make_int(2), ForKind::kParallel,
                          For::make(i, make_int(0), make_int(8), ForKind::kParallel, Store::make(p, i, i)));
  expect_internal_error([&] { verify(PrimFunc::make("k", {p}, nested)); }, "nested in another parallel loop");
  Tensor t = placeholder({8}, DType::kI64, "T");
  expect_internal_error([&] { verify(PrimFunc::make("k", {p}, loop(Store::make(p, t(i), i)))); },
                        "TE-level node TensorLoad");
}

}  // namespace
}  // namespace kiln::tir

namespace kiln::tir {
namespace {

// A vectorized loop whose body is a bounds guard affine in its variable (the partial last panel
// of a split inside a parallel loop, which partition_tails leaves alone) is versioned: full
// vectors where the guard holds at both ends, the guarded serial loop elsewhere.
TEST(TransformTest, VectorizeVersionsAnAffineTailGuard) {
  Buffer c = Buffer::make("C", DType::kI64, {30});
  Var o("o"), i("i");
  Stmt s = For::make(o, make_int(0), make_int(4), ForKind::kParallel,
                     For::make(i, make_int(0), make_int(8), ForKind::kVectorized,
                               IfThenElse::make(o * 8 + i < 30, Store::make(c, i * 3, o * 8 + i))));
  Stmt v = vectorize_loops(simplify(s));
  const std::string text = to_string(v);
  EXPECT_NE(text.find("C[ramp(o * 8, 1, 8)]"), std::string::npos) << text;
  EXPECT_NE(text.find("else"), std::string::npos) << text;
  ir::NDArray before = ir::NDArray::empty(DType::kI64, {30}), after = ir::NDArray::empty(DType::kI64, {30});
  interpret(PrimFunc::make("before", {c}, simplify(s)), {before});
  interpret(PrimFunc::make("after", {c}, v), {after});
  EXPECT_TRUE(before.bitwise_equal(after));
  // A guard that is not an interval of i (every other lane) keeps the loop serial.
  Stmt odd = For::make(i, make_int(0), make_int(8), ForKind::kVectorized,
                       IfThenElse::make(floormod(i, 2) == 0, Store::make(c, i, i)));
  EXPECT_EQ(vectorize_loops(odd).as<For>()->kind, ForKind::kSerial);
}

}  // namespace
}  // namespace kiln::tir
