// Soundness of the simplifier: random integer expressions over loop variables with known ranges
// are stored by a loop nest; the nest is interpreted before and after simplification and the
// results must be identical element by element.
#include <gtest/gtest.h>

#include <random>

#include "kiln/tir/interpreter.h"
#include "kiln/tir/printer.h"
#include "kiln/tir/simplify.h"

namespace kiln::tir {
namespace {

class ExprGen {
 public:
  ExprGen(std::vector<Var> vars, uint32_t seed) : vars_(std::move(vars)), rng_(seed) {}

  Expr make(int depth) {
    if (depth == 0 || pick(4) == 0) return leaf();
    switch (pick(9)) {
      case 0: return make(depth - 1) + make(depth - 1);
      case 1: return make(depth - 1) - make(depth - 1);
      case 2: return make(depth - 1) * make_int(pick(7) - 3);
      case 3: return floordiv(make(depth - 1), make_int(divisor()));
      case 4: return floormod(make(depth - 1), make_int(divisor()));
      case 5: return min(make(depth - 1), make(depth - 1));
      case 6: return max(make(depth - 1), make(depth - 1));
      case 7: return select(cond(depth - 1), make(depth - 1), make(depth - 1));
      default: return make(depth - 1) * make(depth - 1);
    }
  }

 private:
  int pick(int n) { return static_cast<int>(rng_() % n); }
  int64_t divisor() {
    static const int64_t kDivisors[] = {1, 2, 3, 4, 7, 8, 16};
    return kDivisors[pick(7)];
  }
  Expr leaf() {
    if (pick(3) == 0) return make_int(pick(41) - 20);
    return vars_[pick(static_cast<int>(vars_.size()))];
  }
  Expr cond(int depth) {
    Expr a = make(depth), b = make(depth);
    switch (pick(6)) {
      case 0: return a < b;
      case 1: return a <= b;
      case 2: return a == b;
      case 3: return a != b;
      case 4: return a < b && b < make_int(5);
      default: return !(a > b) || a == make_int(0);
    }
  }

  std::vector<Var> vars_;
  std::mt19937 rng_;
};

TEST(SimplifyFuzzTest, SimplifiedNestsComputeTheSameValues) {
  Var i("i"), j("j"), k("k");
  const int64_t ni = 5, nj = 16, nk = 3;
  Buffer out = Buffer::make("Out", DType::kI64, {ni * nj * nk});
  ExprGen gen({i, j, k}, 2026);
  int changed = 0;
  for (int trial = 0; trial < 600; ++trial) {
    Expr e = gen.make(4);
    Expr index = (i * make_int(nj) + j) * make_int(nk) + k;
    // Loop k starts at -1 so that negative values meet floordiv/floormod.
    Stmt nest = For::make(i, make_int(0), make_int(ni), ForKind::kSerial,
                          For::make(j, make_int(0), make_int(nj), ForKind::kSerial,
                                    For::make(k, make_int(-1), make_int(nk), ForKind::kSerial,
                                              Store::make(out, e, index + make_int(1)))));
    Stmt simple = simplify(nest);
    changed += !simple.same_as(nest);
    ir::NDArray a = ir::NDArray::empty(DType::kI64, {ni * nj * nk}), b = ir::NDArray::empty(DType::kI64, {ni * nj * nk});
    interpret(PrimFunc::make("before", {out}, nest), {a});
    interpret(PrimFunc::make("after", {out}, simple), {b});
    auto av = a.data<int64_t>(), bv = b.data<int64_t>();
    for (int64_t x = 0; x < a.numel(); ++x) {
      ASSERT_EQ(av[x], bv[x]) << "trial " << trial << " element " << x << "\ninput: " << e << "\nsimplified:\n"
                              << simple;
    }
  }
  EXPECT_GT(changed, 300);  // the simplifier did rewrite most of them
}

}  // namespace
}  // namespace kiln::tir
