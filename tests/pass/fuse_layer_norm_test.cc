// FuseLayerNorm: the decomposed layer normalization (as exported from PyTorch before opset 17) is
// replaced by one layer_norm call with the right axis, epsilon, scale and bias; the rewritten
// graph matches the original on the reference executor (both in double per op, so within f32
// rounding of the stored intermediates). Near misses (other axes, another exponent,
// an intermediate used elsewhere, a scale varying along a leading axis) are left unchanged.
#include <gtest/gtest.h>

#include "pass/pass_test_util.h"

namespace kiln::pass::testing {
namespace {

// The decomposed norm over the last axis of %x: f32[2, 5, 12]; `tail` continues from %8 (the
// normalized value) and names the result; `two` is the exponent constant's value.
std::string decomposed(const std::string& tail, const std::string& ret, const std::string& mean2_attrs = "axes=[2], keepdims=1",
                       const std::string& two = "2", const std::string& vshape = "[2, 5, 1]") {
  return R"(graph(%x: f32[2, 5, 12], %g: f32[12], %b: f32[12], %r: f32[2, 5, 1]) {
    %two = constant [)" + two + R"(] : f32[]
    %eps = constant [1e-05] : f32[]
    %2 = reduce_mean(%x, axes=[2], keepdims=1) : f32[2, 5, 1]
    %3 = sub(%x, %2) : f32[2, 5, 12]
    %4 = pow(%3, %two) : f32[2, 5, 12]
    %5 = reduce_mean(%4, )" + mean2_attrs + R"() : f32)" + vshape + R"(
    %6 = add(%5, %eps) : f32)" + vshape + R"(
    %7 = sqrt(%6) : f32)" + vshape + R"(
    %8 = div(%3, %7) : f32[2, 5, 12]
)" + tail + "    return " + ret + "\n  }";
}

TEST(FuseLayerNorm, ScaleAndBiasBecomeOneCall) {
  Graph before = parse_graph(decomposed("    %9 = mul(%g, %8) : f32[2, 5, 12]\n    %10 = add(%9, %b) : f32[2, 5, 12]\n",
                                        R"(%10 as "y")"));
  PipelineResult r = run_passes(before, {"FuseLayerNorm", "DeadCodeElimination"}, {});
  EXPECT_EQ(r.stat("FuseLayerNorm", "layer_norms"), 1);
  EXPECT_EQ(count_op(r.graph, "layer_norm"), 1);
  EXPECT_EQ(r.graph.num_calls(), 1);
  const CallNode& ln = r.graph.outputs()[0].node->as_call();
  EXPECT_EQ(ln.attrs().get_int("axis"), 2);
  EXPECT_NEAR(ln.attrs().get_float("epsilon"), 1e-5, 1e-12);
  ASSERT_EQ(ln.args().size(), 3u);
  EXPECT_EQ(ln.args()[1].node, before.inputs()[1]);  // %g
  EXPECT_EQ(ln.args()[2].node, before.inputs()[2]);  // %b
  EXPECT_TRUE(same_results(before, r.graph, 1e-6));
  EXPECT_TRUE(round_trips(r.graph));
}

TEST(FuseLayerNorm, WithoutScaleOrBiasAndWithMulSquare) {
  // No affine part; the square written as mul(d, d); all axes from 1 normalized (rank 3).
  Graph before = parse_graph(R"(graph(%x: f32[3, 4, 6]) {
    %eps = constant [0.001] : f32[1]
    %0 = reduce_mean(%x, axes=[2, 1], keepdims=1) : f32[3, 1, 1]
    %1 = sub(%x, %0) : f32[3, 4, 6]
    %2 = mul(%1, %1) : f32[3, 4, 6]
    %3 = reduce_mean(%2, axes=[1, 2], keepdims=1) : f32[3, 1, 1]
    %4 = add(%eps, %3) : f32[3, 1, 1]
    %5 = sqrt(%4) : f32[3, 1, 1]
    %6 = div(%1, %5) : f32[3, 4, 6]
    return %6 as "y"
  })");
  PipelineResult r = run_passes(before, {"FuseLayerNorm", "DeadCodeElimination"}, {});
  EXPECT_EQ(r.stat("FuseLayerNorm", "layer_norms"), 1);
  ASSERT_EQ(r.graph.num_calls(), 1);
  const CallNode& ln = r.graph.outputs()[0].node->as_call();
  EXPECT_EQ(ln.attrs().get_int("axis"), 1);
  EXPECT_EQ(ln.args().size(), 2u);  // x and a one-element scale of 1
  EXPECT_TRUE(same_results(before, r.graph, 1e-6));
}

