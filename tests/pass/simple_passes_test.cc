// Unit tests of FoldConstant, SimplifyInference, EliminateCommonSubexpr and DeadCodeElimination on
// small hand-written graphs: the rewritten graph against an Expected graph (structural equality),
// and the outputs before vs after on the reference executor (max relative error stated per test).
#include <gtest/gtest.h>

#include <set>

#include "pass/pass_test_util.h"

namespace kiln::pass::testing {
namespace {

::testing::AssertionResult equal_to(const Graph& actual, const std::string& expected_text) {
  Graph expected = parse_graph(expected_text);
  std::string why;
  if (structurally_equal(actual, expected, &why)) return ::testing::AssertionSuccess();
  return ::testing::AssertionFailure() << why << "\nactual:\n" << graph_to_text(actual) << "expected:\n"
                                       << graph_to_text(expected);
}

// ---- FoldConstant ----

TEST(FoldConstant, FoldsAllConstantCalls) {
  Graph before = parse_graph(R"(graph(%x: f32[2]) {
    %a = constant [1, 2] : f32[2]
    %b = constant [3, 4] : f32[2]
    %0 = add(%a, %b) : f32[2]
    %1 = sqrt(%0) : f32[2]
    %2 = mul(%x, %1) : f32[2]
    return %2 as "y"
  })");
  PipelineResult r = run_passes(before, {"FoldConstant"}, {});
  EXPECT_TRUE(equal_to(r.graph, R"(graph(%x: f32[2]) {
    %"sqrt.folded" = constant [2, 2.44948983] : f32[2]
    %0 = mul(%x, %"sqrt.folded") : f32[2]
    return %0 as "y"
  })"));
  EXPECT_EQ(r.stat("FoldConstant", "folded"), 2);
  EXPECT_TRUE(same_results(before, r.graph, 0.0));  // the same reference code computes both: exact
}

TEST(FoldConstant, DoesNotExplodeBroadcasts) {
  NodePtr x = make_input("x", {DType::kF32, {64, 64}});
  NodePtr one = make_constant("one", NDArray::scalar(DType::kF32, 1.0));
  NodePtr big = make_call("expand", {one->output()}, Attrs().set("shape", std::vector<int64_t>{64, 64}));
  NodePtr y = make_call("add", {x->output(), big->output()}, {});
  Graph before({x}, {y->output()}, {"y"});
  PipelineResult r = run_passes(before, {"FoldConstant"}, {});
  EXPECT_FALSE(r.records[0].changed);
  EXPECT_TRUE(same_graph(before, r.graph));
  EXPECT_EQ(r.stat("FoldConstant", "skipped_growth"), 1);
  // A generous limit folds it.
  PassOptions loose;
  loose.fold_small_limit = 1 << 20;
  EXPECT_EQ(count_op(run_one("FoldConstant", before, loose), "expand"), 0);
}

TEST(FoldConstant, NothingToFoldIsUnchanged) {
  Graph before = parse_graph(R"(graph(%x: f32[2]) { %0 = relu(%x) : f32[2] return %0 as "y" })");
  PipelineResult r = run_passes(before, {"FoldConstant"}, {});
  EXPECT_FALSE(r.records[0].changed);
  EXPECT_EQ(r.graph.outputs()[0].node, before.outputs()[0].node);  // identity preserved
}

// ---- SimplifyInference ----

Graph conv_bn(bool conv_also_output) {
  NodePtr x = make_input("x", {DType::kF32, {1, 3, 6, 6}});
  NodePtr w = random_constant("w", {4, 3, 3, 3}, 1);
  NodePtr b = random_constant("b", {4}, 2);
  NodePtr conv = make_call("conv2d", {x->output(), w->output(), b->output()}, Attrs().set("pads", std::vector<int64_t>{1, 1, 1, 1}));
  NodePtr bn = make_call("batch_norm", {conv->output(), random_constant("gamma", {4}, 3)->output(),
                                        random_constant("beta", {4}, 4)->output(),
                                        random_constant("mean", {4}, 5)->output(),
                                        random_constant("var", {4}, 6, 0.5, 2.0)->output()},
                         Attrs().set("epsilon", 1e-3));
  NodePtr relu = make_call("relu", {bn->output()}, {});
  if (conv_also_output) return Graph({x}, {relu->output(), conv->output()}, {"y", "conv"});
  return Graph({x}, {relu->output()}, {"y"});
}

TEST(SimplifyInference, FoldsBatchNormIntoConv) {
  Graph before = conv_bn(false);
  PipelineResult r = run_passes(before, {"SimplifyInference", "FoldConstant"}, {});
  EXPECT_EQ(r.stat("SimplifyInference", "bn_folded_into_conv"), 1);
  EXPECT_EQ(count_op(r.graph, "batch_norm"), 0);
  EXPECT_EQ(count_op(r.graph, "conv2d"), 1);
  EXPECT_EQ(r.graph.num_calls(), 2);  // conv2d (folded weights and bias) + relu
  // Folding rounds each parameter step to f32 instead of computing batch_norm in double.
  EXPECT_TRUE(same_results(before, r.graph, 1e-5));
}

TEST(SimplifyInference, BatchNormAfterSharedConvBecomesScaleShift) {
  Graph before = conv_bn(true);
  PipelineResult r = run_passes(before, {"SimplifyInference", "FoldConstant"}, {});
  EXPECT_EQ(r.stat("SimplifyInference", "bn_to_scale_shift"), 1);
  EXPECT_EQ(count_op(r.graph, "batch_norm"), 0);
  EXPECT_EQ(count_op(r.graph, "mul"), 1);
  EXPECT_EQ(count_op(r.graph, "add"), 1);
  EXPECT_EQ(r.graph.num_calls(), 4);  // conv2d, mul, add, relu
  EXPECT_TRUE(same_results(before, r.graph, 1e-5));
}

TEST(SimplifyInference, ScaleShiftOnRank2) {
  Graph before = parse_graph(R"(graph(%x: f32[2, 3]) {
    %s = constant [1, 2, 3] : f32[3]
    %b = constant [0.5, 0, -1] : f32[3]
    %m = constant [0.1, 0.2, 0.3] : f32[3]
    %v = constant [1, 2, 4] : f32[3]
    %0 = batch_norm(%x, %s, %b, %m, %v, epsilon=0.001) : f32[2, 3]
    return %0 as "y"
  })");
  Graph after = run_passes(before, {"SimplifyInference", "FoldConstant"}, {}).graph;
  EXPECT_EQ(count_op(after, "batch_norm"), 0);
  EXPECT_TRUE(same_results(before, after, 1e-6));
}

