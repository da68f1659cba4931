// ConvertConvToWinograd: which convs are converted (stride-1 3x3 groups-1 with constant weights;
// not strided, dilated, 1x1, depthwise or non-constant weights), the rule by shapes, the forced
// tiles, and the outputs of a converted chain (with bias, residual add and relu) against the
// original graph on the reference executor. The references compute Winograd in double, so the
// only change is the f32 rounding of the transformed weights: bound 1e-5 relative.
#include <gtest/gtest.h>

#include "pass/pass_test_util.h"

namespace kiln::pass::testing {
namespace {

const std::vector<int64_t> kPad1 = {1, 1, 1, 1};

Value conv(const Value& x, int64_t m, uint64_t seed, Attrs attrs, int64_t k = 3, bool bias = true) {
  const int64_t c = x.type().shape[1] / attrs.get_int("groups");
  std::vector<Value> args = {x, random_constant("w" + std::to_string(seed), {m, c, k, k}, seed)->output()};
  if (bias) args.push_back(random_constant("b" + std::to_string(seed), {m}, seed + 100)->output());
  return make_call("conv2d", args, attrs)->output();
}

Attrs conv_attrs(std::vector<int64_t> pads = kPad1, int64_t stride = 1, int64_t dilation = 1, int64_t groups = 1) {
  return Attrs()
      .set("pads", pads)
      .set("strides", std::vector<int64_t>{stride, stride})
      .set("dilations", std::vector<int64_t>{dilation, dilation})
      .set("groups", groups);
}

PipelineResult run_o3(const Graph& g, int winograd_tile) {
  PassOptions o;
  o.opt_level = 3;
  o.verify_each_pass = true;
  o.winograd_tile = winograd_tile;
  return run_pipeline(g, o);
}

TEST(ConvertConvToWinograd, ConvertsStrideOne3x3ConvsOnly) {
  NodePtr x = make_input("x", {DType::kF32, {1, 16, 9, 9}});
  Value a = make_call("relu", {conv(x->output(), 16, 1, conv_attrs())}, {})->output();        // converted
  Value b = conv(a, 16, 2, conv_attrs(kPad1, 2));                                              // stride 2
  Value c = conv(b, 16, 3, conv_attrs({0, 0, 0, 0}), 1);                                       // 1x1
  Value d = conv(c, 16, 4, conv_attrs({2, 2, 2, 2}, 1, 2));                                    // dilated
  Value e = conv(d, 16, 5, conv_attrs(kPad1, 1, 1, 16));                                       // depthwise
  Value f = make_call("add", {conv(e, 16, 6, conv_attrs({0, 1, 2, 1}), 3, false), e}, {})->output();  // converted
  Graph g({x}, {make_call("relu", {f}, {})->output()}, {"y"});
  for (int tile : {2, 4}) {
    PipelineResult r = run_o3(g, tile);
    EXPECT_EQ(r.stat("ConvertConvToWinograd", "candidates"), 2);
    EXPECT_EQ(r.stat("ConvertConvToWinograd", "convs_converted"), 2);
    EXPECT_EQ(r.stat("ConvertConvToWinograd", tile == 4 ? "tile4" : "tile2"), 2);
    EXPECT_TRUE(same_results(g, r.graph, 1e-5)) << "tile " << tile;
    EXPECT_TRUE(round_trips(r.graph));
    // Each converted conv anchors a fused group with its elementwise consumers.
    int groups_with_winograd = 0;
    for (const auto& node : r.graph.topo_order()) {
      if (node->kind() != NodeKind::kCall || node->as_call().op().name != "fused") continue;
      const std::string label = node->as_call().attrs().get_string("label");
      if (label.find("conv2d_winograd_nchwc") != std::string::npos) {
        ++groups_with_winograd;
        EXPECT_TRUE(label.find("relu") != std::string::npos) << label;
      }
    }
    EXPECT_EQ(groups_with_winograd, 2);
  }
  PipelineResult off = run_o3(g, 0);
  EXPECT_EQ(off.stat("ConvertConvToWinograd", "convs_converted"), 0);
  EXPECT_TRUE(same_results(g, off.graph, 0.0));
}

TEST(ConvertConvToWinograd, NonConstantWeightsStayDirect) {
  NodePtr x = make_input("x", {DType::kF32, {1, 8, 6, 6}});
  NodePtr w = make_input("w", {DType::kF32, {8, 8, 3, 3}});
  Graph g({x, w}, {make_call("conv2d", {x->output(), w->output()}, conv_attrs())->output()}, {"y"});
  PipelineResult r = run_o3(g, 4);
  EXPECT_EQ(r.stat("ConvertConvToWinograd", "candidates"), 1);
  EXPECT_EQ(r.stat("ConvertConvToWinograd", "convs_converted"), 0);
  EXPECT_EQ(count_op(r.graph, "fused"), count_op(run_o3(g, 0).graph, "fused"));
}

TEST(ConvertConvToWinograd, DisabledByName) {
  NodePtr x = make_input("x", {DType::kF32, {1, 8, 6, 6}});
  Graph g({x}, {conv(x->output(), 8, 1, conv_attrs())}, {"y"});
  PassOptions o;
  o.opt_level = 3;
  o.winograd_tile = 4;
  o.disabled_passes = {"ConvertConvToWinograd"};
  PipelineResult r = run_pipeline(g, o);
  for (const auto& rec : r.records) EXPECT_NE(rec.name, "ConvertConvToWinograd");
  EXPECT_TRUE(same_results(g, r.graph, 0.0));
}

TEST(ConvertConvToWinograd, RuleByShapes) {
  // ResNet-50's stride-1 3x3 layers (batch 1, C = M): F(4x4) where there are many tiles, F(2x2)
  // or direct where the transformed weights outweigh the tiles that share them.
  EXPECT_EQ(winograd_tile_for(1, 64, 64, 56, 56), 4);
  EXPECT_EQ(winograd_tile_for(1, 128, 128, 28, 28), 4);
  EXPECT_EQ(winograd_tile_for(1, 256, 256, 14, 14), 4);
  EXPECT_EQ(winograd_tile_for(1, 512, 512, 7, 7), 2);  // 4 tiles of F(4x4) would stream 4x the weights
  EXPECT_EQ(winograd_tile_for(1, 16, 16, 112, 112), 4);
  // Tiny layers: direct.
  EXPECT_EQ(winograd_tile_for(1, 4, 4, 2, 2), 0);
  EXPECT_EQ(winograd_tile_for(1, 512, 512, 1, 1), 0);
}

}  // namespace
}  // namespace kiln::pass::testing
