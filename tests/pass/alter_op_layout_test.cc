// AlterOpLayout on small conv chains: the rewritten graph (Before/Expected by structural equality
// for a single conv; op and transform counts for chains), transforms only at chain borders,
// constant operands folded, and outputs equal to the original's. conv2d_nchwc's reference is
// conv2d's on the unblocked tensors and transforms only move elements, so outputs are exact
// (max relative error 0), except where FoldConstant is involved it is exact too.
#include <gtest/gtest.h>

#include <tuple>

#include "pass/pass_test_util.h"

namespace kiln::pass::testing {
namespace {

Value conv(const Value& x, int64_t m, uint64_t seed, int64_t groups = 1, bool bias = false) {
  const int64_t c = x.type().shape[1];
  std::vector<Value> args = {x, random_constant("w" + std::to_string(seed), {m, c / groups, 3, 3}, seed)->output()};
  if (bias) args.push_back(random_constant("b" + std::to_string(seed), {m}, seed + 100)->output());
  return make_call("conv2d", args, Attrs().set("pads", std::vector<int64_t>{1, 1, 1, 1}).set("groups", groups))->output();
}

Value lt(const Value& v, const std::string& src, const std::string& dst) {
  return make_call("layout_transform", {v}, Attrs().set("src_layout", src).set("dst_layout", dst))->output();
}

PassOptions block(int b) {
  PassOptions o;
  o.layout_block = b;
  return o;
}

TEST(AlterOpLayout, SingleConvBeforeExpected) {
  NodePtr x = make_input("x", {DType::kF32, {1, 8, 5, 5}});
  NodePtr w = random_constant("w", {8, 8, 3, 3}, 1);
  const Attrs attrs = Attrs().set("pads", std::vector<int64_t>{1, 1, 1, 1});
  Graph before({x}, {make_call("conv2d", {x->output(), w->output()}, attrs)->output()}, {"y"});
  // Block option 4 (vector lanes): 8 channels are two vectors, one block of 8.
  PipelineResult r = run_passes(before, {"AlterOpLayout"}, block(4));
  Value data = lt(x->output(), "NCHW", "NCHW8c");
  Value weights = lt(w->output(), "OIHW", "OIHW8i8o");
  Value y = lt(make_call("conv2d_nchwc", {data, weights}, attrs)->output(), "NCHW8c", "NCHW");
  Graph expected({x}, {y}, {"y"});
  std::string why;
  EXPECT_TRUE(structurally_equal(r.graph, expected, &why)) << why << "\n" << graph_to_text(r.graph);
  EXPECT_EQ(r.stat("AlterOpLayout", "layout_transforms"), 2);
  EXPECT_EQ(r.stat("AlterOpLayout", "constant_transforms"), 1);
  EXPECT_EQ(r.stat("AlterOpLayout", "block"), 4);
  EXPECT_TRUE(same_results(before, r.graph, 0.0));
  EXPECT_TRUE(round_trips(r.graph));
}

TEST(AlterOpLayout, ChainKeepsBlockedLayoutThroughElementwiseOps) {
  // conv -> +bias[C,1,1] -> relu -> conv -> + residual (first relu) -> clip: one transform in, one out.
  NodePtr x = make_input("x", {DType::kF32, {1, 3, 6, 6}});
  Value c1 = conv(x->output(), 16, 1);
  Value b1 = make_call("add", {c1, random_constant("bias", {16, 1, 1}, 5)->output()}, {})->output();
  Value r1 = make_call("relu", {b1}, {})->output();
  Value c2 = conv(r1, 16, 2, 1, true);
  Value s = make_call("add", {c2, r1}, {})->output();
  Value scaled = make_call("mul", {s, make_constant("half", NDArray::scalar(DType::kF32, 0.5))->output()}, {})->output();
  Value y = make_call("clip", {scaled}, Attrs().set("min", 0.0).set("max", 6.0))->output();
  Graph before({x}, {y}, {"y"});
  PipelineResult r = run_passes(before, {"AlterOpLayout", "FoldConstant"}, block(8));
  EXPECT_EQ(count_op(r.graph, "conv2d"), 0);
  EXPECT_EQ(count_op(r.graph, "conv2d_nchwc"), 2);
  EXPECT_EQ(r.stat("AlterOpLayout", "layout_transforms"), 2);  // the input and the output
  EXPECT_EQ(count_op(r.graph, "layout_transform"), 2) << graph_to_text(r.graph);  // weights, bias folded
  EXPECT_EQ(count_op(r.graph, "reshape"), 0);
  // The first conv has C = 3: its input block is 3 (the largest divisor <= 8); 16 output
  // channels are two vectors: block 16.
  bool saw_c3 = false;
  for (const auto& node : r.graph.topo_order()) {
    if (node->kind() == NodeKind::kCall && node->as_call().op().name == "conv2d_nchwc") {
      saw_c3 = saw_c3 || node->as_call().args()[0].type().shape == Shape{1, 1, 6, 6, 3};
      EXPECT_EQ(node->output_types()[0].shape, (Shape{1, 1, 6, 6, 16}));
    }
  }
  EXPECT_TRUE(saw_c3);
  EXPECT_TRUE(same_results(before, r.graph, 0.0));
}

TEST(AlterOpLayout, WindowPoolingStaysBlocked) {
  // conv -> max_pool -> conv -> avg_pool -> conv -> global_avg_pool: every pool runs on the blocks
  // (the global one as a window pool over the whole map): the only transforms are the input's and
  // the pooled [1, 16, 1, 1] output's.
  using Ints = std::vector<int64_t>;
  NodePtr x = make_input("x", {DType::kF32, {1, 8, 9, 9}});
  Value c1 = conv(x->output(), 8, 1);
  Value p1 = make_call("max_pool2d", {c1},
                       Attrs().set("kernel", Ints{3, 3}).set("strides", Ints{2, 2}).set("pads", Ints{1, 1, 1, 1}))
                 ->output();
  Value c2 = conv(p1, 16, 2);
  Value p2 = make_call("avg_pool2d", {c2},
                       Attrs().set("kernel", Ints{3, 3}).set("pads", Ints{1, 1, 1, 1}).set("ceil_mode", int64_t{1}))
                 ->output();
  Value c3 = conv(p2, 16, 3, 1, true);
  Value g = make_call("global_avg_pool", {c3}, {})->output();
  Graph before({x}, {g}, {"pooled"});
  PipelineResult r = run_passes(before, {"AlterOpLayout"}, block(8));
  EXPECT_EQ(r.stat("AlterOpLayout", "layout_transforms"), 2) << graph_to_text(r.graph);  // the input, the global pool's
  EXPECT_EQ(r.stat("AlterOpLayout", "pools_blocked"), 3);
  EXPECT_EQ(count_op(r.graph, "max_pool2d_nchwc"), 1);
  EXPECT_EQ(count_op(r.graph, "avg_pool2d_nchwc"), 2);
  EXPECT_EQ(count_op(r.graph, "global_avg_pool"), 0);
  EXPECT_EQ(count_op(r.graph, "max_pool2d") + count_op(r.graph, "avg_pool2d"), 0);
  EXPECT_TRUE(same_results(before, r.graph, 0.0));
  EXPECT_TRUE(round_trips(r.graph));
}

TEST(AlterOpLayout, SqueezeExciteStaysBlocked) {
  // x = conv(in); s = sigmoid(conv1x1(relu(conv1x1(global_avg_pool(x))))); y = conv(x * s): the pooled
  // [1, C, 1, 1] branch stays blocked and the scale broadcasts on the blocks.
  NodePtr x = make_input("x", {DType::kF32, {1, 8, 7, 9}});
  Value c1 = conv(x->output(), 32, 1);
  Value g = make_call("global_avg_pool", {c1}, {})->output();
  auto conv1x1 = [](const Value& v, int64_t m, uint64_t seed) {
    const int64_t c = v.type().shape[1];
    return make_call("conv2d", {v, random_constant("s" + std::to_string(seed), {m, c, 1, 1}, seed)->output()}, {})
        ->output();
  };
  Value squeeze = make_call("relu", {conv1x1(g, 8, 2)}, {})->output();
  Value scale = make_call("sigmoid", {conv1x1(squeeze, 32, 3)}, {})->output();
  Value excited = make_call("mul", {c1, scale}, {})->output();
  Value y = conv(excited, 16, 4);
  Graph before({x}, {y}, {"y"});
  PipelineResult r = run_passes(before, {"AlterOpLayout", "FoldConstant"}, block(8));
  EXPECT_EQ(r.stat("AlterOpLayout", "layout_transforms"), 2) << graph_to_text(r.graph);  // input and output only
  EXPECT_EQ(count_op(r.graph, "conv2d_nchwc"), 4);
  EXPECT_EQ(count_op(r.graph, "avg_pool2d_nchwc"), 1);
  EXPECT_TRUE(same_results(before, r.graph, 1e-6));
  EXPECT_TRUE(round_trips(r.graph));
}

TEST(AlterOpLayout, ChannelConcatOfBlockedValuesStaysBlocked) {
  // A fire module: squeeze conv -> (expand 1x1 | expand 3x3) -> concat -> max_pool -> conv. The
  // concat joins the blocks (both 16-channel blocks), the pool and the next conv follow: only the
  // input's and the output's transforms remain. A concat whose channels no block divides, or on
  // another axis, stays plain.
  using Ints = std::vector<int64_t>;
  NodePtr x = make_input("x", {DType::kF32, {1, 8, 9, 9}});
  Value squeeze = make_call("relu", {conv(x->output(), 16, 1)}, {})->output();
  Value e1 = make_call("conv2d", {squeeze, random_constant("e1", {32, 16, 1, 1}, 2)->output()}, {})->output();
  Value e3 = conv(squeeze, 16, 3, 1, true);
  Value cat = make_call("concat", {e1, e3}, Attrs().set("axis", int64_t{1}))->output();
  Value pool = make_call("max_pool2d", {cat}, Attrs().set("kernel", Ints{3, 3}).set("strides", Ints{2, 2}))->output();
  Value y = conv(pool, 16, 4);
  Graph before({x}, {y}, {"y"});
  PipelineResult r = run_passes(before, {"AlterOpLayout", "FoldConstant"}, block(8));
  EXPECT_EQ(r.stat("AlterOpLayout", "concats_blocked"), 1);
  EXPECT_EQ(r.stat("AlterOpLayout", "layout_transforms"), 2) << graph_to_text(r.graph);
  bool saw_blocked_concat = false;
  for (const auto& node : r.graph.topo_order()) {
    if (node->kind() == NodeKind::kCall && node->as_call().op().name == "concat") {
      saw_blocked_concat = node->output_types()[0].shape == Shape{1, 3, 9, 9, 16};
    }
  }
  EXPECT_TRUE(saw_blocked_concat) << graph_to_text(r.graph);
  EXPECT_TRUE(same_results(before, r.graph, 0.0));
  EXPECT_TRUE(round_trips(r.graph));

  // Channels 16 + 3: no block of the inputs divides both; the concat stays NCHW.
  NodePtr z = make_input("z", {DType::kF32, {1, 3, 9, 9}});
  Value odd = make_call("concat", {conv(x->output(), 16, 5), z->output()}, Attrs().set("axis", int64_t{1}))->output();
  // Concatenating along the height keeps the layout plain as well.
  Value tall = make_call("concat", {conv(x->output(), 16, 6), conv(x->output(), 16, 7)}, Attrs().set("axis", int64_t{2}))
                   ->output();
  Graph plain({x, z}, {odd, tall}, {"odd", "tall"});
  PipelineResult p = run_passes(plain, {"AlterOpLayout"}, block(8));
  EXPECT_EQ(p.stat("AlterOpLayout", "concats_blocked"), 0);
  EXPECT_TRUE(same_results(plain, p.graph, 0.0));
}

TEST(AlterOpLayout, OddChannelCountsArePaddedToWholeBlocks) {
  // 58 channels would get blocks of 2 lanes; padded to 64 they get two vectors (block 16). The
  // chain conv(58) -> x / d (per-channel d, zero-padded: 0 / 0 = NaN in the padding lanes) ->
  // conv(58) -> max_pool -> depthwise conv must still equal the original: the second conv reads
  // its input through a lane mask (where), and the output view crops the padding.
  using Ints = std::vector<int64_t>;
  NodePtr x = make_input("x", {DType::kF32, {1, 8, 9, 9}});
  Value c1 = conv(x->output(), 58, 1, 1, true);
  Value d = make_call("div", {c1, random_constant("d", {58, 1, 1}, 7)->output()}, {})->output();
  Value c2 = conv(d, 58, 2);
  Value p = make_call("max_pool2d", {c2}, Attrs().set("kernel", Ints{2, 2}).set("strides", Ints{2, 2}))->output();
  Value y = conv(p, 58, 3, 58, true);  // depthwise
  Graph before({x}, {y}, {"y"});
  PipelineResult r = run_passes(before, {"AlterOpLayout", "FoldConstant"}, block(8));
  EXPECT_EQ(r.stat("AlterOpLayout", "convs_padded"), 3) << graph_to_text(r.graph);
  EXPECT_EQ(r.stat("AlterOpLayout", "layout_transforms"), 2) << graph_to_text(r.graph);
  EXPECT_EQ(count_op(r.graph, "where"), 1);  // before the second conv only
  EXPECT_EQ(count_op(r.graph, "strided_slice"), 1);  // the output view
  for (const auto& node : r.graph.topo_order()) {
    if (node->kind() == NodeKind::kCall && node->as_call().op().name == "conv2d_nchwc") {
      EXPECT_EQ(node->output_types()[0].shape[4], 16);
      EXPECT_EQ(node->output_types()[0].shape[1], 4);  // 64 channels
    }
  }
  EXPECT_TRUE(same_results(before, r.graph, 1e-6));
  EXPECT_TRUE(round_trips(r.graph));
}

TEST(AlterOpLayout, ValuesMeetingGroupedConvsAreNotPadded) {
  // conv(200) -> relu -> grouped conv (25 groups of 8) and a squeeze-excite scale of the same
  // channels. The values that meet the grouped conv's result (the scale's class) get block 8 and
  // no padding. conv(200) only feeds the grouped conv: with a long reduction (32 input channels x
  // 9 taps >= 256) its result takes two vectors (208, block 16) as it would alone, and the
  // grouped conv re-blocks it to 8 (crop and transform, which FuseOps puts in the grouped conv's
  // packing stage): one padded conv. The same graph without the grouped conv pads that conv.
  // A shorter one re-blocks too when it is at least half that (16 x 9 = 144) or the one-vector
  // blocks are odd in number (200 = 25 x 8: a one-block register tile), not with an even count
  // (192 = 24 x 8) and 8 x 9 terms.
  for (const auto& [in_channels, m, reblocked] : std::vector<std::tuple<int64_t, int64_t, bool>>{
           {32, 200, true}, {8, 200, true}, {16, 192, true}, {8, 192, false}}) {
    NodePtr x = make_input("x", {DType::kF32, {1, in_channels, 6, 6}});
    Value c1 = make_call("relu", {conv(x->output(), m, 1)}, {})->output();
    Value g = conv(c1, m, 2, m / 8);
    Value pooled = make_call("global_avg_pool", {g}, {})->output();
    Value scale =
        make_call("sigmoid",
                  {make_call("conv2d", {pooled, random_constant("e", {m, m, 1, 1}, 3)->output()}, {})->output()}, {})
            ->output();
    Value y = conv(make_call("mul", {g, scale}, {})->output(), 16, 4);
    Graph before({x}, {y}, {"y"});
    PipelineResult r = run_passes(before, {"AlterOpLayout", "FoldConstant"}, block(8));
    const std::string what = std::to_string(in_channels) + " -> " + std::to_string(m) + "\n" + graph_to_text(r.graph);
    // Re-blocked: a crop through NCHW when padded (200 -> 208), else one 16c -> 8c transform.
    const bool padded = reblocked && m % 16 != 0;
    EXPECT_EQ(r.stat("AlterOpLayout", "convs_padded"), padded ? 1 : 0) << what;
    EXPECT_EQ(r.stat("AlterOpLayout", "layout_transforms"), padded ? 4 : reblocked ? 3 : 2) << what;
    EXPECT_TRUE(same_results(before, r.graph, 1e-6)) << what;
    Graph ungrouped({x}, {conv(c1, 16, 5)}, {"y"});
    EXPECT_EQ(run_passes(ungrouped, {"AlterOpLayout"}, block(8)).stat("AlterOpLayout", "convs_padded"),
              m % 16 == 0 ? 0 : 1);
  }
}

TEST(AlterOpLayout, SpatialPadOfABlockedValueStaysBlocked) {
  // conv -> pad(H, W by 1) -> avg_pool 3x3 (Inception's branch pool) -> conv, and a reflect pad
  // before a conv: the pads pad the blocks; only the input's and output's transforms remain. A
  // pad that touches the channels stays plain.
  using Ints = std::vector<int64_t>;
  NodePtr x = make_input("x", {DType::kF32, {1, 8, 7, 9}});
  Value c1 = make_call("relu", {conv(x->output(), 16, 1)}, {})->output();
  Value padded = make_call("pad", {c1}, Attrs().set("pads", Ints{0, 0, 1, 1, 0, 0, 1, 1}))->output();
  Value pooled = make_call("avg_pool2d", {padded}, Attrs().set("kernel", Ints{3, 3}))->output();
  Value reflected =
      make_call("pad", {pooled}, Attrs().set("pads", Ints{0, 0, 2, 0, 0, 0, 1, 2}).set("mode", std::string("reflect")))
          ->output();
  Value y = conv(reflected, 16, 2);
  Value channels = make_call("pad", {c1}, Attrs().set("pads", Ints{0, 1, 0, 0, 0, 0, 0, 0}))->output();
  Graph before({x}, {y, channels}, {"y", "c"});
  PipelineResult r = run_passes(before, {"AlterOpLayout", "FoldConstant"}, block(8));
  EXPECT_EQ(r.stat("AlterOpLayout", "pads_blocked"), 2);
  EXPECT_EQ(r.stat("AlterOpLayout", "pools_blocked"), 1);
  EXPECT_EQ(r.stat("AlterOpLayout", "layout_transforms"), 3) << graph_to_text(r.graph);  // in, y, c1 for "c"
  EXPECT_TRUE(same_results(before, r.graph, 1e-6));
  EXPECT_TRUE(round_trips(r.graph));
}

TEST(AlterOpLayout, PoolKeepsItsInputBlockAndPlainPoolsStayPlain) {
  using Ints = std::vector<int64_t>;
  const Attrs window = Attrs().set("kernel", Ints{2, 2}).set("strides", Ints{2, 2});
  // 12 channels: block 6; the pool keeps it and the next conv reads it without a transform.
  NodePtr x = make_input("x", {DType::kF32, {1, 4, 8, 8}});
  Value c1 = conv(x->output(), 12, 1);
  Value p = make_call("max_pool2d", {c1}, window)->output();
  Value c2 = conv(p, 8, 2);
  // A pool of a graph input (not blocked) stays plain.
  Value q = make_call("avg_pool2d", {x->output()}, window)->output();
  Graph before({x}, {c2, q}, {"y", "q"});
  PipelineResult r = run_passes(before, {"AlterOpLayout"}, block(8));
  EXPECT_EQ(r.stat("AlterOpLayout", "layout_transforms"), 2);  // into conv1, out of conv2
  EXPECT_EQ(count_op(r.graph, "avg_pool2d"), 1);
  bool saw = false;
  for (const auto& node : r.graph.topo_order()) {
    if (node->kind() == NodeKind::kCall && node->as_call().op().name == "max_pool2d_nchwc") {
      EXPECT_EQ(node->output_types()[0].shape, (Shape{1, 2, 4, 4, 6}));
      saw = true;
    }
  }
  EXPECT_TRUE(saw);
  EXPECT_TRUE(same_results(before, r.graph, 0.0));
}

TEST(AlterOpLayout, DepthwiseFollowsItsInputBlock) {
  NodePtr x = make_input("x", {DType::kF32, {1, 4, 5, 5}});
  Value c1 = conv(x->output(), 12, 1);                 // output block 6 with block option 8? 12: largest divisor <= 8 is 6
  Value dw = conv(c1, 12, 2, /*groups=*/12, true);    // depthwise: takes block 6, weights OIHW1i6o
  Value pw = conv(dw, 8, 3);
  Graph before({x}, {pw}, {"y"});
  PipelineResult r = run_passes(before, {"AlterOpLayout", "FoldConstant"}, block(8));
  EXPECT_EQ(count_op(r.graph, "conv2d_nchwc"), 3);
  EXPECT_EQ(r.stat("AlterOpLayout", "layout_transforms"), 2);
  EXPECT_TRUE(same_results(before, r.graph, 0.0));
}

TEST(AlterOpLayout, GroupedConvsTakeBlocksWithinTheirGroups) {
  // 1x1-free chain: conv to 64 (block 16) -> grouped 16 x (4 -> 4) (re-blocked to 4: one transform)
  // -> grouped 4 x (16 -> 8) (keeps block 4 in, block 8 out) -> conv to 8: every conv blocked.
  NodePtr x = make_input("x", {DType::kF32, {1, 8, 6, 7}});
  Value c1 = conv(x->output(), 64, 1);
  Value g1 = make_call("relu", {conv(c1, 64, 2, /*groups=*/16, true)}, {})->output();
  Value g2 = conv(g1, 32, 3, /*groups=*/4);
  Value c2 = conv(g2, 8, 4);
  Graph before({x}, {c2}, {"y"});
  PipelineResult r = run_passes(before, {"AlterOpLayout", "FoldConstant"}, block(8));
  EXPECT_EQ(count_op(r.graph, "conv2d_nchwc"), 4);
  EXPECT_EQ(count_op(r.graph, "conv2d"), 0);
  EXPECT_EQ(r.stat("AlterOpLayout", "layout_transforms"), 3);  // in, 16 -> 4 re-block, out
  for (const auto& node : r.graph.topo_order()) {
    if (node->kind() == NodeKind::kCall && node->as_call().op().name == "conv2d_nchwc" &&
        node->as_call().attrs().get_int("groups") > 1) {
      const int64_t ob = node->output_types()[0].shape[4];
      const int64_t mg = node->output_types()[0].shape[1] * ob / node->as_call().attrs().get_int("groups");
      EXPECT_EQ(mg % ob, 0) << "an output block straddles two groups";
    }
  }
  EXPECT_TRUE(same_results(before, r.graph, 0.0));
  EXPECT_TRUE(round_trips(r.graph));
}

TEST(AlterOpLayout, GroupsWithoutAVectorBlockArePaddedEachToAVector) {
  // 2 groups of 32 -> 34 channels (with bias): 34 = 2 x 17 has no block of a vector or more, so
  // each group's outputs are padded to 40 (zero weight rows and bias; 5 blocks of 8 per group)
  // and the result's NCHW view drops the 6 padding channels of each group. Groups of 4 -> 10
  // would need 60% more: they keep their 5-lane blocks.
  NodePtr x = make_input("x", {DType::kF32, {1, 8, 6, 7}});
  Value c1 = conv(x->output(), 64, 1);
  Value g = make_call("relu", {conv(c1, 68, 2, /*groups=*/2, true)}, {})->output();
  Value y = conv(g, 40, 3, /*groups=*/4);  // 4 x (17 -> 10): not padded
  Graph before({x}, {y}, {"y"});
  PipelineResult r = run_passes(before, {"AlterOpLayout", "FoldConstant"}, block(8));
  std::vector<std::pair<int64_t, int64_t>> grouped;  // (padded output channels, block) per grouped conv
  for (const auto& node : r.graph.topo_order()) {
    if (node->kind() == NodeKind::kCall && node->as_call().op().name == "conv2d_nchwc" &&
        node->as_call().attrs().get_int("groups") > 1) {
      const ir::Shape& s = node->output_types()[0].shape;
      grouped.emplace_back(s[1] * s[4], s[4]);
    }
  }
  ASSERT_EQ(grouped.size(), 2u) << graph_to_text(r.graph);
  EXPECT_EQ(grouped[0], (std::pair<int64_t, int64_t>{80, 8})) << graph_to_text(r.graph);
  EXPECT_EQ(grouped[1], (std::pair<int64_t, int64_t>{40, 5})) << graph_to_text(r.graph);
  EXPECT_TRUE(same_results(before, r.graph, 1e-6));
  EXPECT_TRUE(round_trips(r.graph));
}

TEST(AlterOpLayout, GraphWithoutConvIsUnchanged) {
  Graph plain = parse_graph(R"(graph(%x: f32[1, 4, 2, 2]) { %0 = relu(%x) : f32[1, 4, 2, 2] return %0 as "y" })");
  EXPECT_FALSE(run_passes(plain, {"AlterOpLayout"}, block(8)).records[0].changed);
}

TEST(AlterOpLayout, BlockSizeFromOptions) {
  // Channels -> block for the option (vector lanes) 8 and 16: two vectors when they divide the
  // channels, else the largest divisor <= one vector.
  const std::vector<std::tuple<int64_t, int, int64_t>> cases = {
      {32, 8, 16}, {24, 8, 8}, {12, 8, 6}, {32, 16, 32}, {24, 16, 12}, {48, 16, 16}};
  for (const auto& [channels, b, expected] : cases) {
    NodePtr x = make_input("x", {DType::kF32, {1, channels, 4, 4}});
    Graph before({x}, {make_call("relu", {conv(x->output(), channels, 1)}, {})->output()}, {"y"});
    Graph after = run_one("AlterOpLayout", before, block(b));
    bool found = false;
    for (const auto& node : after.topo_order()) {
      if (node->kind() == NodeKind::kCall && node->as_call().op().name == "conv2d_nchwc") {
        EXPECT_EQ(node->output_types()[0].shape, (Shape{1, channels / expected, 4, 4, expected}))
            << channels << " channels, block option " << b;
        found = true;
      }
    }
    EXPECT_TRUE(found);
    EXPECT_TRUE(same_results(before, after, 0.0));
  }
}

}  // namespace
}  // namespace kiln::pass::testing