// Dilated convs whose outer taps read only zero padding (DeepLab's ASPP on a small map) lose them:
// the weights are sliced to the live taps, the pads shrink, values are unchanged.
Value dilated_conv(const Value& x, int64_t m, std::vector<int64_t> kernel, std::vector<int64_t> pads,
                   std::vector<int64_t> dilations, std::vector<int64_t> strides, uint64_t seed) {
  const int64_t c = x.type().shape[1];
  return make_call("conv2d",
                   {x, random_constant("w" + std::to_string(seed), {m, c, kernel[0], kernel[1]}, seed)->output(),
                    random_constant("b" + std::to_string(seed), {m}, seed + 50)->output()},
                   Attrs().set("pads", pads).set("dilations", dilations).set("strides", strides))
      ->output();
}

TEST(SimplifyInference, DropsConvTapsThatReadOnlyPadding) {
  NodePtr x = make_input("x", {DType::kF32, {1, 4, 5, 7}});
  // rate 7 on 5x7: only the centre tap is live -> 1x1 without pads.
  Value centre = dilated_conv(x->output(), 3, {3, 3}, {7, 7, 7, 7}, {7, 7}, {1, 1}, 1);
  // rate 4 on 5 rows (taps 0 and 2 reach rows 0/4 from outputs 4/0): all live; on 7 columns with
  // asymmetric pads (left 8, right 0): tap 0 only reads padding -> kernel width 2, left pad 4.
  Value side = dilated_conv(x->output(), 3, {3, 3}, {4, 8, 4, 0}, {4, 4}, {1, 1}, 2);
  // stride 2, 3x3, pads 1 on a 5x7 map: every tap live, unchanged.
  Value plain = dilated_conv(x->output(), 3, {3, 3}, {1, 1, 1, 1}, {1, 1}, {2, 2}, 3);
  Graph before({x}, {centre, side, plain}, {"centre", "side", "plain"});
  PipelineResult r = run_passes(before, {"SimplifyInference", "FoldConstant"}, {});
  EXPECT_EQ(r.stat("SimplifyInference", "conv_padding_taps_dropped"), 2);
  std::vector<Shape> kernels;
  std::vector<std::vector<int64_t>> pads;
  for (const auto& node : r.graph.topo_order()) {
    if (node->kind() == NodeKind::kCall && node->as_call().op().name == "conv2d") {
      kernels.push_back(node->as_call().args()[1].type().shape);
      pads.push_back(node->as_call().attrs().get_ints("pads"));
    }
  }
  ASSERT_EQ(kernels.size(), 3u);
  std::multiset<std::vector<int64_t>> got_pads(pads.begin(), pads.end());
  EXPECT_EQ(got_pads.count(std::vector<int64_t>{0, 0, 0, 0}), 1u);
  EXPECT_EQ(got_pads.count(std::vector<int64_t>{4, 4, 4, 0}), 1u);
  EXPECT_EQ(got_pads.count(std::vector<int64_t>{1, 1, 1, 1}), 1u);
  std::multiset<Shape> got_kernels(kernels.begin(), kernels.end());
  EXPECT_EQ(got_kernels.count(Shape{3, 4, 1, 1}), 1u);
  EXPECT_EQ(got_kernels.count(Shape{3, 4, 3, 2}), 1u);
  EXPECT_TRUE(same_results(before, r.graph, 1e-6));  // only products with zero padding are gone
}

