// The Winograd kernels (src/topi/conv2d_winograd.cc, schedule_winograd.cc), JIT-compiled for the
// host, against the ops' double references:
//   - conv2d_winograd_nchwc at odd sizes (tiles sticking out of the output, pads 0/1/asymmetric,
//     bias or not, both tiles, default and non-default knobs incl. a tile_p that leaves a tail,
//     with and without the prefetch of the next weight panel, the product by chunk and by tile
//     block);
//   - winograd_weight_transform's kernel (the non-constant-weight path);
//   - accuracy on ResNet-50-sized layers: the compiled F(m x m, 3 x 3) kernel vs conv2d_nchwc's
//     double-accumulated reference on the original weights (the error a model sees).
// Tolerance: |got - want| <= atol + rtol |want| with rtol 1e-4 and atol 1e-4 * sqrt(9 C) (f32
// Winograd: the transforms scale values by up to 10x before the f32 products); the ResNet-sized
// check bounds max|got - direct| / max|direct| by 1e-4 (F(4x4) measures ~1e-6 to 3e-6, F(2x2)
// ~5e-7: printed by the test).
#include <gtest/gtest.h>

#include <cmath>
#include <iostream>

#include "kiln/codegen/llvm_module.h"
#include "kiln/codegen/target.h"
#include "kiln/support/error.h"
#include "kiln/tir/printer.h"
#include "kiln/topi/build.h"
#include "kiln/topi/schedule.h"
#include "topi_test_util.h"

