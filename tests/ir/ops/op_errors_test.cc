// Every user-facing error the operator definitions raise: each test builds input types or
// attributes that are wrong in one way and checks the UserError's kind and that its message names
// the offending input/attribute.
#include <gtest/gtest.h>

#include "op_test_util.h"

namespace kiln::ir {
namespace {

using testing::infer;
using testing::run;
using testing::throws_user_error;
using K = UserErrorKind;
using Ints = std::vector<int64_t>;

TensorType T(DType d, Shape s) { return {d, std::move(s)}; }
TensorType F32(Shape s) { return {DType::kF32, std::move(s)}; }

#define EXPECT_INFER_ERROR(op, inputs, attrs, kind, needle) \
  EXPECT_TRUE(throws_user_error([&] { infer(op, inputs, attrs); }, kind, needle))

TEST(OpErrors, UnaryDTypes) {
  EXPECT_INFER_ERROR("sigmoid", {T(DType::kI32, {3})}, {}, K::kUnsupported, "sigmoid input 0 (x)");
  EXPECT_INFER_ERROR("neg", {T(DType::kU8, {3})}, {}, K::kUnsupported, "element type u8");
  EXPECT_INFER_ERROR("relu", {T(DType::kBool, {3})}, {}, K::kUnsupported, "bool");
  EXPECT_INFER_ERROR("gelu", {F32({3})}, Attrs().set("approximate", std::string("fast")), K::kInvalidArgument,
                     "gelu attribute 'approximate'");
}

TEST(OpErrors, RegistryAttributeChecks) {
  // The registry's schema validation, reached through the ops' schemas.
  EXPECT_INFER_ERROR("relu", {F32({3})}, Attrs().set("alpha", 1.0), K::kInvalidArgument, "unknown attribute 'alpha'");
  EXPECT_INFER_ERROR("leaky_relu", {F32({3})}, Attrs().set("alpha", std::string("x")), K::kInvalidArgument, "alpha");
  EXPECT_INFER_ERROR("softmax", {F32({3})}, {}, K::kInvalidArgument, "required attribute 'axis'");
  EXPECT_TRUE(throws_user_error([] { OpRegistry::global().get("frobnicate"); }, K::kNotFound, "frobnicate"));
}

TEST(OpErrors, Binary) {
  EXPECT_INFER_ERROR("add", (std::vector<TensorType>{F32({2, 3}), T(DType::kF64, {3})}), {}, K::kInvalidArgument,
                     "add input 1 (b)");
  EXPECT_INFER_ERROR("mul", (std::vector<TensorType>{F32({2, 3}), F32({2})}), {}, K::kInvalidArgument,
                     "do not broadcast");
  EXPECT_INFER_ERROR("sub", (std::vector<TensorType>{T(DType::kBool, {2}), T(DType::kBool, {2})}), {},
                     K::kUnsupported, "bool");
  EXPECT_INFER_ERROR("equal", (std::vector<TensorType>{F32({2}), T(DType::kI32, {2})}), {}, K::kInvalidArgument,
                     "equal input 1 (b)");
  EXPECT_INFER_ERROR("where", (std::vector<TensorType>{F32({2}), F32({2}), F32({2})}), {}, K::kInvalidArgument,
                     "where input 0 (cond)");
  EXPECT_INFER_ERROR("where", (std::vector<TensorType>{T(DType::kBool, {2}), F32({2}), T(DType::kI32, {2})}), {},
                     K::kInvalidArgument, "where input 1 (y)");
  EXPECT_INFER_ERROR("where", (std::vector<TensorType>{T(DType::kBool, {4}), F32({2}), F32({2})}), {},
                     K::kInvalidArgument, "(cond) and 1 (x)");
  // Data-dependent errors of the reference.
  const NDArray a = testing::make(DType::kI32, {2}, {4, 5}), z = testing::make(DType::kI32, {2}, {1, 0});
  EXPECT_TRUE(throws_user_error([&] { run("div", {a, z}); }, K::kInvalidArgument, "integer division by zero"));
  const NDArray zero = testing::make(DType::kI32, {1}, {0}), neg = testing::make(DType::kI32, {1}, {-1});
  EXPECT_TRUE(throws_user_error([&] { run("pow", {zero, neg}); }, K::kInvalidArgument, "negative power"));
}

TEST(OpErrors, Conv2d) {
  const Attrs none;
  EXPECT_INFER_ERROR("conv2d", (std::vector<TensorType>{T(DType::kI32, {1, 3, 5, 5}), T(DType::kI32, {2, 3, 3, 3})}),
                     none, K::kUnsupported, "conv2d input 0 (x)");
  EXPECT_INFER_ERROR("conv2d", (std::vector<TensorType>{F32({3, 5, 5}), F32({2, 3, 3, 3})}), none, K::kInvalidArgument,
                     "expected rank 4 [N, C, H, W]");
  EXPECT_INFER_ERROR("conv2d", (std::vector<TensorType>{F32({1, 3, 5, 5}), F32({2, 3, 3})}), none, K::kInvalidArgument,
                     "conv2d input 1 (w)");
  EXPECT_INFER_ERROR("conv2d", (std::vector<TensorType>{F32({1, 3, 5, 5}), T(DType::kF64, {2, 3, 3, 3})}), none,
                     K::kInvalidArgument, "element type f64");
  const std::vector<TensorType> ok{F32({1, 4, 5, 5}), F32({2, 4, 3, 3})};
  EXPECT_INFER_ERROR("conv2d", ok, Attrs().set("strides", Ints{1}), K::kInvalidArgument, "'strides'");
  EXPECT_INFER_ERROR("conv2d", ok, Attrs().set("strides", Ints{1, 0}), K::kInvalidArgument, "below 1");
  EXPECT_INFER_ERROR("conv2d", ok, Attrs().set("dilations", Ints{0, 1}), K::kInvalidArgument, "'dilations'");
  EXPECT_INFER_ERROR("conv2d", ok, Attrs().set("pads", Ints{0, -1, 0, 0}), K::kInvalidArgument, "'pads'");
  EXPECT_INFER_ERROR("conv2d", ok, Attrs().set("groups", int64_t{0}), K::kInvalidArgument, "'groups'");
  EXPECT_INFER_ERROR("conv2d", ok, Attrs().set("groups", int64_t{3}), K::kInvalidArgument, "does not divide");
  EXPECT_INFER_ERROR("conv2d", ok, Attrs().set("groups", int64_t{2}), K::kInvalidArgument, "C/groups");
  EXPECT_INFER_ERROR("conv2d", (std::vector<TensorType>{F32({1, 4, 5, 5}), F32({2, 4, 3, 3}), F32({3})}), none,
                     K::kInvalidArgument, "conv2d input 2 (bias)");
  EXPECT_INFER_ERROR("conv2d", (std::vector<TensorType>{F32({1, 4, 2, 5}), F32({2, 4, 3, 3})}), none,
                     K::kInvalidArgument, "larger than the padded input");
}

TEST(OpErrors, Pooling) {
  const Attrs k = Attrs().set("kernel", Ints{2, 2});
  EXPECT_INFER_ERROR("max_pool2d", {F32({1, 5, 5})}, k, K::kInvalidArgument, "max_pool2d input 0 (x)");
  EXPECT_INFER_ERROR("max_pool2d", {F32({1, 1, 5, 5})}, {}, K::kInvalidArgument, "required attribute 'kernel'");
  EXPECT_INFER_ERROR("max_pool2d", {F32({1, 1, 5, 5})}, Attrs().set("kernel", Ints{2}), K::kInvalidArgument, "'kernel'");
  EXPECT_INFER_ERROR("max_pool2d", {F32({1, 1, 5, 5})}, Attrs().set("kernel", Ints{0, 2}), K::kInvalidArgument, "below 1");
  EXPECT_INFER_ERROR("max_pool2d", {F32({1, 1, 5, 5})}, Attrs(k).set("pads", Ints{2, 0, 0, 0}), K::kInvalidArgument,
                     "not smaller than the dilated kernel");
  EXPECT_INFER_ERROR("max_pool2d", {T(DType::kBool, {1, 1, 5, 5})}, k, K::kUnsupported, "bool");
  EXPECT_INFER_ERROR("avg_pool2d", {T(DType::kI32, {1, 1, 5, 5})}, k, K::kUnsupported, "avg_pool2d input 0 (x)");
  EXPECT_INFER_ERROR("avg_pool2d", {F32({1, 1, 1, 5})}, k, K::kInvalidArgument, "larger than the padded input");
  EXPECT_INFER_ERROR("global_avg_pool", {F32({1, 5})}, {}, K::kInvalidArgument, "rank >= 3");
  EXPECT_INFER_ERROR("global_max_pool", {T(DType::kI64, {1, 5, 3})}, {}, K::kUnsupported, "i64");
}

TEST(OpErrors, MatmulGemm) {
  EXPECT_INFER_ERROR("matmul", (std::vector<TensorType>{F32({}), F32({3})}), {}, K::kInvalidArgument, "matmul input 0 (a)");
  EXPECT_INFER_ERROR("matmul", (std::vector<TensorType>{F32({3}), F32({})}), {}, K::kInvalidArgument, "matmul input 1 (b)");
  EXPECT_INFER_ERROR("matmul", (std::vector<TensorType>{F32({2, 3}), F32({4, 5})}), {}, K::kInvalidArgument,
                     "a's last dimension and b's second-to-last are 3 and 4");
  EXPECT_INFER_ERROR("matmul", (std::vector<TensorType>{F32({2, 2, 3}), F32({3, 3, 5})}), {}, K::kInvalidArgument,
                     "do not broadcast");
  EXPECT_INFER_ERROR("matmul", (std::vector<TensorType>{F32({2, 3}), T(DType::kI32, {3, 5})}), {}, K::kInvalidArgument,
                     "matmul input 1 (b)");
  EXPECT_INFER_ERROR("matmul", (std::vector<TensorType>{T(DType::kBool, {2, 3}), T(DType::kBool, {3, 5})}), {},
                     K::kUnsupported, "bool");
  EXPECT_INFER_ERROR("gemm", (std::vector<TensorType>{F32({2, 3, 1}), F32({3, 5})}), {}, K::kInvalidArgument,
                     "gemm input 0 (a)");
  EXPECT_INFER_ERROR("gemm", (std::vector<TensorType>{F32({2, 3}), F32({3, 5})}), Attrs().set("trans_b", int64_t{1}),
                     K::kInvalidArgument, "inner dimensions are 3 and 5");
  EXPECT_INFER_ERROR("gemm", (std::vector<TensorType>{F32({2, 3}), F32({3, 5}), F32({3})}), {}, K::kInvalidArgument,
                     "gemm input 2 (c)");
  EXPECT_INFER_ERROR("gemm", (std::vector<TensorType>{T(DType::kI32, {2, 3}), T(DType::kI32, {3, 5})}), {},
                     K::kUnsupported, "gemm input 0 (a)");
}

TEST(OpErrors, Reduce) {
  EXPECT_INFER_ERROR("reduce_sum", {F32({2, 3})}, Attrs().set("axes", Ints{2}), K::kInvalidArgument, "contains 2");
  EXPECT_INFER_ERROR("reduce_mean", {F32({2, 3})}, Attrs().set("axes", Ints{-1}), K::kInvalidArgument, "'axes'");
  EXPECT_INFER_ERROR("reduce_max", {F32({2, 3})}, Attrs().set("axes", Ints{1, 1}), K::kInvalidArgument, "twice");
  EXPECT_INFER_ERROR("reduce_sum", {F32({2, 3})}, Attrs().set("keepdims", int64_t{2}), K::kInvalidArgument, "'keepdims'");
  EXPECT_INFER_ERROR("reduce_sum", {T(DType::kBool, {2})}, {}, K::kUnsupported, "bool");
}

TEST(OpErrors, SoftmaxAndNorms) {
  EXPECT_INFER_ERROR("softmax", {F32({2, 3})}, Attrs().set("axis", int64_t{2}), K::kInvalidArgument,
                     "softmax attribute 'axis'");
  EXPECT_INFER_ERROR("log_softmax", {F32({2, 3})}, Attrs().set("axis", int64_t{-1}), K::kInvalidArgument, "non-negative");
  EXPECT_INFER_ERROR("softmax", {T(DType::kI32, {2, 3})}, Attrs().set("axis", int64_t{1}), K::kUnsupported, "i32");
  const std::vector<TensorType> c3(4, F32({3}));
  std::vector<TensorType> bn{F32({3})};
  bn.insert(bn.end(), c3.begin(), c3.end());
  EXPECT_INFER_ERROR("batch_norm", bn, {}, K::kInvalidArgument, "rank >= 2");
  bn[0] = F32({1, 3, 4});
  bn[4] = F32({4});
  EXPECT_INFER_ERROR("batch_norm", bn, {}, K::kInvalidArgument, "batch_norm input 4 (var)");
  bn[4] = F32({3});
  EXPECT_INFER_ERROR("batch_norm", bn, Attrs().set("epsilon", -1.0), K::kInvalidArgument, "'epsilon'");
  const Attrs ax1 = Attrs().set("axis", int64_t{1});
  EXPECT_INFER_ERROR("layer_norm", (std::vector<TensorType>{F32({2, 3, 4}), F32({4})}), Attrs().set("axis", int64_t{3}),
                     K::kInvalidArgument, "layer_norm attribute 'axis'");
  EXPECT_INFER_ERROR("layer_norm", (std::vector<TensorType>{F32({2, 3, 4}), F32({3})}), ax1, K::kInvalidArgument,
                     "layer_norm input 1 (scale)");
  EXPECT_INFER_ERROR("layer_norm", (std::vector<TensorType>{F32({2, 3, 4}), F32({4}), F32({2, 3, 4})}), ax1,
                     K::kInvalidArgument, "layer_norm input 2 (bias)");
  EXPECT_INFER_ERROR("layer_norm", (std::vector<TensorType>{F32({2, 3, 4}), F32({4})}), Attrs(ax1).set("epsilon", -1e-5),
                     K::kInvalidArgument, "'epsilon'");
}

TEST(OpErrors, ShapeOps) {
  EXPECT_INFER_ERROR("reshape", {F32({2, 3})}, Attrs().set("shape", Ints{4, 2}), K::kInvalidArgument, "6 elements");
  EXPECT_INFER_ERROR("reshape", {F32({2, 3})}, Attrs().set("shape", Ints{-1, 2}), K::kInvalidArgument, "negative dimension -1");
  EXPECT_INFER_ERROR("transpose", {F32({2, 3})}, Attrs().set("perm", Ints{0}), K::kInvalidArgument, "'perm'");
  EXPECT_INFER_ERROR("transpose", {F32({2, 3})}, Attrs().set("perm", Ints{1, 1}), K::kInvalidArgument, "not a permutation");
  EXPECT_INFER_ERROR("expand", {F32({2, 3})}, Attrs().set("shape", Ints{4}), K::kInvalidArgument, "do not broadcast");
  EXPECT_INFER_ERROR("expand", {F32({2, 3})}, Attrs().set("shape", Ints{-2, 3}), K::kInvalidArgument, "negative dimension -2");
  const Attrs ax1 = Attrs().set("axis", int64_t{1});
  EXPECT_INFER_ERROR("concat", (std::vector<TensorType>{F32({2, 3}), F32({2, 3})}), Attrs().set("axis", int64_t{2}),
                     K::kInvalidArgument, "concat attribute 'axis'");
  EXPECT_INFER_ERROR("concat", (std::vector<TensorType>{F32({2, 3}), T(DType::kI32, {2, 3})}), ax1, K::kInvalidArgument,
                     "concat input 1 (x1)");
  EXPECT_INFER_ERROR("concat", (std::vector<TensorType>{F32({2, 3}), F32({3, 3})}), ax1, K::kInvalidArgument,
                     "outside axis 1");
  EXPECT_INFER_ERROR("split", {F32({2, 6})}, Attrs(ax1).set("sizes", Ints{}), K::kInvalidArgument, "is empty");
  EXPECT_INFER_ERROR("split", {F32({2, 6})}, Attrs(ax1).set("sizes", Ints{7, -1}), K::kInvalidArgument, "below 0");
  EXPECT_INFER_ERROR("split", {F32({2, 6})}, Attrs(ax1).set("sizes", Ints{2, 3}), K::kInvalidArgument, "sums to 5");
  EXPECT_INFER_ERROR("split", {F32({2, 6})}, Attrs().set("axis", int64_t{5}).set("sizes", Ints{6}), K::kInvalidArgument,
                     "split attribute 'axis'");
}

TEST(OpErrors, SliceAndGather) {
  const auto slice = [](Ints b, Ints e, Ints a, Ints s) {
    return Attrs().set("begins", b).set("ends", e).set("axes", a).set("steps", s);
  };
  EXPECT_INFER_ERROR("strided_slice", {F32({4, 5})}, slice({0}, {1, 2}, {}, {}), K::kInvalidArgument, "same number");
  EXPECT_INFER_ERROR("strided_slice", {F32({4, 5})}, slice({0}, {1}, {2}, {1}), K::kInvalidArgument, "'axes'");
  EXPECT_INFER_ERROR("strided_slice", {F32({4, 5})}, slice({0, 0}, {1, 1}, {1, 1}, {1, 1}), K::kInvalidArgument, "twice");
  EXPECT_INFER_ERROR("strided_slice", {F32({4, 5})}, slice({0}, {1}, {0}, {0}), K::kInvalidArgument, "'steps'");
  EXPECT_INFER_ERROR("gather", (std::vector<TensorType>{F32({4, 5}), F32({2})}), {}, K::kUnsupported,
                     "gather input 1 (indices)");
  EXPECT_INFER_ERROR("gather", (std::vector<TensorType>{F32({}), T(DType::kI64, {2})}), {}, K::kInvalidArgument,
                     "gather input 0 (data)");
  EXPECT_INFER_ERROR("gather", (std::vector<TensorType>{F32({4, 5}), T(DType::kI64, {2})}),
                     Attrs().set("axis", int64_t{2}), K::kInvalidArgument, "gather attribute 'axis'");
  const NDArray data = testing::f32({3}, {1, 2, 3});
  EXPECT_TRUE(throws_user_error([&] { run("gather", {data, testing::make(DType::kI64, {1}, {3})}); },
                                K::kInvalidArgument, "index 3 at position 0 is out of range"));
  EXPECT_TRUE(throws_user_error([&] { run("gather", {data, testing::make(DType::kI32, {2}, {0, -4})}); },
                                K::kInvalidArgument, "index -4"));
}

TEST(OpErrors, Pad) {
  EXPECT_INFER_ERROR("pad", {F32({2, 3})}, Attrs().set("pads", Ints{1, 1}), K::kInvalidArgument, "pad attribute 'pads'");
  EXPECT_INFER_ERROR("pad", {F32({2, 3})}, Attrs().set("pads", Ints{0, 0, 0, 0}).set("mode", std::string("mirror")),
                     K::kInvalidArgument, "pad attribute 'mode'");
  EXPECT_INFER_ERROR("pad", {F32({2, 3})}, Attrs().set("pads", Ints{-2, 0, -1, 0}), K::kInvalidArgument, "below zero");
  EXPECT_INFER_ERROR("pad", {F32({0, 3})}, Attrs().set("pads", Ints{1, 0, 0, 0}).set("mode", std::string("edge")),
                     K::kInvalidArgument, "nothing to repeat");
}

TEST(OpErrors, Resize) {
  const Attrs sizes = Attrs().set("sizes", Ints{1, 1, 4, 4});
  const std::vector<TensorType> x{F32({1, 1, 2, 2})};
  EXPECT_INFER_ERROR("resize", x, Attrs(sizes).set("mode", std::string("area")), K::kInvalidArgument,
                     "resize attribute 'mode'");
  EXPECT_INFER_ERROR("resize", x, Attrs(sizes).set("coordinate_transformation_mode", std::string("center")),
                     K::kInvalidArgument, "'coordinate_transformation_mode'");
  EXPECT_INFER_ERROR("resize", x, Attrs(sizes).set("nearest_mode", std::string("round")), K::kInvalidArgument,
                     "'nearest_mode'");
  EXPECT_INFER_ERROR("resize", {T(DType::kI32, {1, 1, 2, 2})}, Attrs(sizes).set("mode", std::string("linear")),
                     K::kUnsupported, "resize input 0 (x)");
  EXPECT_INFER_ERROR("resize", x, Attrs().set("sizes", Ints{4, 4}), K::kInvalidArgument, "'sizes'");
  EXPECT_INFER_ERROR("resize", x, Attrs().set("sizes", Ints{1, 1, 0, 4}), K::kInvalidArgument, "below 1");
  EXPECT_INFER_ERROR("resize", {F32({1, 0, 2, 2})}, sizes, K::kInvalidArgument, "empty axis 1");
  EXPECT_INFER_ERROR("resize", x, Attrs(sizes).set("scales", std::vector<double>{2, 2}), K::kInvalidArgument, "'scales'");
  EXPECT_INFER_ERROR("resize", x, Attrs(sizes).set("scales", std::vector<double>{1, 1, 0, 2}), K::kInvalidArgument,
                     "values > 0");
  EXPECT_INFER_ERROR("resize", x, Attrs(sizes).set("coordinate_transformation_mode", std::string("tf_crop_and_resize")),
                     K::kInvalidArgument, "'roi'");
  EXPECT_INFER_ERROR("resize", x, Attrs(sizes).set("exclude_outside", int64_t{3}), K::kInvalidArgument, "'exclude_outside'");
}

TEST(OpErrors, IndexingScanSampling) {
  const TensorType i64_2 = T(DType::kI64, {2});
  EXPECT_INFER_ERROR("gather_elements", (std::vector<TensorType>{F32({2, 3}), i64_2}), {}, K::kInvalidArgument,
                     "gather_elements input 1 (indices)");
  EXPECT_INFER_ERROR("gather_elements", (std::vector<TensorType>{F32({2, 3}), F32({2, 3})}), {}, K::kUnsupported, "indices");
  EXPECT_INFER_ERROR("gather_nd", (std::vector<TensorType>{F32({2, 3}), T(DType::kI64, {4, 3})}), {}, K::kInvalidArgument,
                     "last dimension is 3");
  EXPECT_INFER_ERROR("scatter_elements", (std::vector<TensorType>{F32({2, 3}), T(DType::kI64, {2, 3}), F32({2, 2})}), {},
                     K::kInvalidArgument, "scatter_elements input 2 (updates)");
  EXPECT_INFER_ERROR("scatter_elements", (std::vector<TensorType>{F32({2, 3}), T(DType::kI64, {2, 3}), F32({2, 3})}),
                     Attrs().set("reduction", std::string("avg")), K::kInvalidArgument, "scatter_elements attribute 'reduction'");
  EXPECT_INFER_ERROR("reverse_sequence", (std::vector<TensorType>{F32({4, 3}), T(DType::kI64, {4})}), {}, K::kInvalidArgument,
                     "seq_lens must have shape [3]");
  EXPECT_INFER_ERROR("cumsum", {F32({3})}, Attrs().set("axis", int64_t{1}), K::kInvalidArgument, "cumsum attribute 'axis'");
  EXPECT_INFER_ERROR("cumprod", {T(DType::kBool, {3})}, {}, K::kUnsupported, "cumprod input 0 (x)");
  EXPECT_INFER_ERROR("topk", {F32({2, 5})}, Attrs().set("k", int64_t{6}).set("axis", int64_t{1}), K::kInvalidArgument,
                     "topk attribute 'k'");
  EXPECT_INFER_ERROR("grid_sample", (std::vector<TensorType>{F32({1, 2, 4, 4}), F32({1, 3, 3, 3})}), {}, K::kInvalidArgument,
                     "grid_sample input 1 (grid)");
  EXPECT_INFER_ERROR("grid_sample", (std::vector<TensorType>{F32({1, 2, 4, 4}), F32({1, 3, 3, 2})}),
                     Attrs().set("mode", std::string("area")), K::kInvalidArgument, "grid_sample attribute 'mode'");
  EXPECT_INFER_ERROR("col2im", {F32({1, 6, 5})}, Attrs().set("image_shape", Ints{4, 4}).set("block_shape", Ints{2, 3}),
                     K::kInvalidArgument, "col2im input 0 (x)");
  EXPECT_INFER_ERROR("col2im", {F32({1, 6, 5})}, Attrs().set("image_shape", Ints{2, 2}).set("block_shape", Ints{3, 3}),
                     K::kInvalidArgument, "does not fit");
}

// Every operator rejects a wrong number of inputs by name (a hand-written graph may have any).
TEST(OpErrors, WrongInputCount) {
  for (const auto& name : OpRegistry::global().names()) {
    const OpDef& op = OpRegistry::global().get(name);
    if (op.min_inputs > 0) {
      const std::vector<TensorType> few(op.min_inputs - 1, F32({2}));
      EXPECT_TRUE(throws_user_error([&] { op.infer_type(few, {}); }, K::kInvalidArgument, "operator '" + name + "'"));
    }
    if (op.max_inputs >= 0) {
      const std::vector<TensorType> many(op.max_inputs + 1, F32({2}));
      EXPECT_TRUE(throws_user_error([&] { op.infer_type(many, {}); }, K::kInvalidArgument, "input(s), got"));
    }
  }
}

// Every operator of docs/ops.md is registered with its pattern, and each is complete: a
// reference, a doc line, and attribute docs.
TEST(OpRegistryContents, EveryOperatorIsComplete) {
  const std::vector<std::pair<std::string, OpPattern>> contract = {
      {"conv2d", OpPattern::kOutEWiseFusable}, {"batch_norm", OpPattern::kBroadcast}, {"relu", OpPattern::kElemwise},
      {"sigmoid", OpPattern::kElemwise}, {"tanh", OpPattern::kElemwise}, {"erf", OpPattern::kElemwise},
      {"exp", OpPattern::kElemwise}, {"log", OpPattern::kElemwise}, {"sqrt", OpPattern::kElemwise},
      {"neg", OpPattern::kElemwise}, {"abs", OpPattern::kElemwise}, {"reciprocal", OpPattern::kElemwise},
      {"hard_swish", OpPattern::kElemwise}, {"leaky_relu", OpPattern::kElemwise}, {"hard_sigmoid", OpPattern::kElemwise},
      {"clip", OpPattern::kElemwise}, {"gelu", OpPattern::kElemwise}, {"add", OpPattern::kBroadcast},
      {"sub", OpPattern::kBroadcast}, {"mul", OpPattern::kBroadcast}, {"div", OpPattern::kBroadcast},
      {"pow", OpPattern::kBroadcast}, {"min", OpPattern::kBroadcast}, {"max", OpPattern::kBroadcast},
      {"mod", OpPattern::kBroadcast}, {"fmod", OpPattern::kBroadcast},
      {"equal", OpPattern::kBroadcast}, {"where", OpPattern::kBroadcast}, {"softmax", OpPattern::kOpaque},
      {"log_softmax", OpPattern::kOpaque}, {"max_pool2d", OpPattern::kOutEWiseFusable},
      {"avg_pool2d", OpPattern::kOutEWiseFusable}, {"global_avg_pool", OpPattern::kCommReduce},
      {"global_max_pool", OpPattern::kCommReduce}, {"matmul", OpPattern::kOutEWiseFusable},
      {"gemm", OpPattern::kOutEWiseFusable}, {"reshape", OpPattern::kInjective}, {"transpose", OpPattern::kInjective},
      {"concat", OpPattern::kInjective}, {"split", OpPattern::kInjective}, {"strided_slice", OpPattern::kInjective},
      {"gather", OpPattern::kInjective}, {"expand", OpPattern::kBroadcast}, {"shape_of", OpPattern::kOpaque}, {"pad", OpPattern::kInjective},
      {"resize", OpPattern::kInjective}, {"cast", OpPattern::kElemwise}, {"reduce_mean", OpPattern::kCommReduce},
      {"reduce_sum", OpPattern::kCommReduce}, {"reduce_max", OpPattern::kCommReduce}, {"layer_norm", OpPattern::kOpaque},
      {"rms_norm", OpPattern::kOpaque},
      // Blocked layouts and fused groups (graph passes: docs/passes.md).
      {"layout_transform", OpPattern::kInjective}, {"conv2d_nchwc", OpPattern::kOutEWiseFusable},
      {"max_pool2d_nchwc", OpPattern::kOutEWiseFusable}, {"avg_pool2d_nchwc", OpPattern::kOutEWiseFusable},
      {"fused", OpPattern::kOpaque},
      // Pre-packed matrix products (PackMatmulWeights).
      {"pack_matmul_b", OpPattern::kInjective}, {"matmul_packed", OpPattern::kOutEWiseFusable},
      // Winograd convolution (ConvertConvToWinograd).
      {"winograd_weight_transform", OpPattern::kOpaque}, {"conv2d_winograd_nchwc", OpPattern::kOutEWiseFusable},
      // Indexing, scans, selection and sampling (indexing.cc, scan_topk.cc, grid_sample.cc).
      {"gather_elements", OpPattern::kInjective}, {"gather_nd", OpPattern::kInjective},
      {"scatter_elements", OpPattern::kOpaque}, {"reverse_sequence", OpPattern::kInjective},
      {"cumsum", OpPattern::kOpaque}, {"cumprod", OpPattern::kOpaque}, {"topk", OpPattern::kOpaque},
      {"grid_sample", OpPattern::kInjective}, {"col2im", OpPattern::kInjective},
      // Math, activations, comparisons, logic, bit operations, reductions, spatial normalizations.
      {"sin", OpPattern::kElemwise}, {"cos", OpPattern::kElemwise}, {"tan", OpPattern::kElemwise},
      {"asin", OpPattern::kElemwise}, {"acos", OpPattern::kElemwise}, {"atan", OpPattern::kElemwise},
      {"sinh", OpPattern::kElemwise}, {"cosh", OpPattern::kElemwise}, {"asinh", OpPattern::kElemwise},
      {"acosh", OpPattern::kElemwise}, {"atanh", OpPattern::kElemwise}, {"floor", OpPattern::kElemwise},
      {"ceil", OpPattern::kElemwise}, {"round", OpPattern::kElemwise}, {"sign", OpPattern::kElemwise},
      {"softplus", OpPattern::kElemwise}, {"softsign", OpPattern::kElemwise}, {"mish", OpPattern::kElemwise},
      {"elu", OpPattern::kElemwise}, {"selu", OpPattern::kElemwise}, {"celu", OpPattern::kElemwise},
      {"thresholded_relu", OpPattern::kElemwise}, {"shrink", OpPattern::kElemwise}, {"swish", OpPattern::kElemwise},
      {"is_nan", OpPattern::kElemwise}, {"is_inf", OpPattern::kElemwise}, {"bitwise_not", OpPattern::kElemwise},
      {"less", OpPattern::kBroadcast}, {"greater", OpPattern::kBroadcast}, {"less_equal", OpPattern::kBroadcast},
      {"greater_equal", OpPattern::kBroadcast}, {"logical_and", OpPattern::kBroadcast},
      {"logical_or", OpPattern::kBroadcast}, {"logical_xor", OpPattern::kBroadcast},
      {"bitwise_and", OpPattern::kBroadcast}, {"bitwise_or", OpPattern::kBroadcast},
      {"bitwise_xor", OpPattern::kBroadcast}, {"bit_shift", OpPattern::kBroadcast}, {"prelu", OpPattern::kBroadcast},
      {"reduce_min", OpPattern::kCommReduce}, {"reduce_prod", OpPattern::kCommReduce},
      {"argmax", OpPattern::kOpaque}, {"argmin", OpPattern::kOpaque},
      {"instance_norm", OpPattern::kOutEWiseFusable}, {"lrn", OpPattern::kOpaque},
      // Quantization (quantize.cc, quantize_qnn.cc; docs/int8.md).
      {"quantize_linear", OpPattern::kBroadcast}, {"dequantize_linear", OpPattern::kBroadcast},
      {"requantize", OpPattern::kBroadcast}, {"qnn_conv2d", OpPattern::kOutEWiseFusable},
      {"qnn_matmul", OpPattern::kOutEWiseFusable}, {"int8_pack_conv_weights", OpPattern::kInjective},
      {"int8_conv_weight_sums", OpPattern::kCommReduce}, {"int8_conv2d", OpPattern::kOutEWiseFusable},
      {"int8_pack_matmul_weights", OpPattern::kInjective}, {"int8_matmul_weight_sums", OpPattern::kCommReduce},
      {"int8_matmul", OpPattern::kOpaque}, {"int8_matmul_i32", OpPattern::kOpaque},
      {"int8_pack_depthwise_weights", OpPattern::kInjective}, {"int8_depthwise_conv2d", OpPattern::kOpaque},
      {"int8_winograd_weight_transform", OpPattern::kOpaque}, {"int8_conv2d_winograd", OpPattern::kOutEWiseFusable},
  };
  for (const auto& [name, pattern] : contract) {
    const OpDef* op = OpRegistry::global().find(name);
    ASSERT_NE(op, nullptr) << name << " is not registered";
    EXPECT_EQ(op->pattern, pattern) << name;
  }
  const auto names = OpRegistry::global().names();
  EXPECT_EQ(names.size(), contract.size());
  for (const auto& name : names) {
    const OpDef& op = OpRegistry::global().get(name);
    EXPECT_TRUE(op.reference) << name;
    EXPECT_FALSE(op.doc.empty()) << name;
    for (const auto& a : op.attrs) EXPECT_FALSE(a.doc.empty()) << name << "." << a.name;
  }
}

}  // namespace
}  // namespace kiln::ir