TEST(SimplifyInference, DropsIdentityLikeOps) {
  Graph before = parse_graph(R"(graph(%x: f32[3, 3]) {
    %0 = reshape(%x, shape=[3, 3]) : f32[3, 3]
    %1 = transpose(%0, perm=[0, 1]) : f32[3, 3]
    %2 = cast(%1, dtype=f32) : f32[3, 3]
    %3 = strided_slice(%2, begins=[0], ends=[3], axes=[1]) : f32[3, 3]
    %4 = relu(%3) : f32[3, 3]
    %5 = transpose(%4, perm=[1, 0]) : f32[3, 3]
    %6 = pad(%5, pads=[0, 0, 0, 0]) : f32[3, 3]
    return %6 as "y"
  })");
  PipelineResult r = run_passes(before, {"SimplifyInference"}, {});
  EXPECT_TRUE(equal_to(r.graph, R"(graph(%x: f32[3, 3]) {
    %0 = relu(%x) : f32[3, 3]
    %1 = transpose(%0, perm=[1, 0]) : f32[3, 3]
    return %1 as "y"
  })"));
  EXPECT_EQ(r.stat("SimplifyInference", "identities_dropped"), 5);
  EXPECT_TRUE(same_results(before, r.graph, 0.0));
}

TEST(SimplifyInference, ElementwiseOpsMoveBeforeUnitReshapes) {
  // A 1-D conv chain as the importer writes it (conv2d on [N, C, 1, L] between reshapes): relu and
  // the residual add move before the unit-dim reshapes, whose pairs then merge away, so the convs
  // read each other's outputs. An add that broadcasts ([6, 1]) and a reshape that moves elements
  // ([1, 6, 10] -> [1, 10, 6]) keep their order.
  Graph before = parse_graph(R"(graph(%x: f32[1, 4, 10], %w: f32[6, 4, 1, 3], %v: f32[6, 6, 1, 1], %c: f32[6, 1]) {
    %0 = reshape(%x, shape=[1, 4, 1, 10]) : f32[1, 4, 1, 10]
    %1 = conv2d(%0, %w, strides=[1, 1], pads=[0, 1, 0, 1], dilations=[1, 1], groups=1) : f32[1, 6, 1, 10]
    %2 = reshape(%1, shape=[1, 6, 10]) : f32[1, 6, 10]
    %3 = relu(%2) : f32[1, 6, 10]
    %4 = reshape(%3, shape=[1, 6, 1, 10]) : f32[1, 6, 1, 10]
    %5 = conv2d(%4, %v, strides=[1, 1], pads=[0, 0, 0, 0], dilations=[1, 1], groups=1) : f32[1, 6, 1, 10]
    %6 = reshape(%5, shape=[1, 6, 10]) : f32[1, 6, 10]
    %7 = add(%6, %3) : f32[1, 6, 10]
    %8 = add(%7, %c) : f32[1, 6, 10]
    %9 = reshape(%8, shape=[1, 10, 6]) : f32[1, 10, 6]
    %10 = sigmoid(%9) : f32[1, 10, 6]
    return %10 as "y"
  })");
  PipelineResult r = run_passes(before, {"SimplifyInference"}, {});
  EXPECT_EQ(r.stat("SimplifyInference", "elementwise_before_unit_reshape"), 2);  // relu, first add
  EXPECT_TRUE(equal_to(r.graph, R"(graph(%x: f32[1, 4, 10], %w: f32[6, 4, 1, 3], %v: f32[6, 6, 1, 1], %c: f32[6, 1]) {
    %0 = reshape(%x, shape=[1, 4, 1, 10]) : f32[1, 4, 1, 10]
    %1 = conv2d(%0, %w, strides=[1, 1], pads=[0, 1, 0, 1], dilations=[1, 1], groups=1) : f32[1, 6, 1, 10]
    %2 = relu(%1) : f32[1, 6, 1, 10]
    %3 = conv2d(%2, %v, strides=[1, 1], pads=[0, 0, 0, 0], dilations=[1, 1], groups=1) : f32[1, 6, 1, 10]
    %4 = add(%3, %2) : f32[1, 6, 1, 10]
    %5 = reshape(%4, shape=[1, 6, 10]) : f32[1, 6, 10]
    %6 = add(%5, %c) : f32[1, 6, 10]
    %7 = reshape(%6, shape=[1, 10, 6]) : f32[1, 10, 6]
    %8 = sigmoid(%7) : f32[1, 10, 6]
    return %8 as "y"
  })")) << print_graph(r.graph).text;
  EXPECT_TRUE(same_results(before, r.graph, 1e-6));
}

