// Reference executor: runs graphs op by op (multi-output calls, constants, inputs by name) and
// rejects wrong inputs.
#include <gtest/gtest.h>

#include "ir/test_ops.h"
#include "kiln/ir/graph.h"
#include "kiln/ref/executor.h"

namespace kiln::ref {
namespace {

using namespace kiln::ir;

TEST(ExecutorTest, RunsGraphAndMatchesHandComputedValues) {
  testing_ops::register_test_ops();
  NodePtr x = make_input("x", {DType::kF32, {4}});
  NDArray cdata = NDArray::empty(DType::kF32, {4});
  for (int i = 0; i < 4; ++i) cdata.mutable_data<float>()[i] = 10.0f * static_cast<float>(i);
  NodePtr c = make_constant("c", cdata);
  NodePtr a = make_call("t_add", {x->output(), c->output()}, {});
  NodePtr s = make_call("t_split2", {a->output()}, {});
  NodePtr b = make_call("t_add", {s->output(0), s->output(1)}, {});
  NodePtr y = make_call("t_scale", {b->output()}, Attrs().set("factor", 0.5));
  Graph g({x}, {y->output(), s->output(0)}, {"y", "lo"});
  NDArray in = NDArray::empty(DType::kF32, {4});
  for (int i = 0; i < 4; ++i) in.mutable_data<float>()[i] = static_cast<float>(i + 1);  // 1 2 3 4
  auto outs = run_graph(g, std::map<std::string, NDArray>{{"x", in}});
  ASSERT_EQ(outs.size(), 2u);
  // a = [1, 12, 23, 34]; halves [1, 12], [23, 34]; y = ([24, 46]) * 0.5 = [12, 23]
  const float expected_y[] = {12, 23};
  const float expected_lo[] = {1, 12};
  for (int i = 0; i < 2; ++i) {
    EXPECT_FLOAT_EQ(outs[0].data<float>()[i], expected_y[i]) << "y[" << i << "]";
    EXPECT_FLOAT_EQ(outs[1].data<float>()[i], expected_lo[i]) << "lo[" << i << "]";
  }
  // The input array itself is not modified.
  EXPECT_FLOAT_EQ(in.data<float>()[0], 1.0f);
}

TEST(ExecutorTest, RejectsWrongInputs) {
  testing_ops::register_test_ops();
  NodePtr x = make_input("x", {DType::kF32, {4}});
  NodePtr y = make_call("t_scale", {x->output()}, {});
  Graph g({x}, {y->output()});
  EXPECT_THROW(run_graph(g, std::vector<NDArray>{NDArray::empty(DType::kF32, {5})}), UserError);
  EXPECT_THROW(run_graph(g, std::vector<NDArray>{NDArray::empty(DType::kI32, {4})}), UserError);
  EXPECT_THROW(run_graph(g, std::vector<NDArray>{}), UserError);
  try {
    run_graph(g, std::map<std::string, NDArray>{{"z", NDArray::empty(DType::kF32, {4})}});
    FAIL();
  } catch (const UserError& e) {
    EXPECT_NE(std::string(e.what()).find("'z'"), std::string::npos) << e.what();
    EXPECT_NE(e.hint().find("x"), std::string::npos);
  }
}

}  // namespace
}  // namespace kiln::ref
