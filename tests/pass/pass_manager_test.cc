// The pass manager: opt levels, the IR dump after a named pass or all, "(unchanged)" records,
// per-pass timing and stats in the summary, disabled passes, and its user errors.
#include <gtest/gtest.h>

#include <sstream>

#include "kiln/pass/fused_call.h"
#include "kiln/support/error.h"
#include "pass/pass_test_util.h"

namespace kiln::pass::testing {
namespace {

using kiln::UserError;
using kiln::UserErrorKind;

Graph small_model() {
  NodePtr x = make_input("x", {DType::kF32, {1, 8, 4, 4}});
  NodePtr w = random_constant("w", {8, 8, 3, 3}, 1);
  NodePtr two = make_constant("two", NDArray::scalar(DType::kF32, 2.0));
  NodePtr s = make_call("mul", {two->output(), two->output()}, {});  // folds to 4
  NodePtr c = make_call("conv2d", {x->output(), w->output()}, Attrs().set("pads", std::vector<int64_t>{1, 1, 1, 1}));
  NodePtr y = make_call("mul", {c->output(), s->output()}, {});
  NodePtr r = make_call("relu", {y->output()}, {});
  return Graph({x}, {r->output()}, {"y"});
}

TEST(PassManager, OptLevels) {
  EXPECT_TRUE(passes_for_level(0).empty());
  EXPECT_EQ(passes_for_level(1),
            (std::vector<std::string>{"ComputeHalfInFloat", "CancelTransposes", "SimplifyInference", "FoldConstant", "DeadCodeElimination"}));
  EXPECT_EQ(passes_for_level(2).back(), "FuseOps");
  const auto o3 = passes_for_level(3);
  EXPECT_NE(std::find(o3.begin(), o3.end(), "AlterOpLayout"), o3.end());
  EXPECT_EQ(o3.back(), "FuseOps");
  Graph g = small_model();
  for (int level = 0; level <= 3; ++level) {
    PassOptions o;
    o.verify_each_pass = true;
    o.opt_level = level;
    PipelineResult r = run_pipeline(g, o);
    EXPECT_EQ(r.records.size(), passes_for_level(level).size());
    EXPECT_TRUE(same_results(g, r.graph, 1e-6)) << "O" << level;
    if (level == 0) {
      EXPECT_TRUE(same_graph(g, r.graph));
    }
    if (level >= 2) {
      for (const auto& node : r.graph.topo_order()) {
        if (node->kind() == NodeKind::kCall) {
          EXPECT_TRUE(is_fused_call(*node));
        }
      }
    }
  }
}

TEST(PassManager, DumpAfterNamedPassAndAll) {
  Graph g = small_model();
  std::ostringstream out;
  PassOptions o;
  o.verify_each_pass = true;
  o.opt_level = 2;
  o.dump_ir_after = "FoldConstant";
  o.dump_stream = &out;
  run_pipeline(g, o);
  EXPECT_NE(out.str().find("// IR after FoldConstant\ngraph(%x: f32[1, 8, 4, 4])"), std::string::npos) << out.str();
  EXPECT_EQ(out.str().find("// IR after FuseOps"), std::string::npos);
  std::ostringstream all;
  o.dump_ir_after = "all";
  o.dump_stream = &all;
  run_pipeline(g, o);
  for (const auto& name : passes_for_level(2)) EXPECT_NE(all.str().find("// IR after " + name), std::string::npos) << name;
  EXPECT_NE(all.str().find("// IR after SimplifyInference (unchanged)"), std::string::npos) << all.str();
  EXPECT_NE(all.str().find("fused("), std::string::npos);
}

TEST(PassManager, SummaryHasTimingStatsAndUnchanged) {
  PassOptions o;
  o.verify_each_pass = true;
  o.opt_level = 2;
  PipelineResult r = run_pipeline(small_model(), o);
  const std::string s = r.summary();
  EXPECT_NE(s.find("FoldConstant"), std::string::npos);
  EXPECT_NE(s.find("folded=1"), std::string::npos) << s;
  EXPECT_NE(s.find("(unchanged)"), std::string::npos) << s;
  EXPECT_NE(s.find(" s  calls"), std::string::npos) << s;
  EXPECT_NE(s.find("total"), std::string::npos);
  for (const auto& rec : r.records) EXPECT_GE(rec.seconds, 0.0);
  EXPECT_EQ(r.stat("FuseOps", "groups"), 1);  // conv2d_mul_relu
  EXPECT_EQ(r.stat("NoSuchPass", "x"), 0);
}

TEST(PassManager, DisabledPasses) {
  PassOptions o;
  o.verify_each_pass = true;
  o.opt_level = 2;
  o.disabled_passes = {"FuseOps"};
  PipelineResult r = run_pipeline(small_model(), o);
  for (const auto& rec : r.records) EXPECT_NE(rec.name, "FuseOps");
  EXPECT_EQ(count_op(r.graph, "fused"), 0);
}

TEST(PassManager, UserErrors) {
  Graph g = small_model();
  auto expect_error = [&](PassOptions o, UserErrorKind kind, const std::string& needle) {
    try {
      run_pipeline(g, o);
      ADD_FAILURE() << "expected an error mentioning " << needle;
    } catch (const UserError& e) {
      EXPECT_EQ(e.kind(), kind);
      const std::string text = std::string(e.what()) + " (" + e.hint() + ")";
      EXPECT_NE(text.find(needle), std::string::npos) << text;
    }
  };
  PassOptions bad_level;
  bad_level.opt_level = 4;
  expect_error(bad_level, UserErrorKind::kInvalidArgument, "opt level 4");
  PassOptions bad_dump;
  bad_dump.dump_ir_after = "FuseOp";
  expect_error(bad_dump, UserErrorKind::kNotFound, "pass 'FuseOp'");
  PassOptions bad_disable;
  bad_disable.disabled_passes = {"Nope"};
  expect_error(bad_disable, UserErrorKind::kNotFound, "known passes: SimplifyInference");
  PassOptions bad_block;
  bad_block.layout_block = 0;
  expect_error(bad_block, UserErrorKind::kInvalidArgument, "layout block 0");
  EXPECT_THROW(make_pass("Unknown"), UserError);
}


// The whole O3 pipeline on a small residual network with batch norms (the generated models have
// theirs folded by the exporter): conv-bn-relu, conv-bn + residual, relu, max pool, conv-bn on a
// shared conv (scale-shift), global pool. Max relative error <= 1e-5: batch-norm folding rounds
// each parameter step to f32 instead of computing in double.
TEST(PassManager, O3OnResidualBlockWithBatchNorms) {
  uint64_t seed = 10;
  auto conv = [&](const Value& x, int64_t m) {
    NodePtr w = random_constant("w" + std::to_string(seed), {m, x.type().shape[1], 3, 3}, seed);
    ++seed;
    return make_call("conv2d", {x, w->output()}, Attrs().set("pads", std::vector<int64_t>{1, 1, 1, 1}))->output();
  };
  auto bn = [&](const Value& x) {
    const int64_t c = x.type().shape[1];
    std::vector<Value> args = {x};
    for (int i = 0; i < 4; ++i) {
      args.push_back(random_constant("bn" + std::to_string(seed) + "_" + std::to_string(i), {c}, seed * 10 + i,
                                     i == 3 ? 0.5 : -1.0, i == 3 ? 2.0 : 1.0)->output());
    }
    ++seed;
    return make_call("batch_norm", args, {})->output();
  };
  NodePtr x = make_input("x", {DType::kF32, {1, 3, 8, 8}});
  Value a = make_call("relu", {bn(conv(x->output(), 16))}, {})->output();
  Value b = make_call("add", {bn(conv(a, 16)), a}, {})->output();
  Value r = make_call("relu", {b}, {})->output();
  Value p = make_call("max_pool2d", {r}, Attrs().set("kernel", std::vector<int64_t>{2, 2}).set("strides", std::vector<int64_t>{2, 2}))->output();
  Value shared = conv(p, 16);
  Value c = make_call("add", {bn(shared), shared}, {})->output();
  Value g = make_call("global_avg_pool", {c}, {})->output();
  Graph before({x}, {g}, {"y"});
  PassOptions o;
  o.verify_each_pass = true;
  o.opt_level = 3;
  PipelineResult result = run_pipeline(before, o);
  EXPECT_EQ(result.stat("SimplifyInference", "bn_folded_into_conv"), 2);
  EXPECT_EQ(result.stat("SimplifyInference", "bn_to_scale_shift"), 1);
  EXPECT_EQ(result.stat("AlterOpLayout", "convs_converted"), 3);
  EXPECT_EQ(result.stat("AlterOpLayout", "layout_transforms"), 2);  // input, after the (blocked) global pool
  EXPECT_EQ(result.stat("AlterOpLayout", "pools_blocked"), 2);       // the max pool and the global pool
  for (const auto& node : result.graph.topo_order()) {
    if (node->kind() == NodeKind::kCall) {
      EXPECT_TRUE(is_fused_call(*node));
    }
  }
  EXPECT_TRUE(same_results(before, result.graph, 1e-5));
  EXPECT_TRUE(round_trips(result.graph));
}

}  // namespace
}  // namespace kiln::pass::testing
