// FuseRmsNorm: the decomposed RMS normalization (as exported from PyTorch for LLaMA/T5-style
// RMSNorm: pow/mul square, reduce_mean, add eps, sqrt, then div or mul by reciprocal / 1 / s,
// optionally times a scale) is replaced by one rms_norm call with the right axis, epsilon and
// scale; the rewritten graph matches the original on the reference executor (rtol 1e-6: both in
// double per op). Near misses (other axes, another exponent, an intermediate used elsewhere, a
// scale varying along a leading axis) are left unchanged.
#include <gtest/gtest.h>

#include "pass/pass_test_util.h"

namespace kiln::pass::testing {
namespace {

// The mean square of %x: f32[2, 5, 12] over `axes`, sqrt'ed as %s; `norm` continues from %s and
// `ret` names the result.
std::string decomposed(const std::string& norm, const std::string& ret, const std::string& axes = "[2]",
                       const std::string& two = "2", const std::string& vshape = "[2, 5, 1]") {
  return R"(graph(%x: f32[2, 5, 12], %g: f32[12], %r: f32[2, 5, 1]) {
    %two = constant [)" + two + R"(] : f32[]
    %eps = constant [1e-06] : f32[]
    %one = constant [1] : f32[]
    %p = pow(%x, %two) : f32[2, 5, 12]
    %ms = reduce_mean(%p, axes=)" + axes + R"(, keepdims=1) : f32)" + vshape + R"(
    %e = add(%eps, %ms) : f32)" + vshape + R"(
    %s = sqrt(%e) : f32)" + vshape + R"(
)" + norm + "    return " + ret + "\n  }";
}

TEST(FuseRmsNorm, DivAndScaleBecomeOneCall) {
  Graph before = parse_graph(decomposed("    %n = div(%x, %s) : f32[2, 5, 12]\n    %y = mul(%g, %n) : f32[2, 5, 12]\n",
                                        R"(%y as "y")"));
  PipelineResult r = run_passes(before, {"FuseRmsNorm", "DeadCodeElimination"}, {});
  EXPECT_EQ(r.stat("FuseRmsNorm", "rms_norms"), 1);
  ASSERT_EQ(r.graph.num_calls(), 1);
  const CallNode& n = r.graph.outputs()[0].node->as_call();
  EXPECT_EQ(n.op().name, "rms_norm");
  EXPECT_EQ(n.attrs().get_int("axis"), 2);
  EXPECT_NEAR(n.attrs().get_float("epsilon"), 1e-6, 1e-13);
  EXPECT_EQ(n.args()[1].node, before.inputs()[1]);  // %g
  EXPECT_TRUE(same_results(before, r.graph, 1e-6));
  EXPECT_TRUE(round_trips(r.graph));
}

TEST(FuseRmsNorm, ReciprocalAndOneOverForms) {
  for (const std::string norm : {
           "    %q = reciprocal(%s) : f32[2, 5, 1]\n    %n = mul(%x, %q) : f32[2, 5, 12]\n    %y = mul(%n, %g) : f32[2, 5, 12]\n",
           "    %q = div(%one, %s) : f32[2, 5, 1]\n    %n = mul(%q, %x) : f32[2, 5, 12]\n    %y = mul(%g, %n) : f32[2, 5, 12]\n"}) {
    Graph before = parse_graph(decomposed(norm, R"(%y as "y")"));
    PipelineResult r = run_passes(before, {"FuseRmsNorm", "DeadCodeElimination"}, {});
    EXPECT_EQ(r.stat("FuseRmsNorm", "rms_norms"), 1) << norm;
    EXPECT_EQ(r.graph.num_calls(), 1) << norm;
    EXPECT_TRUE(same_results(before, r.graph, 1e-6)) << norm;
  }
}

TEST(FuseRmsNorm, WithoutScaleOverSeveralAxes) {
  Graph before = parse_graph(decomposed("    %n = div(%x, %s) : f32[2, 5, 12]\n", R"(%n as "y")", "[1, 2]", "2", "[2, 1, 1]"));
  PipelineResult r = run_passes(before, {"FuseRmsNorm", "DeadCodeElimination"}, {});
  ASSERT_EQ(r.graph.num_calls(), 1);
  EXPECT_EQ(r.graph.outputs()[0].node->as_call().attrs().get_int("axis"), 1);
  EXPECT_TRUE(same_results(before, r.graph, 1e-6));
}

TEST(FuseRmsNorm, NearMissesAreLeftAlone) {
  struct Case {
    const char* what;
    std::string text;
  };
  const std::string div = "    %n = div(%x, %s) : f32[2, 5, 12]\n";
  const std::vector<Case> cases = {
      {"exponent 3", decomposed(div, R"(%n as "y")", "[2]", "3")},
      {"the root mean square is an output", decomposed(div, R"(%n as "y", %s as "s")")},
      {"mean over a leading axis", decomposed(div, R"(%n as "y")", "[1]", "2", "[2, 1, 12]")},
  };
  for (const Case& c : cases) {
    Graph before = parse_graph(c.text);
    PipelineResult r = run_passes(before, {"FuseRmsNorm"}, {});
    EXPECT_EQ(count_op(r.graph, "rms_norm"), 0) << c.what;
    EXPECT_FALSE(r.records[0].changed) << c.what;
  }
  // A "scale" varying along the rows stays a mul after the fused norm.
  Graph rows = parse_graph(decomposed(div + "    %y = mul(%n, %r) : f32[2, 5, 12]\n", R"(%y as "y")"));
  Graph after = run_one("FuseRmsNorm", rows);
  EXPECT_EQ(count_op(after, "rms_norm"), 1);
  EXPECT_EQ(count_op(after, "mul"), 1);
  EXPECT_TRUE(same_results(rows, after, 1e-6));
}

}  // namespace
}  // namespace kiln::pass::testing
