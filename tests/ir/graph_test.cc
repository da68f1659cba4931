// Graph IR: factories validate, topological order, visitor, mutator identity and rewrites, verifier.
#include <gtest/gtest.h>

#include "ir/test_ops.h"
#include "kiln/ir/graph.h"
#include "kiln/ir/graph_visitor.h"
#include "kiln/ir/verifier.h"

namespace kiln::ir {
namespace {

class GraphTest : public ::testing::Test {
 protected:
  void SetUp() override { testing_ops::register_test_ops(); }
};

NDArray filled(Shape shape, float start) {
  NDArray a = NDArray::empty(DType::kF32, std::move(shape));
  for (int64_t i = 0; i < a.numel(); ++i) a.mutable_data<float>()[i] = start + static_cast<float>(i);
  return a;
}

// x:[4,2] -> a = t_add(x, c) -> (h0, h1) = t_split2(a) -> out = t_scale(t_add(h0, h1), factor=2)
Graph sample_graph() {
  NodePtr x = make_input("x", {DType::kF32, {4, 2}});
  NodePtr c = make_constant("c", filled({4, 2}, 1));
  NodePtr a = make_call("t_add", {x->output(), c->output()}, {}, "a");
  NodePtr s = make_call("t_split2", {a->output()}, {}, "s");
  NodePtr b = make_call("t_add", {s->output(0), s->output(1)}, {});
  NodePtr out = make_call("t_scale", {b->output()}, Attrs().set("factor", 2.0));
  return Graph({x}, {out->output(), s->output(1)}, {"y", "half"});
}

TEST_F(GraphTest, FactoriesInferTypesAndFillDefaults) {
  Graph g = sample_graph();
  ASSERT_EQ(g.outputs().size(), 2u);
  EXPECT_EQ(g.outputs()[0].type().to_string(), "f32[2, 2]");
  const CallNode& scale = g.outputs()[0].node->as_call();
  EXPECT_EQ(scale.attrs().get_string("tag"), "x");  // default filled in
  EXPECT_DOUBLE_EQ(scale.attrs().get_float("factor"), 2.0);
  EXPECT_EQ(g.outputs()[1].node->num_outputs(), 2);
  EXPECT_EQ(g.num_calls(), 4);
}

TEST_F(GraphTest, FactoriesRejectBadCalls) {
  NodePtr x = make_input("x", {DType::kF32, {3}});
  NodePtr y = make_input("y", {DType::kF32, {4}});
  try {
    make_call("t_add", {x->output()}, {}, "lonely");
    FAIL() << "one argument accepted";
  } catch (const UserError& e) {
    EXPECT_NE(std::string(e.what()).find("lonely"), std::string::npos) << e.what();
    EXPECT_NE(std::string(e.what()).find("takes 2 arguments, got 1"), std::string::npos) << e.what();
  }
  EXPECT_THROW(make_call("t_add", {x->output(), y->output()}, {}), UserError);  // inference fails
  EXPECT_THROW(make_call("t_scale", {x->output()}, Attrs().set("nope", int64_t{1})), UserError);
  EXPECT_THROW(make_call("t_scale", {x->output()}, Attrs().set("factor", std::string("big"))), UserError);
  EXPECT_THROW(make_call("no_such_op", {x->output()}, {}), UserError);
  EXPECT_THROW(make_call("t_split2", {x->output()}, {}), UserError);  // odd axis 0
}

TEST_F(GraphTest, TopoOrderPutsArgumentsFirst) {
  Graph g = sample_graph();
  auto order = g.topo_order();
  ASSERT_EQ(order.size(), 6u);
  EXPECT_EQ(order[0]->name(), "x");
  std::map<const Node*, size_t> pos;
  for (size_t i = 0; i < order.size(); ++i) pos[order[i].get()] = i;
  for (const auto& n : order) {
    if (n->kind() != NodeKind::kCall) continue;
    for (const auto& a : n->as_call().args()) EXPECT_LT(pos[a.node.get()], pos[n.get()]);
  }
  EXPECT_TRUE(verify_graph(g).empty());
}

class CountingVisitor : public GraphVisitor {
 public:
  int inputs = 0, constants = 0, calls = 0;

