// FuseOps on small graphs: which calls end up in which group (labels, body contents, arguments),
// the text round trip of fused graphs, exact equality of outputs before/after (the fused call runs
// the same reference implementations), and the `fused` operator's errors.
#include <gtest/gtest.h>

#include "kiln/pass/fused_call.h"
#include "kiln/support/error.h"
#include "pass/pass_test_util.h"

namespace kiln::pass::testing {
namespace {

using kiln::UserError;
using kiln::UserErrorKind;

std::vector<std::string> labels(const Graph& g) {
  std::vector<std::string> out;
  for (const auto& node : g.topo_order()) {
    if (node->kind() != NodeKind::kCall) continue;
    EXPECT_TRUE(is_fused_call(*node)) << node->as_call().op().name << " left outside a group";
    out.push_back(node->as_call().attrs().get_string("label"));
  }
  return out;
}

Value conv(const Value& x, int64_t m, uint64_t seed) {
  const int64_t c = x.type().shape[1];
  NodePtr w = random_constant("w" + std::to_string(seed), {m, c, 3, 3}, seed);
  return make_call("conv2d", {x, w->output()}, Attrs().set("pads", std::vector<int64_t>{1, 1, 1, 1}))->output();
}

TEST(FuseOps, ConvBiasReluIsOneGroup) {
  NodePtr x = make_input("x", {DType::kF32, {1, 3, 5, 5}});
  Value c = conv(x->output(), 4, 1);
  NodePtr bias = random_constant("bias", {4, 1, 1}, 2);
  Value a = make_call("add", {c, bias->output()}, {})->output();
  Value r = make_call("relu", {a}, {})->output();
  Graph before({x}, {r}, {"y"});
  PipelineResult result = run_passes(before, {"FuseOps"}, {});
  EXPECT_EQ(labels(result.graph), std::vector<std::string>{"conv2d_add_relu"});
  const CallNode& call = result.graph.outputs()[0].node->as_call();
  ASSERT_EQ(call.args().size(), 2u);  // x and the weights; the 4-element bias lives in the body
  EXPECT_EQ(call.args()[0].node, x);
  auto body = fused_body(call);
  EXPECT_EQ(body->num_calls(), 3);
  EXPECT_EQ(body->inputs().size(), 2u);
  EXPECT_EQ(result.stat("FuseOps", "groups"), 1);
  EXPECT_EQ(result.stat("FuseOps", "multi_op_groups"), 1);
  EXPECT_TRUE(same_results(before, result.graph, 0.0));
  EXPECT_TRUE(round_trips(result.graph));
}

TEST(FuseOps, ResidualBlock) {
  // r1 = relu(conv(x)); y = relu(conv(r1) + r1): r1 has two users, so it ends the first group and
  // is passed once to the second (conv input and residual operand).
  NodePtr x = make_input("x", {DType::kF32, {1, 4, 5, 5}});
  Value r1 = make_call("relu", {conv(x->output(), 4, 1)}, {})->output();
  Value sum = make_call("add", {conv(r1, 4, 2), r1}, {})->output();
  Value y = make_call("relu", {sum}, {})->output();
  Graph before({x}, {y}, {"y"});
  Graph after = run_one("FuseOps", before);
  EXPECT_EQ(labels(after), (std::vector<std::string>{"conv2d_relu", "conv2d_add_relu"}));
  const CallNode& second = after.outputs()[0].node->as_call();
  EXPECT_EQ(second.args().size(), 2u);  // r1 (deduplicated) and the weights
  EXPECT_TRUE(same_results(before, after, 0.0));
  EXPECT_TRUE(round_trips(after));
}

TEST(FuseOps, InjectiveProducersAndOpaqueSingletons) {
  Graph before = parse_graph(R"(graph(%a: f32[2, 3, 4], %b: f32[2, 3, 4]) {
    %0 = transpose(%b, perm=[0, 2, 1]) : f32[2, 4, 3]
    %1 = matmul(%a, %0) : f32[2, 3, 3]
    %2 = softmax(%1, axis=2) : f32[2, 3, 3]
    %3 = reshape(%2, shape=[2, 9]) : f32[2, 9]
    %4 = neg(%3) : f32[2, 9]
    %5 = reduce_sum(%4, axes=[1], keepdims=1) : f32[2, 1]
    %6 = sqrt(%5) : f32[2, 1]
    return %6 as "y", %1 as "logits"
  })");
  Graph after = run_one("FuseOps", before);
  // matmul's result is also a graph output (two uses): no consumers join. reshape and neg are
  // reduce_sum's injective producers; sqrt is its elementwise consumer. softmax is opaque.
  EXPECT_EQ(labels(after), (std::vector<std::string>{"transpose_matmul", "softmax", "reshape_neg_reduce_sum_sqrt"}));
  EXPECT_TRUE(same_results(before, after, 0.0));
  EXPECT_TRUE(round_trips(after));
}

TEST(FuseOps, InjectiveChainsAndMultiOutputCalls) {
  Graph before = parse_graph(R"(graph(%x: f32[4, 2]) {
    %0, %1 = split(%x, axis=0, sizes=[2, 2]) : (f32[2, 2], f32[2, 2])
    %2 = transpose(%0, perm=[1, 0]) : f32[2, 2]
    %3 = exp(%2) : f32[2, 2]
    %4 = add(%3, %1) : f32[2, 2]
    return %4 as "y"
  })");
  Graph after = run_one("FuseOps", before);
  EXPECT_EQ(labels(after), (std::vector<std::string>{"split", "transpose_exp_add"}));
  EXPECT_TRUE(same_results(before, after, 0.0));
  EXPECT_TRUE(round_trips(after));
}