TEST(SimplifyInference, FoldsBatchNormOfA1dConv) {
  // Conv1d + BatchNorm1d as an exporter that does not fuse them writes it: the batch norm reads the
  // conv through the [N, C, 1, L] -> [N, C, L] reshape and still folds into the conv.
  NodePtr x = make_input("x", {DType::kF32, {2, 3, 1, 9}});
  NodePtr conv = make_call("conv2d", {x->output(), random_constant("w", {4, 3, 1, 3}, 1)->output()},
                           Attrs().set("pads", std::vector<int64_t>{0, 1, 0, 1}));
  NodePtr flat = make_call("reshape", {conv->output()}, Attrs().set("shape", std::vector<int64_t>{2, 4, 9}));
  NodePtr bn = make_call("batch_norm", {flat->output(), random_constant("gamma", {4}, 3)->output(),
                                        random_constant("beta", {4}, 4)->output(),
                                        random_constant("mean", {4}, 5)->output(),
                                        random_constant("var", {4}, 6, 0.5, 2.0)->output()},
                         Attrs().set("epsilon", 1e-3));
  Graph before({x}, {bn->output()}, {"y"});
  PipelineResult r = run_passes(before, {"SimplifyInference", "FoldConstant"}, {});
  EXPECT_EQ(r.stat("SimplifyInference", "bn_folded_into_conv"), 1);
  EXPECT_EQ(count_op(r.graph, "batch_norm"), 0);
  EXPECT_EQ(r.graph.num_calls(), 2);  // conv2d (folded weights and bias) + reshape
  EXPECT_TRUE(same_results(before, r.graph, 1e-5));
}

TEST(SimplifyInference, SquaresBecomeProducts) {
  // pow(x, 2) -> mul(x, x) (bit-identical: one correctly rounded product); other exponents, an
  // exponent that broadcasts x to a higher rank, and integer bases stay pow.
  Graph before = parse_graph(R"(graph(%x: f32[2, 3], %i: i32[3]) {
    %two = constant [2] : f32[]
    %three = constant [3] : f32[]
    %two4 = constant [2] : f32[1, 1, 1]
    %itwo = constant [2] : i32[]
    %0 = pow(%x, %two) : f32[2, 3]
    %1 = pow(%x, %three) : f32[2, 3]
    %2 = pow(%x, %two4) : f32[1, 2, 3]
    %3 = pow(%i, %itwo) : i32[3]
    return %0 as "a", %1 as "b", %2 as "c", %3 as "d"
  })");
  PipelineResult r = run_passes(before, {"SimplifyInference"}, {});
  EXPECT_EQ(r.stat("SimplifyInference", "squares_to_mul"), 1);
  EXPECT_EQ(count_op(r.graph, "pow"), 3);
  EXPECT_EQ(count_op(r.graph, "mul"), 1);
  EXPECT_TRUE(same_results(before, r.graph, 0.0));
}

