// Runs every operator on the cases of op_cases.py, whose expected outputs come from numpy, PyTorch
// (float64) or ONNX's Resize reference, and compares the reference implementations' outputs
// (values and inferred types) within each case's tolerance. Skips when /usr/bin/python3 with
// numpy and torch is unavailable.
#include <gtest/gtest.h>

#include <cstdlib>
#include <fstream>
#include <map>
#include <set>
#include <sstream>

#include "kiln/ir/npy.h"
#include "op_test_util.h"

namespace kiln::ir {
namespace {

using testing::all_close;

struct Case {
  std::string name, op;
  Attrs attrs;
  int n_in = 0, n_out = 0;
  double rtol = 0, atol = 0;
};

std::vector<std::string> split(const std::string& s, char sep) {
  std::vector<std::string> out;
  std::string cur;
  std::istringstream in(s);
  while (std::getline(in, cur, sep)) out.push_back(cur);
  if (!s.empty() && s.back() == sep) out.push_back("");
  return out;
}

AttrValue parse_attr(const std::string& kind, const std::string& v) {
  if (kind == "int") return static_cast<int64_t>(std::stoll(v));
  if (kind == "float") return std::stod(v);
  if (kind == "str") return v;
  if (kind == "dtype") {
    DType d;
    EXPECT_TRUE(parse_dtype(v, &d)) << v;
    return d;
  }
  if (kind == "ints") {
    std::vector<int64_t> out;
    for (const auto& e : split(v, ',')) {
      if (!e.empty()) out.push_back(std::stoll(e));
    }
    return out;
  }
  if (kind == "floats") {
    std::vector<double> out;
    for (const auto& e : split(v, ',')) {
      if (!e.empty()) out.push_back(std::stod(e));
    }
    return out;
  }
  ADD_FAILURE() << "unknown attribute kind " << kind;
  return int64_t{0};
}

class OpCases {
 public:
  static OpCases& get() {
    static OpCases cases;
    return cases;
  }
  const std::string& skip_reason() const { return skip_; }
  const std::string& dir() const { return dir_; }
  const std::vector<Case>& cases() const { return cases_; }

 private:
  OpCases() {
    dir_ = std::string(KILN_BINARY_DIR) + "/test_data/op_cases";
    const std::string cmd = "/usr/bin/python3 " + std::string(KILN_SOURCE_DIR) + "/tests/ir/ops/op_cases.py --out " +
                            dir_ + " > " + dir_ + ".log 2>&1";
    std::system(("mkdir -p " + std::string(KILN_BINARY_DIR) + "/test_data").c_str());
    // The script returns at once when its cases are up to date (stamp), so run it first.
    if (std::system(cmd.c_str()) != 0) {
      if (std::system("/usr/bin/python3 -c 'import numpy, torch, onnx' >/dev/null 2>&1") != 0) {
        skip_ = "/usr/bin/python3 with numpy, torch and onnx is not available";
      } else {
        ADD_FAILURE() << "op_cases.py failed; see " << dir_ << ".log";
        skip_ = "op_cases.py failed";
      }
      return;
    }
    std::ifstream in(dir_ + "/cases.txt");
    std::string line;
    while (std::getline(in, line)) {
      const auto f = split(line, '\t');
      if (f.size() != 7) {
        ADD_FAILURE() << "bad case line: " << line;
        continue;
      }
      Case c;
      c.name = f[0];
      c.op = f[1];
      for (const auto& kv : split(f[2], ';')) {
        if (kv.empty()) continue;
        const size_t eq = kv.find('='), colon = kv.find(':');
        c.attrs.set(kv.substr(0, eq), parse_attr(kv.substr(eq + 1, colon - eq - 1), kv.substr(colon + 1)));
      }
      c.n_in = std::stoi(f[3]);
      c.n_out = std::stoi(f[4]);
      c.rtol = std::stod(f[5]);
      c.atol = std::stod(f[6]);
      cases_.push_back(std::move(c));
    }
  }

