// Symbolic dimensions (kiln/ir/dim.h): arithmetic, equality, evaluation, the static-size bridge,
// and shape inference on symbolic shapes checked against inference on the concrete shapes that
// the size variables take (the static path is the reference).
#include <gtest/gtest.h>

#include <map>
#include <optional>

#include "kiln/ir/graph.h"
#include "kiln/ir/op.h"
#include "kiln/ir/text.h"
#include "kiln/support/error.h"

namespace kiln::ir {
namespace {

using Values = std::map<std::string, int64_t>;

class DimTest : public ::testing::Test {
 protected:
  DimVar b = make_dim_var("batch", 1, 64);
  DimVar s = make_dim_var("seq", 1, 512);
  Dim B = Dim::of(b), S = Dim::of(s);
};

TEST_F(DimTest, StaticDimsFoldAndCompareByValue) {
  Dim d = dim_add(Dim(3), Dim(4));
  ASSERT_TRUE(d.is_static());
  EXPECT_EQ(d.value(), 7);
  EXPECT_TRUE(d == 7);
  EXPECT_FALSE(d == 8);
  EXPECT_EQ(static_cast<int64_t>(d), 7);
  EXPECT_EQ(dim_floordiv(Dim(-7), Dim(2)).value(), -4);
  EXPECT_EQ(dim_ceildiv(Dim(7), Dim(2)).value(), 4);
  EXPECT_EQ(Dim(5).to_string(), "5");
}

TEST_F(DimTest, SymbolicDimsSimplifyToCanonicalForms) {
  EXPECT_TRUE(B.is_symbolic());
  EXPECT_EQ(B.to_string(), "batch");
  // seq + 1 - 1 folds back to seq; x - x to the static 0.
  EXPECT_TRUE(dim_sub(dim_add(S, Dim(1)), Dim(1)) == S);
  Dim zero = dim_sub(S, S);
  ASSERT_TRUE(zero.is_static());
  EXPECT_EQ(zero.value(), 0);
  // Sums are equal in any order; a symbolic dim never equals an integer.
  EXPECT_TRUE(dim_add(B, S) == dim_add(S, B));
  EXPECT_FALSE(S == 1);
  EXPECT_FALSE(S == B);
  EXPECT_TRUE(dims_provably_differ(dim_add(S, Dim(1)), S));
  EXPECT_FALSE(dims_provably_differ(S, B));
  EXPECT_FALSE(dims_provably_differ(S, Dim(768)));
  // (seq * 12) / 12 is seq.
  EXPECT_TRUE(dim_floordiv(dim_mul(S, Dim(12)), Dim(12)) == S);
}

// A reshape's -1 over symbolic sizes: the exact quotient when the divisor's factors are the
// dividend's, nothing when the division may leave a remainder.
TEST_F(DimTest, DividesExactlyWhereTheFactorsCancel) {
  const Dim numel = dim_mul(dim_mul(B, S), Dim(768));
  std::optional<Dim> q = dim_divide_exact(numel, dim_mul(S, Dim(768)));
  ASSERT_TRUE(q.has_value());
  EXPECT_TRUE(*q == B) << q->to_string();
  q = dim_divide_exact(numel, Dim(64));
  ASSERT_TRUE(q.has_value());
  EXPECT_TRUE(*q == dim_mul(dim_mul(B, S), Dim(12))) << q->to_string();
  q = dim_divide_exact(numel, numel);
  ASSERT_TRUE(q.has_value());
  EXPECT_TRUE(*q == 1);
  EXPECT_EQ(dim_divide_exact(Dim(12), Dim(4))->value(), 3);
  EXPECT_FALSE(dim_divide_exact(Dim(12), Dim(5)).has_value());
  EXPECT_FALSE(dim_divide_exact(dim_mul(B, Dim(6)), Dim(4)).has_value());  // 6 * batch / 4: not for every batch
  EXPECT_FALSE(dim_divide_exact(B, S).has_value());
  EXPECT_FALSE(dim_divide_exact(dim_add(S, Dim(1)), S).has_value());
}

TEST_F(DimTest, EvaluatesAtValues) {
  Dim e = dim_mul(dim_ceildiv(dim_add(S, Dim(31)), Dim(32)), Dim(32));
  EXPECT_EQ(evaluate_dim(e, {{"seq", 1}}), 32);
  EXPECT_EQ(evaluate_dim(e, {{"seq", 33}}), 64);
  EXPECT_EQ(evaluate_dim(dim_mul(B, S), {{"batch", 3}, {"seq", 7}}), 21);
  try {
    evaluate_dim(dim_add(B, S), {{"batch", 3}});
    FAIL() << "expected a UserError";
  } catch (const UserError& err) {
    EXPECT_NE(std::string(err.what()).find("'seq'"), std::string::npos) << err.what();
  }
}

TEST_F(DimTest, TheStaticSizeBridgeRefusesASymbolicDim) {
  try {
    const int64_t n = S;
    FAIL() << "converted to " << n;
  } catch (const UserError& err) {
    EXPECT_EQ(err.kind(), UserErrorKind::kUnsupported);
    EXPECT_NE(err.subject().find("'seq'"), std::string::npos);
    EXPECT_NE(err.hint().find("--input-shape"), std::string::npos);
  }
  Shape shape{B, 768};
  EXPECT_FALSE(shape.is_static());
  EXPECT_THROW(static_cast<void>(static_cast<std::vector<int64_t>>(shape)), UserError);
  EXPECT_EQ(shape_to_string(shape), "[batch, 768]");
  EXPECT_TRUE(shape_numel_dim(shape) == dim_mul(B, Dim(768)));
}

// ---- shape inference on symbolic shapes -----------------------------------------------------

struct InferCase {
  std::string op;
  std::vector<TensorType> inputs;  // over batch and seq
  Attrs attrs;
};

Shape substitute(const Shape& shape, const Values& v) {
  Shape out;
  for (const Dim& d : shape) out.push_back(evaluate_dim(d, v));
  return out;
}

// Infers `c` symbolically, then at each assignment of the size variables concretely, and checks
// that the symbolic result evaluates to the concrete one.
void expect_infers_symbolically(const InferCase& c, const std::vector<Values>& points) {
  SCOPED_TRACE(c.op);
  const OpDef& def = OpRegistry::global().get(c.op);
  const Attrs attrs = OpRegistry::global().validate_attrs(def, c.attrs);
  std::vector<TensorType> symbolic;
  try {
    symbolic = def.infer_type(c.inputs, attrs);
  } catch (const Error& e) {
    FAIL() << c.op << " does not infer symbolically: " << e.what();
  }
  for (const Values& v : points) {
    std::vector<TensorType> concrete_in;
    for (const TensorType& t : c.inputs) concrete_in.push_back({t.dtype, substitute(t.shape, v)});
    Attrs concrete_attrs;
    for (const auto& [name, value] : attrs.values()) {
      if (const auto* shape = std::get_if<Shape>(&value)) {
        concrete_attrs.set(name, substitute(*shape, v));
      } else {
        concrete_attrs.set(name, value);
      }
    }
    const std::vector<TensorType> concrete = def.infer_type(concrete_in, concrete_attrs);
    ASSERT_EQ(concrete.size(), symbolic.size());
    for (size_t i = 0; i < concrete.size(); ++i) {
      EXPECT_EQ(concrete[i].dtype, symbolic[i].dtype);
      EXPECT_EQ(shape_to_string(concrete[i].shape), shape_to_string(substitute(symbolic[i].shape, v)))
          << "output " << i << " " << symbolic[i].to_string() << " at batch=" << v.at("batch") << " seq=" << v.at("seq");
    }
  }
}

TEST_F(DimTest, CoreOpsInferSymbolicShapes) {
  const DType f = DType::kF32;
  const std::vector<Values> points = {{{"batch", 1}, {"seq", 1}}, {{"batch", 2}, {"seq", 7}}, {{"batch", 8}, {"seq", 128}}};
  const Dim S2 = dim_mul(S, Dim(2));
  const std::vector<InferCase> cases = {
      {"add", {{f, {B, S, 16}}, {f, {16}}}, {}},
      {"add", {{f, {B, 1, S}}, {f, {B, S, 1}}}, {}},
      {"mul", {{f, {B, S, 16}}, {f, {1, S, 1}}}, {}},
      {"relu", {{f, {B, S}}}, {}},
      {"sigmoid", {{f, {B, 3, S, S}}}, {}},
      {"cast", {{f, {B, S}}}, Attrs().set("dtype", DType::kF16)},
      {"where", {{DType::kBool, {B, 1, S}}, {f, {B, 4, S}}, {f, {1}}}, {}},
      {"matmul", {{f, {B, S, 16}}, {f, {16, 32}}}, {}},
      {"matmul", {{f, {B, 4, S, 8}}, {f, {B, 4, 8, S}}}, {}},
      {"gemm", {{f, {B, 16}}, {f, {32, 16}}, {f, {32}}}, Attrs().set("trans_b", int64_t{1})},
      {"transpose", {{f, {B, S, 4, 8}}}, Attrs().set("perm", std::vector<int64_t>{0, 2, 1, 3})},
      {"reshape", {{f, {B, S, 32}}}, Attrs().set("shape", Shape{B, S, 4, 8})},
      {"reshape", {{f, {B, S, 4, 8}}}, Attrs().set("shape", Shape{dim_mul(B, S), 32})},
      {"expand", {{f, {1, S}}}, Attrs().set("shape", Shape{B, S})},
      {"concat", {{f, {B, S, 4}}, {f, {B, S, 4}}, {f, {B, 3, 4}}}, Attrs().set("axis", int64_t{1})},
      {"concat", {{f, {B, S2}}, {f, {B, 3}}}, Attrs().set("axis", int64_t{1})},
      {"softmax", {{f, {B, 4, S, S}}}, Attrs().set("axis", int64_t{3})},
      {"layer_norm", {{f, {B, S, 16}}, {f, {16}}, {f, {16}}}, Attrs().set("axis", int64_t{2})},
      {"reduce_mean", {{f, {B, S, 16}}}, Attrs().set("axes", std::vector<int64_t>{2})},
      {"reduce_sum", {{f, {B, S, 16}}}, Attrs().set("axes", std::vector<int64_t>{1}).set("keepdims", int64_t{0})},
      {"conv2d", {{f, {B, 3, dim_add(S, Dim(8)), S}}, {f, {8, 3, 3, 3}}},
       Attrs().set("pads", std::vector<int64_t>{1, 1, 1, 1}).set("strides", std::vector<int64_t>{2, 2})},
      {"max_pool2d", {{f, {B, 8, dim_add(S, Dim(2)), dim_add(S, Dim(2))}}}, Attrs().set("kernel", std::vector<int64_t>{3, 3})},
      {"max_pool2d", {{f, {B, 8, dim_add(S, Dim(3)), S}}},
       Attrs()
           .set("kernel", std::vector<int64_t>{3, 3})
           .set("strides", std::vector<int64_t>{2, 2})
           .set("pads", std::vector<int64_t>{1, 1, 1, 1})
           .set("ceil_mode", int64_t{1})},
      {"global_avg_pool", {{f, {B, 8, S, S}}}, {}},
      {"strided_slice", {{f, {B, S, 16}}},
       Attrs().set("begins", std::vector<int64_t>{2}).set("ends", std::vector<int64_t>{9}).set("axes", std::vector<int64_t>{2})},
      {"batch_norm", {{f, {B, 4, S, S}}, {f, {4}}, {f, {4}}, {f, {4}}, {f, {4}}}, {}},
  };
  for (const InferCase& c : cases) expect_infers_symbolically(c, points);
}

TEST_F(DimTest, ProvableMismatchesAreInvalidAndUnprovableOnesUnsupported) {
  const OpDef& add = OpRegistry::global().get("add");
  const OpDef& matmul = OpRegistry::global().get("matmul");
  auto kind_of = [](const OpDef& op, const std::vector<TensorType>& in) {
    try {
      op.infer_type(in, OpRegistry::global().validate_attrs(op, {}));
    } catch (const UserError& e) {
      return e.kind();
    }
    ADD_FAILURE() << op.name << " inferred";
    return UserErrorKind::kIO;
  };
  const DType f = DType::kF32;
  EXPECT_EQ(kind_of(add, {{f, {B, S}}, {f, {B, dim_add(S, Dim(1))}}}), UserErrorKind::kUnsupported);
  EXPECT_EQ(kind_of(add, {{f, {B, S}}, {f, {B, 16}}}), UserErrorKind::kUnsupported);
  EXPECT_EQ(kind_of(matmul, {{f, {B, S}}, {f, {dim_add(S, Dim(1)), 8}}}), UserErrorKind::kInvalidArgument);
  EXPECT_EQ(kind_of(matmul, {{f, {B, S}}, {f, {B, 8}}}), UserErrorKind::kUnsupported);
}

// ---- the text form ----------------------------------------------------------------------------

TEST_F(DimTest, TextFormRoundTripsSizeVariablesAndShapeAttributes) {
  const std::string text =
      "graph<batch: 1..64, seq: 1..512>(%x: f32[batch, seq, 32], %m: f32[batch, 1, seq]) {\n"
      "  %0 = reshape(%x, shape=[batch, seq * 4, 8]) : f32[batch, seq * 4, 8]\n"
      "  %1 = relu(%0) : f32[batch, seq * 4, 8]\n"
      "  %2 = concat(%x, %x, axis=1) : f32[batch, seq * 2, 32]\n"
      "  return %1 as \"y\", %2 as \"z\", %m as \"m\"\n"
      "}\n";
  Graph g = parse_graph(text);
  ASSERT_EQ(g.dim_vars().size(), 2u);
  EXPECT_EQ(g.dim_vars()[1].name(), "seq");
  EXPECT_EQ(g.dim_vars()[1].hi, 512);
  GraphText printed = print_graph(g);
  EXPECT_NE(printed.text.find("graph<batch: 1..64, seq: 1..512>("), std::string::npos) << printed.text;
  EXPECT_NE(printed.text.find("shape=[batch, seq * 4, 8]"), std::string::npos) << printed.text;
  Graph again = parse_graph(printed.text, printed.side_table);
  std::string why;
  EXPECT_TRUE(structurally_equal(g, again, &why)) << why;
  EXPECT_EQ(print_graph(again).text, printed.text);
}

TEST_F(DimTest, TextFormErrorsNameTheSizeVariable) {
  auto parse_error = [](const std::string& text) {
    try {
      parse_graph(text);
    } catch (const Error& e) {
      return std::string(e.what());
    }
    return std::string("(parsed)");
  };
  EXPECT_NE(parse_error("graph(%x: f32[n]) {\n  return %x as \"y\"\n}\n").find("'n' is not"), std::string::npos);
  EXPECT_NE(parse_error("graph<n: 1..4, n: 1..4>(%x: f32[n]) {\n  return %x as \"y\"\n}\n").find("declared already"),
            std::string::npos);
  EXPECT_NE(parse_error("graph<n: 5..4>(%x: f32[n]) {\n  return %x as \"y\"\n}\n").find("LO..HI"), std::string::npos);
  // The written type must be the inferred one.
  EXPECT_NE(parse_error("graph<n: 1..4>(%x: f32[n]) {\n  %0 = relu(%x) : f32[n + 1]\n  return %0 as \"y\"\n}\n")
                .find("differs from the inferred"),
            std::string::npos);
  // A constant's type is static.
  EXPECT_NE(parse_error("graph<n: 1..4>(%x: f32[n]) {\n  %c = constant [1] : f32[n]\n  return %c as \"y\"\n}\n")
                .find("static type"),
            std::string::npos);
}

}  // namespace
}  // namespace kiln::ir
