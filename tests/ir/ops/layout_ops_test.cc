// layout_transform, conv2d_nchwc and the blocked pools: hand-computed blocking, round trips
// through several blocks, conv2d_nchwc against conv2d and max/avg_pool2d_nchwc against the plain
// pools (numpy cases live in op_cases.py), and every user-facing error.
#include <gtest/gtest.h>

#include <random>

#include "ir/ops/op_test_util.h"
#include "kiln/ref/executor.h"

namespace kiln::ir::testing {
namespace {

using K = UserErrorKind;

Attrs layouts(const std::string& src, const std::string& dst) {
  return Attrs().set("src_layout", src).set("dst_layout", dst);
}

NDArray iota(Shape shape) {
  NDArray a = NDArray::empty(DType::kF32, std::move(shape));
  for (int64_t i = 0; i < a.numel(); ++i) a.set_from_double(i, static_cast<double>(i));
  return a;
}

TEST(LayoutTransform, HandComputedNCHW2c) {
  // x[0, c, 0, w] = 2c + w; blocked [1, 2, 1, 2, 2]: out[0, co, 0, w, ci] = x[0, 2co + ci, 0, w].
  NDArray y = run1("layout_transform", {iota({1, 4, 1, 2})}, layouts("NCHW", "NCHW2c"));
  EXPECT_TRUE(all_close(y, f32({1, 2, 1, 2, 2}, {0, 2, 1, 3, 4, 6, 5, 7}), 0, 0));
}

TEST(LayoutTransform, RoundTripsThroughBlocks) {
  NDArray x = iota({2, 24, 3, 5});
  NDArray a = run1("layout_transform", {x}, layouts("NCHW", "NCHW4c"));
  NDArray b = run1("layout_transform", {a}, layouts("NCHW4c", "NCHW8c"));
  NDArray c = run1("layout_transform", {b}, layouts("NCHW8c", "NCHW"));
  EXPECT_EQ(b.shape(), (Shape{2, 3, 3, 5, 8}));
  EXPECT_TRUE(c.bitwise_equal(x));
  // Integer dtypes move as bytes.
  NDArray xi = make(DType::kI64, {1, 2, 1, 1}, {7, -9});
  EXPECT_TRUE(run1("layout_transform", {xi}, layouts("NCHW", "NCHW2c")).bitwise_equal(xi.reshaped({1, 1, 1, 1, 2})));
}

TEST(LayoutTransform, WeightLayout) {
  EXPECT_EQ(infer("layout_transform", {{DType::kF32, {16, 8, 3, 3}}}, layouts("OIHW", "OIHW4i8o"))[0].shape,
            (Shape{2, 2, 3, 3, 4, 8}));
}

TEST(LayoutTransform, Errors) {
  const TensorType x{DType::kF32, {1, 6, 2, 2}};
  auto expect = [&](const TensorType& t, const std::string& src, const std::string& dst, const std::string& needle) {
    EXPECT_TRUE(throws_user_error([&] { infer("layout_transform", {t}, layouts(src, dst)); }, K::kInvalidArgument, needle));
  };
  expect(x, "NCHW", "NCHW4c", "does not divide axis 'C' of size 6");
  expect(x, "NCHW", "NCHWc", "needs its size before it");
  expect(x, "NCHW", "NCHW0c", "has size 0");
  expect(x, "NCHW", "NCHWC", "appears twice");
  expect(x, "NCHW", "NCH", "lacks axis 'W'");
  expect(x, "NCHW", "NCHWD", "is not in \"NCHW\"");
  expect(x, "NCHW", "NCHW8", "ends with a number");
  expect(x, "NCHW", "NC-HW", "is not a letter");
  expect(x, "NCHW", "NHW8c", "without its primal axis 'C'");
  expect(x, "NCHW", "", "empty");
  expect(x, "NCHW8c", "NCHW", "does not have the rank");
  expect({DType::kF32, {1, 1, 2, 2, 4}}, "NCHW8c", "NCHW", "must be 8");
}

TEST(Conv2dNCHWc, MatchesConv2d) {
  std::mt19937 rng(3);
  std::uniform_real_distribution<double> dist(-1, 1);
  auto rand = [&](Shape s) {
    NDArray a = NDArray::empty(DType::kF32, std::move(s));
    for (int64_t i = 0; i < a.numel(); ++i) a.set_from_double(i, dist(rng));
    return a;
  };
  NDArray x = rand({1, 8, 7, 6}), w = rand({12, 8, 3, 3}), b = rand({12});
  const Attrs attrs = Attrs().set("pads", std::vector<int64_t>{1, 0, 1, 2}).set("strides", std::vector<int64_t>{2, 1});
  NDArray expected = run1("conv2d", {x, w, b}, attrs);
  NDArray xb = run1("layout_transform", {x}, layouts("NCHW", "NCHW4c"));
  NDArray wb = run1("layout_transform", {w}, layouts("OIHW", "OIHW4i6o"));
  NDArray y = run1("conv2d_nchwc", {xb, wb, b}, attrs);
  EXPECT_EQ(y.shape(), (Shape{1, 2, 4, 6, 6}));  // OW = 6 + 0 + 2 - 3 + 1
  EXPECT_TRUE(run1("layout_transform", {y}, layouts("NCHW6c", "NCHW")).bitwise_equal(expected));
}

TEST(Conv2dNCHWc, Errors) {
  const TensorType x{DType::kF32, {1, 2, 5, 5, 4}};
  EXPECT_TRUE(throws_user_error([&] { infer("conv2d_nchwc", {{DType::kF32, {1, 8, 5, 5}}, {DType::kF32, {1, 2, 3, 3, 4, 8}}}, {}); },
                                K::kInvalidArgument, "x"));
  EXPECT_TRUE(throws_user_error([&] { infer("conv2d_nchwc", {x, {DType::kF32, {8, 8, 3, 3}}}, {}); },
                                K::kInvalidArgument, "w"));
  // 8 input channels, but the weights' I is 2 * 2 = 4 with groups 1.
  EXPECT_TRUE(throws_user_error([&] { infer("conv2d_nchwc", {x, {DType::kF32, {1, 2, 3, 3, 2, 8}}}, {}); },
                                K::kInvalidArgument, "dimension 1 must be C/groups"));
  EXPECT_TRUE(throws_user_error([&] { infer("conv2d_nchwc", {{DType::kI32, {1, 2, 5, 5, 4}}, {DType::kI32, {1, 2, 3, 3, 4, 8}}}, {}); },
                                K::kUnsupported, "conv2d"));
}

TEST(PoolNCHWc, AgreesWithThePlainPoolBitForBit) {
  NDArray x = iota({2, 12, 7, 9});
  for (int64_t i = 0; i < x.numel(); ++i) x.set_from_double(i, std::sin(static_cast<double>(i)));
  const Attrs attrs = Attrs()
                          .set("kernel", std::vector<int64_t>{3, 2})
                          .set("strides", std::vector<int64_t>{2, 2})
                          .set("pads", std::vector<int64_t>{1, 0, 1, 1})
                          .set("ceil_mode", int64_t{1});
  const NDArray xb = run1("layout_transform", {x}, layouts("NCHW", "NCHW6c"));
  for (const std::string op : {"max_pool2d", "avg_pool2d"}) {
    const NDArray expected = run1(op, {x}, attrs);
    const NDArray y = run1(op + "_nchwc", {xb}, attrs);
    EXPECT_EQ(y.shape(), (Shape{2, 2, expected.shape()[2], expected.shape()[3], 6})) << op;
    EXPECT_TRUE(run1("layout_transform", {y}, layouts("NCHW6c", "NCHW")).bitwise_equal(expected)) << op;
  }
}

TEST(PoolNCHWc, Errors) {
  const Attrs k = Attrs().set("kernel", std::vector<int64_t>{2, 2});
  EXPECT_TRUE(throws_user_error([&] { infer("max_pool2d_nchwc", {{DType::kF32, {1, 8, 5, 5}}}, k); },
                                K::kInvalidArgument, "x"));
  // The plain op's checks apply: pads not smaller than the kernel.
  EXPECT_TRUE(throws_user_error(
      [&] { infer("avg_pool2d_nchwc", {{DType::kF32, {1, 2, 5, 5, 4}}}, Attrs(k).set("pads", std::vector<int64_t>{2, 0, 0, 0})); },
      K::kInvalidArgument, "pads"));
  EXPECT_TRUE(throws_user_error([&] { infer("avg_pool2d_nchwc", {{DType::kI32, {1, 2, 5, 5, 4}}}, k); },
                                K::kUnsupported, "avg_pool2d"));
}

}  // namespace
}  // namespace kiln::ir::testing
