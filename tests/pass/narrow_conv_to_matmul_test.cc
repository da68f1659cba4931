// NarrowConvToMatmul: which convs become a matmul over the pixels (1x1, strides 1, pads 0,
// groups 1, fewer output channels than one vector and at most 8; any batch; with or without a
// bias; after a blocked conv too), which stay convolutions, and the outputs of the rewritten graph
// against the original on the reference executor (the same sums in another order: 1e-5).
#include <gtest/gtest.h>

#include "pass/pass_test_util.h"

namespace kiln::pass::testing {
namespace {

Value conv(const Value& x, int64_t m, uint64_t seed, int64_t k = 1, int64_t stride = 1, int64_t groups = 1,
           bool bias = true) {
  const int64_t c = x.type().shape[1] / groups, p = k / 2;
  std::vector<Value> args = {x, random_constant("w" + std::to_string(seed), {m, c, k, k}, seed)->output()};
  if (bias) args.push_back(random_constant("b" + std::to_string(seed), {m}, seed + 100)->output());
  const Attrs attrs = Attrs()
                          .set("pads", std::vector<int64_t>{p, p, p, p})
                          .set("strides", std::vector<int64_t>{stride, stride})
                          .set("dilations", std::vector<int64_t>{1, 1})
                          .set("groups", groups);
  return make_call("conv2d", args, attrs)->output();
}

PipelineResult run_o3(const Graph& g, int layout_block = 8) {
  PassOptions o;
  o.opt_level = 3;
  o.verify_each_pass = true;
  o.layout_block = layout_block;
  return run_pipeline(g, o);
}

TEST(NarrowConvToMatmul, PointwiseConvsWithFewOutputsOnly) {
  NodePtr x = make_input("x", {DType::kF32, {2, 19, 9, 7}});
  Value a = conv(x->output(), 4, 1);                        // converted (bias)
  Value b = conv(x->output(), 1, 2, 1, 1, 1, false);        // converted (no bias)
  Value c = conv(x->output(), 8, 3);                        // a whole vector: NCHWc
  Value d = conv(x->output(), 4, 4, 3);                     // 3x3
  Value e = conv(x->output(), 3, 5, 1, 2);                  // stride 2
  Value f = conv(conv(x->output(), 16, 6, 3), 5, 7);        // after a blocked conv: converted
  Graph g({x}, {a, b, c, d, e, f}, {"a", "b", "c", "d", "e", "f"});
  PipelineResult r = run_o3(g);
  EXPECT_EQ(r.stat("NarrowConvToMatmul", "convs_converted"), 3);
  EXPECT_TRUE(same_results(g, r.graph, 1e-5));
  EXPECT_TRUE(round_trips(r.graph));
  // AVX-512's 16-lane block: 8 output channels are below one vector too.
  PipelineResult wide = run_o3(g, 16);
  EXPECT_EQ(wide.stat("NarrowConvToMatmul", "convs_converted"), 4);
  EXPECT_TRUE(same_results(g, wide.graph, 1e-5));
}

}  // namespace
}  // namespace kiln::pass::testing
