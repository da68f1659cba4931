// PackMatmulWeights (+ FoldConstant): products with constant weights take them as packed panels
// folded at compile time; gemm's alpha/beta become elementwise ops; non-constant or oversized
// cases are left alone. Outputs compared with the original graph on the reference executor.
#include <gtest/gtest.h>

#include <set>

#include "pass/pass_test_util.h"

namespace kiln::pass::testing {
namespace {

PipelineResult pack_and_fold(const Graph& g) {
  PassOptions o;
  o.verify_each_pass = true;
  o.layout_block = 8;
  return run_passes(g, {"PackMatmulWeights", "FoldConstant", "DeadCodeElimination"}, o);
}

TEST(PackMatmulWeights, ConstantWeightsArePackedOnce) {
  NodePtr x = make_input("x", {DType::kF32, {2, 3, 20}});
  NodePtr w = random_constant("w", {20, 37}, 1);
  Value y = make_call("matmul", {x->output(), w->output()}, {})->output();
  Graph before({x}, {y}, {"y"});
  PipelineResult r = pack_and_fold(before);
  EXPECT_EQ(r.stat("PackMatmulWeights", "packed"), 1);
  EXPECT_EQ(count_op(r.graph, "pack_matmul_b"), 0);  // folded into a constant
  ASSERT_EQ(count_op(r.graph, "matmul_packed"), 1);
  // The batch of 2 x [3, 20] rows runs as one [6, 20] product between two reshapes.
  EXPECT_EQ(r.stat("PackMatmulWeights", "batch_rows_merged"), 1);
  const CallNode& out = r.graph.outputs()[0].node->as_call();
  ASSERT_EQ(out.op().name, "reshape");
  const CallNode& mp = out.args()[0].node->as_call();
  ASSERT_EQ(mp.op().name, "matmul_packed");
  EXPECT_EQ(mp.args()[0].type().shape, (Shape{6, 20}));
  EXPECT_EQ(mp.args()[1].node->kind(), NodeKind::kConstant);
  EXPECT_EQ(mp.args()[1].type().shape, (Shape{3, 20, 16}));  // 37 columns: 3 panels of 16 (padded)
  EXPECT_TRUE(same_results(before, r.graph, 1e-6));
  EXPECT_TRUE(round_trips(r.graph));
}

// Sequence-first attention projections ([L, 1, E] x [E, 3E]: 197 one-row matrices in ViT) become one
// [L, E] product; a batch of one keeps its shape.
TEST(PackMatmulWeights, OneRowMatricesMergeIntoOneProduct) {
  NodePtr x = make_input("x", {DType::kF32, {9, 1, 24}});
  NodePtr single = make_input("s", {DType::kF32, {1, 7, 24}});
  NodePtr w = random_constant("w", {24, 32}, 4);
  Value y = make_call("matmul", {x->output(), w->output()}, {})->output();
  Value z = make_call("matmul", {single->output(), w->output()}, {})->output();
  Graph before({x, single}, {y, z}, {"y", "z"});
  PipelineResult r = pack_and_fold(before);
  EXPECT_EQ(r.stat("PackMatmulWeights", "packed"), 2);
  EXPECT_EQ(r.stat("PackMatmulWeights", "batch_rows_merged"), 1);
  std::multiset<Shape> a_shapes;
  for (const auto& node : r.graph.topo_order()) {
    if (node->kind() == NodeKind::kCall && node->as_call().op().name == "matmul_packed") {
      a_shapes.insert(node->as_call().args()[0].type().shape);
    }
  }
  EXPECT_EQ(a_shapes, (std::multiset<Shape>{Shape{9, 24}, Shape{1, 7, 24}}));
  EXPECT_TRUE(same_results(before, r.graph, 1e-6));
}

// An unrolled recurrent layer multiplies by the same weights at every step: one packing.
TEST(PackMatmulWeights, SharedWeightsArePackedOnce) {
  NodePtr x = make_input("x", {DType::kF32, {1, 24}});
  NodePtr w = random_constant("w", {24, 24}, 5);
  Value h = x->output();
  for (int step = 0; step < 5; ++step) h = make_call("tanh", {make_call("matmul", {h, w->output()}, {})->output()}, {})->output();
  Graph before({x}, {h}, {"y"});
  PassOptions o;
  o.verify_each_pass = true;
  o.layout_block = 8;
  PipelineResult packed = run_passes(before, {"PackMatmulWeights"}, o);
  EXPECT_EQ(packed.stat("PackMatmulWeights", "packed"), 5);
  EXPECT_EQ(count_op(packed.graph, "pack_matmul_b"), 1);
  EXPECT_TRUE(same_results(before, packed.graph, 1e-6));
}

TEST(PackMatmulWeights, GemmAlphaBetaAndTransposedWeights) {
  NodePtr x = make_input("x", {DType::kF32, {4, 24}});
  NodePtr w = random_constant("w", {40, 24}, 2);  // [N, K], trans_b
  NodePtr c = random_constant("c", {40}, 3);
  Attrs a = Attrs().set("trans_b", int64_t{1}).set("alpha", 0.5).set("beta", 2.0);
  Value y = make_call("gemm", {x->output(), w->output(), c->output()}, a)->output();
  Graph before({x}, {y}, {"y"});
  PipelineResult r = pack_and_fold(before);
  EXPECT_EQ(count_op(r.graph, "gemm"), 0);
  EXPECT_EQ(count_op(r.graph, "matmul_packed"), 1);
  EXPECT_EQ(count_op(r.graph, "mul"), 1);  // alpha (beta * c is folded: c is a constant)
  EXPECT_EQ(count_op(r.graph, "add"), 1);
  // 40 columns: one-vector panels (8 divides 40, 16 does not), no padding.
  EXPECT_TRUE(same_results(before, r.graph, 1e-6));
}

TEST(PackMatmulWeights, NonConstantAndOversizedAreLeftAlone) {
  // Attention-style product of two activations; gemm with trans_a; weights whose padding to whole
  // panels (9 -> 16 columns: 1.8x) grows them beyond FoldConstant's limit.
  Graph before = parse_graph(R"(graph(%a: f32[4, 8], %b: f32[8, 4], %t: f32[8, 4]) {
    %0 = matmul(%a, %b) : f32[4, 4]
    %1 = gemm(%t, %b, trans_a=1) : f32[4, 4]
    return %0 as "y", %1 as "z"
  })");
  PipelineResult r = pack_and_fold(before);
  EXPECT_EQ(r.stat("PackMatmulWeights", "packed"), 0);
  NodePtr x = make_input("x", {DType::kF32, {2, 300}});
  NodePtr w = random_constant("w", {300, 9}, 4);
  Graph big({x}, {make_call("matmul", {x->output(), w->output()}, {})->output()}, {"y"});
  EXPECT_EQ(pack_and_fold(big).stat("PackMatmulWeights", "packed"), 0);
  NodePtr ws = random_constant("ws", {30, 13}, 5);  // small: padded anyway (under the small limit)
  Graph small({x}, {make_call("matmul", {make_call("reshape", {x->output()}, Attrs().set("shape", std::vector<int64_t>{20, 30}))->output(), ws->output()}, {})->output()}, {"y"});
  PipelineResult rs = pack_and_fold(small);
  EXPECT_EQ(rs.stat("PackMatmulWeights", "packed"), 1);
  EXPECT_TRUE(same_results(small, rs.graph, 1e-6));
}

}  // namespace
}  // namespace kiln::pass::testing