TEST(FuseOps, GeluDiamondIsTheMatmulEpilogue) {
  // h = x W + b has two users (div and the mul): all paths from h meet again at the mul, through
  // same-shaped elementwise calls only, so the whole GELU joins the first matmul's group. The
  // second matmul takes its (elementwise) input from that group instead of recomputing it.
  Graph before = parse_graph(R"(graph(%x: f32[4, 8], %w1: f32[8, 16], %b1: f32[16], %w2: f32[16, 8]) {
    %sqrt2 = constant [1.41421356] : f32[]
    %one = constant [1] : f32[]
    %half = constant [0.5] : f32[]
    %0 = matmul(%x, %w1) : f32[4, 16]
    %1 = add(%0, %b1) : f32[4, 16]
    %2 = div(%1, %sqrt2) : f32[4, 16]
    %3 = erf(%2) : f32[4, 16]
    %4 = add(%3, %one) : f32[4, 16]
    %5 = mul(%1, %4) : f32[4, 16]
    %6 = mul(%5, %half) : f32[4, 16]
    %7 = matmul(%6, %w2) : f32[4, 8]
    %8 = add(%7, %x) : f32[4, 8]
    return %8 as "y"
  })");
  Graph after = run_one("FuseOps", before);
  EXPECT_EQ(labels(after), (std::vector<std::string>{"matmul_add_div_erf_add_mul_mul", "matmul_add"}));
  EXPECT_TRUE(same_results(before, after, 0.0));
  EXPECT_TRUE(round_trips(after));
}

TEST(FuseOps, DiamondWithAnEscapingBranchStops) {
  // Near misses of the diamond rule: a branch that leaves through a reduction (%3), a branch of
  // another shape (%6 broadcasts to [2, 4, 4]): the anchor's group ends at the shared value.
  Graph before = parse_graph(R"(graph(%x: f32[4, 4], %w: f32[4, 4], %z: f32[2, 4, 4]) {
    %0 = matmul(%x, %w) : f32[4, 4]
    %1 = exp(%0) : f32[4, 4]
    %2 = neg(%0) : f32[4, 4]
    %3 = reduce_sum(%2, axes=[1], keepdims=1) : f32[4, 1]
    %4 = add(%1, %3) : f32[4, 4]
    %5 = matmul(%4, %w) : f32[4, 4]
    %6 = add(%5, %z) : f32[2, 4, 4]
    %7 = mul(%5, %5) : f32[4, 4]
    %8 = add(%6, %7) : f32[2, 4, 4]
    return %8 as "y"
  })");
  Graph after = run_one("FuseOps", before);
  EXPECT_EQ(labels(after), (std::vector<std::string>{"matmul", "neg_reduce_sum", "exp_add", "matmul", "mul",
                                                     "add_add"}));
  EXPECT_TRUE(same_results(before, after, 0.0));
  EXPECT_TRUE(round_trips(after));
}

