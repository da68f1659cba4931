// The compile driver on small graphs: each graph is compiled to an artifact (at O0 = one kernel
// per op, O2 = fused groups, O3 = + NCHWc layouts, and O3 with every group forced through the
// per-op split fallback),
// loaded through libkiln_runtime's C++ API, run, and compared with the reference executor.
// Tolerance: |kiln - ref| <= 1e-5 + 1e-4 |ref| (f32). The reference computes in double where the
// kernels accumulate in f32 in their own loop order (blocked convolutions, vectorized sums), and
// exp/tanh/erf are f32 polynomials; sums of up to a few hundred terms stay well within 1e-4
// relative of the double result.
#include <gtest/gtest.h>
#include <unistd.h>

#include <cmath>
#include <filesystem>
#include <fstream>
#include <iterator>
#include <sstream>

#include "compile_test_util.h"
#include "kiln/driver/compile.h"
#include "kiln/ir/op.h"
#include "kiln/ref/executor.h"
#include "kiln/support/error.h"

namespace kiln::testing {
namespace {

namespace fs = std::filesystem;
using ir::Attrs;
using ir::DType;
using ir::Value;

constexpr double kRtol = 1e-4, kAtol = 1e-5;

ir::NDArray pattern(const ir::Shape& shape, int seed, double scale = 1.0) {
  ir::NDArray a = ir::NDArray::empty(DType::kF32, shape);
  for (int64_t i = 0; i < a.numel(); ++i) a.set_from_double(i, scale * std::sin(0.71 * i + 1.7 * seed));
  return a;
}
Value constant(const std::string& name, const ir::Shape& shape, int seed, double scale = 0.3) {
  return ir::make_constant(name, pattern(shape, seed, scale))->output();
}
Value call(const char* op, std::vector<Value> args, const Attrs& attrs = {}) {
  return ir::make_call(op, std::move(args), attrs)->output();
}
std::vector<int64_t> v(std::initializer_list<int64_t> l) { return l; }

class CompileTest : public ::testing::Test {
 protected:
  static void SetUpTestSuite() {
    dir_ = new fs::path(fs::temp_directory_path() / ("kiln-compile-test-" + std::to_string(getpid())));
    fs::create_directories(*dir_);
  }
  static void TearDownTestSuite() {
    fs::remove_all(*dir_);
    delete dir_;
  }
  static std::string path(const std::string& name) { return (*dir_ / name).string(); }

  // Compiles `graph` at O0, O2, O3 and O3 with forced splitting; each must match the reference.
  static void check_all_modes(const ir::Graph& graph, const std::string& name) {
    std::vector<ir::NDArray> inputs;
    int seed = 11;
    for (const ir::NodePtr& in : graph.inputs()) inputs.push_back(pattern(in->as_input().type().shape, seed++));
    const std::vector<ir::NDArray> want = ref::run_graph(graph, inputs);
    struct Mode {
      const char* name;
      int level;
      bool split;
    };
    for (const Mode& m : {Mode{"O0", 0, false}, Mode{"O2", 2, false}, Mode{"O3", 3, false}, Mode{"O3-split", 3, true}}) {
      SCOPED_TRACE(name + std::string(" ") + m.name);
      driver::CompileOptions o;
      o.opt_level = m.level;
      o.force_split = m.split;
      const std::string file = path(name + "_" + m.name + ".so");
      driver::CompileReport r = driver::compile_graph(graph, file, o);
      EXPECT_FALSE(r.kernel_calls.empty());
      EXPECT_LE(r.artifact.planned_bytes, r.artifact.naive_bytes);
      const std::vector<ir::NDArray> got = run_compiled(file, inputs);
      ASSERT_EQ(got.size(), want.size());
      for (size_t i = 0; i < got.size(); ++i) expect_close(got[i], want[i], kRtol, kAtol, name + " output " + std::to_string(i));
    }
  }

