// Reference implementations against small hand-computed results, including the f16/bf16 paths
// (computed in f32 and rounded once), integer edge cases and the type inference of odd shapes.
#include <gtest/gtest.h>

#include <cmath>
#include <limits>

#include "op_test_util.h"

namespace kiln::ir {
namespace {

using testing::all_close;
using testing::f32;
using testing::infer;
using testing::make;
using testing::run1;
using Ints = std::vector<int64_t>;

TEST(OpReference, Conv2dByHand) {
  // x = [[1, 2, 3], [4, 5, 6], [7, 8, 9]], w = [[1, 0], [0, -1]], bias 10, stride 1, no padding:
  // y[i][j] = x[i][j] - x[i+1][j+1] + 10 = 6 everywhere.
  const NDArray x = f32({1, 1, 3, 3}, {1, 2, 3, 4, 5, 6, 7, 8, 9});
  const NDArray w = f32({1, 1, 2, 2}, {1, 0, 0, -1});
  EXPECT_TRUE(all_close(run1("conv2d", {x, w, f32({1}, {10})}), f32({1, 1, 2, 2}, {6, 6, 6, 6})));
  // Padding 1 on every side, stride 2: windows at (-1,-1), (-1,1), (1,-1), (1,1).
  // (-1,-1): 0 - x[0][0] = -1; (-1,1): 0 - x[0][2] = -3; (1,-1): 0 - x[2][0] = -7; (1,1): 5 - 9 = -4.
  const Attrs a = Attrs().set("pads", Ints{1, 1, 1, 1}).set("strides", Ints{2, 2});
  EXPECT_TRUE(all_close(run1("conv2d", {x, w}, a), f32({1, 1, 2, 2}, {-1, -3, -7, -4})));
  // The same in f16 and bf16: small integers are exact.
  for (DType d : {DType::kF16, DType::kBF16}) {
    const NDArray y = run1("conv2d", {make(d, {1, 1, 3, 3}, {1, 2, 3, 4, 5, 6, 7, 8, 9}), make(d, {1, 1, 2, 2}, {1, 0, 0, -1})}, a);
    EXPECT_TRUE(all_close(y, make(d, {1, 1, 2, 2}, {-1, -3, -7, -4}))) << dtype_name(d);
  }
}

TEST(OpReference, Conv2dOddShapeInference) {
  // 13x7 input, 3x2 kernel dilated (2, 3), stride (2, 1), pads (1, 0, 2, 1):
  // H: (13 + 3 - 5) / 2 + 1 = 6; W: (7 + 1 - 4) / 1 + 1 = 5.
  const auto t = infer("conv2d", {{DType::kF32, {2, 6, 13, 7}}, {DType::kF32, {4, 3, 3, 2}}},
                       Attrs().set("groups", int64_t{2}).set("strides", Ints{2, 1}).set("dilations", Ints{2, 3}).set(
                           "pads", Ints{1, 0, 2, 1}));
  EXPECT_EQ(t.at(0).to_string(), "f32[2, 4, 6, 5]");
}

TEST(OpReference, PoolCeilModeDropsWindowInPadding) {
  // 6 wide, kernel 2, stride 2, pads 1/1, ceil: ceil((6 + 2 - 2) / 2) + 1 = 4; the last window
  // starts at 3 * 2 - 1 = 5, inside the input: kept.
  auto t = infer("max_pool2d", {{DType::kF32, {1, 1, 6, 6}}},
                 Attrs().set("kernel", Ints{2, 2}).set("strides", Ints{2, 2}).set("pads", Ints{1, 1, 1, 1}).set(
                     "ceil_mode", int64_t{1}));
  EXPECT_EQ(t.at(0).to_string(), "f32[1, 1, 4, 4]");
  // 2 wide, kernel 2, stride 3, end pad 1, ceil: ceil((2 + 1 - 2) / 3) + 1 = 2, but window 1 would
  // start at 3, past the input: dropped, 1 (as PyTorch).
  t = infer("max_pool2d", {{DType::kF32, {1, 1, 2, 2}}},
            Attrs().set("kernel", Ints{2, 2}).set("strides", Ints{3, 3}).set("pads", Ints{0, 0, 1, 1}).set(
                "ceil_mode", int64_t{1}));
  EXPECT_EQ(t.at(0).to_string(), "f32[1, 1, 1, 1]");
}

TEST(OpReference, AvgPoolDivisors) {
  // x 2x2 of ones, kernel 2, pads 1 everywhere, stride 2 -> 2x2 windows each covering one element.
  const NDArray x = f32({1, 1, 2, 2}, {1, 2, 3, 4});
  const Attrs a = Attrs().set("kernel", Ints{2, 2}).set("strides", Ints{2, 2}).set("pads", Ints{1, 1, 1, 1});
  EXPECT_TRUE(all_close(run1("avg_pool2d", {x}, a), f32({1, 1, 2, 2}, {1, 2, 3, 4})));
  EXPECT_TRUE(all_close(run1("avg_pool2d", {x}, Attrs(a).set("count_include_pad", int64_t{1})),
                        f32({1, 1, 2, 2}, {0.25, 0.5, 0.75, 1})));
}

TEST(OpReference, MaxPoolNanAndIntegers) {
  const double nan = std::numeric_limits<double>::quiet_NaN();
  const Attrs a = Attrs().set("kernel", Ints{1, 2}).set("strides", Ints{1, 2});
  EXPECT_TRUE(all_close(run1("max_pool2d", {f32({1, 1, 1, 4}, {nan, 1, 2, 3})}, a), f32({1, 1, 1, 2}, {nan, 3})));
  EXPECT_TRUE(all_close(run1("max_pool2d", {make(DType::kU8, {1, 1, 1, 4}, {200, 3, 0, 255})}, a),
                        make(DType::kU8, {1, 1, 1, 2}, {200, 255})));
}

TEST(OpReference, MatmulHalfTypes) {
  // [[1, 2], [3, 4]] @ [[5, 6], [7, 8]] = [[19, 22], [43, 50]].
  for (DType d : {DType::kF16, DType::kBF16, DType::kF64}) {
    const NDArray y = run1("matmul", {make(d, {2, 2}, {1, 2, 3, 4}), make(d, {2, 2}, {5, 6, 7, 8})});
    EXPECT_TRUE(all_close(y, make(d, {2, 2}, {19, 22, 43, 50}))) << dtype_name(d);
  }
  // i64 wraps like numpy: (2^62) * 4 = 0 mod 2^64.
  const NDArray big = run1("matmul", {make(DType::kI64, {1, 1}, {4611686018427387904.0}), make(DType::kI64, {1, 1}, {4})});
  EXPECT_EQ(big.data<int64_t>()[0], 0);
}

TEST(OpReference, GemmByHand) {
  // a^T with a = [[1, 2], [3, 4]] (2x2): a^T = [[1, 3], [2, 4]]; b = I; alpha 2, c = [10, 20], beta 0.5.
  const NDArray y = run1("gemm", {f32({2, 2}, {1, 2, 3, 4}), f32({2, 2}, {1, 0, 0, 1}), f32({2}, {10, 20})},
                         Attrs().set("trans_a", int64_t{1}).set("alpha", 2.0).set("beta", 0.5));
  EXPECT_TRUE(all_close(y, f32({2, 2}, {2 + 5, 6 + 10, 4 + 5, 8 + 10})));
}

TEST(OpReference, CastRoundingAndSaturation) {
  // f32 -> bf16: 1 + 2^-8 is a tie between 1 and 1 + 2^-7: rounds to even (1); 1 + 3 * 2^-9 rounds up.
  const NDArray b = run1("cast", {f32({2}, {1.00390625, 1.005859375})}, Attrs().set("dtype", DType::kBF16));
  EXPECT_TRUE(all_close(b, make(DType::kBF16, {2}, {1.0, 1.0078125}), 0, 0));
  const double inf = std::numeric_limits<double>::infinity(), nan = std::numeric_limits<double>::quiet_NaN();
  const NDArray i = run1("cast", {f32({4}, {3e9, -inf, nan, -2.9})}, Attrs().set("dtype", DType::kI32));
  EXPECT_TRUE(all_close(i, make(DType::kI32, {4}, {2147483647, -2147483648.0, 0, -2}), 0, 0));
  const NDArray u = run1("cast", {make(DType::kI32, {2}, {-1, 256})}, Attrs().set("dtype", DType::kU8));
  EXPECT_TRUE(all_close(u, make(DType::kU8, {2}, {255, 0}), 0, 0));
}

TEST(OpReference, UnaryOnHalfTypes) {
  const NDArray x = make(DType::kBF16, {3}, {-2, 0.5, 3});
  EXPECT_TRUE(all_close(run1("relu", {x}), make(DType::kBF16, {3}, {0, 0.5, 3}), 0, 0));
  EXPECT_TRUE(all_close(run1("neg", {x}), make(DType::kBF16, {3}, {2, -0.5, -3}), 0, 0));
  // clip on i64 with fractional bounds rounds them inward.
  EXPECT_TRUE(all_close(run1("clip", {make(DType::kI64, {3}, {-5, 0, 5})}, Attrs().set("min", -1.5).set("max", 2.5)),
                        make(DType::kI64, {3}, {-1, 0, 2}), 0, 0));
}

TEST(OpReference, BroadcastIterationOddShapes) {
  // a [7, 1] (values 0..6) + b [13] (values 0..12 * 100): out[i][j] = i + 100 j.
  std::vector<double> av, bv, want;
  for (int i = 0; i < 7; ++i) av.push_back(i);
  for (int j = 0; j < 13; ++j) bv.push_back(100 * j);
  for (int i = 0; i < 7; ++i) {
    for (int j = 0; j < 13; ++j) want.push_back(i + 100 * j);
  }
  EXPECT_TRUE(all_close(run1("add", {f32({7, 1}, av), f32({13}, bv)}), f32({7, 13}, want)));
  // Scalars broadcast against everything, including empty tensors.
  EXPECT_EQ(run1("mul", {f32({}, {2}), f32({0, 3}, {})}).type().to_string(), "f32[0, 3]");
  EXPECT_TRUE(all_close(run1("sub", {f32({}, {2}), f32({}, {5})}), f32({}, {-3})));
}

TEST(OpReference, PadFillValueIsConvertedSafely) {
  // 300 saturates to 127 in i8; nan becomes 0 (no undefined conversion).
  const NDArray x = make(DType::kI8, {1}, {5});
  EXPECT_TRUE(all_close(run1("pad", {x}, Attrs().set("pads", Ints{1, 0}).set("value", 300.0)),
                        make(DType::kI8, {2}, {127, 5}), 0, 0));
  EXPECT_TRUE(all_close(run1("pad", {x}, Attrs().set("pads", Ints{0, 1}).set("value", std::nan(""))),
                        make(DType::kI8, {2}, {5, 0}), 0, 0));
}

TEST(OpReference, NDArrayIntegerConversionSaturates) {
  NDArray a = NDArray::empty(DType::kI32, {4});
  a.set_from_double(0, 1e12);
  a.set_from_double(1, -1e12);
  a.set_from_double(2, std::nan(""));
  a.set_from_double(3, -7.9);
  EXPECT_TRUE(all_close(a, make(DType::kI32, {4}, {2147483647, -2147483648.0, 0, -7}), 0, 0));
}

TEST(OpReference, LayerNormByHand) {
  // Row [1, 2, 3]: mean 2, biased var 2/3; y = (x - 2) / sqrt(2/3) (epsilon 0).
  const double s = std::sqrt(2.0 / 3.0);
  const NDArray y = run1("layer_norm", {f32({1, 3}, {1, 2, 3}), f32({3}, {1, 1, 1})},
                         Attrs().set("axis", int64_t{1}).set("epsilon", 0.0));
  EXPECT_TRUE(all_close(y, f32({1, 3}, {-1 / s, 0, 1 / s})));
}

TEST(OpReference, SplitOutputsAndSliceOfEmpty) {
  const NDArray x = f32({5}, {0, 1, 2, 3, 4});
  const auto outs = testing::run("split", {x}, Attrs().set("axis", int64_t{0}).set("sizes", Ints{2, 3}));
  ASSERT_EQ(outs.size(), 2u);
  EXPECT_TRUE(all_close(outs[0], f32({2}, {0, 1})));
  EXPECT_TRUE(all_close(outs[1], f32({3}, {2, 3, 4})));
  const NDArray e = run1("strided_slice", {f32({0, 2}, {})},
                         Attrs().set("begins", Ints{0}).set("ends", Ints{5}).set("axes", Ints{0}).set("steps", Ints{-1}));
  EXPECT_EQ(e.type().to_string(), "f32[0, 2]");
}

}  // namespace
}  // namespace kiln::ir