// ---- EliminateCommonSubexpr ----

TEST(EliminateCommonSubexpr, MergesEqualCallsAndConstants) {
  Graph before = parse_graph(R"(graph(%x: f32[2]) {
    %a = constant [1, 2] : f32[2]
    %b = constant [1, 2] : f32[2]
    %0 = add(%x, %a) : f32[2]
    %1 = add(%x, %b) : f32[2]
    %2 = leaky_relu(%0, alpha=0.1) : f32[2]
    %3 = leaky_relu(%1, alpha=0.1) : f32[2]
    %4 = leaky_relu(%1, alpha=0.2) : f32[2]
    %5 = mul(%2, %3) : f32[2]
    %6 = mul(%5, %4) : f32[2]
    return %6 as "y"
  })");
  PipelineResult r = run_passes(before, {"EliminateCommonSubexpr"}, {});
  EXPECT_TRUE(equal_to(r.graph, R"(graph(%x: f32[2]) {
    %a = constant [1, 2] : f32[2]
    %0 = add(%x, %a) : f32[2]
    %1 = leaky_relu(%0, alpha=0.1) : f32[2]
    %2 = mul(%1, %1) : f32[2]
    %3 = leaky_relu(%0, alpha=0.2) : f32[2]
    %4 = mul(%2, %3) : f32[2]
    return %4 as "y"
  })"));
  EXPECT_EQ(r.stat("EliminateCommonSubexpr", "constants_merged"), 1);
  EXPECT_EQ(r.stat("EliminateCommonSubexpr", "calls_merged"), 2);
  EXPECT_TRUE(same_results(before, r.graph, 0.0));
}

TEST(EliminateCommonSubexpr, NoDuplicatesIsUnchanged) {
  Graph before = parse_graph(R"(graph(%x: f32[2]) { %0 = relu(%x) : f32[2] %1 = neg(%x) : f32[2]
    %2 = add(%0, %1) : f32[2] return %2 as "y" })");
  PipelineResult r = run_passes(before, {"EliminateCommonSubexpr"}, {});
  EXPECT_FALSE(r.records[0].changed);
}

// ---- DeadCodeElimination ----

TEST(DeadCodeElimination, NarrowsSplitWithUnusedOutputs) {
  Graph before = parse_graph(R"(graph(%x: f32[4, 2]) {
    %0, %1, %2 = split(%x, axis=0, sizes=[1, 2, 1]) : (f32[1, 2], f32[2, 2], f32[1, 2])
    %3 = relu(%1) : f32[2, 2]
    return %3 as "y"
  })");
  PipelineResult r = run_passes(before, {"DeadCodeElimination"}, {});
  EXPECT_TRUE(equal_to(r.graph, R"(graph(%x: f32[4, 2]) {
    %0 = strided_slice(%x, axes=[0], begins=[1], ends=[3]) : f32[2, 2]
    %1 = relu(%0) : f32[2, 2]
    return %1 as "y"
  })"));
  EXPECT_EQ(r.stat("DeadCodeElimination", "unused_outputs_removed"), 2);
  EXPECT_TRUE(same_results(before, r.graph, 0.0));
}

TEST(DeadCodeElimination, FullyUsedSplitIsUnchanged) {
  Graph before = parse_graph(R"(graph(%x: f32[4, 2]) {
    %0, %1 = split(%x, axis=0, sizes=[2, 2]) : (f32[2, 2], f32[2, 2])
    %2 = add(%0, %1) : f32[2, 2]
    return %2 as "y"
  })");
  PipelineResult r = run_passes(before, {"DeadCodeElimination"}, {});
  EXPECT_FALSE(r.records[0].changed);
  EXPECT_TRUE(same_graph(before, r.graph));
}

}  // namespace
}  // namespace kiln::pass::testing
