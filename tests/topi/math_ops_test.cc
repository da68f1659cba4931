// Generated kernels of the math / activation / comparison / logic / bit operators, the extra
// reductions, argmax/argmin and the spatial normalizations (instance_norm's row schedule, lrn)
// vs the reference (double) on random inputs, at sizes that exercise the vector tails.
// Tolerances: the TIR formulas of the inverse trigonometric and hyperbolic functions are a few f32
// ulp (src/topi/elementwise_math.cc): rtol 1e-5 / atol 1e-6 except where stated. Comparisons,
// bits and indices are exact.
#include <limits>

#include "topi_test_util.h"

namespace kiln::topi::testing {
namespace {

using ir::Attrs;
using ir::DType;

const std::vector<std::vector<int64_t>> kShapes = {{7}, {13}, {1000}, {2, 13, 1, 9}};

TEST(TopiMath, UnaryFloat) {
  const std::vector<std::pair<std::string, Dist>> ops = {
      {"sin", Dist::uniform(-6, 6)},     {"cos", Dist::uniform(-6, 6)},      {"tan", Dist::uniform(-1.4, 1.4)},
      {"asin", Dist::uniform(-1, 1)},    {"acos", Dist::uniform(-1, 1)},     {"atan", Dist::uniform(-20, 20)},
      {"sinh", Dist::uniform(-5, 5)},    {"cosh", Dist::uniform(-5, 5)},     {"asinh", Dist::uniform(-50, 50)},
      {"acosh", Dist::positive(1, 40)},  {"atanh", Dist::uniform(-0.99, 0.99)}, {"floor", Dist::uniform(-5, 5)},
      {"ceil", Dist::uniform(-5, 5)},    {"round", Dist::uniform(-5, 5)},    {"sign", Dist::uniform()},
      {"softplus", Dist::uniform(-20, 20)}, {"softsign", Dist::uniform(-5, 5)}, {"mish", Dist::uniform(-6, 6)},
      {"elu", Dist::uniform(-4, 4)},     {"selu", Dist::uniform(-4, 4)},     {"celu", Dist::uniform(-4, 4)},
      {"thresholded_relu", Dist::uniform(-3, 3)}, {"shrink", Dist::uniform(-2, 2)}, {"swish", Dist::uniform(-6, 6)}};
  for (const auto& [op, dist] : ops) {
    for (const auto& shape : kShapes) check_op({op, {tt(shape)}, {}, {dist}, {2e-5, 1e-6}});
  }
}

TEST(TopiMath, SmallAndLargeArguments) {
  // Near zero (the polynomial branches) and far out (the log / exp branches).
  for (const char* op : {"sinh", "asinh", "atanh", "asin", "atan", "elu", "softplus"}) {
    check_op({op, {tt({1000})}, {}, {Dist::uniform(-0.05, 0.05)}, {2e-5, 1e-9}});
  }
  check_op({"asinh", {tt({13})}, {}, {Dist::uniform(1e9, 1e10)}});
  check_op({"acosh", {tt({13})}, {}, {Dist::positive(1e9, 1e10)}});
  check_op({"cosh", {tt({13})}, {}, {Dist::uniform(80, 89)}});
  check_op({"sinh", {tt({13})}, {}, {Dist::uniform(-89, -80)}});
  // acosh near 1: relative error grows as 1/sqrt(x - 1) there (documented bound 1e-4).
  check_op({"acosh", {tt({1000})}, {}, {Dist::positive(1.0001, 1.01)}, {1e-4, 1e-7}});
}

TEST(TopiMath, UnaryAttributesAndTypes) {
  check_op({"elu", {tt({13, 7})}, Attrs().set("alpha", 0.3), {}});
  check_op({"celu", {tt({1000})}, Attrs().set("alpha", 2.5), {Dist::uniform(-6, 6)}});
  check_op({"shrink", {tt({1000})}, Attrs().set("lambd", 0.7).set("bias", 0.2), {}});
  check_op({"swish", {tt({1000})}, Attrs().set("alpha", 1.702), {}});
  check_op({"sin", {tt({1000}, DType::kF64)}, {}, {Dist::uniform(-6, 6)}});
  check_op({"atan", {tt({1000}, DType::kF64)}, {}, {Dist::uniform(-6, 6)}, {1e-6, 1e-7}});  // f32-level formula
  check_op({"elu", {tt({13, 7}, DType::kF16)}, {}, {}, {1e-3, 1e-3}});
  check_op({"sign", {tt({1000}, DType::kI32)}, {}, {}});
  check_op({"sign", {tt({13}, DType::kU8)}, {}, {}});
}

TEST(TopiMath, Classification) {
  check_op({"is_nan", {tt({1000})}, {}, {}});
  check_op({"is_inf", {tt({13, 7})}, Attrs().set("detect_negative", int64_t{0}), {}});
}

TEST(TopiMath, ComparisonsLogicBits) {
  const std::vector<std::pair<std::vector<int64_t>, std::vector<int64_t>>> shapes = {
      {{1000}, {1000}}, {{13, 7}, {7}}, {{13, 1}, {1, 7}}};
  for (const char* op : {"less", "greater", "less_equal", "greater_equal"}) {
    for (const auto& [a, b] : shapes) {
      check_op({op, {tt(a), tt(b)}, {}, {}});
      check_op({op, {tt(a, DType::kI32), tt(b, DType::kI32)}, {}, {Dist::index(-3, 3), Dist::index(-3, 3)}});
      check_op({op, {tt(a, DType::kU8), tt(b, DType::kU8)}, {}, {Dist::index(0, 255), Dist::index(0, 255)}});
    }
  }
  for (const char* op : {"logical_and", "logical_or", "logical_xor"}) {
    for (const auto& [a, b] : shapes) {
      check_op({op, {tt(a, DType::kBool), tt(b, DType::kBool)}, {}, {Dist::boolean(), Dist::boolean()}});
    }
  }
  for (const char* op : {"bitwise_and", "bitwise_or", "bitwise_xor"}) {
    for (DType dt : {DType::kI8, DType::kU8, DType::kI32, DType::kI64}) {
      check_op({op, {tt({13, 7}, dt), tt({7}, dt)}, {}, {Dist::index(-100, 100), Dist::index(-100, 100)}});
    }
  }
  check_op({"bitwise_not", {tt({1000}, DType::kU8)}, {}, {Dist::index(0, 255)}});
  check_op({"bitwise_not", {tt({13}, DType::kI64)}, {}, {Dist::index(-1000, 1000)}});
  for (const char* dir : {"left", "right"}) {
    for (DType dt : {DType::kU8, DType::kI32, DType::kI64}) {
      // Amounts past the type's width included: they give 0 (or -1 for negative >> wide).
      check_op({"bit_shift", {tt({1000}, dt), tt({1000}, dt)}, Attrs().set("direction", std::string(dir)),
                {Dist::index(0, 120), Dist::index(0, 70)}});
    }
    check_op({"bit_shift", {tt({13}, DType::kI32), tt({1}, DType::kI32)}, Attrs().set("direction", std::string(dir)),
              {Dist::index(-1000, 1000), Dist::index(0, 5)}});
  }
  check_op({"prelu", {tt({2, 3, 5, 7}), tt({3, 1, 1})}, {}, {}});
  check_op({"prelu", {tt({13, 7}), tt({1})}, {}, {}});
}

TEST(TopiMath, ReduceMinProd) {
  for (const auto& [axes, keep] : std::vector<std::pair<std::vector<int64_t>, int64_t>>{
           {{1}, 1}, {{0, 2}, 0}, {{}, 1}, {{2}, 0}}) {
    const Attrs a = Attrs().set("axes", axes).set("keepdims", keep);
    check_op({"reduce_min", {tt({3, 7, 13})}, a, {}});
    check_op({"reduce_prod", {tt({3, 7, 13})}, a, {Dist::positive(0.8, 1.25)}, {1e-4, 1e-6}});
    check_op({"reduce_min", {tt({3, 7, 13}, DType::kI32)}, a, {Dist::index(-50, 50)}});
  }
  check_op({"reduce_prod", {tt({4, 5}, DType::kI64)}, Attrs().set("axes", std::vector<int64_t>{1}),
            {Dist::index(-9, 9)}});
  check_op({"reduce_min", {tt({2, 0, 3})}, Attrs().set("axes", std::vector<int64_t>{1}), {}});  // +inf
  check_op({"reduce_prod", {tt({2, 0, 3})}, Attrs().set("axes", std::vector<int64_t>{1}), {}});  // 1
}

TEST(TopiMath, ArgMaxArgMin) {
  for (const char* op : {"argmax", "argmin"}) {
    for (int64_t axis = 0; axis < 3; ++axis) {
      for (int64_t keep : {0, 1}) {
        for (int64_t last : {0, 1}) {
          const Attrs a = Attrs().set("axis", axis).set("keepdims", keep).set("select_last_index", last);
          check_op({op, {tt({3, 9, 13})}, a, {}});
          // Few distinct values: many ties, so first/last index matters.
          check_op({op, {tt({3, 9, 13}, DType::kI32)}, a, {Dist::index(0, 3)}});
        }
      }
    }
  }
}

TEST(TopiMath, InstanceNorm) {
  // Rows of 13 (tail only), 64 (whole vectors), 9x7 (leading spatial axis + tail), 5x4x8 (rank 5).
  for (const auto& shape : std::vector<std::vector<int64_t>>{{2, 3, 13}, {1, 4, 64}, {2, 5, 9, 7}, {1, 2, 5, 4, 8},
                                                             {1, 8, 32, 32}}) {
    const int64_t c = shape[1];
    int64_t count = 1;
    for (size_t d = 2; d < shape.size(); ++d) count *= shape[d];
    check_op({"instance_norm", {tt(shape), tt({c}), tt({c})}, Attrs().set("epsilon", 1e-3), {}, sum_tol(count)});
  }
  check_op({"instance_norm", {tt({2, 3, 4, 5})}, {}, {}, sum_tol(20)});
  check_op({"instance_norm", {tt({1, 3, 6, 9}, DType::kF64), tt({3}, DType::kF64), tt({3}, DType::kF64)}, {}, {},
            {1e-10, 1e-10}});
}

TEST(TopiMath, Lrn) {
  for (int64_t size : {1, 2, 3, 5}) {
    check_op({"lrn", {tt({2, 7, 3, 5})}, Attrs().set("size", size).set("alpha", 0.02).set("beta", 0.75).set("bias", 1.0),
              {}, {2e-5, 1e-6}});
  }
}

}  // namespace
}  // namespace kiln::topi::testing
