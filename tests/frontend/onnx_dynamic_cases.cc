// ONNX models with symbolic input dimensions (tests/frontend/make_dynamic_cases.py, a CTest
// fixture), imported once with symbolic dimensions (OnnxImportOptions::symbolic_dims) and checked
// at every data set's size: on the reference executor (which runs a symbolic graph at its
// inputs' sizes) and compiled after specialization to those sizes, against numpy (the hand-built
// shape arithmetic) and PyTorch (the exported encoder). The shape computations of the exports
// must become symbolic shapes at import (known_values.h): none is left in the graph.
#include <gtest/gtest.h>
#include <unistd.h>

#include <filesystem>
#include <map>

#include "driver/compile_test_util.h"
#include "frontend/onnx_case_runner.h"
#include "kiln/driver/compile.h"
#include "kiln/frontend/onnx.h"
#include "kiln/ir/specialize.h"
#include "kiln/ir/text.h"
#include "kiln/ir/verifier.h"

namespace kiln::frontend {
namespace {

namespace fs = std::filesystem;

const fs::path kRoot = fs::path(KILN_BINARY_DIR) / "onnx_dynamic";

#define SKIP_IF_NO_CASES()                                                                             \
  if (!fs::exists(kRoot / "cases"))                                                                    \
  GTEST_SKIP() << "no generated models in " << kRoot                                                   \
               << ": tests/frontend/make_dynamic_cases.py (CTest fixture frontend.make_dynamic_cases) " \
                  "failed or did not run; it needs /usr/bin/python3 with numpy, onnx and torch"

struct DynamicCase {
  std::string name;
  std::string output_type;  // the symbolic output type, as printed
  double rtol, atol;
};

void PrintTo(const DynamicCase& c, std::ostream* os) { *os << c.name; }

const std::vector<DynamicCase>& cases() {
  static const std::vector<DynamicCase> all = {
      {"dynamic_shape_chain", "f32[batch, seq, 8]", 1e-5, 1e-5},
      {"torch_encoder", "f32[batch, seq, 32]", 1e-4, 1e-4},
  };
  return all;
}

std::map<std::string, int> op_counts(const ir::Graph& g) {
  std::map<std::string, int> ops;
  for (const auto& node : g.topo_order()) {
    if (node->kind() == ir::NodeKind::kCall) ++ops[node->as_call().op().name];
  }
  return ops;
}

class DynamicOnnxCase : public ::testing::TestWithParam<DynamicCase> {};

TEST_P(DynamicOnnxCase, OneSymbolicImportMatchesAtEverySize) {
  SKIP_IF_NO_CASES();
  const DynamicCase& c = GetParam();
  const fs::path dir = kRoot / "cases" / c.name;
  OnnxImportOptions options;
  options.symbolic_dims = true;
  const ir::Graph g = import_onnx((dir / "model.onnx").string(), options);
  EXPECT_TRUE(ir::verify_graph(g).empty());
  EXPECT_EQ(g.outputs()[0].type().to_string(), c.output_type);
  const auto ops = op_counts(g);
  EXPECT_EQ(ops.count("shape_of"), 0u) << ir::graph_to_text(g);
  EXPECT_EQ(ops.count("gather") ? ops.at("gather") : 0, c.name == "torch_encoder" ? 2 : 1)  // the embeddings only
      << ir::graph_to_text(g);
  ir::GraphText text = ir::print_graph(g);
  std::string why;
  EXPECT_TRUE(ir::structurally_equal(g, ir::parse_graph(text.text, text.side_table), &why)) << why;

  const auto reference = testing::run_onnx_case(dir.string(), c.rtol, c.atol, options);
  EXPECT_TRUE(reference.passed) << "reference: " << reference.message;
  EXPECT_TRUE(reference.bound_inputs.empty());

  const fs::path so = fs::temp_directory_path() / ("kiln-dynamic-" + std::to_string(getpid()) + "-" + c.name + ".so");
  const testing::GraphRunner compiled = [&](const ir::Graph& graph, const std::vector<ir::NDArray>& inputs) {
    std::vector<std::vector<int64_t>> shapes;
    for (const ir::NDArray& a : inputs) shapes.push_back(a.sizes());
    driver::compile_graph(ir::specialize_dims(graph, ir::bind_dim_vars(graph, shapes)), so.string(), driver::CompileOptions{});
    auto outs = testing::run_compiled(so.string(), inputs);
    fs::remove(so);
    return outs;
  };
  const auto result = testing::run_onnx_case(dir.string(), c.rtol, c.atol, options, compiled);
  EXPECT_TRUE(result.passed) << "compiled: " << result.message;
}

INSTANTIATE_TEST_SUITE_P(Generated, DynamicOnnxCase, ::testing::ValuesIn(cases()),
                         [](const ::testing::TestParamInfo<DynamicCase>& info) { return info.param.name; });

// An input outside the declared range is refused by input, dimension, value and range.
TEST(DynamicOnnx, InputOutsideTheDeclaredRangeIsRefused) {
  SKIP_IF_NO_CASES();
  OnnxImportOptions options;
  options.symbolic_dims = true;
  parse_dim_option("seq=1..8", &options.dim_ranges);
  const ir::Graph g = import_onnx((kRoot / "cases/dynamic_shape_chain/model.onnx").string(), options);
  try {
    ir::bind_dim_vars(g, {{2, 9, 8}});
    ADD_FAILURE() << "no error";
  } catch (const UserError& e) {
    EXPECT_EQ(e.kind(), UserErrorKind::kInvalidArgument);
    const std::string what = e.what();
    for (const char* part : {"input 'x' dimension 1 (seq)", "is 9", "range 1..8"}) {
      EXPECT_NE(what.find(part), std::string::npos) << what;
    }
  }
}

}  // namespace
}  // namespace kiln::frontend
