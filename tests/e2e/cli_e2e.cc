// The real `kiln` binary: `kiln ir` prints the text form (which parses back to the imported graph),
// `kiln run --executor reference` writes .npy outputs that match the expected values, and bad
// invocations exit non-zero with an `error:` line naming the problem.
#include <gtest/gtest.h>

#include <array>
#include <cstdio>
#include <filesystem>
#include <fstream>
#include <sys/wait.h>

#include "frontend/onnx_case_runner.h"
#include "kiln/frontend/onnx.h"
#include "kiln/ir/npy.h"
#include "kiln/ir/side_table.h"
#include "kiln/ir/text.h"

namespace kiln {
namespace {

namespace fs = std::filesystem;

const fs::path kCases = fs::path(KILN_BINARY_DIR) / "onnx_cases";

class KilnCli : public ::testing::Test {
 protected:
  void SetUp() override {
    if (!fs::exists(kCases / "cases") || !fs::exists(kCases / "bad")) {
      GTEST_SKIP() << "no generated models in " << kCases << ": tests/frontend/make_onnx_cases.py (CTest fixture "
                   << "frontend.make_onnx_cases) failed or did not run; it needs /usr/bin/python3 with numpy, onnx and torch";
    }
  }
};

struct RunResult {
  int exit_code = -1;
  std::string output;  // stdout and stderr
};

RunResult run_kiln(const std::string& args) {
  std::string cmd = std::string(KILN_CLI_PATH) + " " + args + " 2>&1";
  RunResult r;
  FILE* p = popen(cmd.c_str(), "r");
  if (!p) return r;
  std::array<char, 4096> buf;
  size_t n;
  while ((n = fread(buf.data(), 1, buf.size(), p)) > 0) r.output.append(buf.data(), n);
  int status = pclose(p);
  r.exit_code = WIFEXITED(status) ? WEXITSTATUS(status) : -1;
  return r;
}

std::string model(const std::string& name) { return (kCases / "cases" / name / "model.onnx").string(); }

fs::path temp_dir(const std::string& name) {
  fs::path d = fs::path(KILN_BINARY_DIR) / "e2e_cli_tmp" / name;
  fs::remove_all(d);
  fs::create_directories(d);
  return d;
}

TEST_F(KilnCli, IrPrintsTextThatParsesBack) {
  RunResult r = run_kiln("ir " + model("conv_groups_bias"));
  ASSERT_EQ(r.exit_code, 0) << r.output;
  EXPECT_NE(r.output.find("= conv2d(%x, %w, %bias, dilations=[1, 1], groups=2, pads=[1, 1, 1, 1], strides=[2, 2]) : f32[1, 6, 5, 5]"),
            std::string::npos) << r.output;
  EXPECT_NE(r.output.find("%w = constant @w {checksum = 0x"), std::string::npos) << r.output;
  // Text + side table (the imported graph's constants) parse back to the same graph.
  ir::Graph g = frontend::import_onnx(model("conv_groups_bias"));
  ir::GraphText printed = ir::print_graph(g);
  EXPECT_EQ(printed.text, r.output);
  std::string why;
  EXPECT_TRUE(ir::structurally_equal(g, ir::parse_graph(r.output, printed.side_table), &why)) << why;
}

TEST_F(KilnCli, IrSideTableParsesBack) {
  const fs::path tmp = temp_dir("side_table");
  RunResult r = run_kiln("ir " + model("gemm_trans_b") + " --inline-limit 4 --side-table " + (tmp / "st").string());
  ASSERT_EQ(r.exit_code, 0) << r.output;
  ir::Graph imported = frontend::import_onnx(model("gemm_trans_b"));
  ir::Graph parsed = ir::parse_graph(r.output, ir::read_side_table((tmp / "st").string()), "kiln-ir-output");
  std::string why;
  EXPECT_TRUE(ir::structurally_equal(imported, parsed, &why)) << why << "\n" << r.output;
  // Without the side table the references cannot be resolved.
  EXPECT_THROW(ir::parse_graph(r.output), UserError);
}

TEST_F(KilnCli, IrWithInputShape) {
  RunResult bad = run_kiln("ir " + model("dynamic_batch"));
  EXPECT_EQ(bad.exit_code, 2) << bad.output;
  EXPECT_NE(bad.output.find("error:"), std::string::npos) << bad.output;
  EXPECT_NE(bad.output.find("--input-shape x:"), std::string::npos) << bad.output;
  RunResult good = run_kiln("ir " + model("dynamic_batch") + " --input-shape x:5,3,4");
  ASSERT_EQ(good.exit_code, 0) << good.output;
  EXPECT_NE(good.output.find("graph(%x: f32[5, 3, 4])"), std::string::npos) << good.output;
  RunResult misfit = run_kiln("ir " + model("dynamic_batch") + " --input-shape x:5,3");
  EXPECT_EQ(misfit.exit_code, 2);
  EXPECT_NE(misfit.output.find("does not fit"), std::string::npos) << misfit.output;
}

// `--bind NAME=FILE.npy` specializes a graph input (here a Reshape's target shape) to a constant:
// without it the model cannot compile; with it `kiln ir` drops the input, `kiln run` (reference) and
// `kiln compile` + `kiln run ARTIFACT` give the expected output; bad binds are clear errors.
TEST_F(KilnCli, BindSpecializesAnInput) {
  const std::string m = model("reshape_shape_input");
  const fs::path dir = kCases / "cases" / "reshape_shape_input" / "test_data_set_0";
  const fs::path tmp = temp_dir("bind");
  const std::string x = (tmp / "x.npy").string(), s = (tmp / "s.npy").string();
  ir::write_npy(x, frontend::read_onnx_tensor((dir / "input_0.pb").string()));
  ir::write_npy(s, frontend::read_onnx_tensor((dir / "input_1.pb").string()));
  const ir::NDArray expected = frontend::read_onnx_tensor((dir / "output_0.pb").string());

  RunResult unbound = run_kiln("compile " + m + " -o " + (tmp / "a.so").string());
  EXPECT_EQ(unbound.exit_code, 2) << unbound.output;
  EXPECT_NE(unbound.output.find("computed at run time"), std::string::npos) << unbound.output;

  RunResult ir_text = run_kiln("ir " + m + " --bind s=" + s);
  ASSERT_EQ(ir_text.exit_code, 0) << ir_text.output;
  EXPECT_NE(ir_text.output.find("graph(%x: f32[2, 3, 4])"), std::string::npos) << ir_text.output;

  std::string why;
  RunResult ref = run_kiln("run " + m + " --bind s=" + s + " --input x=" + x + " --output " + (tmp / "ref.npy").string());
  ASSERT_EQ(ref.exit_code, 0) << ref.output;
  EXPECT_TRUE(testing::arrays_close(ir::read_npy((tmp / "ref.npy").string()), expected, 0, 0, &why)) << why;

  RunResult compiled = run_kiln("compile " + m + " --bind s=" + s + " -o " + (tmp / "a.so").string());
  ASSERT_EQ(compiled.exit_code, 0) << compiled.output;
  RunResult run = run_kiln("run " + (tmp / "a.so").string() + " --input x=" + x + " --output " + (tmp / "y.npy").string());
  ASSERT_EQ(run.exit_code, 0) << run.output;
  EXPECT_TRUE(testing::arrays_close(ir::read_npy((tmp / "y.npy").string()), expected, 0, 0, &why)) << why;

  // Errors: an unknown name, a dtype or shape that does not fit the declared input, a malformed value,
  // an input both bound and fed, --bind on an artifact.
  const std::string s32 = (tmp / "s32.npy").string(), s3 = (tmp / "s3.npy").string();
  ir::NDArray as_i32 = ir::NDArray::empty(ir::DType::kI32, {2});
  as_i32.set_from_double(0, 2);
  as_i32.set_from_double(1, 12);
  ir::write_npy(s32, as_i32);
  ir::NDArray three = ir::NDArray::empty(ir::DType::kI64, {3});
  for (int i = 0; i < 3; ++i) three.set_from_double(i, i == 0 ? 2 : i == 1 ? 3 : 4);
  ir::write_npy(s3, three);
  struct Case {
    std::string args, needle;
  };
  for (const Case& k : {Case{"ir " + m + " --bind nope=" + s, "--bind nope: the model has no input of that name"},
                        Case{"ir " + m + " --bind s=" + s32, "the value bound to it is i32[2]"},
                        Case{"ir " + m + " --bind s=" + s3, "has shape [2], the value bound to it is i64[3]"},
                        Case{"ir " + m + " --bind s", "expected NAME=FILE.npy"},
                        Case{"ir " + m + " --bind s=" + (tmp / "missing.npy").string(), "missing.npy"},
                        Case{"run " + m + " --bind s=" + s + " --input s=" + s + " --input x=" + x + " --output-dir " +
                                 tmp.string(),
                             "also bound with --bind"},
                        Case{"run " + (tmp / "a.so").string() + " --bind s=" + s + " --input x=" + x + " --output-dir " +
                                 tmp.string(),
                             "pass --bind to kiln compile instead"}}) {
    RunResult r = run_kiln(k.args);
    EXPECT_EQ(r.exit_code, 2) << k.args << "\n" << r.output;
    EXPECT_EQ(r.output.rfind("error: ", 0), 0u) << k.args << "\n" << r.output;
    EXPECT_NE(r.output.find(k.needle), std::string::npos) << k.args << "\n" << r.output;
  }
}

TEST_F(KilnCli, IrRejectsBadFiles) {
  for (const char* name : {"not_onnx", "truncated", "unsupported_op", "opset_too_old"}) {
    RunResult r = run_kiln("ir " + (kCases / "bad" / (std::string(name) + ".onnx")).string());
    EXPECT_EQ(r.exit_code, 2) << name << ": " << r.output;
    EXPECT_EQ(r.output.rfind("error: ", 0), 0u) << name << ": " << r.output;
  }
}

// Runs a case with `kiln run` (inputs converted to .npy) and compares the written outputs.
void check_run_case(const std::string& name, bool use_output_dir) {
  const fs::path dir = kCases / "cases" / name;
  const fs::path tmp = temp_dir(name);
  auto names = frontend::onnx_input_names(model(name));
  std::string args = "run " + model(name) + " --executor reference";
  auto in_files = testing::numbered_files(dir / "test_data_set_0", "input");
  ASSERT_EQ(in_files.size(), names.size());
  for (size_t k = 0; k < names.size(); ++k) {
    fs::path f = tmp / ("in" + std::to_string(k) + ".npy");
    ir::write_npy(f.string(), frontend::read_onnx_tensor(in_files[k]));
    args += " --input " + names[k] + "=" + f.string();
  }
  auto out_files = testing::numbered_files(dir / "test_data_set_0", "output");
  ir::Graph g = frontend::import_onnx(model(name));
  std::vector<std::string> written;
  if (use_output_dir) {
    args += " --output-dir " + (tmp / "out").string();
    for (const auto& n : g.output_names()) written.push_back((tmp / "out" / (n + ".npy")).string());
  } else {
    for (size_t k = 0; k < out_files.size(); ++k) {
      written.push_back((tmp / ("out" + std::to_string(k) + ".npy")).string());
      args += " --output " + written.back();
    }
  }
  RunResult r = run_kiln(args);
  ASSERT_EQ(r.exit_code, 0) << args << "\n" << r.output;
  ASSERT_EQ(written.size(), out_files.size());
  for (size_t k = 0; k < out_files.size(); ++k) {
    std::string why;
    EXPECT_TRUE(testing::arrays_close(ir::read_npy(written[k]), frontend::read_onnx_tensor(out_files[k]), 1e-4, 1e-5, &why))
        << name << " output " << k << ": " << why;
  }
}

TEST_F(KilnCli, RunWritesOutputs) { check_run_case("conv_groups_bias", false); }
TEST_F(KilnCli, RunWritesOutputDir) { check_run_case("split_opset13_input", true); }
TEST_F(KilnCli, RunWithIntegerInputs) { check_run_case("gather_embedding", false); }

TEST_F(KilnCli, RunRejectsBadInvocations) {
  const fs::path tmp = temp_dir("bad_run");
  ir::NDArray x = ir::NDArray::empty(ir::DType::kF32, {2, 3, 4});
  ir::write_npy((tmp / "x.npy").string(), x);
  ir::NDArray wrong = ir::NDArray::empty(ir::DType::kI32, {2, 3, 4});
  ir::write_npy((tmp / "wrong.npy").string(), wrong);
  const std::string m = model("relu");
  const std::string out = " --output " + (tmp / "y.npy").string();
  struct Case {
    std::string args, message;
  } cases[] = {
      {"run " + m + " --input x=" + (tmp / "x.npy").string(), "no output destination"},
      {"run " + m + " --input x=" + (tmp / "x.npy").string() + " --executor llvm" + out, "unknown executor"},
      {"run " + m + out + " --fill purple", "purple"},
      {"run " + m + " --input z=" + (tmp / "x.npy").string() + out, "--input z"},
      {"run " + m + " --input x=" + (tmp / "wrong.npy").string() + out, "input 'x'"},
      {"run " + m + " --input x=" + (tmp / "missing.npy").string() + out, "missing.npy"},
      {"run " + m + " --input x" + out, "expected NAME=FILE.npy"},
      {"run " + m + " --input x=" + (tmp / "x.npy").string() + out + " --output " + (tmp / "y2.npy").string(),
       "the model has 1 outputs"},
  };
  for (const auto& c : cases) {
    RunResult r = run_kiln(c.args);
    EXPECT_NE(r.exit_code, 0) << c.args;
    EXPECT_NE(r.output.find("error:"), std::string::npos) << c.args << "\n" << r.output;
    EXPECT_NE(r.output.find(c.message), std::string::npos) << c.args << "\n" << r.output;
  }
}

}  // namespace
}  // namespace kiln
