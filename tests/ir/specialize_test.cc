// Specialization of size variables (kiln/ir/specialize.h): a symbolic graph at concrete sizes has
// the types, and on the reference executor the outputs, of the same graph written with static
// shapes; the run-time binding of sizes from input shapes refuses every mismatch by input and
// dimension.
#include <gtest/gtest.h>

#include <functional>
#include <map>
#include <string>

#include "kiln/ir/specialize.h"
#include "kiln/ir/text.h"
#include "kiln/ref/executor.h"
#include "kiln/support/error.h"

namespace kiln::ir {
namespace {

const char* kSymbolic = R"(graph<batch: 1..4, seq: 1..8>(%x: f32[batch, seq, 8], %m: f32[batch, seq, 1]) {
  %0 = reshape(%x, shape=[batch, seq * 2, 4]) : f32[batch, seq * 2, 4]
  %1 = reshape(%0, shape=[batch, seq, 8]) : f32[batch, seq, 8]
  %2 = mul(%1, %m) : f32[batch, seq, 8]
  %3 = shape_of(%2, end=3) : i64[3]
  return %2 as "y", %3 as "s"
})";

// The same graph written with the sizes in place: an independent path to the expected types.
std::string static_text(int64_t b, int64_t s) {
  const std::string B = std::to_string(b), S = std::to_string(s), S2 = std::to_string(2 * s);
  return "graph(%x: f32[" + B + ", " + S + ", 8], %m: f32[" + B + ", " + S + ", 1]) {\n" +
         "  %0 = reshape(%x, shape=[" + B + ", " + S2 + ", 4]) : f32[" + B + ", " + S2 + ", 4]\n" +
         "  %1 = reshape(%0, shape=[" + B + ", " + S + ", 8]) : f32[" + B + ", " + S + ", 8]\n" +
         "  %2 = mul(%1, %m) : f32[" + B + ", " + S + ", 8]\n" +
         "  %3 = shape_of(%2, end=3) : i64[3]\n  return %2 as \"y\", %3 as \"s\"\n}";
}

NDArray filled(const std::vector<int64_t>& shape, double scale) {
  NDArray a = NDArray::empty(DType::kF32, shape);
  for (int64_t i = 0; i < a.numel(); ++i) a.set_from_double(i, scale * static_cast<double>((i * 7) % 11) - 3.0);
  return a;
}

void expect_error(const std::function<void()>& fn, UserErrorKind kind, const std::vector<std::string>& parts) {
  try {
    fn();
    ADD_FAILURE() << "no error";
  } catch (const UserError& e) {
    const std::string all = std::string(e.what()) + " hint: " + e.hint();
    EXPECT_EQ(e.kind(), kind) << all;
    for (const std::string& p : parts) EXPECT_NE(all.find(p), std::string::npos) << "'" << p << "' not in: " << all;
  }
}

TEST(Specialize, AllVariablesGiveTheStaticGraphsTypes) {
  const Graph g = parse_graph(kSymbolic);
  ASSERT_EQ(g.dim_vars().size(), 2u);
  const Graph s = specialize_dims(g, {{"batch", 2}, {"seq", 3}});
  EXPECT_TRUE(s.dim_vars().empty());
  const Graph want = parse_graph(static_text(2, 3));
  for (size_t i = 0; i < 2; ++i) {
    EXPECT_EQ(s.inputs()[i]->output_types()[0], want.inputs()[i]->output_types()[0]);
    EXPECT_EQ(s.outputs()[i].type(), want.outputs()[i].type());
  }
  // shape_of of a shape made static is a constant.
  ASSERT_EQ(s.outputs()[1].node->kind(), NodeKind::kConstant);
  const NDArray& dims = s.outputs()[1].node->as_constant().data();
  EXPECT_EQ(std::vector<int64_t>(dims.data<int64_t>().begin(), dims.data<int64_t>().end()), (std::vector<int64_t>{2, 3, 8}));
}