TEST(FuseLayerNorm, ScaleWithoutBiasAndAResidualConsumer) {
  // The mul is the root (its user adds a value that varies along the rows: not a bias).
  Graph before = parse_graph(decomposed("    %9 = mul(%8, %g) : f32[2, 5, 12]\n    %10 = add(%9, %r) : f32[2, 5, 12]\n",
                                        R"(%10 as "y")"));
  PipelineResult r = run_passes(before, {"FuseLayerNorm", "DeadCodeElimination"}, {});
  EXPECT_EQ(r.stat("FuseLayerNorm", "layer_norms"), 1);
  EXPECT_EQ(r.graph.num_calls(), 2);  // layer_norm(x, g) and the add
  EXPECT_TRUE(same_results(before, r.graph, 1e-6));
}

TEST(FuseLayerNorm, NearMissesAreLeftAlone) {
  struct Case {
    const char* what;
    std::string text;
  };
  const std::vector<Case> cases = {
      {"variance over another axis", decomposed("", R"(%8 as "y")", "axes=[1, 2], keepdims=1", "2", "[2, 1, 1]")},
      {"exponent 3", decomposed("", R"(%8 as "y")", "axes=[2], keepdims=1", "3")},
      {"the centered value used elsewhere", decomposed("", R"(%8 as "y", %3 as "d")")},
      {"the variance is an output", decomposed("", R"(%8 as "y", %5 as "v")")},
  };
  for (const Case& c : cases) {
    Graph before = parse_graph(c.text);
    PipelineResult r = run_passes(before, {"FuseLayerNorm"}, {});
    EXPECT_EQ(count_op(r.graph, "layer_norm"), 0) << c.what;
    EXPECT_FALSE(r.records[0].changed) << c.what;
  }
  // Normalized over a leading axis (not the trailing axes layer_norm covers).
  Graph kd = parse_graph(R"(graph(%x: f32[4, 6]) {
    %eps = constant [1e-05] : f32[]
    %two = constant [2] : f32[]
    %0 = reduce_mean(%x, axes=[0], keepdims=1) : f32[1, 6]
    %1 = sub(%x, %0) : f32[4, 6]
    %2 = pow(%1, %two) : f32[4, 6]
    %3 = reduce_mean(%2, axes=[0], keepdims=1) : f32[1, 6]
    %4 = add(%3, %eps) : f32[1, 6]
    %5 = sqrt(%4) : f32[1, 6]
    %6 = div(%1, %5) : f32[4, 6]
    return %6 as "y"
  })");
  EXPECT_EQ(count_op(run_one("FuseLayerNorm", kd), "layer_norm"), 0) << "normalized over a leading axis";
  // A "scale" that varies along the rows is not folded in: the norm is, the mul stays.
  Graph rows = parse_graph(decomposed("    %9 = mul(%8, %r) : f32[2, 5, 12]\n", R"(%9 as "y")"));
  Graph after = run_one("FuseLayerNorm", rows);
  EXPECT_EQ(count_op(after, "layer_norm"), 1);
  EXPECT_EQ(count_op(after, "mul"), 1);
  EXPECT_TRUE(same_results(rows, after, 1e-6));
}

}  // namespace
}  // namespace kiln::pass::testing