  static fs::path* dir_;
};
fs::path* CompileTest::dir_ = nullptr;

TEST_F(CompileTest, ConvBiasRelu) {
  ir::NodePtr x = ir::make_input("x", {DType::kF32, {1, 5, 9, 11}});
  Value c = call("conv2d", {x->output(), constant("w", {12, 5, 3, 3}, 1), constant("b", {12}, 2)},
                 Attrs().set("pads", v({1, 1, 1, 1})));
  check_all_modes(ir::Graph({x}, {call("relu", {c})}, {"y"}), "conv_bias_relu");
}

// Depthwise then pointwise (MobileNet's block): at O3 both become conv2d_nchwc (the depthwise one
// through conv2d's own depthwise compute on the unblocked tensors).
TEST_F(CompileTest, DepthwiseThenPointwise) {
  ir::NodePtr x = ir::make_input("x", {DType::kF32, {1, 16, 9, 9}});
  Value d = call("conv2d", {x->output(), constant("dw", {16, 1, 3, 3}, 1), constant("db", {16}, 2)},
                 Attrs().set("pads", v({1, 1, 1, 1})).set("groups", int64_t{16}));
  Value pw = call("conv2d", {call("relu", {d}), constant("pw", {24, 16, 1, 1}, 3)});
  check_all_modes(ir::Graph({x}, {call("relu", {pw})}, {"y"}), "depthwise_pointwise");
}

// Pointwise convs with fewer outputs than one vector (NarrowConvToMatmul at O3: a matmul over the
// pixels, 2-D weights x the 3-D activation, bias and relu in its epilogue), on a graph input with
// an odd pixel count and after a blocked 3x3 conv, batch 2.
TEST_F(CompileTest, NarrowPointwiseConvs) {
  ir::NodePtr x = ir::make_input("x", {DType::kF32, {2, 37, 9, 13}});
  Value a = call("relu", {call("conv2d", {x->output(), constant("wa", {4, 37, 1, 1}, 1), constant("ba", {4}, 2)})});
  Value h = call("conv2d", {x->output(), constant("wh", {16, 37, 3, 3}, 3)}, Attrs().set("pads", v({1, 1, 1, 1})));
  Value b = call("conv2d", {call("relu", {h}), constant("wb", {1, 16, 1, 1}, 4)});
  check_all_modes(ir::Graph({x}, {a, b}, {"a", "b"}), "narrow_pointwise");
}

TEST_F(CompileTest, ResidualAdd) {
  ir::NodePtr x = ir::make_input("x", {DType::kF32, {1, 8, 7, 7}});
  Value a = call("relu", {call("conv2d", {x->output(), constant("w1", {8, 8, 3, 3}, 1)}, Attrs().set("pads", v({1, 1, 1, 1})))});
  Value b = call("conv2d", {a, constant("w2", {8, 8, 1, 1}, 2), constant("b2", {8}, 3)});
  check_all_modes(ir::Graph({x}, {call("relu", {call("add", {b, x->output()})})}, {"y"}), "residual");
}

TEST_F(CompileTest, MatmulGelu) {
  ir::NodePtr x = ir::make_input("x", {DType::kF32, {2, 13, 24}});
  Value m = call("matmul", {x->output(), constant("w", {24, 19}, 1)});
  Value y = call("gelu", {call("add", {m, constant("b", {19}, 2)})});
  check_all_modes(ir::Graph({x}, {y}, {"y"}), "matmul_gelu");
}

TEST_F(CompileTest, Softmax) {
  ir::NodePtr x = ir::make_input("x", {DType::kF32, {3, 4, 37}});
  check_all_modes(ir::Graph({x}, {call("softmax", {call("mul", {x->output(), constant("s", {1}, 1, 2.0)})}, Attrs().set("axis", int64_t{2}))}, {"y"}),
                  "softmax");
}

TEST_F(CompileTest, LayerNorm) {
  ir::NodePtr x = ir::make_input("x", {DType::kF32, {2, 5, 32}});
  Value y = call("layer_norm", {call("add", {x->output(), constant("r", {32}, 3)}), constant("g", {32}, 1), constant("be", {32}, 2)},
                 Attrs().set("axis", int64_t{2}));
  check_all_modes(ir::Graph({x}, {y}, {"y"}), "layer_norm");
}

TEST_F(CompileTest, Pooling) {
  ir::NodePtr x = ir::make_input("x", {DType::kF32, {1, 6, 10, 9}});
  Value mp = call("max_pool2d", {call("relu", {x->output()})},
                  Attrs().set("kernel", v({3, 3})).set("strides", v({2, 2})).set("pads", v({1, 1, 1, 1})));
  Value ap = call("avg_pool2d", {x->output()}, Attrs().set("kernel", v({2, 2})).set("strides", v({2, 2})));
  Value g = call("global_avg_pool", {mp});
  check_all_modes(ir::Graph({x}, {mp, ap, g}, {"max", "avg", "global"}), "pooling");
}

TEST_F(CompileTest, ReshapeTransposeConcatChain) {
  ir::NodePtr x = ir::make_input("x", {DType::kF32, {2, 3, 4, 5}});
  ir::NodePtr z = ir::make_input("z", {DType::kF32, {2, 5, 12}});
  Value t = call("transpose", {x->output()}, Attrs().set("perm", v({0, 3, 1, 2})));
  Value r = call("reshape", {t}, Attrs().set("shape", v({2, 5, 12})));
  Value c = call("concat", {r, call("exp", {z->output()})}, Attrs().set("axis", int64_t{2}));
  Value y = call("sigmoid", {c});
  check_all_modes(ir::Graph({x, z}, {y, r, x->output(), y}, {"y", "r", "x_again", "y_again"}), "reshape_chain");
}

// Identical fused groups share one kernel; the report counts calls and distinct kernels.
TEST_F(CompileTest, IdenticalGroupsShareAKernel) {
  ir::NodePtr x = ir::make_input("x", {DType::kF32, {4, 32}});
  Value a = call("relu", {call("add", {call("matmul", {x->output(), constant("w1", {32, 32}, 1)}), constant("c1", {32}, 2)})});
  Value b = call("relu", {call("add", {call("matmul", {a, constant("w2", {32, 32}, 3)}), constant("c2", {32}, 4)})});
  ir::Graph g({x}, {b}, {"y"});
  driver::CompileOptions o;
  driver::CompileReport r = driver::compile_graph(g, path("shared.so"), o);
  ASSERT_EQ(r.kernel_calls.size(), 2u) << r.summary();
  // The constants are group arguments (more than 16 elements), so the bodies are equal.
  EXPECT_EQ(r.kernel_calls[0].symbol, r.kernel_calls[1].symbol) << r.summary();
  EXPECT_EQ(r.distinct_kernels, 1);
  const auto want = ref::run_graph(g, std::vector<ir::NDArray>{pattern({4, 32}, 5)});
  const auto got = run_compiled(path("shared.so"), {pattern({4, 32}, 5)});
  expect_close(got[0], want[0], kRtol, kAtol, "shared kernel");
}

// The printed account names passes, kernels with their ops, memory and phases.
TEST_F(CompileTest, SummaryAndSplitReport) {
  const ir::Graph g = driver::example_model("tiny-cnn");
  driver::CompileOptions o;
  o.force_split = true;
  driver::CompileReport r = driver::compile_graph(g, path("tiny_split.so"), o);
  const std::string s = r.summary();
  for (const char* needle : {"FuseOps", "kernels: ", "conv2d", "planned", "naive", "phases:", "codegen (LLVM)",
                             "split into per-op kernels"}) {
    EXPECT_NE(s.find(needle), std::string::npos) << "missing '" << needle << "' in\n" << s;
  }
  EXPECT_FALSE(r.split_groups.empty());
  bool any_split = false;
  for (const auto& k : r.kernel_calls) any_split |= k.split;
  EXPECT_TRUE(any_split);
}

// The built-in example compiles and matches the reference executor.
TEST_F(CompileTest, TinyCnnExample) {
  const ir::Graph g = driver::example_model("tiny-cnn");
  driver::CompileReport r = driver::compile_graph(g, path("tiny.so"), {});
  EXPECT_TRUE(r.split_groups.empty()) << r.summary();
  const ir::NDArray x = pattern({1, 3, 32, 32}, 3);
  const auto want = ref::run_graph(g, std::vector<ir::NDArray>{x});
  const auto got = run_compiled(path("tiny.so"), {x});
  expect_close(got[0], want[0], kRtol, kAtol, "tiny-cnn");
  EXPECT_THROW(driver::example_model("huge-cnn"), UserError);
}

// Code generation on 1, 2 and 3 threads: the kernels sit in a fixed number of LLVM modules, so
// the artifact is the same file whatever the thread count, and it matches the reference.
TEST_F(CompileTest, ParallelCodegenWritesTheSameArtifact) {
  const ir::Graph g = driver::example_model("tiny-cnn");
  std::string first;
  for (int threads : {1, 2, 3}) {
    SCOPED_TRACE(std::to_string(threads) + " threads");
    driver::CompileOptions o;
    o.codegen_threads = threads;
    o.use_kernel_cache = false;  // every compile generates its code
    const std::string file = path("tiny_threads_" + std::to_string(threads) + ".so");
    const driver::CompileReport r = driver::compile_graph(g, file, o);
    EXPECT_EQ(r.codegen_threads, threads);
    EXPECT_NE(r.summary().find("codegen: " + std::to_string(threads) + " thread"), std::string::npos);
    ASSERT_GT(r.distinct_kernels, 1) << "the test needs kernels in more than one module";
    std::ifstream in(file, std::ios::binary);
    const std::string bytes((std::istreambuf_iterator<char>(in)), std::istreambuf_iterator<char>());
    if (first.empty()) first = bytes;
    EXPECT_TRUE(bytes == first) << "the artifact depends on the thread count";
    const ir::NDArray x = pattern({1, 3, 32, 32}, 5);
    expect_close(run_compiled(file, {x})[0], ref::run_graph(g, std::vector<ir::NDArray>{x})[0], kRtol, kAtol,
                 "tiny-cnn");
  }
}

// An operator without a compute definition is a UserError naming it.
TEST_F(CompileTest, OpWithoutComputeIsUserError) {
  static const bool registered = [] {
    ir::OpDef d;
    d.name = "test_only_no_compute";
    d.doc = "identity, for the driver's test; deliberately has no topi compute";
    d.infer_type = [](const std::vector<ir::TensorType>& in, const Attrs&) { return in; };
    d.reference = [](const std::vector<ir::NDArray>& in, const Attrs&, const std::vector<ir::TensorType>&) { return in; };
    ir::OpRegistry::global().add(d);
    return true;
  }();
  ASSERT_TRUE(registered);
  ir::NodePtr x = ir::make_input("x", {DType::kF32, {4}});
  ir::Graph g({x}, {call("test_only_no_compute", {call("relu", {x->output()})})}, {"y"});
  try {
    driver::compile_graph(g, path("bad.so"), {});
    FAIL() << "expected a UserError";
  } catch (const UserError& e) {
    EXPECT_EQ(e.kind(), UserErrorKind::kUnsupported);
    EXPECT_NE(std::string(e.what()).find("test_only_no_compute"), std::string::npos) << e.what();
  }
  EXPECT_FALSE(fs::exists(path("bad.so")));
}

TEST_F(CompileTest, BadOptionsAreUserErrors) {
  ir::NodePtr x = ir::make_input("x", {DType::kF32, {4}});
  ir::Graph g({x}, {call("relu", {x->output()})}, {"y"});
  driver::CompileOptions o;
  o.target = "llvm -mcpu=not-a-cpu";
  EXPECT_THROW(driver::compile_graph(g, path("t.so"), o), UserError);
  o = {};
  o.opt_level = 7;
  EXPECT_THROW(driver::compile_graph(g, path("t.so"), o), UserError);
  EXPECT_THROW(driver::compile_onnx(path("missing.onnx"), path("t.so"), {}), UserError);
}

}  // namespace
}  // namespace kiln::testing
