// Indexing, scan, selection and sampling computes (src/topi/indexing.cc, scan_topk.cc,
// grid_sample.cc): generated kernels vs the operators' reference implementations on random
// inputs. Data movement is exact; scans, scatter reductions and grid sampling within f32 rounding
// of the double reference (sum_tol / 1e-5).
#include "topi_test_util.h"

namespace kiln::topi::testing {
namespace {

using ir::Attrs;
using ir::DType;
using Ints = std::vector<int64_t>;

constexpr Tolerance kExact{0, 0};

TEST(TopiIndexing, GatherElements) {
  check_op({"gather_elements", {tt({4, 9, 5}), tt({4, 7, 5}, DType::kI64)}, Attrs().set("axis", int64_t{1}),
            {Dist::uniform(), Dist::index(-9, 9)}, kExact});
  check_op({"gather_elements", {tt({6, 33}, DType::kI32), tt({3, 17}, DType::kI32)}, Attrs().set("axis", int64_t{0}),
            {Dist::uniform(-50, 50), Dist::index(0, 6)}, kExact});
}

TEST(TopiIndexing, GatherNd) {
  check_op({"gather_nd", {tt({5, 6, 7}), tt({4, 3, 2}, DType::kI64)}, Attrs(), {Dist::uniform(), Dist::index(-5, 5)},
            kExact});
  check_op({"gather_nd", {tt({3, 6, 7, 2}), tt({3, 5, 1}, DType::kI32)}, Attrs().set("batch_dims", int64_t{1}),
            {Dist::uniform(), Dist::index(0, 6)}, kExact});
}

TEST(TopiIndexing, ScatterElements) {
  // Duplicate targets are likely (8 updates into 5 places per column).
  for (const char* r : {"none", "add", "max", "min"}) {
    check_op({"scatter_elements", {tt({5, 19}), tt({8, 19}, DType::kI64), tt({8, 19})},
              Attrs().set("axis", int64_t{0}).set("reduction", std::string(r)),
              {Dist::uniform(), Dist::index(-5, 5), Dist::uniform()}, sum_tol(8)});
  }
  check_op({"scatter_elements", {tt({4, 6}), tt({4, 3}, DType::kI32), tt({4, 3})},
            Attrs().set("axis", int64_t{1}).set("reduction", std::string("mul")),
            {Dist::uniform(), Dist::index(0, 6), Dist::uniform()}, sum_tol(3)});
  check_op({"scatter_elements", {tt({3, 7}, DType::kI64), tt({2, 7}, DType::kI64), tt({2, 7}, DType::kI64)},
            Attrs().set("axis", int64_t{0}).set("reduction", std::string("add")),
            {Dist::uniform(-9, 9), Dist::index(0, 3), Dist::uniform(-9, 9)}, kExact});
}

TEST(TopiIndexing, ReverseSequence) {
  check_op({"reverse_sequence", {tt({9, 4, 3}), tt({4}, DType::kI64)}, Attrs(), {Dist::uniform(), Dist::index(0, 10)},
            kExact});
  check_op({"reverse_sequence", {tt({4, 9, 17}), tt({4}, DType::kI32)},
            Attrs().set("batch_axis", int64_t{0}).set("time_axis", int64_t{1}), {Dist::uniform(), Dist::index(0, 10)},
            kExact});
}

TEST(TopiScan, CumSumCumProd) {
  for (int64_t ex : {0, 1}) {
    for (int64_t rev : {0, 1}) {
      const Attrs a = Attrs().set("axis", int64_t{1}).set("exclusive", ex).set("reverse", rev);
      check_op({"cumsum", {tt({3, 100, 5})}, a, {}, sum_tol(100)});
      check_op({"cumsum", {tt({7, 33}, DType::kI32)}, a, {Dist::uniform(-100, 100)}, kExact});
      check_op({"cumprod", {tt({2, 13, 3})}, a, {Dist::uniform(0.7, 1.3)}, {1e-5, 1e-6}});
    }
  }
  check_op({"cumsum", {tt({1})}, Attrs(), {}, kExact});
  check_op({"cumprod", {tt({6}, DType::kI64)}, Attrs(), {Dist::uniform(-4, 4)}, kExact});
}

TEST(TopiSelect, TopK) {
  check_op({"topk", {tt({6, 50})}, Attrs().set("axis", int64_t{1}).set("k", int64_t{7}), {}, kExact});
  check_op({"topk", {tt({30, 4})}, Attrs().set("axis", int64_t{0}).set("k", int64_t{30}).set("largest", int64_t{0}), {},
            kExact});
  // Many ties: equal values keep their index order.
  check_op({"topk", {tt({3, 40}, DType::kI32)}, Attrs().set("axis", int64_t{1}).set("k", int64_t{10}),
            {Dist::uniform(-3, 3)}, kExact});
  check_op({"topk", {tt({5, 8})}, Attrs().set("axis", int64_t{1}).set("k", int64_t{0}), {}, kExact});
  // Few of many: the selection steps (k <= 128, 2k < n), with ties and both orders.
  check_op({"topk", {tt({3, 500})}, Attrs().set("axis", int64_t{1}).set("k", int64_t{20}), {}, kExact});
  check_op({"topk", {tt({300, 2}, DType::kI32)}, Attrs().set("axis", int64_t{0}).set("k", int64_t{9}).set("largest", int64_t{0}),
            {Dist::uniform(-20, 20)}, kExact});
}

TEST(TopiSample, GridSample) {
  for (const char* mode : {"nearest", "linear", "cubic"}) {
    for (const char* pad : {"zeros", "border", "reflection"}) {
      for (int64_t ac : {0, 1}) {
        check_op({"grid_sample", {tt({2, 3, 7, 9}), tt({2, 5, 6, 2})},
                  Attrs().set("mode", std::string(mode)).set("padding_mode", std::string(pad)).set("align_corners", ac),
                  {Dist::uniform(), Dist::uniform(-1.4, 1.4)}, {1e-5, 1e-5}});
      }
    }
  }
  check_op({"grid_sample", {tt({1, 2, 4, 5, 6}), tt({1, 3, 2, 4, 3})}, Attrs().set("mode", std::string("linear")),
            {Dist::uniform(), Dist::uniform(-1.2, 1.2)}, {1e-5, 1e-5}});
}

TEST(TopiIndexing, Col2Im) {
  check_op({"col2im", {tt({2, 3 * 6, 16})}, Attrs().set("image_shape", Ints{5, 6}).set("block_shape", Ints{2, 3}), {},
            sum_tol(6)});
  check_op({"col2im", {tt({1, 2 * 6, 3 * 4})},
            Attrs().set("image_shape", Ints{7, 8}).set("block_shape", Ints{3, 2}).set("dilations", Ints{2, 1})
                .set("pads", Ints{1, 2, 1, 2}).set("strides", Ints{2, 3}),
            {}, sum_tol(6)});
}

TEST(TopiSample, ResizeAntialias) {
  for (const char* mode : {"linear", "cubic"}) {
    for (int64_t ex : {0, 1}) {
      check_op({"resize", {tt({1, 3, 29, 20})},
                Attrs().set("sizes", Ints{1, 3, 8, 13}).set("mode", std::string(mode)).set("antialias", int64_t{1})
                    .set("exclude_outside", ex),
                {}, {1e-5, 1e-5}});
    }
  }
}

}  // namespace
}  // namespace kiln::topi::testing
