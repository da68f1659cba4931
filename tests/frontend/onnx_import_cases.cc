// ONNX importer against small generated models (tests/frontend/make_onnx_cases.py, run as a CTest
// fixture): each case imports, round-trips through the text form, runs on the reference executor
// and matches numpy/PyTorch within rtol 1e-4 / atol 1e-5. Then every user-facing import error.
#include <gtest/gtest.h>

#include <filesystem>
#include <fstream>

#include "frontend/onnx_case_runner.h"
#include "kiln/frontend/onnx.h"
#include "kiln/ir/text.h"
#include "kiln/ir/verifier.h"

namespace kiln::frontend {
namespace {

namespace fs = std::filesystem;

const fs::path kRoot = fs::path(KILN_BINARY_DIR) / "onnx_cases";

bool cases_missing() { return !fs::exists(kRoot / "cases") || !fs::exists(kRoot / "bad"); }

#define SKIP_IF_NO_CASES()                                                                                  \
  if (cases_missing())                                                                                      \
  GTEST_SKIP() << "no generated models in " << kRoot                                                        \
               << ": tests/frontend/make_onnx_cases.py (CTest fixture frontend.make_onnx_cases) failed or did " \
                  "not run; it needs /usr/bin/python3 with numpy, onnx and torch"

std::vector<std::string> case_names() {
  std::vector<std::string> names;
  if (!fs::exists(kRoot / "cases")) return {"missing"};
  for (const auto& e : fs::directory_iterator(kRoot / "cases")) names.push_back(e.path().filename().string());
  std::sort(names.begin(), names.end());
  return names;
}

OnnxImportOptions options_for(const std::string& name) {
  OnnxImportOptions o;
  if (name == "dynamic_batch") o.input_shapes["x"] = {2, 3, 4};
  if (name == "dynamic_cnn") o.input_shapes["x"] = {2, 3, 8, 6};
  if (name == "dynamic_attention") o.input_shapes["x"] = {2, 5, 8};
  return o;
}

class OnnxCase : public ::testing::TestWithParam<std::string> {};

TEST_P(OnnxCase, ImportsRoundTripsAndMatchesExpected) {
  const std::string name = GetParam();
  SKIP_IF_NO_CASES();
  const std::string dir = (kRoot / "cases" / name).string();
  auto result = testing::run_onnx_case(dir, 1e-4, 1e-5, options_for(name));
  EXPECT_TRUE(result.passed) << name << ": " << result.message;
  if (!result.passed) return;
  // Inputs the runner bound (a shape fed as a graph input) are bound here too.
  OnnxImportOptions options = options_for(name);
  const auto input_names = onnx_input_names(dir + "/model.onnx");
  const auto input_files = testing::numbered_files(std::filesystem::path(dir) / "test_data_set_0", "input");
  for (const std::string& bound : result.bound_inputs) {
    for (size_t k = 0; k < input_names.size() && k < input_files.size(); ++k) {
      if (input_names[k] == bound) options.constant_inputs[bound] = read_onnx_tensor(input_files[k]);
    }
  }
  ir::Graph g = import_onnx(dir + "/model.onnx", options);
  EXPECT_TRUE(ir::verify_graph(g).empty());
  ir::GraphText text = ir::print_graph(g);
  std::string why;
  EXPECT_TRUE(ir::structurally_equal(g, ir::parse_graph(text.text, text.side_table), &why)) << why << "\n" << text.text;
}

INSTANTIATE_TEST_SUITE_P(Generated, OnnxCase, ::testing::ValuesIn(case_names()),
                         [](const ::testing::TestParamInfo<std::string>& info) { return info.param; });

TEST(OnnxImport, ShapeSubgraphFoldsToConstants) {
  SKIP_IF_NO_CASES();
  ir::Graph g = import_onnx((kRoot / "cases/shape_subgraph_folds/model.onnx").string());
  ASSERT_EQ(g.num_calls(), 1) << ir::graph_to_text(g);
  const auto& call = g.outputs()[0].node->as_call();
  EXPECT_EQ(call.op().name, "reshape");
  EXPECT_EQ(call.attrs().get_shape("shape"), (ir::Shape{2, 12}));
  ir::Graph h = import_onnx((kRoot / "cases/constant_of_shape/model.onnx").string());
  EXPECT_EQ(h.num_calls(), 1) << ir::graph_to_text(h);
}

TEST(OnnxImport, IntegerRangePast2Pow53IsExact) {
  // The case runner compares with a relative tolerance, which cannot see an int64 rounded through
  // a double; the folded Range constant is checked bit for bit here.
  SKIP_IF_NO_CASES();
  ir::Graph g = import_onnx((kRoot / "cases/range_int64_past_2pow53/model.onnx").string());
  const auto& add = g.outputs()[0].node->as_call();
  ASSERT_EQ(add.op().name, "add") << ir::graph_to_text(g);
  const ir::NDArray& r = add.args().at(1).node->as_constant().data();
  const int64_t big = (int64_t{1} << 62) + 1;
  ASSERT_EQ(r.numel(), 3);
  EXPECT_EQ(r.data<int64_t>()[0], big);
  EXPECT_EQ(r.data<int64_t>()[1], big + 3);
  EXPECT_EQ(r.data<int64_t>()[2], big + 6);
}

TEST(OnnxImport, ResolvesAttributesAtImport) {
  SKIP_IF_NO_CASES();
  ir::Graph g = import_onnx((kRoot / "cases/conv_same_upper/model.onnx").string());
  const auto& conv = g.outputs()[0].node->as_call();
  EXPECT_EQ(conv.op().name, "conv2d");
  EXPECT_EQ(conv.attrs().get_ints("pads"), (std::vector<int64_t>{1, 1, 2, 2}));
  ir::Graph c = import_onnx((kRoot / "cases/concat_neg_axis/model.onnx").string());
  EXPECT_EQ(c.outputs()[0].node->as_call().attrs().get_int("axis"), 2);
}

void expect_user_error(const std::function<void()>& fn, UserErrorKind kind, const std::vector<std::string>& parts) {
  try {
    fn();
    ADD_FAILURE() << "no error";
  } catch (const UserError& e) {
    const std::string all = std::string(e.what()) + "\nhint: " + e.hint();
    EXPECT_EQ(e.kind(), kind) << all;
    for (const auto& p : parts) EXPECT_NE(all.find(p), std::string::npos) << "missing '" << p << "' in: " << all;
  }
}

std::string bad(const std::string& name) { return (kRoot / "bad" / (name + ".onnx")).string(); }

TEST(OnnxImportErrors, NotAnOnnxFile) {
  SKIP_IF_NO_CASES();
  expect_user_error([] { import_onnx(bad("not_onnx")); }, UserErrorKind::kParse, {"not_onnx.onnx", "not"});
}

TEST(OnnxImportErrors, TruncatedFile) {
  SKIP_IF_NO_CASES();
  expect_user_error([] { import_onnx(bad("truncated")); }, UserErrorKind::kParse, {"truncated.onnx"});
}

// Cutting a valid model anywhere gives a UserError (or, where the cut falls between fields, a
// model that still imports), never another exception or a crash.
TEST(OnnxImportErrors, TruncatedAtEveryFewBytes) {
  SKIP_IF_NO_CASES();
  std::ifstream in(kRoot / "cases/conv_groups_bias/model.onnx", std::ios::binary);
  std::string bytes((std::istreambuf_iterator<char>(in)), std::istreambuf_iterator<char>());
  ASSERT_GT(bytes.size(), 100u);
  int user_errors = 0;
  for (size_t cut = 0; cut < bytes.size(); cut += 7) {
    try {
      import_onnx_bytes(bytes.substr(0, cut), kRoot.string(), {}, "cut" + std::to_string(cut));
    } catch (const UserError&) {
      ++user_errors;
    } catch (const std::exception& e) {
      ADD_FAILURE() << "cut at " << cut << ": " << e.what();
    }
  }
  EXPECT_GT(user_errors, 0);
}

TEST(OnnxImportErrors, MissingFile) {
  expect_user_error([] { import_onnx(bad("no_such_model")); }, UserErrorKind::kNotFound, {"no such file"});
}

TEST(OnnxImportErrors, UnsupportedOperatorNamesOpNodeOpsetAndSupportedList) {
  SKIP_IF_NO_CASES();
  expect_user_error([] { import_onnx(bad("unsupported_op")); }, UserErrorKind::kUnsupported,
                    {"my_bernoulli", "Bernoulli", "opset 13", "supported operators:", "Conv", "Resize"});
}

TEST(OnnxImportErrors, UnsupportedAttributeValue) {
  SKIP_IF_NO_CASES();
  expect_user_error([] { import_onnx(bad("unsupported_attr")); }, UserErrorKind::kUnsupported,
                    {"conv0", "auto_pad", "SAME_MIDDLE"});
  expect_user_error([] { import_onnx(bad("unsupported_cast")); }, UserErrorKind::kUnsupported, {"cast0", "'to'"});
  expect_user_error([] { import_onnx(bad("conv4d")); }, UserErrorKind::kUnsupported, {"c4d", "1, 2 or 3 spatial dimensions"});
}

TEST(OnnxImportErrors, MathAndNormalizationAttributes) {
  SKIP_IF_NO_CASES();
  expect_user_error([] { import_onnx(bad("group_norm_bad_groups")); }, UserErrorKind::kUnsupported,
                    {"gn0", "num_groups", "divide the 4 channels"});
  expect_user_error([] { import_onnx(bad("lp_norm_p3")); }, UserErrorKind::kUnsupported, {"lp0", "'p'", "p = 1 or 2"});
  expect_user_error([] { import_onnx(bad("bitshift_bad_direction")); }, UserErrorKind::kUnsupported,
                    {"shift0", "direction", "'UP'"});
}

TEST(OnnxImportErrors, TransformerOperators) {
  SKIP_IF_NO_CASES();
  expect_user_error([] { import_onnx(bad("attention_no_heads")); }, UserErrorKind::kUnsupported,
                    {"att0", "q_num_heads", "3-D"});
  expect_user_error([] { import_onnx(bad("attention_heads_mismatch")); }, UserErrorKind::kInvalidArgument,
                    {"att1", "4 query heads", "3 key/value heads"});
  expect_user_error([] { import_onnx(bad("rms_norm_stash")); }, UserErrorKind::kUnsupported, {"rms0", "stash_type"});
  expect_user_error([] { import_onnx(bad("rotary_odd_dim")); }, UserErrorKind::kUnsupported,
                    {"rope0", "rotary_embedding_dim", "even"});
  expect_user_error([] { import_onnx(bad("nll_float_target")); }, UserErrorKind::kInvalidArgument, {"nll0", "target"});
}

TEST(OnnxImportErrors, OpsetOutOfRange) {
  SKIP_IF_NO_CASES();
  expect_user_error([] { import_onnx(bad("opset_too_old")); }, UserErrorKind::kUnsupported, {"opset 6", "7..28", "re-export"});
  expect_user_error([] { import_onnx(bad("opset_too_new")); }, UserErrorKind::kUnsupported, {"opset 99"});
}

TEST(OnnxImportErrors, RuntimeShapeInputIsRejected) {
  SKIP_IF_NO_CASES();
  expect_user_error([] { import_onnx(bad("runtime_shape")); }, UserErrorKind::kUnsupported,
                    {"reshape0", "computed at run time"});
}

TEST(OnnxImportErrors, UndefinedValue) {
  SKIP_IF_NO_CASES();
  expect_user_error([] { import_onnx(bad("undefined_value")); }, UserErrorKind::kParse, {"relu0", "'nowhere'"});
}

TEST(OnnxImportErrors, InputShapes) {
  SKIP_IF_NO_CASES();
  const std::string model = (kRoot / "cases/dynamic_batch/model.onnx").string();
  expect_user_error([&] { import_onnx(model); }, UserErrorKind::kInvalidArgument, {"input 'x'", "'N'", "--input-shape x:"});
  OnnxImportOptions wrong_rank;
  wrong_rank.input_shapes["x"] = {2, 3};
  expect_user_error([&] { import_onnx(model, wrong_rank); }, UserErrorKind::kInvalidArgument, {"does not fit", "[N, 3, 4]"});
  OnnxImportOptions wrong_dim;
  wrong_dim.input_shapes["x"] = {2, 5, 4};
  expect_user_error([&] { import_onnx(model, wrong_dim); }, UserErrorKind::kInvalidArgument, {"does not fit"});
  OnnxImportOptions unknown;
  unknown.input_shapes["x"] = {2, 3, 4};
  unknown.input_shapes["y"] = {1};
  expect_user_error([&] { import_onnx(model, unknown); }, UserErrorKind::kNotFound, {"--input-shape y", "its inputs: x"});
  OnnxImportOptions good;
  good.input_shapes["x"] = {7, 3, 4};
  EXPECT_EQ(import_onnx(model, good).inputs()[0]->output_types()[0].to_string(), "f32[7, 3, 4]");
}

TEST(OnnxImportErrors, InputShapeOptionSyntax) {
  std::map<std::string, ir::Shape> shapes;
  parse_input_shape_option("input:1,3,224,224", &shapes);
  parse_input_shape_option("scalar:", &shapes);
  EXPECT_EQ(shapes["input"], (ir::Shape{1, 3, 224, 224}));
  EXPECT_TRUE(shapes["scalar"].empty());
  for (const char* bad_spec : {"input", "input:1,x", "input:1,-3", ":1,2", "input:1,,2"}) {
    std::map<std::string, ir::Shape> s;
    expect_user_error([&] { parse_input_shape_option(bad_spec, &s); }, UserErrorKind::kInvalidArgument, {"--input-shape"});
  }
  expect_user_error([&] { parse_input_shape_option("input:1", &shapes); }, UserErrorKind::kInvalidArgument, {"twice"});
}

}  // namespace
// With symbolic_dims the model's symbolic input dimensions stay size variables through every
// op; the symbolic output type, evaluated at sizes, is the output type of the model imported with
// those sizes pinned.
TEST(OnnxImport, SymbolicDimensionsReachTheOutputs) {
  SKIP_IF_NO_CASES();
  struct Case {
    std::string model;
    std::string input_type;  // as printed
    std::vector<std::map<std::string, int64_t>> sizes;
    std::vector<std::string> order;  // the input's axes: variable name, or "" for a fixed size
    std::vector<int64_t> fixed;
  };
  const std::vector<Case> cases = {
      {"dynamic_cnn", "f32[batch, 3, height, width]",
       {{{"batch", 1}, {"height", 2}, {"width", 2}}, {{"batch", 3}, {"height", 9}, {"width", 17}}},
       {"batch", "", "height", "width"}, {0, 3, 0, 0}},
      {"dynamic_attention", "f32[batch_size, seq, 8]",
       {{{"batch_size", 1}, {"seq", 1}}, {{"batch_size", 4}, {"seq", 77}}},
       {"batch_size", "seq", ""}, {0, 0, 8}},
  };
  for (const Case& c : cases) {
    SCOPED_TRACE(c.model);
    const std::string path = (kRoot / "cases" / c.model / "model.onnx").string();
    OnnxImportOptions o;
    o.symbolic_dims = true;
    ir::Graph g = import_onnx(path, o);
    EXPECT_TRUE(ir::verify_graph(g).empty());
    EXPECT_EQ(g.inputs()[0]->output_types()[0].to_string(), c.input_type);
    const ir::TensorType out = g.outputs()[0].type();
    EXPECT_FALSE(out.is_static()) << out.to_string();
    ir::GraphText text = ir::print_graph(g);
    std::string why;
    EXPECT_TRUE(ir::structurally_equal(g, ir::parse_graph(text.text, text.side_table), &why)) << why << "\n" << text.text;
    for (const auto& sizes : c.sizes) {
      OnnxImportOptions pinned;
      ir::Shape shape;
      for (size_t i = 0; i < c.order.size(); ++i) shape.push_back(c.order[i].empty() ? c.fixed[i] : sizes.at(c.order[i]));
      pinned.input_shapes["x"] = shape;
      const ir::TensorType want = import_onnx(path, pinned).outputs()[0].type();
      ir::Shape got;
      for (const ir::Dim& d : out.shape) got.push_back(ir::evaluate_dim(d, sizes));
      EXPECT_EQ(ir::shape_to_string(got), ir::shape_to_string(want.shape)) << "symbolic " << out.to_string();
    }
  }
}

TEST(OnnxImport, SizeVariableRanges) {
  SKIP_IF_NO_CASES();
  const std::string path = (kRoot / "cases/dynamic_attention/model.onnx").string();
  OnnxImportOptions o;
  o.symbolic_dims = true;
  parse_dim_option("seq=1..512", &o.dim_ranges);
  parse_dim_option("batch_size=4", &o.dim_ranges);
  ir::Graph g = import_onnx(path, o);
  ASSERT_EQ(g.dim_vars().size(), 2u);
  EXPECT_EQ(g.dim_vars()[0].name(), "batch_size");
  EXPECT_EQ(g.dim_vars()[0].lo, 4);
  EXPECT_EQ(g.dim_vars()[0].hi, 4);
  EXPECT_EQ(g.dim_vars()[1].hi, 512);
  EXPECT_NE(ir::print_graph(g).text.find("graph<batch_size: 4..4, seq: 1..512>("), std::string::npos);
  OnnxImportOptions unknown;
  unknown.symbolic_dims = true;
  parse_dim_option("sequence=1..8", &unknown.dim_ranges);
  expect_user_error([&] { import_onnx(path, unknown); }, UserErrorKind::kNotFound, {"--dim sequence", "batch_size, seq"});
  std::map<std::string, std::pair<int64_t, int64_t>> r;
  expect_user_error([&] { parse_dim_option("seq=9..2", &r); }, UserErrorKind::kInvalidArgument, {"empty"});
  expect_user_error([&] { parse_dim_option("seq=a..2", &r); }, UserErrorKind::kInvalidArgument, {"'a'"});
  expect_user_error([&] { parse_dim_option("se q=1..2", &r); }, UserErrorKind::kInvalidArgument, {"not a size variable name"});
  parse_dim_option("seq=3", &r);
  expect_user_error([&] { parse_dim_option("seq=4", &r); }, UserErrorKind::kInvalidArgument, {"given twice"});
  // Without symbolic_dims the dimensions are still refused, naming the fix.
  expect_user_error([&] { import_onnx(path); }, UserErrorKind::kInvalidArgument, {"'seq'", "--input-shape x:"});
}

}  // namespace kiln::frontend
