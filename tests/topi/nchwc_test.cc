// Computes on the blocked NCHW{b}c layout: conv2d_nchwc's depthwise path (depthwise_nchwc.cc)
// against conv2d_nchwc's reference (conv2d's on the unblocked tensors), at odd sizes (channel
// blocks that are not the vector width, widths that leave a tail tile, stride 2, asymmetric
// padding, dilation, big windows), with other knob values, and fused with its clip epilogue;
// max_pool2d_nchwc / avg_pool2d_nchwc against their references (the plain pools'); grouped
// (ResNeXt-style) conv2d_nchwc on the blocked template.
// Tolerance: the reference sums in double, the kernel in f32 over kh*kw terms (sum_tol); max
// pooling is exact; average pooling rtol 1e-5.
#include <tuple>

#include "kiln/tir/printer.h"
#include "topi_test_util.h"

namespace kiln::topi::testing {
namespace {

using ir::Attrs;
using ir::DType;
using Ints = std::vector<int64_t>;


struct Depthwise {
  Ints x;  // [N, C/b, H, W, b]
  Ints kernel;
  Ints strides = {1, 1}, pads = {0, 0, 0, 0}, dilations = {1, 1};
  bool bias = false;
};

std::vector<ir::TensorType> depthwise_inputs(const Depthwise& d, DType dt) {
  const int64_t cb = d.x[1], b = d.x[4];
  std::vector<ir::TensorType> in = {tt(d.x, dt), tt({cb, 1, d.kernel[0], d.kernel[1], 1, b}, dt)};
  if (d.bias) in.push_back(tt({cb * b}, dt));
  return in;
}

Attrs depthwise_attrs(const Depthwise& d) {
  return Attrs()
      .set("strides", d.strides)
      .set("pads", d.pads)
      .set("dilations", d.dilations)
      .set("groups", d.x[1] * d.x[4]);
}

void check_depthwise(const Depthwise& d, DType dt = DType::kF32, std::optional<Knobs> knobs = std::nullopt) {
  check_op({"conv2d_nchwc", depthwise_inputs(d, dt), depthwise_attrs(d), {}, sum_tol(d.kernel[0] * d.kernel[1]),
            knobs});
}

TEST(TopiNchwc, DepthwiseUsesTheBlockedTemplate) {
  const Depthwise d{{1, 2, 13, 13, 8}, {3, 3}, {1, 1}, {1, 1, 1, 1}};
  std::vector<tir::Tensor> in;
  for (const auto& t : depthwise_inputs(d, DType::kF32)) in.push_back(tir::placeholder(t.shape, t.dtype, "x"));
  const ComputeResult r = compute_op("conv2d_nchwc", in, depthwise_attrs(d), layout_hints(codegen::host_target()));
  EXPECT_EQ(r.schedule, ScheduleKind::kDepthwise);
  EXPECT_EQ(r.parts.at("anchor").ndim(), 5);  // computed on the blocks, not on an unblocked copy
  EXPECT_TRUE(r.parts.count("pad"));
}

// The knobs come from the target: MobileNetV2's first depthwise layer (112x112, 32 channels) in
// the block AlterOpLayout gives it (2 vectors: 16 on AVX2, 32 on AVX-512), and it lowers for both.
TEST(TopiNchwc, DepthwiseKnobsFollowTheTarget) {
  // {cpu, block, tile_ow, rows_per_band (the largest divisor of 112 <= 8 leaving >= 32 bands)}
  for (const auto& [cpu, b, tile, band] : std::vector<std::tuple<std::string, int64_t, int64_t, int64_t>>{
           {"znver3", 16, 4, 7}, {"znver4", 32, 14, 2}}) {
    const codegen::Target target = codegen::parse_target("llvm -mcpu=" + cpu);
    const Depthwise d{{1, 32 / b, 112, 112, b}, {3, 3}, {1, 1}, {1, 1, 1, 1}, {1, 1}, true};
    std::vector<tir::Tensor> in;
    for (const auto& t : depthwise_inputs(d, DType::kF32)) in.push_back(tir::placeholder(t.shape, t.dtype, "x"));
    const Knobs k = default_knobs(compute_op("conv2d_nchwc", in, depthwise_attrs(d), layout_hints(target)), target);
    EXPECT_EQ(k.get("tile_ow"), tile) << cpu;  // (registers - 4) / (b / lanes) columns, a divisor of 112
    EXPECT_EQ(k.get("unroll_taps"), 1) << cpu;
    EXPECT_EQ(k.get("rows_per_band"), band) << cpu;
    const tir::PrimFunc f = build_op_kernel("conv2d_nchwc", depthwise_inputs(d, DType::kF32), depthwise_attrs(d), target);
    EXPECT_NE(f.get(), nullptr) << cpu;
  }
}

TEST(TopiNchwc, DepthwiseShapes) {
  check_depthwise({{1, 2, 13, 13, 8}, {3, 3}, {1, 1}, {1, 1, 1, 1}, {1, 1}, true});   // 13 wide: tail tile
  check_depthwise({{1, 3, 14, 15, 4}, {3, 3}, {2, 2}, {1, 1, 1, 1}, {1, 1}, true});   // C = 12, block 4, stride 2
  check_depthwise({{2, 1, 9, 20, 6}, {3, 3}, {2, 2}, {0, 1, 1, 0}});                  // block 6, asymmetric pads
  check_depthwise({{1, 2, 12, 11, 8}, {5, 5}, {1, 2}, {4, 2, 3, 1}, {2, 2}, true});   // 5x5 dilated
  check_depthwise({{1, 1, 7, 7, 8}, {3, 3}});                                         // no padding
  check_depthwise({{1, 1, 10, 10, 8}, {7, 7}, {1, 1}, {3, 3, 3, 3}});                 // 49 taps: loop, no unroll
  check_depthwise({{1, 2, 8, 112, 8}, {3, 3}, {2, 2}, {0, 0, 1, 1}, {1, 1}, true});   // MobileNet-style stride 2
  check_depthwise({{1, 1, 7, 9, 3}, {3, 3}, {1, 1}, {1, 1, 1, 1}});                   // C = 3
  check_depthwise({{1, 8, 16, 9, 8}, {3, 3}, {1, 1}, {1, 1, 1, 1}, {1, 1}, true});    // bands of 4 rows
  check_depthwise({{1, 16, 31, 10, 8}, {3, 3}, {2, 2}, {1, 1, 1, 1}, {1, 1}, true});  // stride 2, bands of 8
  check_depthwise({{1, 2, 9, 9, 8}, {3, 3}, {1, 1}, {1, 1, 1, 1}, {1, 1}, true}, DType::kF64);
}

TEST(TopiNchwc, DepthwiseOtherKnobValues) {
  const Depthwise d{{1, 2, 11, 13, 8}, {3, 3}, {2, 1}, {1, 1, 1, 1}, {1, 1}, true};
  std::vector<tir::Tensor> in;
  for (const auto& t : depthwise_inputs(d, DType::kF32)) in.push_back(tir::placeholder(t.shape, t.dtype, "x"));
  const Knobs defaults = default_knobs(
      compute_op("conv2d_nchwc", in, depthwise_attrs(d), layout_hints(codegen::host_target())), codegen::host_target());
  for (const auto& [tile, unroll, band] :
       std::vector<std::tuple<int64_t, int64_t, int64_t>>{{1, 0, 1}, {4, 1, 6}, {5, 0, 2}, {13, 1, 4}}) {
    Knobs k = defaults;
    k.set("tile_ow", tile).set("unroll_taps", unroll).set("rows_per_band", band);  // OH = 6: 4 is a partial band
    check_depthwise(d, DType::kF32, k);
  }
}

// conv2d_nchwc (depthwise, bias) + clip as one fused kernel: the clip is applied in the register
// tile before the store. Reference: the two ops' references chained.
TEST(TopiNchwc, DepthwiseBiasClipFused) {
  const Depthwise d{{1, 3, 13, 14, 8}, {3, 3}, {2, 2}, {1, 1, 1, 1}, {1, 1}, true};
  const std::vector<ir::TensorType> in_types = depthwise_inputs(d, DType::kF32);
  const Attrs clip = Attrs().set("min", 0.0).set("max", 0.5);
  const std::vector<GroupMember> members = {
      {"conv2d_nchwc", {ValueRef::input(0), ValueRef::input(1), ValueRef::input(2)}, depthwise_attrs(d)},
      {"clip", {ValueRef::member(0)}, clip}};
  std::mt19937 rng(3);
  std::vector<ir::NDArray> inputs;
  for (const auto& t : in_types) inputs.push_back(random_array(t, Dist::uniform(), rng));
  const ir::OpRegistry& reg = ir::OpRegistry::global();
  const ir::OpDef& conv = reg.get("conv2d_nchwc");
  const Attrs conv_attrs = reg.validate_attrs(conv, depthwise_attrs(d));
  const ir::NDArray y = conv.reference(inputs, conv_attrs, conv.infer_type(in_types, conv_attrs))[0];
  const ir::OpDef& clip_def = reg.get("clip");
  const Attrs clip_attrs = reg.validate_attrs(clip_def, clip);
  const ir::NDArray want = clip_def.reference({y}, clip_attrs, {y.type()})[0];

  const tir::PrimFunc f = build_group_kernel(members, in_types, {ValueRef::member(1)}, codegen::host_target());
  codegen::LLVMModule module(codegen::host_target(), "nchwc");
  module.add_prim_func(f);
  codegen::JitModule jit(std::move(module));
  ir::NDArray got = ir::NDArray::empty(want.dtype(), want.shape());
  std::vector<std::vector<int64_t>> shapes(inputs.size() + 1);
  std::vector<DLTensor> args;
  for (size_t i = 0; i < inputs.size(); ++i) args.push_back(dl_view(inputs[i], shapes[i]));
  args.push_back(dl_view(got, shapes.back()));
  jit.run(f->name, args);
  int64_t bad = 0, clipped = 0;
  for (int64_t i = 0; i < want.numel(); ++i) {
    const double g = got.get_as_double(i), e = want.get_as_double(i);
    clipped += e == 0.0 || e == 0.5;
    if (std::fabs(g - e) > 1e-4 + 1e-4 * std::fabs(e) && bad++ < 5) {
      ADD_FAILURE() << "index " << i << ": actual " << g << ", expected " << e;
    }
  }
  EXPECT_EQ(bad, 0);
  EXPECT_GT(clipped, 0);  // both bounds are exercised
}

// Grouped (not depthwise) conv2d_nchwc, as AlterOpLayout emits it for ResNeXt/RegNet: with every
// output block inside one group it runs the blocked template (kConv2dNchwc), each output block
// reading its group's input blocks; an output block straddling groups falls back to the generic
// reduction. Against conv2d_nchwc's reference (conv2d's, grouped, in double): sum_tol.
struct Grouped {
  Ints x;  // [N, C/xb, H, W, xb]
  Ints w;  // [M/ob, (C/g)/ib, kh, kw, ib, ob]
  int64_t groups;
  Ints strides = {1, 1}, pads = {1, 1, 1, 1};
  bool bias = true;
};

std::vector<ir::TensorType> grouped_inputs(const Grouped& g) {
  std::vector<ir::TensorType> in = {tt(g.x, DType::kF32), tt(g.w, DType::kF32)};
  if (g.bias) in.push_back(tt({g.w[0] * g.w[5]}, DType::kF32));
  return in;
}

Attrs grouped_attrs(const Grouped& g) {
  return Attrs().set("strides", g.strides).set("pads", g.pads).set("groups", g.groups);
}

TEST(TopiNchwc, GroupedConvUsesTheBlockedTemplateWhenBlocksStayInGroups) {
  const Grouped inside{{1, 8, 9, 11, 4}, {8, 1, 3, 3, 4, 4}, 8};   // 32 channels, 8 groups of 4, blocks of 4
  const Grouped straddle{{1, 2, 5, 5, 8}, {2, 1, 3, 3, 4, 8}, 4};  // groups of 4 output channels, blocks of 8
  for (const auto& [g, kind] : std::vector<std::pair<Grouped, ScheduleKind>>{
           {inside, ScheduleKind::kConv2dNchwc}, {straddle, ScheduleKind::kReduction}}) {
    std::vector<tir::Tensor> in;
    for (const auto& t : grouped_inputs(g)) in.push_back(tir::placeholder(t.shape, t.dtype, "x"));
    EXPECT_EQ(compute_op("conv2d_nchwc", in, grouped_attrs(g), layout_hints(codegen::host_target())).schedule, kind);
  }
}

TEST(TopiNchwc, GroupedConvShapes) {
  const std::vector<Grouped> cases = {
      {{1, 8, 9, 11, 4}, {8, 1, 3, 3, 4, 4}, 8},                       // ResNeXt-like: 8 groups of 4, tail tile
      {{1, 4, 14, 14, 8}, {4, 2, 3, 3, 8, 16}, 2, {2, 2}},             // 2 groups of 16 -> 32, stride 2, ob 16
      {{2, 6, 7, 7, 2}, {3, 2, 1, 1, 2, 2}, 3, {1, 1}, {0, 0, 0, 0}},  // 1x1, batch 2, 3 groups of 4 -> 2
      {{1, 2, 9, 9, 8}, {4, 1, 3, 3, 4, 4}, 4},                        // input block 8, weights' ib 4 (re-packed)
      {{1, 2, 5, 5, 8}, {2, 1, 3, 3, 4, 8}, 4, {1, 1}, {1, 1, 1, 1}, false},  // straddling: generic path
      {{1, 13, 7, 9, 8}, {13, 1, 3, 3, 8, 8}, 13},                     // RegNet-like: 13 groups of 8, one block each
      {{1, 6, 6, 5, 8}, {6, 2, 3, 3, 8, 8}, 3, {2, 1}},                // 3 groups of 16 in blocks of 8, stride (2, 1)
      {{1, 4, 5, 5, 8}, {4, 1, 3, 3, 8, 8}, 4},                        // 5x5: flat pixels padded to whole tiles
      {{2, 5, 14, 14, 8}, {5, 1, 3, 3, 8, 8}, 5, {2, 2}},              // stride 2 to 7x7, batch 2
      {{1, 3, 28, 28, 8}, {3, 1, 3, 3, 8, 8}, 3},                      // 28 columns: 14-column tiles
  };
  for (const Grouped& g : cases) {
    check_op({"conv2d_nchwc", grouped_inputs(g), grouped_attrs(g), {}, sum_tol(g.w[1] * g.w[4] * g.w[2] * g.w[3])});
  }
}

// A register tile's output blocks share their broadcast input values only inside one group: the
// default tile of a grouped conv takes a block count that divides the blocks per group (one
// block for RegNet's groups of 8 in blocks of 8, where 2 blocks x 5 columns spilled), however
// many groups; groups 1 may take several.
TEST(TopiNchwc, GroupedConvTilesStayInsideAGroup) {
  const codegen::Target target = codegen::parse_target("llvm -mcpu=znver3");
  for (const auto& [g, blocks_per_group] : std::vector<std::pair<Grouped, int64_t>>{
           {{{1, 26, 14, 14, 8}, {26, 1, 3, 3, 8, 8}, 26}, 1},
           {{{1, 12, 14, 14, 8}, {12, 2, 3, 3, 8, 8}, 6}, 2},
           {{{1, 12, 14, 14, 8}, {12, 12, 3, 3, 8, 8}, 1}, 0}}) {
    std::vector<tir::Tensor> in;
    for (const auto& t : grouped_inputs(g)) in.push_back(tir::placeholder(t.shape, t.dtype, "x"));
    const ComputeResult r = compute_op("conv2d_nchwc", in, grouped_attrs(g), layout_hints(target));
    const Knobs k = default_knobs(r, target);
    const std::string what = std::to_string(g.groups) + " groups";
    if (blocks_per_group > 0) {
      EXPECT_EQ(k.get("oc_blocks_per_group"), blocks_per_group) << what;
      EXPECT_EQ(blocks_per_group % k.get("oc_tile"), 0) << what;
    } else {
      EXPECT_FALSE(k.has("oc_blocks_per_group")) << what;
      EXPECT_GT(k.get("oc_tile"), 1) << what;  // 12 blocks of one input: several per tile
    }
  }
}

// Grouped convs of one-vector blocks (RegNet's groups of 8 on AVX2): one block per tile, up to 14
// columns (the weight vector is an FMA memory operand), tiles that divide the row (28 = 2 x 14,
// 7 x 7: 7 columns), and on 5x5 flat pixels padded to whole tiles (2 x 13 = 26 for 25 pixels).
TEST(TopiNchwc, OneVectorGroupedConvTilesDivideTheOutput) {
  const codegen::Target target = codegen::parse_target("llvm -mcpu=znver3");
  struct Case {
    Grouped g;
    bool flat;
    int64_t tile_ow, anchor_pixels;
  };
  for (const Case& c : std::vector<Case>{{{{1, 13, 28, 28, 8}, {13, 1, 3, 3, 8, 8}, 13}, false, 14, 0},
                                         {{{1, 55, 7, 7, 8}, {55, 1, 3, 3, 8, 8}, 55}, false, 7, 0},
                                         {{{1, 4, 5, 5, 8}, {4, 1, 3, 3, 8, 8}, 4}, true, 13, 26}}) {
    std::vector<tir::Tensor> in;
    for (const auto& t : grouped_inputs(c.g)) in.push_back(tir::placeholder(t.shape, t.dtype, "x"));
    const ComputeResult r = compute_op("conv2d_nchwc", in, grouped_attrs(c.g), layout_hints(target));
    const Knobs k = default_knobs(r, target);
    const std::string what = std::to_string(c.g.x[2]) + "x" + std::to_string(c.g.x[3]);
    EXPECT_EQ(k.get("oc_tile"), 1) << what;
    EXPECT_EQ(k.get("tile_ow"), c.tile_ow) << what;
    EXPECT_EQ(r.parts.at("anchor").ndim(), c.flat ? 4 : 5) << what;
    if (c.flat) EXPECT_EQ(r.parts.at("anchor").shape()[2], c.anchor_pixels) << what;
    EXPECT_NE(build_op_kernel("conv2d_nchwc", grouped_inputs(c.g), grouped_attrs(c.g), target).get(), nullptr) << what;
  }
}

Attrs window(Ints k, Ints s, Ints pads, Ints d = {1, 1}, int64_t ceil = 0) {
  return Attrs().set("kernel", k).set("strides", s).set("pads", pads).set("dilations", d).set("ceil_mode", ceil);
}

// Convolutions whose output pixels are numbered as one axis (flat pixels, conv2d_flatten_pixels):
// where the rows x columns tile leaves latency-bound tails and the flat one does not (7x7 with
// two-vector blocks on AVX2: 4 + 3 columns vs 9 x 5 + 4 pixels), the anchor is [N, M/b, OH*OW, b]
// (1x1, strided 1x1, 3x3 padded); not on 14x14 or 9x9 (5 + 5 + 4 and 5 + 4 columns at full
// rate) nor on AVX-512 (2 blocks x (5 + 2) columns). Both targets lower.
TEST(TopiNchwc, FlatPixelsFollowTheTileModel) {
  struct Case {
    std::string cpu;
    int64_t b, size, kernel, pad, stride;
    bool flat;
    int64_t tile_ow;  // pixels (flat) or columns per tile
  };
  for (const Case& c : std::vector<Case>{{"znver3", 16, 7, 1, 0, 1, true, 5},
                                         {"znver3", 16, 13, 1, 0, 2, true, 5},   // strided: subsampled copy
                                         {"znver3", 16, 14, 1, 0, 1, false, 5},
                                         {"znver3", 16, 7, 1, 1, 1, false, 5},   // padded: 9x9 out, 5 + 4
                                         {"znver3", 16, 7, 3, 1, 1, true, 5},
                                         {"znver3", 16, 13, 3, 1, 2, true, 5},   // 3x3 stride 2 -> 7x7
                                         {"znver4", 32, 7, 1, 0, 1, false, 5}}) {  // 2 blocks x (5 + 2)
    const codegen::Target target = codegen::parse_target("llvm -mcpu=" + c.cpu);
    const int64_t out = (c.size + 2 * c.pad - c.kernel) / c.stride + 1;
    const std::vector<ir::TensorType> types = {tt({1, 128 / c.b, c.size, c.size, c.b}),
                                               tt({128 / c.b, 128 / c.b, c.kernel, c.kernel, c.b, c.b}), tt({128})};
    const Attrs a = Attrs()
                        .set("strides", Ints{c.stride, c.stride})
                        .set("pads", Ints{c.pad, c.pad, c.pad, c.pad})
                        .set("dilations", Ints{1, 1})
                        .set("groups", int64_t{1});
    std::vector<tir::Tensor> in;
    for (const auto& t : types) in.push_back(tir::placeholder(t.shape, t.dtype, "x"));
    const ComputeResult r = compute_op("conv2d_nchwc", in, a, layout_hints(target));
    const std::string what = c.cpu + " " + std::to_string(c.kernel) + "x" + std::to_string(c.kernel) + " on " +
                             std::to_string(c.size) + "x" + std::to_string(c.size);
    EXPECT_EQ(r.parts.at("anchor").ndim(), c.flat ? 4 : 5) << what;
    EXPECT_EQ(r.parts.count("unflatten"), c.flat ? 1u : 0u) << what;
    EXPECT_EQ(r.outputs[0].shape(), (std::vector<int64_t>{1, 128 / c.b, out, out, c.b})) << what;
    const Knobs k = default_knobs(r, target);
    EXPECT_EQ(k.get("tile_ow"), c.tile_ow) << what;
    if (c.flat) {
      EXPECT_EQ(k.get("tile_oh"), 1) << what;
      // Windows: the pixels padded to whole tiles (no bounds test in any tile's reduction);
      // unpadded 1x1 convs (contiguous pixels) keep a tested tail.
      const bool padded = c.kernel > 1 || c.pad > 0;
      EXPECT_EQ(k.has("pixel_tile"), padded) << what;
      if (padded) EXPECT_EQ(k.get("pixel_tile"), c.tile_ow) << what;
      EXPECT_EQ(r.parts.at("anchor").shape()[2],
                padded ? (out * out + c.tile_ow - 1) / c.tile_ow * c.tile_ow : out * out) << what;
    }
    EXPECT_NE(build_op_kernel("conv2d_nchwc", types, a, target).get(), nullptr) << what;
  }
}

// The default K-blocking (conv2d_k_chunk) on ResNet-50's shapes (AVX2, 16-channel blocks): on
// where one channel tile's weights (at least 128 KiB) and the input it reads overflow a 512 KiB L2
// while a chunk of both fits a 32 KiB L1 and the tile's output fits the 16 KiB stack accumulator;
// the largest such chunk dividing the blocks.
TEST(TopiNchwc, KBlockingFollowsTheCacheRule) {
  struct Case {
    int64_t cin, cout, size, kernel, stride;
    int64_t k_chunk;
    std::string why;
  };
  for (const Case& c : std::vector<Case>{
           {512, 512, 14, 3, 2, 1, "3x3 stride 2 -> 7x7: 32 x (9 KiB + 16 KiB) > L2; one block per L1"},
           {2048, 512, 7, 1, 1, 4, "128 x (1 + 3 KiB) > L2; 4 blocks per L1"},
           {1024, 512, 14, 1, 1, 0, "a 64 KiB panel (under a quarter of L2) stays beside the input"},
           {512, 2048, 7, 1, 1, 4, "fits L2, but 4 MiB of weights (from DRAM) for 49 pixels; 4 blocks per L1"},
           {1024, 2048, 14, 1, 2, 4, "stride 2 -> 7x7 (input subsampled), 8 MiB of weights; 4 blocks per L1"},
           {64, 64, 7, 1, 1, 0, "16 KiB of weights stay cached"},
           {256, 1024, 14, 1, 1, 0, "16 x (1 + 12 KiB) fits L2, and 196 pixels use each weight"},
           {256, 256, 28, 3, 2, 0, "one block's padded input (56 KiB) exceeds L1"},
           {512, 128, 28, 1, 1, 0, "the 28x28 output needs a 49 KiB accumulator"}}) {
    const codegen::Target target = codegen::parse_target("llvm -mcpu=znver3");
    const int64_t b = 16, pad = c.kernel / 2;
    const std::vector<ir::TensorType> types = {tt({1, c.cin / b, c.size, c.size, b}),
                                               tt({c.cout / b, c.cin / b, c.kernel, c.kernel, b, b})};
    const Attrs a = Attrs()
                        .set("strides", Ints{c.stride, c.stride})
                        .set("pads", Ints{pad, pad, pad, pad})
                        .set("dilations", Ints{1, 1})
                        .set("groups", int64_t{1});
    std::vector<tir::Tensor> in;
    for (const auto& t : types) in.push_back(tir::placeholder(t.shape, t.dtype, "x"));
    const ComputeResult r = compute_op("conv2d_nchwc", in, a, layout_hints(target));
    EXPECT_EQ(default_knobs(r, target).get("k_chunk"), c.k_chunk) << c.why;
  }
}

// Values of convolutions with two-vector blocks (the host's 2 x lanes) at sizes whose flat pixel
// tiles leave tails (7x7 = 9 x 5 + 4 on AVX2, 5 x 7, 3 x 13, batch 2, strided 13x13 -> 7x7,
// 3x3 with padding, stride and asymmetric pads), with and without a bias, with other tile sizes,
// K-blocked (k_chunk), and the plain conv2d (NCHW in and out) on the same shapes.
TEST(TopiNchwc, FlatPixelsValues) {
  const int64_t b = 2 * codegen::host_target().vector_lanes(32);
  struct Case {
    Ints x;
    int64_t m, kernel, stride;
    Ints pads;
    bool bias;
  };
  for (const Case& c : std::vector<Case>{{{1, 64, 7, 7}, 64, 1, 1, {0, 0, 0, 0}, true},
                                         {{1, 96, 5, 7}, 32, 1, 1, {0, 0, 0, 0}, false},
                                         {{2, 32, 3, 13}, 64, 1, 1, {0, 0, 0, 0}, true},
                                         {{1, 64, 13, 13}, 96, 1, 2, {0, 0, 0, 0}, true},
                                         {{1, 32, 7, 7}, 32, 3, 1, {1, 1, 1, 1}, true},
                                         {{1, 32, 13, 13}, 64, 3, 2, {1, 1, 1, 1}, false},
                                         {{1, 32, 6, 7}, 32, 3, 1, {0, 1, 1, 1}, true}}) {
    const int64_t cin = c.x[1], k2 = c.kernel * c.kernel;
    std::vector<ir::TensorType> in = {tt({c.x[0], cin / b, c.x[2], c.x[3], b}),
                                      tt({c.m / b, cin / b, c.kernel, c.kernel, b, b})};
    if (c.bias) in.push_back(tt({c.m}));
    const Attrs a = Attrs()
                        .set("strides", Ints{c.stride, c.stride})
                        .set("pads", c.pads)
                        .set("dilations", Ints{1, 1})
                        .set("groups", int64_t{1});
    check_op({"conv2d_nchwc", in, a, {}, sum_tol(cin * k2)});
    std::vector<tir::Tensor> ph;
    for (const auto& t : in) ph.push_back(tir::placeholder(t.shape, t.dtype, "x"));
    Knobs k = default_knobs(compute_op("conv2d_nchwc", ph, a, layout_hints(codegen::host_target())),
                            codegen::host_target());
    for (int64_t tile : {1, 3, 6}) {
      k.set("tile_ow", tile).set("tile_oh", 1);
      check_op({"conv2d_nchwc", in, a, {}, sum_tol(cin * k2), k});
    }
    // K-blocked (k_chunk): chunks of 1 block, and of 3 (a shorter last chunk where the blocks
    // are not a multiple of 3), with the default tile and with a 2-row tile, and the spread
    // prefetch of the next chunk's weights (it reaches past the last one: never read).
    const ComputeResult r = compute_op("conv2d_nchwc", ph, a, layout_hints(codegen::host_target()));
    for (int64_t chunk : {1, 3}) {
      Knobs kb = default_knobs(r, codegen::host_target());
      kb.set("k_chunk", chunk).set("prefetch", 1);
      check_op({"conv2d_nchwc", in, a, {}, sum_tol(cin * k2), kb});
      if (r.parts.at("anchor").ndim() == 5) {  // rows x columns
        kb.set("tile_oh", 2).set("tile_ow", 3);
        check_op({"conv2d_nchwc", in, a, {}, sum_tol(cin * k2), kb});
      }
    }
    std::vector<ir::TensorType> plain = {tt(c.x), tt({c.m, cin, c.kernel, c.kernel})};
    if (c.bias) plain.push_back(tt({c.m}));
    check_op({"conv2d", plain, a, {}, sum_tol(cin * k2)});
  }
}

TEST(TopiNchwc, MaxPool) {
  const Tolerance exact{0, 0};
  check_op({"max_pool2d_nchwc", {tt({1, 2, 13, 13, 8})}, window({3, 3}, {2, 2}, {1, 1, 1, 1}), {}, exact});
  check_op({"max_pool2d_nchwc", {tt({2, 3, 9, 14, 4})}, window({3, 2}, {2, 3}, {0, 1, 1, 0}, {2, 1}, 1), {}, exact});
  check_op({"max_pool2d_nchwc", {tt({1, 1, 6, 6, 6})}, window({2, 2}, {2, 2}, {1, 1, 1, 1}, {1, 1}, 1), {}, exact});
  check_op({"max_pool2d_nchwc", {tt({1, 1, 7, 7, 3})}, window({7, 7}, {1, 1}, {3, 3, 3, 3}), {}, exact});  // 49 taps
  check_op({"max_pool2d_nchwc", {tt({1, 2, 11, 11, 8}, DType::kI32)}, window({3, 3}, {2, 2}, {1, 1, 1, 1}), {}, exact});
}

TEST(TopiNchwc, AvgPool) {
  const Tolerance tol{1e-5, 1e-6};
  check_op({"avg_pool2d_nchwc", {tt({1, 2, 13, 13, 8})}, window({3, 3}, {2, 2}, {1, 1, 1, 1}), {}, tol});
  Attrs incl = window({3, 3}, {1, 1}, {1, 1, 1, 1}, {1, 1}, 1);
  incl.set("count_include_pad", int64_t{1});
  check_op({"avg_pool2d_nchwc", {tt({2, 3, 9, 14, 4})}, incl, {}, tol});
  check_op({"avg_pool2d_nchwc", {tt({1, 1, 6, 7, 6})}, window({2, 2}, {2, 2}, {1, 1, 1, 1}, {1, 1}, 1), {}, tol});
  check_op({"avg_pool2d_nchwc", {tt({1, 2, 7, 7, 8}, DType::kF64)}, window({7, 7}, {1, 1}, {0, 0, 0, 0}), {}, tol});
}

// Global pooling as AlterOpLayout emits it (a window over the whole map, one output pixel): a
// squeeze-excite pool on a big map (112 x 112, 12544 taps summed in f32: rtol 1e-4) and odd sizes.
TEST(TopiNchwc, GlobalPoolAsWholeMapWindow) {
  check_op({"avg_pool2d_nchwc", {tt({1, 2, 112, 112, 16})}, window({112, 112}, {1, 1}, {0, 0, 0, 0}), {},
            Tolerance{1e-4, 1e-6}});
  check_op({"avg_pool2d_nchwc", {tt({2, 3, 5, 11, 4})}, window({5, 11}, {1, 1}, {0, 0, 0, 0}), {}, Tolerance{1e-5, 1e-6}});
  check_op({"max_pool2d_nchwc", {tt({1, 5, 9, 13, 8})}, window({9, 13}, {1, 1}, {0, 0, 0, 0}), {}, Tolerance{0, 0}});
}

// The K-blocked nest itself (FlatPixelsValues would pass with k_chunk ignored: the plain schedule
// gives the same values): with k_chunk = 2 of 4 input-channel blocks, the chunk loop (rco.outer,
// 2 trips) runs outside the pixel tiles, which run outside the chunk's blocks (rco.inner), into
// one accumulator for the channel tile's whole 7x7 output (49 x 16 floats on the stack); with
// k_chunk = 0 (and k_chunk = 4, a single chunk) the reduction is not split.
TEST(TopiNchwc, KBlockedNestHasTheChunkLoopOutsideThePixelTiles) {
  const codegen::Target target = codegen::parse_target("llvm -mcpu=znver3");
  const std::vector<ir::TensorType> types = {tt({1, 4, 7, 7, 16}), tt({2, 4, 1, 1, 16, 16})};
  const Attrs a = Attrs()
                      .set("strides", Ints{1, 1})
                      .set("pads", Ints{0, 0, 0, 0})
                      .set("dilations", Ints{1, 1})
                      .set("groups", int64_t{1});
  std::vector<tir::Tensor> ph;
  for (const auto& t : types) ph.push_back(tir::placeholder(t.shape, t.dtype, "x"));
  const Knobs defaults = default_knobs(compute_op("conv2d_nchwc", ph, a, layout_hints(target)), target);
  const auto lowered = [&](int64_t chunk, int64_t prefetch = 1) {
    Knobs k = defaults;
    k.set("k_chunk", chunk);
    k.set("prefetch", prefetch);
    OpKernelOptions o;
    o.knobs = k;
    return tir::to_string(build_op_kernel("conv2d_nchwc", types, a, target, o));
  };
  const std::string blocked = lowered(2);
  const size_t chunk_loop = blocked.find("for (rco.outer, 0, 2)");
  ASSERT_NE(chunk_loop, std::string::npos) << blocked;
  const size_t pixels = blocked.find("for (pix.outer", chunk_loop);
  const size_t blocks = blocked.find("for (rco.inner, 0, 2)", chunk_loop);
  ASSERT_NE(pixels, std::string::npos) << blocked;
  ASSERT_NE(blocks, std::string::npos) << blocked;
  EXPECT_LT(pixels, blocks) << blocked;
  const size_t accumulator = blocked.find("allocate conv2d_nchwc.local[f32 * 784] stack");
  ASSERT_NE(accumulator, std::string::npos) << blocked;
  EXPECT_LT(accumulator, chunk_loop) << blocked;
  // The next chunk's weights (2 blocks x 16 x 16 floats = 32 lines, one chunk = 512 floats ahead)
  // prefetched spread over the 10 pixel tiles x 2 blocks of the chunk: ceil(32 / 20) = 2 lines
  // (16 floats each) at the top of each block's iteration, slot (tile * 2 + block).
  const size_t first_prefetch = blocked.find("prefetch(", pixels);
  ASSERT_NE(first_prefetch, std::string::npos) << blocked;
  EXPECT_LT(blocks, first_prefetch) << blocked;
  for (const char* line : {"rco.outer * 512 + pix.outer * 64 + rco.inner * 32 + 512])",
                           "rco.outer * 512 + pix.outer * 64 + rco.inner * 32 + 528])"}) {
    EXPECT_NE(blocked.find(line), std::string::npos) << line << "\n" << blocked;
  }
  EXPECT_EQ(lowered(2, 0).find("prefetch("), std::string::npos);
  for (int64_t off : {int64_t{0}, int64_t{4}}) {
    const std::string plain = lowered(off, 0);
    EXPECT_EQ(plain.find("rco.outer"), std::string::npos) << "k_chunk=" << off << "\n" << plain;
  }
}

}  // namespace
}  // namespace kiln::topi::testing
