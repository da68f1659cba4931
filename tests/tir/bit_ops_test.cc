// The integer bit CallOps (bit_and/or/xor/not, shift_left/right) and the prod reduction through
// lowering and the reference interpreter, scalar and vectorized, against hand-computed values:
// shifts by amounts outside [0, bits) give 0 (-1 for a negative value shifted right), unsigned
// right shifts are logical, signed ones arithmetic. (The compiled forms are tested against the
// operators' references in tests/topi/math_ops_test.cc.)
#include <gtest/gtest.h>

#include <functional>

#include "kiln/support/error.h"
#include "kiln/tir/interpreter.h"
#include "kiln/tir/lower.h"
#include "tir_test_util.h"

namespace kiln::tir {
namespace {

using ir::DType;

template <typename T>
ir::NDArray array_of(DType dt, const std::vector<T>& v) {
  ir::NDArray a = ir::NDArray::empty(dt, {static_cast<int64_t>(v.size())});
  auto p = a.mutable_data<T>();
  for (size_t i = 0; i < v.size(); ++i) p[i] = v[i];
  return a;
}

// out[i] = f(a[i], b[i]) lowered (vectorized by `vector` when > 1) and interpreted.
template <typename T>
std::vector<T> run_binary(DType dt, const std::vector<T>& a, const std::vector<T>& b,
                          const std::function<Expr(Expr, Expr)>& f, int vector) {
  const int64_t n = static_cast<int64_t>(a.size());
  Tensor ta = placeholder({n}, dt, "A"), tb = placeholder({n}, dt, "B");
  Tensor tc = compute({n}, [&](const std::vector<Var>& i) { return f(ta(i[0]), tb(i[0])); }, "C");
  Schedule s({tc});
  if (vector > 1) {
    Stage st = s[tc];
    const IterVar axis = st.leaf_axes()[0];
    auto [o, in] = st.split(axis, vector);
    st.vectorize(in);
  }
  PrimFunc fn = lower(s, {ta, tb, tc}, "bits");
  ir::NDArray out = ir::NDArray::empty(dt, {n});
  interpret(fn, {array_of(dt, a), array_of(dt, b), out});
  auto p = out.data<T>();
  return std::vector<T>(p.begin(), p.end());
}

TEST(TirBitOps, AndOrXorNot) {
  const std::vector<int32_t> a = {12, -1, 0x0F0F, -8}, b = {10, 5, 0x00FF, 3};
  for (int vector : {1, 4}) {
    EXPECT_EQ((run_binary<int32_t>(DType::kI32, a, b, bit_and, vector)), (std::vector<int32_t>{8, 5, 0x000F, 0}));
    EXPECT_EQ((run_binary<int32_t>(DType::kI32, a, b, bit_or, vector)), (std::vector<int32_t>{14, -1, 0x0FFF, -5}));
    EXPECT_EQ((run_binary<int32_t>(DType::kI32, a, b, bit_xor, vector)), (std::vector<int32_t>{6, -6, 0x0FF0, -5}));
    EXPECT_EQ((run_binary<int32_t>(DType::kI32, a, b, [](Expr x, Expr) { return bit_not(x); }, vector)),
              (std::vector<int32_t>{-13, 0, ~0x0F0F, 7}));
  }
}

TEST(TirBitOps, ShiftsAtAndPastTheWidth) {
  const std::vector<uint8_t> ua = {0x81, 0x81, 0x81, 0x81}, un = {1, 7, 8, 200};
  const std::vector<int32_t> sa = {-16, -16, 16, -1}, sn = {2, 40, 40, -3};
  for (int vector : {1, 4}) {
    EXPECT_EQ((run_binary<uint8_t>(DType::kU8, ua, un, shift_left, vector)), (std::vector<uint8_t>{0x02, 0x80, 0, 0}));
    EXPECT_EQ((run_binary<uint8_t>(DType::kU8, ua, un, shift_right, vector)), (std::vector<uint8_t>{0x40, 1, 0, 0}));
    EXPECT_EQ((run_binary<int32_t>(DType::kI32, sa, sn, shift_right, vector)), (std::vector<int32_t>{-4, -1, 0, -1}));
    EXPECT_EQ((run_binary<int32_t>(DType::kI32, sa, sn, shift_left, vector)), (std::vector<int32_t>{-64, 0, 0, 0}));
  }
}

TEST(TirBitOps, BitOpsNeedIntegers) {
  Expr f = make_const(Type(DType::kF32), 1.0);
  EXPECT_THROW(bit_and(f, f), kiln::InternalError);
}

TEST(TirReduce, ProdReduction) {
  Tensor a = placeholder({3, 4}, DType::kF32, "A");
  IterVar k = reduce_axis(4, "k");
  Tensor p = compute({3}, [&](const std::vector<Var>& i) { return prod_reduce(a(i[0], k.var()), {k}); }, "P");
  Schedule s({p});
  PrimFunc fn = lower(s, {a, p}, "prod");
  ir::NDArray av = array_of<float>(DType::kF32, {1, 2, 3, 4, -1, 0.5f, 2, 2, 0, 5, 6, 7});
  av = av.reshaped({3, 4});
  ir::NDArray out = ir::NDArray::empty(DType::kF32, {3});
  interpret(fn, {av, out});
  EXPECT_EQ(out.data<float>()[0], 24.0f);
  EXPECT_EQ(out.data<float>()[1], -2.0f);
  EXPECT_EQ(out.data<float>()[2], 0.0f);
}

}  // namespace
}  // namespace kiln::tir
