// Reductions, pooling and normalizations: generated kernels vs the reference.
// Tolerances: the reference sums in double; the kernels sum in f32 in loop order, so the error
// grows with the reduction length n (about sqrt(n) ulp of the sum of |terms| for random signs):
// rtol 1e-4 / atol 1e-5 for sums of up to a few thousand terms; 1e-5 for max (exact) and short
// windows.
#include "topi_test_util.h"

namespace kiln::topi::testing {
namespace {

using ir::Attrs;
using ir::DType;
using Ints = std::vector<int64_t>;

constexpr Tolerance kSum{1e-4, 1e-5};

TEST(TopiReduce, ReduceOps) {
  for (const char* op : {"reduce_sum", "reduce_mean", "reduce_max"}) {
    check_op({op, {tt({13, 7})}, Attrs().set("axes", Ints{1}), {}, kSum});
    check_op({op, {tt({2, 13, 7})}, Attrs().set("axes", Ints{0, 2}).set("keepdims", int64_t{0}), {}, kSum});
    check_op({op, {tt({1000})}, Attrs().set("axes", Ints{}), {}, kSum});
    check_op({op, {tt({3, 1000})}, Attrs().set("axes", Ints{0}), {}, kSum});
  }
  check_op({"reduce_sum", {tt({13, 7}, DType::kI32)}, Attrs().set("axes", Ints{0}), {}, {0, 0}});
  check_op({"reduce_mean", {tt({13, 7}, DType::kI32)}, Attrs().set("axes", Ints{1}), {}, {0, 0}});
  check_op({"reduce_max", {tt({13, 7}, DType::kI8)}, Attrs().set("axes", Ints{1}), {}, {0, 0}});
}

// A float reduction over the last axis alone runs as vector lane partials per row (reduce.cc):
// row lengths of two vectors and more, with and without a tail, keepdims on and off, rank 2 to 4,
// every kind (prod on values near 1 so long rows stay finite).
TEST(TopiReduce, LastAxisLaneReductions) {
  for (int64_t n : {16, 17, 23, 64, 147, 367}) {
    for (const char* op : {"reduce_sum", "reduce_mean", "reduce_max", "reduce_min"}) {
      check_op({op, {tt({5, n})}, Attrs().set("axes", Ints{1}), {}, kSum});
      check_op({op, {tt({2, 3, 4, n})}, Attrs().set("axes", Ints{3}).set("keepdims", int64_t{0}), {}, kSum});
    }
    check_op({"reduce_prod", {tt({3, 2, n})}, Attrs().set("axes", Ints{2}), {Dist::positive(0.99, 1.01)}, {1e-4, 1e-6}});
  }
  check_op({"reduce_mean", {tt({10, 5, 7, 367})}, Attrs().set("axes", Ints{3}), {}, kSum});
}

// A reduced extent of 0: the identity (0 for sum, nan for a float mean, -inf / the lowest integer
// for max), as the reference gives it.
TEST(TopiReduce, EmptyReduction) {
  for (const char* op : {"reduce_sum", "reduce_mean", "reduce_max"}) {
    check_op({op, {tt({2, 0, 4})}, Attrs().set("axes", Ints{1}), {}, kSum});
    check_op({op, {tt({0, 3})}, Attrs().set("axes", Ints{0}).set("keepdims", int64_t{0}), {}, kSum});
  }
  check_op({"reduce_max", {tt({3, 0}, DType::kI8)}, Attrs().set("axes", Ints{1}), {}, {0, 0}});
  check_op({"reduce_sum", {tt({3, 0}, DType::kI64)}, Attrs().set("axes", Ints{1}), {}, {0, 0}});
  check_op({"reduce_mean", {tt({3, 0}, DType::kI32)}, Attrs().set("axes", Ints{1}), {}, {0, 0}});
}

TEST(TopiReduce, GlobalPool) {
  check_op({"global_avg_pool", {tt({2, 13, 7, 7})}, {}, {}, kSum});
  check_op({"global_max_pool", {tt({1, 7, 13, 5})}, {}, {}, {0, 0}});
  check_op({"global_avg_pool", {tt({1, 3, 1000})}, {}, {}, kSum});
}

TEST(TopiReduce, Softmax) {
  for (const char* op : {"softmax", "log_softmax"}) {
    check_op({op, {tt({13, 7})}, Attrs().set("axis", int64_t{1}), {Dist::uniform(-5, 5)}, kSum});
    check_op({op, {tt({3, 1000})}, Attrs().set("axis", int64_t{1}), {Dist::uniform(-5, 5)}, kSum});
    check_op({op, {tt({2, 13, 7})}, Attrs().set("axis", int64_t{1}), {Dist::uniform(-5, 5)}, kSum});
  }
}

TEST(TopiReduce, LayerNorm) {
  check_op({"layer_norm", {tt({13, 7}), tt({7}), tt({7})}, Attrs().set("axis", int64_t{1}), {}, kSum});
  check_op({"layer_norm", {tt({2, 13, 7}), tt({13, 7})}, Attrs().set("axis", int64_t{1}).set("epsilon", 1e-3), {}, kSum});
  check_op({"layer_norm", {tt({3, 1000}), tt({1000}), tt({1})}, Attrs().set("axis", int64_t{1}), {}, kSum});
}

// rms_norm: last axis (one-pass rows: lengths around the vector width, a parallel row loop, a
// row longer than the per-row buffers), several trailing axes (plain reduction).
TEST(TopiReduce, RmsNorm) {
  for (int64_t n : {1, 7, 8, 17, 64, 129}) {
    check_op({"rms_norm", {tt({2, 3, n}), tt({n})}, Attrs().set("axis", int64_t{2}), {}, kSum});
  }
  check_op({"rms_norm", {tt({64, 301}), tt({301})}, Attrs().set("axis", int64_t{1}).set("epsilon", 1e-6), {}, kSum});
  check_op({"rms_norm", {tt({2, 13, 7}), tt({13, 7})}, Attrs().set("axis", int64_t{1}), {}, kSum});
  check_op({"rms_norm", {tt({4, 33}), tt({1})}, Attrs().set("axis", int64_t{1}), {Dist::uniform(10, 12)}, kSum});
  check_op({"rms_norm", {tt({2, 16390}), tt({16390})}, Attrs().set("axis", int64_t{1}), {}, {1e-4, 1e-4}});
}

// The last-axis forms run as vector lane reductions: row lengths below, at and around the vector
// width (tails of every size on AVX2 and AVX-512), rank 1 to 4, and rows far from zero mean.
TEST(TopiReduce, LastAxisRowsAtOddSizes) {
  for (int64_t n : {1, 3, 8, 9, 16, 17, 129, 256}) {
    for (const char* op : {"softmax", "log_softmax"}) {
      check_op({op, {tt({5, n})}, Attrs().set("axis", int64_t{1}), {Dist::uniform(-5, 5)}, kSum});
    }
    check_op({"layer_norm", {tt({2, 3, n}), tt({n}), tt({n})}, Attrs().set("axis", int64_t{2}), {}, kSum});
  }
  check_op({"softmax", {tt({37})}, Attrs().set("axis", int64_t{0}), {Dist::uniform(-5, 5)}, kSum});
  check_op({"softmax", {tt({1, 4, 3, 129})}, Attrs().set("axis", int64_t{3}), {Dist::uniform(-5, 5)}, kSum});
  check_op({"layer_norm", {tt({19}), tt({1})}, Attrs().set("axis", int64_t{0}).set("epsilon", 1e-2), {}, kSum});
  check_op({"layer_norm", {tt({4, 7, 33}), tt({33})}, Attrs().set("axis", int64_t{2}), {Dist::uniform(10, 12)}, kSum});
  // Enough rows for the parallel row loop (>= parallel_min elements), and rows longer than the
  // row schedule's per-row stack buffers (16384: the stages then run at the root).
  check_op({"softmax", {tt({64, 301})}, Attrs().set("axis", int64_t{1}), {Dist::uniform(-5, 5)}, kSum});
  check_op({"layer_norm", {tt({3, 64, 257}), tt({257}), tt({257})}, Attrs().set("axis", int64_t{2}), {}, kSum});
  check_op({"softmax", {tt({2, 16390})}, Attrs().set("axis", int64_t{1}), {Dist::uniform(-5, 5)}, {1e-4, 1e-6}});
  check_op({"layer_norm", {tt({2, 16390}), tt({16390})}, Attrs().set("axis", int64_t{1}), {}, {1e-4, 1e-4}});
}

TEST(TopiReduce, MaxPool) {
  check_op({"max_pool2d", {tt({1, 3, 13, 13})}, Attrs().set("kernel", Ints{3, 3}).set("strides", Ints{2, 2}), {}, {0, 0}});
  check_op({"max_pool2d", {tt({2, 5, 13, 7})},
            Attrs().set("kernel", Ints{3, 2}).set("strides", Ints{2, 1}).set("pads", Ints{1, 1, 1, 0}), {}, {0, 0}});
  check_op({"max_pool2d", {tt({1, 2, 13, 13})},
            Attrs().set("kernel", Ints{3, 3}).set("strides", Ints{2, 2}).set("ceil_mode", int64_t{1}).set("dilations", Ints{2, 1}),
            {}, {0, 0}});
  check_op({"max_pool2d", {tt({1, 2, 7, 7}, DType::kI32)}, Attrs().set("kernel", Ints{2, 2}).set("pads", Ints{1, 1, 1, 1}),
            {}, {0, 0}});
}

TEST(TopiReduce, AvgPool) {
  check_op({"avg_pool2d", {tt({1, 3, 13, 13})}, Attrs().set("kernel", Ints{3, 3}).set("strides", Ints{2, 2}), {}, {1e-5, 1e-6}});
  check_op({"avg_pool2d", {tt({2, 5, 13, 7})},
            Attrs().set("kernel", Ints{3, 3}).set("pads", Ints{1, 1, 1, 1}), {}, {1e-5, 1e-6}});
  check_op({"avg_pool2d", {tt({2, 5, 13, 7})},
            Attrs().set("kernel", Ints{3, 3}).set("pads", Ints{1, 1, 1, 1}).set("count_include_pad", int64_t{1}), {},
            {1e-5, 1e-6}});
  check_op({"avg_pool2d", {tt({1, 2, 13, 13})},
            Attrs().set("kernel", Ints{2, 2}).set("strides", Ints{2, 2}).set("ceil_mode", int64_t{1}), {}, {1e-5, 1e-6}});
}

}  // namespace
}  // namespace kiln::topi::testing
