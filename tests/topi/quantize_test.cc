// The quantized operators (docs/int8.md): their integer reference implementations against
// hand-computed values, and their generated kernels (JIT on the host) against the reference on
// random inputs — exactly (tolerance 0: the rounding rule is reproduced operation by operation).
#include <gtest/gtest.h>

#include "kiln/support/error.h"
#include "topi/topi_test_util.h"

namespace kiln::topi::testing {
namespace {

using ir::Attrs;
using ir::DType;
using ir::NDArray;
using Ints = std::vector<int64_t>;

constexpr Tolerance kExact{0, 0};

NDArray make(DType dt, const Ints& shape, const std::vector<double>& values) {
  NDArray a = NDArray::empty(dt, shape);
  for (size_t i = 0; i < values.size(); ++i) a.set_from_double(static_cast<int64_t>(i), values[i]);
  return a;
}

std::vector<double> run_reference(const std::string& op, const std::vector<NDArray>& in, const Attrs& attrs = {}) {
  const ir::OpDef& def = ir::OpRegistry::global().get(op);
  const Attrs a = ir::OpRegistry::global().validate_attrs(def, attrs);
  std::vector<ir::TensorType> types;
  for (const NDArray& x : in) types.push_back(x.type());
  const NDArray y = def.reference(in, a, def.infer_type(types, a))[0];
  std::vector<double> out;
  for (int64_t i = 0; i < y.numel(); ++i) out.push_back(y.get_as_double(i));
  return out;
}

TEST(QuantizeReference, QuantizeRoundsHalfToEvenAndSaturates) {
  const NDArray x = make(DType::kF32, {8}, {0.5, 1.5, 2.5, -2.5, -0.5, 300, -300, 3.7});
  EXPECT_EQ(run_reference("quantize_linear", {x, make(DType::kF32, {}, {1}), make(DType::kI8, {}, {0})}),
            (std::vector<double>{0, 2, 2, -2, -0, 127, -128, 4}));
  // u8, scale 2, zero point 128: round(x / 2) + 128.
  EXPECT_EQ(run_reference("quantize_linear", {x, make(DType::kF32, {}, {2}), make(DType::kU8, {}, {128})}),
            (std::vector<double>{128, 129, 129, 127, 128, 255, 0, 130}));
}

TEST(QuantizeReference, PerAxisQuantizeAndDequantize) {
  const NDArray x = make(DType::kF32, {2, 3}, {1, 2, 3, -1, -2, -3});
  const NDArray scale = make(DType::kF32, {3}, {0.5, 1, 2}), zp = make(DType::kI8, {3}, {0, 10, -10});
  Attrs axis1 = Attrs().set("axis", int64_t{1});
  EXPECT_EQ(run_reference("quantize_linear", {x, scale, zp}, axis1), (std::vector<double>{2, 12, -8, -2, 8, -12}));
  const NDArray q = make(DType::kI8, {2, 3}, {2, 12, -8, -2, 8, -12});
  EXPECT_EQ(run_reference("dequantize_linear", {q, scale, zp}, axis1), (std::vector<double>{1, 2, 4, -1, -2, -4}));
}

TEST(QuantizeReference, RequantizeAddsBiasRoundsAndClamps) {
  // x_scale / y_scale = 0.25 (channel 0) and 0.5 (channel 1), bias 2 / -2, zero point 3, clamp at
  // the zero point (a fused Relu).
  const NDArray acc = make(DType::kI32, {1, 2, 2}, {10, -30, 6, 100});
  const NDArray xs = make(DType::kF32, {2}, {0.5, 1}), ys = make(DType::kF32, {}, {2});
  const NDArray zp = make(DType::kU8, {}, {3}), bias = make(DType::kI32, {2}, {2, -2});
  // ch0: (10+2)*.25 = 3 -> 6; (-30+2)*.25 = -7 -> -4 -> clamp 3; ch1: (6-2)*.5 = 2 -> 5; 98*.5 = 49 -> 52.
  EXPECT_EQ(run_reference("requantize", {acc, xs, ys, zp, bias}, Attrs().set("clamp_min", int64_t{3})),
            (std::vector<double>{6, 3, 5, 52}));
  // Ties go to even: 5 * 0.5 = 2.5 -> 2, 7 * 0.5 = 3.5 -> 4.
  EXPECT_EQ(run_reference("requantize", {make(DType::kI32, {2}, {5, 7}), make(DType::kF32, {}, {1}), ys,
                                         make(DType::kI8, {}, {0})},
                          Attrs().set("axis", int64_t{0})),
            (std::vector<double>{2, 4}));
}

TEST(QuantizeReference, QnnConvAndMatmulSubtractZeroPoints) {
  // 1x1 input channel, 3x3 image, 2x2 kernel with pad 1 on the left/top only: the padded taps hold
  // the zero point (contribute 0).
  const NDArray x = make(DType::kU8, {1, 1, 2, 2}, {12, 14, 16, 18});
  const NDArray w = make(DType::kI8, {1, 1, 2, 2}, {1, 2, 3, 4});
  Attrs pads = Attrs().set("pads", Ints{1, 1, 0, 0});
  // x - 10 = [[2, 4], [6, 8]]; w - 1 = [[0, 1], [2, 3]]; out[0,0] = 3*2 = 6;
  // out[0,1] = 2*2 + 3*4 = 16; out[1,0] = 1*2 + 3*6 = 20; out[1,1] = 0*2 + 1*4 + 2*6 + 3*8 = 40.
  EXPECT_EQ(run_reference("qnn_conv2d", {x, w, make(DType::kU8, {}, {10}), make(DType::kI8, {1}, {1})}, pads),
            (std::vector<double>{6, 16, 20, 40}));
  const NDArray a = make(DType::kU8, {2, 2}, {1, 2, 3, 4}), b = make(DType::kI8, {2, 2}, {5, 6, 7, 8});
  // (a - 1) = [[0, 1], [2, 3]], (b - [5, 0]) = [[0, 6], [2, 8]] -> [[2, 8], [6, 36]].
  EXPECT_EQ(run_reference("qnn_matmul", {a, b, make(DType::kU8, {}, {1}), make(DType::kI8, {2}, {5, 0})}),
            (std::vector<double>{2, 8, 6, 36}));
}

TEST(QuantizeReference, BadParametersAreUserErrors) {
  const ir::OpDef& q = ir::OpRegistry::global().get("quantize_linear");
  const Attrs a = ir::OpRegistry::global().validate_attrs(q, {});
  EXPECT_THROW(q.infer_type({tt({2, 3}), tt({2}), tt({2}, DType::kI8)}, a), kiln::UserError);  // 2 scales for 3 channels
  EXPECT_THROW(q.infer_type({tt({2, 3}), tt({}), tt({}, DType::kI32)}, a), kiln::UserError);   // i32 zero point
  const ir::OpDef& d = ir::OpRegistry::global().get("dequantize_linear");
  EXPECT_THROW(d.infer_type({tt({3}, DType::kU8), tt({}), tt({}, DType::kI8)}, a), kiln::UserError);  // zp dtype != x
}

const Dist kScale = Dist::positive(0.01, 0.2);
const Dist kU8 = Dist::uniform(0, 12);    // 0..240 after the x20 integer scaling
const Dist kI8 = Dist::uniform(-6, 6);    // -120..120

TEST(QuantizeKernels, QuantizeDequantizeRequantize) {
  for (DType dt : {DType::kU8, DType::kI8}) {
    const Dist zp = dt == DType::kU8 ? Dist::uniform(0, 6) : Dist::uniform(-3, 3);
    check_op({"quantize_linear", {tt({2, 13, 7}), tt({}), tt({}, dt)}, {}, {Dist::uniform(-20, 20), kScale, zp}, kExact});
    check_op({"quantize_linear", {tt({2, 13, 7}), tt({13}), tt({13}, dt)}, {}, {Dist::uniform(-20, 20), kScale, zp},
              kExact});
    check_op({"dequantize_linear", {tt({3, 1000}, dt), tt({1000}), tt({1000}, dt)}, Attrs().set("axis", int64_t{1}),
              {dt == DType::kU8 ? kU8 : kI8, kScale, zp}, kExact});
    check_op({"requantize", {tt({2, 16, 5, 7}, DType::kI32), tt({16}), tt({}), tt({}, dt), tt({16}, DType::kI32)},
              Attrs().set("clamp_min", int64_t{2}).set("clamp_max", int64_t{100}),
              {Dist::uniform(-2000, 2000), kScale, Dist::positive(0.5, 2), zp, Dist::uniform(-50, 50)}, kExact});
  }
  check_op({"dequantize_linear", {tt({37}, DType::kI32), tt({}), tt({}, DType::kI32)}, {},
            {Dist::uniform(-5000, 5000), kScale, Dist::uniform(0, 0)}, kExact});
}

TEST(QuantizeKernels, QnnConv2d) {
  struct Case {
    Ints x, w, strides, pads, dilations;
    int64_t groups;
    DType xt, wt;
    bool per_channel;
  };
  const std::vector<Case> cases = {
      {{1, 16, 14, 14}, {32, 16, 3, 3}, {1, 1}, {1, 1, 1, 1}, {1, 1}, 1, DType::kU8, DType::kI8, true},  // blocked
      {{2, 7, 13, 7}, {8, 7, 1, 1}, {1, 1}, {0, 0, 0, 0}, {1, 1}, 1, DType::kI8, DType::kI8, false},
      {{1, 3, 13, 13}, {13, 3, 3, 3}, {2, 2}, {1, 0, 2, 1}, {1, 1}, 1, DType::kU8, DType::kU8, true},
      {{1, 4, 15, 15}, {8, 4, 3, 3}, {1, 2}, {0, 0, 0, 0}, {2, 2}, 1, DType::kU8, DType::kI8, false},
      {{1, 16, 13, 13}, {16, 1, 3, 3}, {1, 1}, {1, 1, 1, 1}, {1, 1}, 16, DType::kU8, DType::kI8, true},  // depthwise
      {{1, 8, 9, 9}, {8, 1, 3, 3}, {2, 2}, {1, 1, 1, 1}, {1, 1}, 8, DType::kI8, DType::kI8, false},
      {{1, 8, 9, 9}, {12, 4, 3, 3}, {1, 1}, {1, 1, 1, 1}, {1, 1}, 2, DType::kU8, DType::kI8, true},     // grouped
  };
  for (const Case& c : cases) {
    const Ints zps = c.per_channel ? Ints{c.w[0]} : Ints{};
    const Attrs a = Attrs().set("strides", c.strides).set("pads", c.pads).set("dilations", c.dilations)
                        .set("groups", c.groups);
    auto data = [](DType t) { return t == DType::kU8 ? kU8 : kI8; };
    auto zp = [](DType t) { return t == DType::kU8 ? Dist::uniform(0, 6) : Dist::uniform(-2, 2); };
    check_op({"qnn_conv2d", {tt(c.x, c.xt), tt(c.w, c.wt), tt({}, c.xt), tt(zps, c.wt)}, a,
              {data(c.xt), data(c.wt), zp(c.xt), zp(c.wt)}, kExact});
  }
}

TEST(QuantizeKernels, QnnMatmul) {
  check_op({"qnn_matmul", {tt({13, 40}, DType::kU8), tt({40, 37}, DType::kI8), tt({}, DType::kU8), tt({37}, DType::kI8)},
            {}, {kU8, kI8, Dist::uniform(0, 6), Dist::uniform(-2, 2)}, kExact});
  check_op({"qnn_matmul", {tt({2, 3, 7, 16}, DType::kI8), tt({16, 9}, DType::kI8), tt({7}, DType::kI8),
                           tt({}, DType::kI8)},
            {}, {kI8, kI8, Dist::uniform(-2, 2), Dist::uniform(-2, 2)}, kExact});
  check_op({"qnn_matmul", {tt({2, 5, 24}, DType::kU8), tt({2, 24, 17}, DType::kU8), tt({1}, DType::kU8),
                           tt({1}, DType::kU8)},
            {}, {kU8, kU8, Dist::uniform(0, 6), Dist::uniform(0, 6)}, kExact});
}

}  // namespace
}  // namespace kiln::topi::testing