TEST(Specialize, SomeVariablesKeepTheOthersAndTheirRanges) {
  const Graph s = specialize_dims(parse_graph(kSymbolic), {{"seq", 5}});
  ASSERT_EQ(s.dim_vars().size(), 1u);
  EXPECT_EQ(s.dim_vars()[0].name(), "batch");
  EXPECT_EQ(s.dim_vars()[0].hi, 4);
  EXPECT_EQ(s.inputs()[0]->output_types()[0].to_string(), "f32[batch, 5, 8]");
  EXPECT_EQ(s.outputs()[0].type().to_string(), "f32[batch, 5, 8]");
  EXPECT_EQ(s.outputs()[1].node->kind(), NodeKind::kCall);  // batch is still symbolic
}

// The reference executor runs a symbolic graph at the sizes of its inputs, with the outputs of the
// static graph at those sizes.
TEST(Specialize, ReferenceExecutorRunsTheSymbolicGraphAtEachSize) {
  const Graph g = parse_graph(kSymbolic);
  for (auto [b, s] : std::vector<std::pair<int64_t, int64_t>>{{1, 1}, {2, 3}, {4, 8}}) {
    SCOPED_TRACE("batch " + std::to_string(b) + ", seq " + std::to_string(s));
    const std::vector<NDArray> inputs{filled({b, s, 8}, 0.5), filled({b, s, 1}, 0.25)};
    const std::vector<NDArray> got = ref::run_graph(g, inputs);
    const std::vector<NDArray> want = ref::run_graph(parse_graph(static_text(b, s)), inputs);
    ASSERT_EQ(got.size(), want.size());
    for (size_t k = 0; k < got.size(); ++k) {
      ASSERT_EQ(got[k].type(), want[k].type());
      for (int64_t i = 0; i < want[k].numel(); ++i) ASSERT_EQ(got[k].get_as_double(i), want[k].get_as_double(i)) << k;
    }
  }
}

TEST(Specialize, BindingRefusesEveryMismatchByInputAndDimension) {
  const Graph g = parse_graph(kSymbolic);
  EXPECT_EQ(bind_dim_vars(g, {{3, 7, 8}, {3, 7, 1}}), (std::map<std::string, int64_t>{{"batch", 3}, {"seq", 7}}));
  const auto K = UserErrorKind::kInvalidArgument;
  expect_error([&] { bind_dim_vars(g, {{3, 9, 8}, {3, 9, 1}}); }, K,
               {"input 'x' dimension 1 (seq)", "is 9", "range 1..8", "--dim seq="});
  expect_error([&] { bind_dim_vars(g, {{3, 7, 8}, {2, 7, 1}}); }, K,
               {"input 'm' dimension 0 (batch)", "is 2", "input 'x' dimension 0 set batch to 3"});
  expect_error([&] { bind_dim_vars(g, {{3, 7, 9}, {3, 7, 1}}); }, K, {"input 'x' dimension 2", "is 9", "takes 8"});
  expect_error([&] { bind_dim_vars(g, {{3, 7}, {3, 7, 1}}); }, K, {"input 'x'", "rank 2", "f32[batch, seq, 8]"});
  expect_error([&] { bind_dim_vars(g, {{3, 7, 8}}); }, K, {"1 given", "takes 2"});
  // Through the reference executor, as a user of a dynamic graph meets it.
  expect_error([&] { ref::run_graph(g, std::vector<NDArray>{filled({5, 2, 8}, 1), filled({5, 2, 1}, 1)}); }, K, {"(batch)", "is 5", "1..4"});
  // An expression dimension is checked against the variables the others bind.
  const Graph e = parse_graph(R"(graph<n: 1..16>(%a: f32[n], %b: f32[n + 1]) {
  %0 = shape_of(%b, end=1) : i64[1]
  return %0 as "s"
})");
  EXPECT_EQ(bind_dim_vars(e, {{4}, {5}}).at("n"), 4);
  expect_error([&] { bind_dim_vars(e, {{4}, {6}}); }, K, {"input 'b' dimension 0", "is 6", "n + 1 = 5"});
}

TEST(Specialize, UnknownVariablesAndValuesOutOfRangeAreErrors) {
  const Graph g = parse_graph(kSymbolic);
  expect_error([&] { specialize_dims(g, {{"sequence", 3}}); }, UserErrorKind::kNotFound, {"'sequence'", "batch, seq"});
  expect_error([&] { specialize_dims(g, {{"batch", 0}}); }, UserErrorKind::kInvalidArgument, {"'batch'", "value 0", "1..4"});
}

}  // namespace
}  // namespace kiln::ir