TEST(FuseOps, ElementwiseProducersAreNotInlinedIntoMatmulOrConv) {
  // relu/tanh feed a matmul and a conv (which read every input element many times): they stay
  // separate kernels. The transpose (index arithmetic only) is still the matmul's prologue, and a
  // reduction still takes an elementwise producer (it reads each element once).
  Graph before = parse_graph(R"(graph(%a: f32[3, 4], %b: f32[4, 3], %x: f32[1, 2, 5, 5], %w: f32[2, 2, 3, 3]) {
    %0 = relu(%a) : f32[3, 4]
    %1 = transpose(%b, perm=[1, 0]) : f32[3, 4]
    %2 = transpose(%1, perm=[1, 0]) : f32[4, 3]
    %3 = matmul(%0, %2) : f32[3, 3]
    %4 = tanh(%x) : f32[1, 2, 5, 5]
    %5 = conv2d(%4, %w, pads=[1, 1, 1, 1]) : f32[1, 2, 5, 5]
    %6 = exp(%5) : f32[1, 2, 5, 5]
    %7 = reduce_sum(%6, axes=[2, 3], keepdims=0) : f32[1, 2]
    return %3 as "m", %7 as "c"
  })");
  Graph after = run_one("FuseOps", before);
  EXPECT_EQ(labels(after), (std::vector<std::string>{"relu", "transpose_transpose_matmul", "tanh", "conv2d_exp",
                                                     "reduce_sum"}));
  EXPECT_TRUE(same_results(before, after, 0.0));
  EXPECT_TRUE(round_trips(after));
}

TEST(FuseOps, ElementwiseOperandProducersJoinTheirConsumersGroup) {
  // The conv's epilogue add takes a second operand computed by neg(%r) (single use, the add's
  // shape): neg joins the group (it is evaluated once per output element either way), and so
  // does its own single-use elementwise producer tanh. exp(%b) has the wrong shape (broadcast
  // [1, 4, 1, 1]) and sqrt(%r) two uses: both stay kernels of their own. In the injective chain
  // (%9 sigmoid -> %11 mul), the mul's other operand %10 (abs) joins the chain group the same way.
  Graph before = parse_graph(R"(graph(%x: f32[1, 4, 5, 5], %w: f32[4, 4, 3, 3], %r: f32[1, 4, 5, 5], %b: f32[1, 4, 1, 1]) {
    %0 = conv2d(%x, %w, pads=[1, 1, 1, 1]) : f32[1, 4, 5, 5]
    %1 = tanh(%r) : f32[1, 4, 5, 5]
    %2 = neg(%1) : f32[1, 4, 5, 5]
    %3 = add(%0, %2) : f32[1, 4, 5, 5]
    %4 = exp(%b) : f32[1, 4, 1, 1]
    %5 = add(%3, %4) : f32[1, 4, 5, 5]
    %6 = sqrt(%r) : f32[1, 4, 5, 5]
    %7 = mul(%5, %6) : f32[1, 4, 5, 5]
    %8 = add(%6, %6) : f32[1, 4, 5, 5]
    %9 = sigmoid(%8) : f32[1, 4, 5, 5]
    %10 = abs(%x) : f32[1, 4, 5, 5]
    %11 = mul(%9, %10) : f32[1, 4, 5, 5]
    return %7 as "y", %11 as "z"
  })");
  Graph after = run_one("FuseOps", before);
  EXPECT_EQ(labels(after), (std::vector<std::string>{"exp", "sqrt", "conv2d_tanh_neg_add_add_mul", "add_sigmoid_abs_mul"}));
  EXPECT_TRUE(same_results(before, after, 0.0));
  EXPECT_TRUE(round_trips(after));
}