namespace kiln::topi::testing {
namespace {

OpCase wino_case(std::vector<int64_t> x, std::vector<int64_t> u, int tile, std::vector<int64_t> pads, bool bias) {
  OpCase c;
  c.op = "conv2d_winograd_nchwc";
  c.inputs = {tt(x), tt(u)};
  if (bias) c.inputs.push_back(tt({u[2] * u[4]}));
  c.attrs = ir::Attrs().set("tile", int64_t{tile}).set("pads", pads);
  const double atol = 1e-4 * std::sqrt(9.0 * static_cast<double>(u[3]));
  c.tol = {1e-4, atol};
  return c;
}

TEST(TopiWinograd, MatchesReferenceAtOddSizes) {
  for (int tile : {2, 4}) {
    const int64_t a = tile + 2;
    EXPECT_EQ(check_op(wino_case({1, 2, 7, 9, 8}, {a, a, 2, 16, 8}, tile, {1, 1, 1, 1}, true)), 0);
    EXPECT_EQ(check_op(wino_case({2, 3, 11, 6, 4}, {a, a, 3, 12, 4}, tile, {0, 0, 0, 0}, false)), 0);
    EXPECT_EQ(check_op(wino_case({1, 1, 5, 13, 8}, {a, a, 1, 8, 16}, tile, {1, 0, 2, 1}, true)), 0);
    EXPECT_EQ(check_op(wino_case({1, 2, 3, 3, 8}, {a, a, 4, 16, 8}, tile, {1, 1, 1, 1}, true)), 0);
  }
}

TEST(TopiWinograd, NonDefaultKnobs) {
  OpCase c = wino_case({1, 2, 14, 14, 8}, {6, 6, 4, 16, 8}, 4, {1, 1, 1, 1}, true);
  for (auto [tp, tm] : {std::pair<int64_t, int64_t>{5, 1}, {3, 2}, {16, 4}, {1, 1}}) {
    Knobs k;
    k.set("vector", 8).set("parallel_min", 16384).set("wino_tile", 4).set("ic_block", 8).set("tile_p", tp).set("tile_mb", tm);
    k.set("prefetch", tm % 2);  // with and without the weight-panel prefetch
    c.knobs = k;
    EXPECT_EQ(check_op(c), 0) << "tile_p " << tp << " tile_mb " << tm;
  }
  Knobs bad;
  bad.set("vector", 8).set("parallel_min", 16384).set("wino_tile", 4).set("ic_block", 8).set("tile_p", 4).set("tile_mb", 3);
  c.knobs = bad;
  EXPECT_THROW(check_op(c), kiln::UserError);
}

// The product's two nests: by output-channel chunk (its products over all tiles, 16 x 2 x 8
// floats here, in one stack buffer; the next chunk's weight panel prefetched spread over the
// passes and channel steps) and, where those exceed 16 KiB (2 x 32 x 33 tiles of F(2x2)), by
// tile block (a tile_p x tile_mb x ob register tile per block). Values against the reference
// with the prefetch on and off in both.
TEST(TopiWinograd, ProductByChunkOrByTileBlock) {
  const codegen::Target t = codegen::host_target();
  const std::vector<ir::TensorType> small = {tt({1, 2, 14, 14, 8}), tt({6, 6, 4, 16, 8})};
  const std::vector<ir::TensorType> large = {tt({2, 1, 64, 66, 8}), tt({4, 4, 2, 8, 8})};
  const auto knobs = [](int64_t tile, int64_t tp, int64_t tm, int64_t prefetch) {
    Knobs k;
    k.set("vector", 8).set("parallel_min", 16384).set("wino_tile", tile).set("ic_block", 8);
    k.set("tile_p", tp).set("tile_mb", tm).set("prefetch", prefetch);
    return k;
  };
  const auto lowered = [&](const std::vector<ir::TensorType>& in, int64_t tile, const Knobs& k) {
    OpKernelOptions o;
    o.knobs = k;
    const ir::Attrs attrs = ir::Attrs().set("tile", tile).set("pads", std::vector<int64_t>{1, 1, 1, 1});
    return tir::to_string(build_op_kernel("conv2d_winograd_nchwc", in, attrs, t, o));
  };
  const std::string by_chunk = lowered(small, 4, knobs(4, 6, 2, 1));
  EXPECT_NE(by_chunk.find("allocate wino_product.local[f32 * 256] stack"), std::string::npos) << by_chunk;
  EXPECT_NE(by_chunk.find("prefetch("), std::string::npos) << by_chunk;
  EXPECT_EQ(lowered(small, 4, knobs(4, 6, 2, 0)).find("prefetch("), std::string::npos);
  const std::string by_block = lowered(large, 2, knobs(2, 6, 2, 1));
  EXPECT_NE(by_block.find("allocate wino_product.local[f32 * 96] stack"), std::string::npos) << by_block;
  EXPECT_NE(by_block.find("prefetch("), std::string::npos) << by_block;
  for (int64_t prefetch : {0, 1}) {
    OpCase c = wino_case({1, 2, 14, 14, 8}, {6, 6, 4, 16, 8}, 4, {1, 1, 1, 1}, true);
    c.knobs = knobs(4, 6, 2, prefetch);
    EXPECT_EQ(check_op(c), 0) << "by chunk, prefetch " << prefetch;
    OpCase d = wino_case({2, 1, 64, 66, 8}, {4, 4, 2, 8, 8}, 2, {1, 1, 1, 1}, false);
    d.knobs = knobs(2, 6, 2, prefetch);
    EXPECT_EQ(check_op(d), 0) << "by tile block, prefetch " << prefetch;
  }
}

// The register tile follows the target: 6 tiles x 2 blocks of 8 on AVX2 (16 registers), 14 x 2
// blocks of 16 on AVX-512 (32 registers), and the kernel lowers for both.
TEST(TopiWinograd, KnobsFollowTheTarget) {
  struct Case {
    const char* target;
    int64_t block, tile_p, tile_mb;
  };
  for (const Case& c : {Case{"llvm -mcpu=znver3", 8, 6, 2}, Case{"llvm -mcpu=znver4", 16, 14, 2}}) {
    const codegen::Target t = codegen::parse_target(c.target);
    const int64_t b = c.block;
    const std::vector<ir::TensorType> in = {tt({1, 64 / b, 28, 28, b}), tt({6, 6, 64 / b, 64, b})};
    const ir::Attrs attrs = ir::Attrs().set("tile", int64_t{4}).set("pads", std::vector<int64_t>{1, 1, 1, 1});
    const tir::Tensor x = tir::placeholder(in[0].shape, ir::DType::kF32, "x");
    const tir::Tensor u = tir::placeholder(in[1].shape, ir::DType::kF32, "u");
    const ComputeResult r = compute_op("conv2d_winograd_nchwc", {x, u}, attrs, layout_hints(t));
    EXPECT_EQ(r.schedule, ScheduleKind::kConv2dWinograd);
    const Knobs k = default_knobs(r, t);
    EXPECT_EQ(k.get("tile_p"), c.tile_p) << c.target;
    EXPECT_EQ(k.get("tile_mb"), c.tile_mb) << c.target;
    EXPECT_EQ(k.get("wino_tile"), 4);
    EXPECT_NO_THROW(build_op_kernel("conv2d_winograd_nchwc", in, attrs, t)) << c.target;
  }
}

TEST(TopiWinograd, WeightTransformKernel) {
  for (int tile : {2, 4}) {
    OpCase c;
    c.op = "winograd_weight_transform";
    c.inputs = {tt({3, 2, 3, 3, 4, 8})};
    c.attrs = ir::Attrs().set("tile", int64_t{tile});
    c.tol = {1e-6, 1e-6};
    EXPECT_EQ(check_op(c), 0);
  }
}

// A fused group as FuseOps makes it: an injective producer (layout transform of the input), the
// Winograd conv with bias, a residual add and relu in one kernel; vs the members' references.
TEST(TopiWinograd, FusedGroupWithResidualAddRelu) {
  using ir::Attrs;
  for (int tile : {2, 4}) {
    const int64_t a = tile + 2;
    const std::vector<ir::TensorType> in_types = {tt({1, 16, 9, 11}), tt({a, a, 2, 16, 8}), tt({16}),
                                                  tt({1, 2, 9, 11, 8})};
    const std::vector<GroupMember> members = {
        {"layout_transform", {ValueRef::input(0)}, Attrs().set("src_layout", std::string("NCHW")).set("dst_layout", std::string("NCHW8c"))},
        {"conv2d_winograd_nchwc", {ValueRef::member(0), ValueRef::input(1), ValueRef::input(2)},
         Attrs().set("pads", std::vector<int64_t>{1, 1, 1, 1}).set("tile", int64_t{tile})},
        {"add", {ValueRef::member(1), ValueRef::input(3)}, {}},
        {"relu", {ValueRef::member(2)}, {}}};
    std::mt19937 rng(9);
    std::vector<ir::NDArray> inputs;
    for (const auto& t : in_types) inputs.push_back(random_array(t, Dist::uniform(), rng));
    const ir::OpRegistry& reg = ir::OpRegistry::global();
    std::vector<ir::NDArray> values;
    for (const GroupMember& m : members) {
      std::vector<ir::NDArray> in;
      std::vector<ir::TensorType> types;
      for (const ValueRef& r : m.inputs) {
        in.push_back(r.kind == ValueRef::Kind::kGroupInput ? inputs[r.index] : values[r.index]);
        types.push_back(in.back().type());
      }
      const ir::OpDef& def = reg.get(m.op);
      const Attrs full = reg.validate_attrs(def, m.attrs);
      values.push_back(def.reference(in, full, def.infer_type(types, full))[0]);
    }
    const tir::PrimFunc f = build_group_kernel(members, in_types, {ValueRef::member(3)}, codegen::host_target());
    codegen::LLVMModule module(codegen::host_target(), "wino_fused");
    module.add_prim_func(f);
    codegen::JitModule jit(std::move(module));
    ir::NDArray got = ir::NDArray::empty(values[3].dtype(), values[3].shape());
    std::vector<std::vector<int64_t>> shapes(5);
    std::vector<DLTensor> args;
    for (size_t i = 0; i < inputs.size(); ++i) args.push_back(dl_view(inputs[i], shapes[i]));
    args.push_back(dl_view(got, shapes[4]));
    jit.run(f->name, args);
    int bad = 0;
    for (int64_t i = 0; i < got.numel(); ++i) {
      const double g = got.get_as_double(i), e = values[3].get_as_double(i);
      if (std::fabs(g - e) > 1e-3 + 1e-4 * std::fabs(e) && bad++ < 5) {
        ADD_FAILURE() << "tile " << tile << " index " << i << ": actual " << g << ", expected " << e;
      }
    }
    EXPECT_EQ(bad, 0);
  }
}

// Compiled Winograd kernel vs the direct convolution's reference (double accumulation) on the
// same (f32) weights: the accuracy a converted model sees.
std::vector<double> resnet_layer_errors(int64_t c, int64_t hw, const std::vector<int>& tiles) {
  const codegen::Target& target = codegen::host_target();
  const int64_t b = 8;
  std::mt19937 rng(42);
  ir::NDArray x = random_array(tt({1, c / b, hw, hw, b}), Dist::uniform(0, 2), rng);  // post-ReLU-like
  ir::NDArray w = random_array(tt({c / b, c / b, 3, 3, b, b}), Dist::uniform(-0.05, 0.05), rng);
  ir::NDArray bias = random_array(tt({c}), Dist::uniform(-0.1, 0.1), rng);
  const ir::OpRegistry& reg = ir::OpRegistry::global();
  auto ref = [&](const std::string& op, const std::vector<ir::NDArray>& in, const ir::Attrs& attrs) {
    const ir::OpDef& d = reg.get(op);
    const ir::Attrs full = reg.validate_attrs(d, attrs);
    std::vector<ir::TensorType> types;
    for (const auto& a : in) types.push_back(a.type());
    return d.reference(in, full, d.infer_type(types, full))[0];
  };
  const std::vector<int64_t> pads = {1, 1, 1, 1};
  const ir::NDArray direct = ref("conv2d_nchwc", {x, w, bias}, ir::Attrs().set("pads", pads));
  std::vector<double> errors;
  for (int tile : tiles) {
  ir::NDArray u = ref("winograd_weight_transform", {w}, ir::Attrs().set("tile", int64_t{tile}));
  const ir::Attrs attrs = ir::Attrs().set("pads", pads).set("tile", int64_t{tile});
  tir::PrimFunc f = build_op_kernel("conv2d_winograd_nchwc", {x.type(), u.type(), bias.type()}, attrs, target);
  codegen::LLVMModule module(target, "wino_accuracy");
  module.add_prim_func(f);
  codegen::JitModule jit(std::move(module));
  ir::NDArray y = ir::NDArray::empty(direct.dtype(), direct.shape());
  std::vector<std::vector<int64_t>> shapes(4);
  std::vector<DLTensor> args = {dl_view(x, shapes[0]), dl_view(u, shapes[1]), dl_view(bias, shapes[2]),
                                dl_view(y, shapes[3])};
  jit.run(f->name, args);
  double diff = 0, scale = 1e-30;
  for (int64_t i = 0; i < y.numel(); ++i) {
    diff = std::max(diff, std::fabs(y.get_as_double(i) - direct.get_as_double(i)));
    scale = std::max(scale, std::fabs(direct.get_as_double(i)));
  }
  errors.push_back(diff / scale);
  }
  return errors;
}

TEST(TopiWinograd, AccuracyOnResNetLayers) {
  struct Layer {
    int64_t c, hw;
  };
  for (const Layer& l : {Layer{64, 56}, Layer{128, 28}, Layer{256, 14}, Layer{512, 7}}) {
    const std::vector<double> errors = resnet_layer_errors(l.c, l.hw, {2, 4});
    for (int tile : {2, 4}) {
      const double err = errors[tile == 2 ? 0 : 1];
      std::cout << "[ accuracy ] " << l.hw << "x" << l.hw << "x" << l.c << " F(" << tile << "x" << tile
                << ",3x3): max|winograd - direct| / max|direct| = " << err << "\n";
      EXPECT_LE(err, 1e-4) << l.hw << "x" << l.c << " tile " << tile;
    }
  }
}

}  // namespace
}  // namespace kiln::topi::testing