 protected:
  void visit_input(const InputNode&) override { ++inputs; }
  void visit_constant(const ConstantNode&) override { ++constants; }
  void visit_call(const CallNode&) override { ++calls; }
};

TEST_F(GraphTest, VisitorSeesEachNodeOnce) {
  CountingVisitor v;
  v.visit(sample_graph());
  EXPECT_EQ(v.inputs, 1);
  EXPECT_EQ(v.constants, 1);
  EXPECT_EQ(v.calls, 4);
}

TEST_F(GraphTest, MutatorThatChangesNothingPreservesIdentity) {
  Graph g = sample_graph();
  GraphMutator identity("identity");
  Graph h = identity.mutate(g);
  auto a = g.topo_order();
  auto b = h.topo_order();
  ASSERT_EQ(a.size(), b.size());
  for (size_t i = 0; i < a.size(); ++i) EXPECT_EQ(a[i].get(), b[i].get()) << "node " << i << " was rebuilt";
  EXPECT_EQ(g.outputs()[0], h.outputs()[0]);
}

// Replaces t_scale(x, factor=f) by t_add(x, x) when f == 2; everything downstream is rebuilt,
// everything upstream is shared.
class ScaleToAdd : public GraphMutator {
 public:
  ScaleToAdd() : GraphMutator("ScaleToAdd") {}

 protected:
  std::vector<Value> rewrite_call(const CallNode& node, const std::vector<Value>& args) override {
    if (node.op().name == "t_scale" && node.attrs().get_float("factor") == 2.0) {
      return {make_call("t_add", {args[0], args[0]}, {})->output()};
    }
    return rebuild_call(node, args);
  }
};

TEST_F(GraphTest, MutatorRewritesAndSharesUnchangedNodes) {
  Graph g = sample_graph();
  Graph h = ScaleToAdd().mutate(g);
  EXPECT_EQ(h.outputs()[0].node->as_call().op().name, "t_add");
  EXPECT_EQ(h.outputs()[1], g.outputs()[1]);  // the split is shared, not copied
  EXPECT_EQ(h.inputs()[0].get(), g.inputs()[0].get());
  EXPECT_TRUE(verify_graph(h).empty());
  std::string why;
  EXPECT_FALSE(structurally_equal(g, h, &why));
  EXPECT_NE(why.find("ops differ"), std::string::npos) << why;
}

TEST_F(GraphTest, VerifierFindsDanglingInputAndDuplicateNames) {
  NodePtr x = make_input("x", {DType::kF32, {2}});
  NodePtr stray = make_input("x", {DType::kF32, {2}});  // not declared, and its name repeats
  NodePtr a = make_call("t_add", {x->output(), stray->output()}, {});
  Graph g({x}, {a->output()}, {"y"});
  auto problems = verify_graph(g);
  ASSERT_GE(problems.size(), 2u);
  std::string all;
  for (const auto& p : problems) all += p + "\n";
  EXPECT_NE(all.find("dangling"), std::string::npos) << all;
  EXPECT_NE(all.find("used twice"), std::string::npos) << all;
  EXPECT_THROW(check_graph(g, "test"), InternalError);
}

TEST_F(GraphTest, VerifierFindsDuplicateOutputNames) {
  NodePtr x = make_input("x", {DType::kF32, {2}});
  Graph g({x}, {x->output(), x->output()}, {"y", "y"});
  auto problems = verify_graph(g);
  ASSERT_EQ(problems.size(), 1u);
  EXPECT_NE(problems[0].find("output name 'y'"), std::string::npos) << problems[0];
}

TEST_F(GraphTest, StructuralEqualityComparesConstantsBytes) {
  Graph g = sample_graph();
  EXPECT_TRUE(structurally_equal(g, sample_graph()));
  NodePtr x = make_input("x", {DType::kF32, {4, 2}});
  NodePtr c = make_constant("c", filled({4, 2}, 2));  // different data
  NodePtr a = make_call("t_add", {x->output(), c->output()}, {});
  NodePtr s = make_call("t_split2", {a->output()}, {});
  NodePtr b = make_call("t_add", {s->output(0), s->output(1)}, {});
  NodePtr out = make_call("t_scale", {b->output()}, Attrs().set("factor", 2.0));
  Graph h({x}, {out->output(), s->output(1)}, {"y", "half"});
  std::string why;
  EXPECT_FALSE(structurally_equal(g, h, &why));
  EXPECT_NE(why.find("constant data differs"), std::string::npos) << why;
}

TEST_F(GraphTest, DeepChainHasNoRecursionLimit) {
  NodePtr x = make_input("x", {DType::kF32, {2}});
  Value v = x->output();
  for (int i = 0; i < 100000; ++i) v = make_call("t_scale", {v}, {})->output();
  Graph g({x}, {v});
  EXPECT_EQ(g.topo_order().size(), 100001u);
}

}  // namespace
}  // namespace kiln::ir
