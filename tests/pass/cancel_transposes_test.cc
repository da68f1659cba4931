// Unit tests of CancelTransposes on small built graphs: inverse pairs cancel, consecutive
// transposes compose, transposes sink through elementwise ops (with constant operands brought to
// the inner layout), concat and pad, and the tf2onnx channels-last pattern (NHWC -> Transpose ->
// conv -> Transpose -> add/relu -> Transpose -> conv) keeps only the transposes at the graph's
// borders. Each rewrite is checked on the reference executor against the original: exact (0 relative
// error), since transposes only move elements and FoldConstant evaluates the constant rewrites with
// the same reference code.
#include <gtest/gtest.h>

#include "pass/pass_test_util.h"

namespace kiln::pass::testing {
namespace {

const std::vector<int64_t> kToNchw{0, 3, 1, 2}, kToNhwc{0, 2, 3, 1};

NodePtr transpose(const Value& x, const std::vector<int64_t>& perm) {
  return make_call("transpose", {x}, Attrs().set("perm", perm));
}

Graph cancel(const Graph& g) { return run_passes(g, {"CancelTransposes", "FoldConstant"}, {}).graph; }

TEST(CancelTransposes, InversePairDisappears) {
  NodePtr x = make_input("x", {DType::kF32, {1, 4, 5, 3}});
  NodePtr a = transpose(x->output(), kToNchw);
  NodePtr b = transpose(a->output(), kToNhwc);
  NodePtr y = make_call("relu", {b->output()}, {});
  Graph before({x}, {y->output()}, {"y"});
  PipelineResult r = run_passes(before, {"CancelTransposes"}, {});
  EXPECT_EQ(count_op(r.graph, "transpose"), 0);
  EXPECT_EQ(r.stat("CancelTransposes", "transposes_cancelled"), 1);
  EXPECT_TRUE(same_results(before, r.graph, 0.0));
}

TEST(CancelTransposes, ConsecutiveTransposesCompose) {
  NodePtr x = make_input("x", {DType::kF32, {2, 3, 4}});
  NodePtr a = transpose(x->output(), {1, 0, 2});
  NodePtr b = transpose(a->output(), {0, 2, 1});
  Graph before({x}, {b->output()}, {"y"});
  Graph after = cancel(before);
  ASSERT_EQ(count_op(after, "transpose"), 1);
  // b(a(x)) = x[j, k, i] -> perm q[i] = p1[p2[i]] = {1, 2, 0}.
  EXPECT_EQ(after.outputs()[0].node->as_call().attrs().get_ints("perm"), (std::vector<int64_t>{1, 2, 0}));
  EXPECT_TRUE(same_results(before, after, 0.0));
}

TEST(CancelTransposes, SinksThroughElementwiseWithConstants) {
  // relu(T(x) + bias[C] (broadcast on the last, channels-last axis) * scalar) -> T back: the bias
  // becomes [1, C, 1, 1] in the inner (NCHW) layout and both transposes go.
  NodePtr x = make_input("x", {DType::kF32, {1, 3, 4, 5}});
  NodePtr t = transpose(x->output(), kToNhwc);
  NodePtr bias = random_constant("bias", {3}, 11);
  NodePtr two = make_constant("two", NDArray::scalar(DType::kF32, 2.0));
  NodePtr add = make_call("add", {t->output(), bias->output()}, {});
  NodePtr mul = make_call("mul", {add->output(), two->output()}, {});
  NodePtr relu = make_call("relu", {mul->output()}, {});
  NodePtr back = transpose(relu->output(), kToNchw);
  Graph before({x}, {back->output()}, {"y"});
  PipelineResult r = run_passes(before, {"CancelTransposes", "FoldConstant"}, {});
  EXPECT_EQ(count_op(r.graph, "transpose"), 0) << graph_to_text(r.graph);
  EXPECT_EQ(r.stat("CancelTransposes", "transposes_sunk"), 3);
  EXPECT_TRUE(same_results(before, r.graph, 0.0));
}

TEST(CancelTransposes, DifferentPermsOrRuntimeOperandsStay) {
  NodePtr x = make_input("x", {DType::kF32, {2, 3, 4}});
  NodePtr z = make_input("z", {DType::kF32, {3, 2, 4}});
  NodePtr t = transpose(x->output(), {1, 0, 2});
  NodePtr add = make_call("add", {t->output(), z->output()}, {});  // z is not transposed: nothing to gain
  Graph before({x, z}, {add->output()}, {"y"});
  PipelineResult r = run_passes(before, {"CancelTransposes"}, {});
  EXPECT_FALSE(r.records[0].changed);
  EXPECT_TRUE(same_graph(before, r.graph));
}

TEST(CancelTransposes, NeverAddsATransposeForOtherUsers) {
  // T(x) feeds relu and is also a graph output: sinking it below relu would leave two transposes.
  NodePtr x = make_input("x", {DType::kF32, {2, 3, 4}});
  NodePtr t = transpose(x->output(), {2, 0, 1});
  NodePtr relu = make_call("relu", {t->output()}, {});
  Graph before({x}, {relu->output(), t->output()}, {"y", "t"});
  PipelineResult r = run_passes(before, {"CancelTransposes"}, {});
  EXPECT_FALSE(r.records[0].changed);
  EXPECT_EQ(count_op(r.graph, "transpose"), 1);
}

TEST(CancelTransposes, SinksThroughConcatAndPad) {
  NodePtr x = make_input("x", {DType::kF32, {1, 2, 3, 4}});
  NodePtr w = make_input("w", {DType::kF32, {1, 5, 3, 4}});
  NodePtr tx = transpose(x->output(), kToNhwc);  // [1, 3, 4, 2]
  NodePtr tw = transpose(w->output(), kToNhwc);  // [1, 3, 4, 5]
  NodePtr cat = make_call("concat", {tx->output(), tw->output()}, Attrs().set("axis", int64_t{3}));
  NodePtr pad = make_call("pad", {cat->output()},
                          Attrs().set("pads", std::vector<int64_t>{0, 1, 2, 0, 0, 3, 0, 0}).set("mode", std::string("constant")).set("value", 0.5));
  NodePtr back = transpose(pad->output(), kToNchw);
  Graph before({x, w}, {back->output()}, {"y"});
  Graph after = cancel(before);
  EXPECT_EQ(count_op(after, "transpose"), 0) << graph_to_text(after);
  EXPECT_EQ(after.outputs()[0].node->as_call().attrs().get_ints("pads"), (std::vector<int64_t>{0, 0, 1, 2, 0, 0, 3, 0}));
  EXPECT_TRUE(same_results(before, after, 0.0));
}

TEST(CancelTransposes, SinksThroughReductions) {
  // A channels-last global average pool: mean over H, W of NHWC = mean over 2, 3 of NCHW, [N, C]
  // either way, so no transpose is left; with keepdims the result is transposed back.
  NodePtr x = make_input("x", {DType::kF32, {2, 3, 4, 5}});
  NodePtr t = transpose(x->output(), kToNhwc);
  NodePtr gap = make_call("reduce_mean", {t->output()}, Attrs().set("axes", std::vector<int64_t>{1, 2}).set("keepdims", int64_t{0}));
  Graph before({x}, {gap->output()}, {"y"});
  Graph after = cancel(before);
  EXPECT_EQ(count_op(after, "transpose"), 0) << graph_to_text(after);
  EXPECT_EQ(after.outputs()[0].node->as_call().attrs().get_ints("axes"), (std::vector<int64_t>{2, 3}));
  EXPECT_TRUE(same_results(before, after, 1e-6));
  NodePtr t2 = transpose(x->output(), {2, 0, 3, 1});  // [4, 2, 5, 3]
  NodePtr kept = make_call("reduce_max", {t2->output()}, Attrs().set("axes", std::vector<int64_t>{1}).set("keepdims", int64_t{1}));
  NodePtr dropped = make_call("reduce_sum", {transpose(x->output(), {2, 0, 3, 1})->output()},
                              Attrs().set("axes", std::vector<int64_t>{0, 3}).set("keepdims", int64_t{0}));
  Graph both({x}, {kept->output(), dropped->output()}, {"kept", "dropped"});
  Graph both_after = cancel(both);
  // kept: reduce_max of x over axis 0 ([1, 3, 4, 5]) transposed back to [4, 1, 5, 3]; dropped:
  // reduce_sum of x over axes 1, 2 gives [2, 5], already the result's order: no transpose.
  EXPECT_EQ(count_op(both_after, "transpose"), 1) << graph_to_text(both_after);
  EXPECT_TRUE(same_results(both, both_after, 1e-6));
}

TEST(CancelTransposes, BatchNormIsNotTreatedAsElementwise) {
  NodePtr x = make_input("x", {DType::kF32, {1, 4, 4, 4}});
  NodePtr t = transpose(x->output(), kToNhwc);
  std::vector<Value> args{t->output()};
  for (int i = 0; i < 4; ++i) args.push_back(random_constant("p" + std::to_string(i), {4}, 20 + i, 0.5, 1.5)->output());
  NodePtr bn = make_call("batch_norm", args, {});
  Graph before({x}, {bn->output()}, {"y"});
  PipelineResult r = run_passes(before, {"CancelTransposes"}, {});
  EXPECT_FALSE(r.records[0].changed);
}

// The tf2onnx form of a channels-last residual block: every conv wrapped in NHWC <-> NCHW
// transposes, bias adds, relus and the residual add done in NHWC.
TEST(CancelTransposes, ChannelsLastResidualBlockKeepsOnlyBorderTransposes) {
  NodePtr x = make_input("x", {DType::kF32, {1, 6, 6, 4}});
  auto conv = [&](const Value& nhwc, int seed) {
    NodePtr in = transpose(nhwc, kToNchw);
    NodePtr w = random_constant("w" + std::to_string(seed), {4, 4, 3, 3}, seed);
    NodePtr c = make_call("conv2d", {in->output(), w->output()}, Attrs().set("pads", std::vector<int64_t>{1, 1, 1, 1}));
    NodePtr out = transpose(c->output(), kToNhwc);
    NodePtr b = make_call("add", {out->output(), random_constant("b" + std::to_string(seed), {4}, seed + 100)->output()}, {});
    return b;
  };
  NodePtr c1 = conv(x->output(), 1);
  NodePtr r1 = make_call("relu", {c1->output()}, {});
  NodePtr c2 = conv(r1->output(), 2);
  NodePtr sum = make_call("add", {c2->output(), r1->output()}, {});
  NodePtr r2 = make_call("relu", {sum->output()}, {});
  NodePtr c3 = conv(r2->output(), 3);
  Graph before({x}, {c3->output()}, {"y"});
  EXPECT_EQ(count_op(before, "transpose"), 6);
  Graph after = cancel(before);
  // One transpose reads the NHWC input, one writes the NHWC output; none in between.
  EXPECT_EQ(count_op(after, "transpose"), 2) << graph_to_text(after);
  for (const auto& node : after.topo_order()) {
    if (node->kind() != NodeKind::kCall || node->as_call().op().name != "transpose") continue;
    const bool reads_input = node->as_call().args()[0].node == x;
    const bool is_output = after.outputs()[0].node == node;
    EXPECT_TRUE(reads_input || is_output) << "activation transpose left inside:\n" << graph_to_text(after);
  }
  EXPECT_TRUE(same_results(before, after, 1e-6));
}

}  // namespace
}  // namespace kiln::pass::testing
