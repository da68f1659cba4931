// Heavy operators: conv2d (blocked NCHWc schedule, depthwise schedule, generic grouped), matmul
// (packed B, register tile; batched, broadcast, 1-D), gemm. Generated kernels vs the reference.
// Tolerances: the reference accumulates in double; the kernels in f32 over K = C*kh*kw (or the
// matmul's K) terms of |x*w| <= 4: absolute error about sqrt(K) * 2^-24 * sum|terms|, so
// rtol 1e-4 / atol 1e-4 * sqrt(K) (K up to ~1200 here).
#include "topi_test_util.h"

namespace kiln::topi::testing {
namespace {

using ir::Attrs;
using ir::DType;
using Ints = std::vector<int64_t>;


struct Conv {
  Ints x, w;
  Ints strides = {1, 1}, pads = {0, 0, 0, 0}, dilations = {1, 1};
  int64_t groups = 1;
  bool bias = false;
};

void check_conv(const Conv& c, DType dt = DType::kF32) {
  std::vector<ir::TensorType> in = {tt(c.x, dt), tt(c.w, dt)};
  if (c.bias) in.push_back(tt({c.w[0]}, dt));
  const Attrs a = Attrs()
                      .set("strides", c.strides)
                      .set("pads", c.pads)
                      .set("dilations", c.dilations)
                      .set("groups", c.groups);
  Tolerance tol = sum_tol(c.w[1] * c.w[2] * c.w[3]);
  if (dt == DType::kF16) tol = {2e-3, 2e-2};
  check_op({"conv2d", in, a, {}, tol});
}

TEST(TopiConv2d, Blocked) {
  check_conv({{1, 16, 14, 14}, {32, 16, 3, 3}, {1, 1}, {1, 1, 1, 1}});        // two-vector oc block
  check_conv({{1, 8, 13, 13}, {16, 8, 3, 3}, {1, 1}, {1, 1, 1, 1}, {1, 1}, 1, true});  // odd width: tile tail
  check_conv({{2, 7, 13, 7}, {8, 7, 1, 1}});                                   // 1x1, batch 2
  check_conv({{1, 16, 13, 14}, {16, 16, 1, 1}, {2, 3}});                       // 1x1 strided: subsampled packing
  check_conv({{1, 16, 13, 13}, {32, 16, 1, 1}, {2, 2}, {0, 0, 0, 0}, {1, 1}, 1, true});
  check_conv({{1, 3, 13, 13}, {13, 3, 3, 3}, {2, 2}, {1, 0, 2, 1}, {1, 1}, 1, true});  // 13 channels, stride, odd pads
  check_conv({{1, 4, 15, 15}, {8, 4, 3, 3}, {1, 2}, {0, 0, 0, 0}, {2, 2}});    // dilation, unequal strides
  check_conv({{1, 64, 7, 7}, {64, 64, 3, 3}, {1, 1}, {1, 1, 1, 1}});           // K = 576
  check_conv({{1, 128, 5, 5}, {16, 128, 3, 3}, {2, 2}, {1, 1, 1, 1}, {1, 1}, 1, true});  // K = 1152
}

// Non-default knob values give the same numbers (tuners only change values).
TEST(TopiConv2d, OtherKnobValues) {
  const std::vector<ir::TensorType> in = {tt({1, 16, 13, 13}), tt({32, 16, 3, 3})};
  const Attrs a = Attrs().set("pads", Ints{1, 1, 1, 1});
  tir::Tensor x = tir::placeholder(in[0].shape, DType::kF32, "x"), w = tir::placeholder(in[1].shape, DType::kF32, "w");
  const Knobs defaults =
      default_knobs(compute_op("conv2d", {x, w}, a, layout_hints(codegen::host_target())), codegen::host_target());
  for (const auto& [tile, rows_outer] : std::vector<std::pair<int64_t, int64_t>>{{4, 0}, {13, 1}, {5, 0}}) {
    Knobs k = defaults;
    k.set("tile_ow", tile).set("rows_outer", rows_outer).set("prefetch", tile == 5 ? 0 : 1);  // prefetch: a hint only
    check_op({"conv2d", in, a, {}, sum_tol(16 * 9), k});
  }
  tir::Tensor ma = tir::placeholder({13, 20}, DType::kF32, "a"), mb = tir::placeholder({20, 37}, DType::kF32, "b");
  Knobs mk = default_knobs(compute_op("matmul", {ma, mb}, {}, layout_hints(codegen::host_target())), codegen::host_target());
  for (int64_t tile_m : {1, 3, 13}) {
    mk.set("tile_m", tile_m);
    check_op({"matmul", {tt({13, 20}), tt({20, 37})}, {}, {}, sum_tol(20), mk});
  }
}

TEST(TopiConv2d, Depthwise) {
  check_conv({{1, 8, 13, 13}, {8, 1, 3, 3}, {1, 1}, {1, 1, 1, 1}, {1, 1}, 8});
  check_conv({{2, 5, 20, 19}, {5, 1, 3, 3}, {2, 2}, {1, 1, 1, 1}, {1, 1}, 5, true});
  check_conv({{1, 3, 7, 40}, {3, 1, 5, 3}, {1, 1}, {2, 1, 2, 1}, {1, 2}, 3});
}

TEST(TopiConv2d, GenericGroupsAndTypes) {
  check_conv({{1, 8, 9, 9}, {12, 4, 3, 3}, {1, 1}, {1, 1, 1, 1}, {1, 1}, 2, true});   // 2 groups
  check_conv({{1, 4, 7, 7}, {8, 1, 3, 3}, {1, 1}, {0, 0, 0, 0}, {1, 1}, 4});          // depthwise multiplier 2
  check_conv({{1, 4, 7, 7}, {8, 4, 3, 3}, {1, 1}, {1, 1, 1, 1}}, DType::kF64);
  check_conv({{1, 4, 7, 7}, {8, 4, 3, 3}, {1, 1}, {1, 1, 1, 1}}, DType::kF16);
}

TEST(TopiMatmul, TwoD) {
  for (const auto& [m, k, n] : std::vector<std::tuple<int64_t, int64_t, int64_t>>{
           {7, 13, 7}, {13, 7, 1000}, {64, 64, 64}, {1000, 13, 7}, {5, 1000, 17}, {1, 8, 33}}) {
    check_op({"matmul", {tt({m, k}), tt({k, n})}, {}, {}, sum_tol(k)});
  }
}

TEST(TopiMatmul, BatchedAndOneD) {
  check_op({"matmul", {tt({2, 3, 13, 7}), tt({3, 7, 9})}, {}, {}, sum_tol(7)});   // batch broadcast
  check_op({"matmul", {tt({4, 13, 16}), tt({16, 24})}, {}, {}, sum_tol(16)});
  check_op({"matmul", {tt({13}), tt({13, 7})}, {}, {}, sum_tol(13)});            // 1-D a
  check_op({"matmul", {tt({2, 7, 13}), tt({13})}, {}, {}, sum_tol(13)});         // 1-D b
  check_op({"matmul", {tt({1000}), tt({1000})}, {}, {}, sum_tol(1000)});
  check_op({"matmul", {tt({13, 7}, DType::kI32), tt({7, 9}, DType::kI32)}, {}, {}, {0, 0}});
  check_op({"matmul", {tt({13, 8}, DType::kBF16), tt({8, 9}, DType::kBF16)}, {}, {}, {1e-2, 2e-2}});
}

TEST(TopiMatmul, Gemm) {
  check_op({"gemm", {tt({13, 7}), tt({7, 9}), tt({9})}, Attrs().set("alpha", 0.5).set("beta", 2.0), {}, sum_tol(7)});
  check_op({"gemm", {tt({7, 13}), tt({1000, 7}), tt({13, 1})},
            Attrs().set("trans_a", int64_t{1}).set("trans_b", int64_t{1}), {}, sum_tol(7)});
  check_op({"gemm", {tt({3, 100}), tt({100, 20})}, {}, {}, sum_tol(100)});
}

}  // namespace
}  // namespace kiln::topi::testing
