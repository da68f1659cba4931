// ComputeHalfInFloat: heavy ops on f16/bf16 values compute in f32 between casts, the weight casts
// fold, elementwise ops stay in half, f32 graphs are unchanged; results equal the half graph's on
// the reference executor (whose heavy ops also convert half to f32, compute and round once), and
// the compiled graph matches them too.
#include <gtest/gtest.h>

#include "driver/compile_test_util.h"
#include "kiln/driver/compile.h"
#include "pass/pass_test_util.h"

namespace kiln::pass::testing {
namespace {

NodePtr half_constant(const std::string& name, Shape shape, uint64_t seed, DType dt) {
  return make_constant(name, random_array({dt, std::move(shape)}, seed, -0.5, 0.5));
}

// conv -> relu -> matmul -> softmax (+ a residual add in half) on `dt` values.
Graph half_model(DType dt) {
  NodePtr x = make_input("x", {dt, {1, 4, 6, 6}});
  NodePtr w = half_constant("w", {8, 4, 3, 3}, 1, dt);
  NodePtr b = half_constant("b", {8}, 2, dt);
  Attrs conv_attrs = Attrs().set("pads", std::vector<int64_t>{1, 1, 1, 1});
  Value c = make_call("conv2d", {x->output(), w->output(), b->output()}, conv_attrs)->output();
  Value r = make_call("relu", {c}, {})->output();
  Value flat = make_call("reshape", {r}, Attrs().set("shape", std::vector<int64_t>{8, 36}))->output();
  NodePtr m = half_constant("m", {36, 10}, 3, dt);
  Value p = make_call("matmul", {flat, m->output()}, {})->output();
  Value s = make_call("softmax", {p}, Attrs().set("axis", int64_t{1}))->output();
  Value y = make_call("add", {s, p}, {})->output();
  return Graph({x}, {y}, {"y"});
}

TEST(ComputeHalfInFloat, HeavyOpsComputeInFloatWithFoldedWeightCasts) {
  for (DType dt : {DType::kF16, DType::kBF16}) {
    Graph before = half_model(dt);
    PassOptions o;
    o.verify_each_pass = true;
    PipelineResult r = run_passes(before, {"ComputeHalfInFloat", "FoldConstant", "DeadCodeElimination"}, o);
    EXPECT_EQ(r.stat("ComputeHalfInFloat", "promoted"), 3);  // conv2d, matmul, softmax
    for (const auto& node : r.graph.topo_order()) {
      if (node->kind() != NodeKind::kCall) continue;
      const CallNode& call = node->as_call();
      const std::string& op = call.op().name;
      if (op == "conv2d" || op == "matmul" || op == "softmax") {
        EXPECT_EQ(call.output(0).type().dtype, DType::kF32) << op;
        for (const Value& a : call.args()) {
          // weights are f32 constants (their casts folded); activations come through a cast.
          EXPECT_EQ(a.type().dtype, DType::kF32) << op;
          if (a.node->kind() == NodeKind::kCall) EXPECT_EQ(a.node->as_call().op().name, "cast") << op;
        }
      }
      if (op == "relu" || op == "add") EXPECT_EQ(call.output(0).type().dtype, dt) << op;
    }
    // Same values as the half graph: the heavy ops' references convert to f32 and round once too.
    EXPECT_TRUE(same_results(before, r.graph, dt == DType::kF16 ? 2e-3 : 1e-2)) << ir::dtype_name(dt);
    EXPECT_TRUE(round_trips(r.graph));
  }
}

TEST(ComputeHalfInFloat, FloatGraphsAreUnchanged) {
  NodePtr x = make_input("x", {DType::kF32, {2, 8}});
  NodePtr w = random_constant("w", {8, 4}, 1);
  Value y = make_call("matmul", {x->output(), w->output()}, {})->output();
  Graph g({x}, {y}, {"y"});
  PipelineResult r = run_passes(g, {"ComputeHalfInFloat"}, PassOptions{});
  EXPECT_TRUE(same_graph(g, r.graph));
}

TEST(ComputeHalfInFloat, CompiledHalfModelMatchesReference) {
  Graph g = half_model(DType::kF16);
  std::vector<NDArray> inputs{random_array(g.inputs()[0]->as_input().type(), 11)};
  const std::string path = ::testing::TempDir() + "/half_model.so";
  driver::compile_graph(g, path, driver::CompileOptions{});
  auto got = kiln::testing::run_compiled(path, inputs);
  EXPECT_TRUE(close_outputs(got, ref::run_graph(g, inputs), 2e-3));
}

}  // namespace
}  // namespace kiln::pass::testing
