// Text form: print -> parse round trips (inline and side-table constants, multi-output calls,
// quoted names, special floats) and parse errors with line:column.
#include <gtest/gtest.h>

#include <cmath>

#include "ir/test_ops.h"
#include "kiln/ir/graph.h"
#include "kiln/ir/text.h"
#include "kiln/ir/verifier.h"

namespace kiln::ir {
namespace {

class TextTest : public ::testing::Test {
 protected:
  void SetUp() override { testing_ops::register_test_ops(); }
};

Graph sample_graph() {
  NodePtr x = make_input("x", {DType::kF32, {4, 8}});
  NodePtr odd = make_input("input:0/weird name", {DType::kF32, {4, 8}});
  NDArray big = NDArray::empty(DType::kF32, {4, 8});
  for (int64_t i = 0; i < big.numel(); ++i) big.mutable_data<float>()[i] = 0.1f * static_cast<float>(i) - 1.3f;
  NDArray small = NDArray::empty(DType::kF32, {2, 2});
  small.mutable_data<float>()[0] = 1.0f / 3.0f;
  small.mutable_data<float>()[1] = -INFINITY;
  small.mutable_data<float>()[2] = NAN;
  small.mutable_data<float>()[3] = 1e-30f;
  NDArray ints = NDArray::empty(DType::kI64, {3});
  ints.mutable_data<int64_t>()[0] = -1;
  ints.mutable_data<int64_t>()[1] = int64_t{1} << 62;
  ints.mutable_data<int64_t>()[2] = 7;
  NodePtr w = make_constant("w.big", big);
  NodePtr s = make_constant("s", small);
  NodePtr k = make_constant("k", ints);
  NodePtr a = make_call("t_add", {x->output(), w->output()}, {});
  NodePtr b = make_call("t_add", {a->output(), odd->output()}, {});
  NodePtr sp = make_call("t_split2", {b->output()}, {});
  NodePtr sc = make_call("t_scale", {sp->output(1)},
                         Attrs().set("factor", 0.1).set("tag", std::string("say \"hi\"\\")));
  NodePtr sc2 = make_call("t_scale", {s->output()}, Attrs().set("factor", -INFINITY));
  return Graph({x, odd}, {sc->output(), sp->output(0), sc2->output(), k->output()}, {"y", "first half", "s2", "k"});
}

TEST_F(TextTest, RoundTripsWithSideTable) {
  Graph g = sample_graph();
  GraphText printed = print_graph(g);
  SCOPED_TRACE(printed.text);
  EXPECT_NE(printed.text.find("%2, %3 = t_split2(%1)"), std::string::npos);
  EXPECT_NE(printed.text.find("constant @w.big {checksum = 0x"), std::string::npos);
  EXPECT_NE(printed.text.find(": (f32[2, 8], f32[2, 8])"), std::string::npos);
  EXPECT_NE(printed.text.find("%\"input:0/weird name\": f32[4, 8]"), std::string::npos);
  ASSERT_EQ(printed.side_table.size(), 1u);
  // The side table shares the graph's storage.
  EXPECT_EQ(printed.side_table.at("w.big").raw_data(),
            g.topo_order()[2]->kind() == NodeKind::kConstant ? printed.side_table.at("w.big").raw_data() : nullptr);
  Graph parsed = parse_graph(printed.text, printed.side_table);
  std::string why;
  EXPECT_TRUE(structurally_equal(g, parsed, &why)) << why;
  EXPECT_TRUE(verify_graph(parsed).empty());
  // Printing the parsed graph gives the same text.
  EXPECT_EQ(graph_to_text(parsed), printed.text);
}

TEST_F(TextTest, RoundTripsWithEverythingInline) {
  Graph g = sample_graph();
  PrintOptions all_inline;
  all_inline.inline_constant_limit = 1 << 20;
  GraphText printed = print_graph(g, all_inline);
  EXPECT_TRUE(printed.side_table.empty());
  std::string why;
  EXPECT_TRUE(structurally_equal(g, parse_graph(printed.text), &why)) << why << "\n" << printed.text;
}

TEST_F(TextTest, ParsesHandWrittenText) {
  const char* text = R"(// a comment
graph(%a: f32[2]) {
  %c = constant [1.5, 2] : f32[2]
  %0 = t_add(%a, %c) : f32[2]   // trailing comment
  %1 = t_scale(%0, factor=3) : f32[2]
  return %1 as "out"
})";
  Graph g = parse_graph(text);
  ASSERT_EQ(g.num_calls(), 2);
  EXPECT_DOUBLE_EQ(g.outputs()[0].node->as_call().attrs().get_float("factor"), 3.0);  // int literal -> float
  EXPECT_EQ(g.output_names()[0], "out");
}

struct BadText {
  const char* text;
  const char* where;
  const char* message;
};

TEST_F(TextTest, ParseErrorsNameLineColumnAndExpectation) {
  const BadText cases[] = {
      {"graf(%a: f32[2]) {\n return %a as \"o\"\n}", "<text>:1:1", "expected 'graph', found 'graf'"},
      {"graph(%a: f33[2]) {\n return %a as \"o\"\n}", "<text>:1:11", "expected a dtype"},
      {"graph(%a: f32[2]) {\n  %0 = t_add(%a, %b) : f32[2]\n  return %0 as \"o\"\n}", "<text>:2:18",
       "%b is not defined"},
      {"graph(%a: f32[2]) {\n  %0 = t_nope(%a) : f32[2]\n  return %0 as \"o\"\n}", "<text>:2:8",
       "unknown operator 't_nope'"},
      {"graph(%a: f32[2]) {\n  %0 = t_scale(%a) : f32[3]\n  return %0 as \"o\"\n}", "<text>:2:22",
       "differs from the inferred type f32[2]"},
      {"graph(%a: f32[2]) {\n  %0 = t_scale(%a, factor=\"x\") : f32[2]\n  return %0 as \"o\"\n}", "<text>:2:8",
       "attribute 'factor' is string"},
      {"graph(%a: f32[2]) {\n  %c = constant [1, 2, 3] : f32[2]\n  return %c as \"o\"\n}", "<text>:2:17",
       "constant has 3 values"},
      {"graph(%a: f32[2]) {\n  %c = constant @w {checksum = 0x01} : f32[2]\n  return %c as \"o\"\n}", "<text>:2:18",
       "not in the side table"},
      {"graph(%a: f32[2]) {\n  %0 = t_scale(%a) : f32[2]\n", "<text>:3:1", "found the end of the text"},
      {"graph(%a: f32[2]) {\n  %a = t_scale(%a) : f32[2]\n  return %a as \"o\"\n}", "<text>:2:3", "already defined"},
      {"graph(%a: f32[2]) {\n  return %a as \"o\n}", "<text>:2:16", "closing '\"'"},
  };
  for (const auto& c : cases) {
    try {
      parse_graph(c.text);
      ADD_FAILURE() << "parsed: " << c.text;
    } catch (const UserError& e) {
      EXPECT_EQ(e.kind(), UserErrorKind::kParse);
      EXPECT_EQ(e.subject(), c.where) << e.what();
      EXPECT_NE(std::string(e.what()).find(c.message), std::string::npos) << e.what();
    }
  }
}

TEST_F(TextTest, SideTableMismatchIsAnError) {
  Graph g = sample_graph();
  GraphText printed = print_graph(g);
  auto table = printed.side_table;
  NDArray other = table.at("w.big").copy();
  other.mutable_data<float>()[0] += 1.0f;
  table["w.big"] = other;
  try {
    parse_graph(printed.text, table, "model.kir");
    FAIL() << "checksum mismatch accepted";
  } catch (const UserError& e) {
    EXPECT_NE(std::string(e.what()).find("does not match its checksum"), std::string::npos) << e.what();
    EXPECT_EQ(e.subject().rfind("model.kir:", 0), 0u) << e.subject();
  }
}

}  // namespace
}  // namespace kiln::ir