TEST(FuseOps, ConcatIsNotInlinedIntoConvOrMatmul) {
  // A concat of two computed tensors feeding a conv (or a matmul) is a kernel of its own: inlined,
  // it would choose its source on every one of the anchor's many reads. A reduction still takes it,
  // and an injective chain (transpose -> concat) is still one group.
  Graph before = parse_graph(R"(graph(%x: f32[1, 2, 5, 5], %y: f32[1, 2, 5, 5], %w: f32[2, 4, 3, 3], %a: f32[3, 2], %b: f32[3, 2], %m: f32[4, 3]) {
    %0 = concat(%x, %y, axis=1) : f32[1, 4, 5, 5]
    %1 = conv2d(%0, %w, pads=[1, 1, 1, 1]) : f32[1, 2, 5, 5]
    %2 = concat(%a, %b, axis=1) : f32[3, 4]
    %3 = matmul(%2, %m) : f32[3, 3]
    %4 = concat(%b, %a, axis=1) : f32[3, 4]
    %5 = reduce_sum(%4, axes=[1], keepdims=0) : f32[3]
    %6 = transpose(%m, perm=[1, 0]) : f32[3, 4]
    %7 = concat(%6, %a, axis=1) : f32[3, 6]
    return %1 as "c", %3 as "p", %5 as "s", %7 as "t"
  })");
  Graph after = run_one("FuseOps", before);
  EXPECT_EQ(labels(after), (std::vector<std::string>{"concat", "conv2d", "concat", "matmul", "concat_reduce_sum",
                                                     "transpose_concat"}));
  EXPECT_TRUE(same_results(before, after, 0.0));
  EXPECT_TRUE(round_trips(after));
}

TEST(FuseOps, RunningTwiceChangesNothing) {
  NodePtr x = make_input("x", {DType::kF32, {1, 3, 5, 5}});
  Graph before({x}, {make_call("relu", {conv(x->output(), 4, 1)}, {})->output()}, {"y"});
  Graph once = run_one("FuseOps", before);
  PipelineResult twice = run_passes(once, {"FuseOps"}, {});
  EXPECT_FALSE(twice.records[0].changed);
}

TEST(FusedCall, TypeErrorsNameTheCall) {
  NodePtr x = make_input("x", {DType::kF32, {2}});
  NodePtr p0 = make_input("p0", {DType::kF32, {3}});
  Graph relu_body({p0}, {make_call("relu", {p0->output()}, {})->output()}, {"out0"});
  try {
    make_fused_call(relu_body, {x->output()}, "relu");
    FAIL() << "expected a type error";
  } catch (const UserError& e) {
    EXPECT_EQ(e.kind(), UserErrorKind::kInvalidArgument);
    EXPECT_NE(std::string(e.what()).find("argument 0 has type f32[2], its body's input %p0 is f32[3]"),
              std::string::npos)
        << e.what();
  }
  EXPECT_THROW(make_fused_call(relu_body, {}, "relu"), UserError);
}

TEST(FusedCall, BadBodiesAreRejected) {
  NodePtr x = make_input("x", {DType::kF32, {2}});
  Attrs bad;
  bad.set("body", std::string("graph(%p0: f32[2]) { %0 = relu(%p0) : f32[3] return %0 as \"out0\" }"));
  try {
    make_call(fused_op(), {x->output()}, bad);
    FAIL() << "expected a parse error";
  } catch (const UserError& e) {
    EXPECT_EQ(e.kind(), UserErrorKind::kParse) << e.what();
  }
  NodePtr p0 = make_input("p0", {DType::kF32, {2}});
  Graph inner({p0}, {make_call("relu", {p0->output()}, {})->output()}, {"out0"});
  NodePtr q0 = make_input("p0", {DType::kF32, {2}});
  Graph outer({q0}, {make_fused_call(inner, {q0->output()}, "relu")->output()}, {"out0"});
  try {
    make_fused_call(outer, {x->output()}, "nested");
    FAIL() << "expected a nesting error";
  } catch (const UserError& e) {
    EXPECT_NE(std::string(e.reason()).find("nested"), std::string::npos) << e.what();
  }
}

}  // namespace
}  // namespace kiln::pass::testing