  std::string dir_, skip_;
  std::vector<Case> cases_;
};

void run_cases(const std::set<std::string>& ops) {
  const OpCases& all = OpCases::get();
  if (!all.skip_reason().empty()) GTEST_SKIP() << all.skip_reason();
  int ran = 0;
  for (const Case& c : all.cases()) {
    if (!ops.count(c.op)) continue;
    SCOPED_TRACE("case " + c.name + " (" + c.op + ")");
    ++ran;
    std::vector<NDArray> inputs, expected;
    for (int i = 0; i < c.n_in; ++i) inputs.push_back(read_npy(all.dir() + "/" + c.name + ".in" + std::to_string(i) + ".npy"));
    for (int i = 0; i < c.n_out; ++i) {
      expected.push_back(read_npy(all.dir() + "/" + c.name + ".out" + std::to_string(i) + ".npy"));
    }
    try {
      const std::vector<NDArray> actual = testing::run(c.op, inputs, c.attrs);
      ASSERT_EQ(actual.size(), expected.size());
      for (size_t i = 0; i < actual.size(); ++i) {
        EXPECT_TRUE(all_close(actual[i], expected[i], c.rtol, c.atol)) << "output " << i;
      }
    } catch (const Error& e) {
      ADD_FAILURE() << "threw: " << e.what();
    }
  }
  EXPECT_GT(ran, 0) << "no cases for these operators";
  std::cout << "[ cases    ] " << ran << " numpy/PyTorch cases compared\n";
}

TEST(OpNumpy, ElementwiseUnary) {
  run_cases({"relu", "sigmoid", "tanh", "erf", "exp", "log", "sqrt", "neg", "abs", "reciprocal", "hard_swish",
             "leaky_relu", "hard_sigmoid", "clip", "gelu"});
}
TEST(OpNumpy, BinaryBroadcast) { run_cases({"add", "sub", "mul", "div", "pow", "min", "max", "mod", "fmod", "equal", "where"}); }
TEST(OpNumpy, Cast) { run_cases({"cast"}); }
TEST(OpNumpy, Conv2d) { run_cases({"conv2d"}); }
TEST(OpNumpy, Pooling) { run_cases({"max_pool2d", "avg_pool2d", "global_avg_pool", "global_max_pool"}); }
TEST(OpNumpy, MatmulGemm) { run_cases({"matmul", "gemm", "pack_matmul_b", "matmul_packed"}); }
TEST(OpNumpy, Reduce) { run_cases({"reduce_sum", "reduce_mean", "reduce_max"}); }
TEST(OpNumpy, SoftmaxNorms) { run_cases({"softmax", "log_softmax", "layer_norm", "batch_norm"}); }
TEST(OpNumpy, ShapeOps) {
  run_cases({"reshape", "transpose", "shape_of", "expand", "concat", "split", "strided_slice", "gather", "pad"});
}
TEST(OpNumpy, Resize) { run_cases({"resize"}); }
TEST(OpNumpy, LayoutAndFused) { run_cases({"layout_transform", "conv2d_nchwc", "max_pool2d_nchwc", "avg_pool2d_nchwc", "fused"}); }
TEST(OpNumpy, IndexingScanSampling) {
  run_cases({"gather_elements", "gather_nd", "scatter_elements", "reverse_sequence", "cumsum", "cumprod", "topk",
             "grid_sample", "col2im"});
}
TEST(OpNumpy, Winograd) { run_cases({"winograd_weight_transform", "conv2d_winograd_nchwc"}); }
TEST(OpNumpy, MathAndActivations) {
  run_cases({"sin", "cos", "tan", "asin", "acos", "atan", "sinh", "cosh", "asinh", "acosh", "atanh", "floor", "ceil",
             "round", "sign", "softplus", "softsign", "mish", "elu", "selu", "celu", "thresholded_relu", "shrink",
             "swish"});
}
TEST(OpNumpy, CompareLogicBits) {
  run_cases({"less", "greater", "less_equal", "greater_equal", "logical_and", "logical_or", "logical_xor",
             "bitwise_and", "bitwise_or", "bitwise_xor", "bitwise_not", "bit_shift", "prelu", "is_nan", "is_inf"});
}
TEST(OpNumpy, Quantization) {
  run_cases({"quantize_linear", "dequantize_linear", "requantize", "qnn_conv2d", "qnn_matmul", "int8_pack_conv_weights",
             "int8_conv_weight_sums", "int8_conv2d", "int8_pack_matmul_weights", "int8_matmul_weight_sums",
             "int8_matmul", "int8_matmul_i32", "int8_pack_depthwise_weights", "int8_depthwise_conv2d",
             "int8_winograd_weight_transform", "int8_conv2d_winograd"});
}
TEST(OpNumpy, ReduceArgNorms) { run_cases({"reduce_min", "reduce_prod", "argmax", "argmin", "instance_norm", "lrn"}); }

// Every registered operator has at least one numpy case.
TEST(OpNumpy, EveryOperatorIsCovered) {
  const OpCases& all = OpCases::get();
  if (!all.skip_reason().empty()) GTEST_SKIP() << all.skip_reason();
  std::set<std::string> covered;
  for (const Case& c : all.cases()) covered.insert(c.op);
  for (const std::string& name : OpRegistry::global().names()) EXPECT_TRUE(covered.count(name)) << name << " has no case";
}

}  // namespace
}  // namespace kiln::ir
