// Elementwise and broadcast operators: generated kernels vs the reference on random inputs at
// sizes that exercise the vector tail (7, 13, 1000) and broadcasting patterns.
// Tolerances: f32 rtol 1e-5 / atol 1e-6: the reference computes in double and rounds once, the
// kernel rounds after each f32 operation (a few ulp) and uses polynomial exp/tanh (<= 3e-7
// relative, docs/codegen.md). Integers and comparisons are exact.
#include <limits>

#include "topi_test_util.h"

namespace kiln::topi::testing {
namespace {

using ir::Attrs;
using ir::DType;

const std::vector<std::vector<int64_t>> kShapes = {{7}, {13}, {1000}, {3, 5, 7}, {2, 13, 1, 9}};

TEST(TopiElementwise, UnaryFloat) {
  const std::vector<std::pair<std::string, Dist>> ops = {
      {"relu", Dist::uniform()},      {"sigmoid", Dist::uniform(-8, 8)}, {"tanh", Dist::uniform(-5, 5)},
      {"erf", Dist::uniform()},       {"exp", Dist::uniform(-10, 10)},   {"log", Dist::positive()},
      {"sqrt", Dist::positive()},     {"neg", Dist::uniform()},          {"abs", Dist::uniform()},
      {"reciprocal", Dist::nonzero()}, {"hard_swish", Dist::uniform(-5, 5)}, {"leaky_relu", Dist::uniform()},
      {"hard_sigmoid", Dist::uniform(-5, 5)}, {"gelu", Dist::uniform(-4, 4)}};
  for (const auto& [op, dist] : ops) {
    for (const auto& shape : kShapes) check_op({op, {tt(shape)}, {}, {dist}});
  }
}

TEST(TopiElementwise, UnaryAttributes) {
  check_op({"leaky_relu", {tt({13, 7})}, Attrs().set("alpha", 0.3), {}});
  check_op({"hard_sigmoid", {tt({1000})}, Attrs().set("alpha", 0.5).set("beta", 0.25), {Dist::uniform(-4, 4)}});
  check_op({"clip", {tt({1000})}, Attrs().set("min", -0.5).set("max", 1.25), {}});
  check_op({"clip", {tt({13})}, Attrs().set("min", 1.0).set("max", -1.0), {}});  // min > max gives max
  check_op({"gelu", {tt({13, 7})}, Attrs().set("approximate", std::string("tanh")), {Dist::uniform(-4, 4)}});
}

TEST(TopiElementwise, UnaryOtherTypes) {
  check_op({"relu", {tt({1000}, DType::kI32)}, {}, {}});
  check_op({"neg", {tt({13}, DType::kI8)}, {}, {}});
  check_op({"abs", {tt({13}, DType::kI64)}, {}, {}});
  check_op({"clip", {tt({1000}, DType::kI32)}, Attrs().set("min", -7.5).set("max", 20.2), {}});
  check_op({"exp", {tt({1000}, DType::kF64)}, {}, {}});
  // f16/bf16 compute in f32 and round once on store: results are within one 16-bit ulp.
  check_op({"sigmoid", {tt({13, 7}, DType::kF16)}, {}, {}, {1e-3, 1e-3}});
  check_op({"tanh", {tt({1000}, DType::kBF16)}, {}, {}, {8e-3, 8e-3}});
}

TEST(TopiElementwise, BinaryBroadcast) {
  const std::vector<std::pair<std::vector<int64_t>, std::vector<int64_t>>> shapes = {
      {{1000}, {1000}}, {{13, 7}, {7}}, {{13, 1}, {1, 7}}, {{2, 3, 5, 7}, {3, 1, 1}}, {{7}, {13, 1}}};
  for (const char* op : {"add", "sub", "mul", "min", "max"}) {
    for (const auto& [a, b] : shapes) check_op({op, {tt(a), tt(b)}, {}, {}});
  }
  for (const auto& [a, b] : shapes) check_op({"div", {tt(a), tt(b)}, {}, {Dist::uniform(), Dist::nonzero()}});
  check_op({"pow", {tt({13, 7}), tt({7})}, {}, {Dist::positive(0.5, 2), Dist::uniform()}});
  check_op({"pow", {tt({1000}), tt({1})}, {}, {Dist::positive(0.5, 2), Dist::uniform()}});
}

TEST(TopiElementwise, BinaryIntegers) {
  for (const char* op : {"add", "sub", "mul", "min", "max"}) {
    check_op({op, {tt({13, 7}, DType::kI32), tt({7}, DType::kI32)}, {}, {}});
  }
  // Integer division truncates toward zero (ONNX), with both signs.
  check_op({"div", {tt({1000}, DType::kI32), tt({1000}, DType::kI32)}, {}, {Dist::uniform(), Dist::nonzero(1, 5)}});
  check_op({"div", {tt({13}, DType::kI64), tt({1}, DType::kI64)}, {}, {Dist::uniform(), Dist::nonzero(1, 5)}});
  // i8 wraps like the reference (modulo 2^8).
  check_op({"mul", {tt({1000}, DType::kI8), tt({1000}, DType::kI8)}, {}, {}});
}

// Integer base: computed in f64 and truncated on the way back, as the reference's double path does
// (exact for these magnitudes); integer and float exponents, negative exponents truncate to 0.
TEST(TopiElementwise, PowIntegerBase) {
  check_op({"pow", {tt({13, 7}, DType::kI32), tt({7}, DType::kI32)}, {}, {Dist::index(-5, 6), Dist::index(0, 6)}});
  check_op({"pow", {tt({1000}, DType::kI64), tt({1000}, DType::kI64)}, {}, {Dist::index(-9, 10), Dist::index(0, 12)}});
  check_op({"pow", {tt({13}, DType::kI32), tt({13}, DType::kI32)}, {}, {Dist::index(2, 6), Dist::index(-3, 0)}});
  check_op({"pow", {tt({1000}, DType::kI32), tt({1000})}, {}, {Dist::index(0, 10), Dist::uniform(0, 3)}});
  check_op({"pow", {tt({13, 7}, DType::kI64), tt({1})}, {}, {Dist::index(0, 100), Dist::uniform(0, 2)}});
}

// Absent bounds are +-inf: on integer dtypes they must leave every value alone (no clamp to 0 or
// to the wrong end of the range).
TEST(TopiElementwise, ClipInfiniteBoundsOnIntegers) {
  const double inf = std::numeric_limits<double>::infinity();
  for (DType dt : {DType::kI8, DType::kU8, DType::kI32, DType::kI64}) {
    check_op({"clip", {tt({1000}, dt)}, Attrs().set("min", -inf).set("max", inf), {}});
    check_op({"clip", {tt({13}, dt)}, Attrs().set("min", -inf).set("max", 0.0), {}});
    check_op({"clip", {tt({13}, dt)}, Attrs().set("min", 1.5).set("max", inf), {}});
    check_op({"clip", {tt({1000}, dt)}, Attrs().set("min", -20.5).set("max", 30.5), {}});
  }
}

TEST(TopiElementwise, EqualWhereCast) {
  check_op({"equal", {tt({13, 7}, DType::kI32), tt({7}, DType::kI32)}, {}, {Dist::uniform(-0.1, 0.1), Dist::uniform(-0.1, 0.1)}});
  check_op({"equal", {tt({1000}, DType::kBool), tt({1000}, DType::kBool)}, {}, {Dist::boolean(), Dist::boolean()}});
  check_op({"where", {tt({13, 7}, DType::kBool), tt({7}), tt({13, 1})}, {}, {Dist::boolean()}});
  check_op({"where", {tt({1000}, DType::kBool), tt({1000}, DType::kI64), tt({1}, DType::kI64)}, {}, {Dist::boolean()}});
  const std::vector<std::pair<DType, DType>> casts = {{DType::kF32, DType::kI32}, {DType::kI32, DType::kF32},
                                                      {DType::kF32, DType::kF16}, {DType::kF16, DType::kF32},
                                                      {DType::kF32, DType::kBool}, {DType::kBool, DType::kF32},
                                                      {DType::kI64, DType::kI8}, {DType::kF32, DType::kF64}};
  for (const auto& [from, to] : casts) {
    check_op({"cast", {tt({1000}, from)}, Attrs().set("dtype", to),
              {from == DType::kBool ? Dist::boolean() : Dist::uniform(-100, 100)}});
    check_op({"cast", {tt({13}, from)}, Attrs().set("dtype", to),
              {from == DType::kBool ? Dist::boolean() : Dist::uniform(-100, 100)}});
  }
}

TEST(TopiElementwise, BatchNorm) {
  for (const auto& shape : std::vector<std::vector<int64_t>>{{2, 13, 7, 5}, {1, 7, 1000}, {3, 13}}) {
    const int64_t c = shape[1];
    check_op({"batch_norm", {tt(shape), tt({c}), tt({c}), tt({c}), tt({c})}, Attrs().set("epsilon", 1e-3),
              {Dist::uniform(), Dist::uniform(), Dist::uniform(), Dist::uniform(), Dist::positive()},
              {1e-5, 1e-5}});
  }
}

}  // namespace
}  // namespace kiln::topi::testing
