// `kiln run ARTIFACT` and `kiln inspect ARTIFACT` as a user runs them: the real CLI binary on a
// real artifact (artifact_test_util.h), inputs and outputs as .npy files, compared with the
// model computed in plain C++; the error cases exit 2 with their message.
#include <gtest/gtest.h>

#include <cstdio>
#include <filesystem>

#include "artifact_test_util.h"
#include "kiln/ir/npy.h"

namespace kiln::testing {
namespace {

namespace fs = std::filesystem;

struct Result {
  int exit_code;
  std::string output;
};

Result run_cli(const std::string& args, const std::string& env = "", const std::string& cwd = "") {
  const std::string command = (cwd.empty() ? "" : "cd '" + cwd + "' && ") + (env.empty() ? "" : "env " + env + " ") +
                              std::string(KILN_CLI_PATH) + " " + args + " 2>&1";
  FILE* pipe = popen(command.c_str(), "r");
  std::string output;
  char buf[4096];
  size_t n;
  while ((n = fread(buf, 1, sizeof buf, pipe)) > 0) output.append(buf, n);
  const int status = pclose(pipe);
  return {WIFEXITED(status) ? WEXITSTATUS(status) : -1, output};
}

class ArtifactCliTest : public ::testing::Test {
 protected:
  static void SetUpTestSuite() {
    dir_ = new fs::path(fs::temp_directory_path() / ("kiln-artifact-cli-" + std::to_string(getpid())));
    fs::create_directories(*dir_);
    write_test_artifact(path("model.so"));
    ir::NDArray x = ir::NDArray::empty(ir::DType::kF32, {kRows, kCols});
    for (int64_t i = 0; i < x.numel(); ++i) x.set_from_double(i, input_pattern(i, 5));
    ir::write_npy(path("x.npy"), x);
    ir::write_npy(path("wrong.npy"), ir::NDArray::empty(ir::DType::kF32, {kCols, kRows}));
  }
  static void TearDownTestSuite() {
    fs::remove_all(*dir_);
    delete dir_;
  }
  static std::string path(const std::string& name) { return (*dir_ / name).string(); }
  static fs::path* dir_;
};
fs::path* ArtifactCliTest::dir_ = nullptr;

void expect_contains(const std::string& text, const std::string& needle) {
  EXPECT_NE(text.find(needle), std::string::npos) << "'" << needle << "' not in:\n" << text;
}

TEST_F(ArtifactCliTest, RunWritesOutputsThatMatchTheReference) {
  const Result r = run_cli("run " + path("model.so") + " --input x=" + path("x.npy") + " --output " + path("y.npy"));
  ASSERT_EQ(r.exit_code, 0) << r.output;
  expect_contains(r.output, "y: f32[16, 64] -> " + path("y.npy"));
  const ir::NDArray y = ir::read_npy(path("y.npy"));
  std::vector<float> x(kRows * kCols);
  for (size_t i = 0; i < x.size(); ++i) x[i] = input_pattern(static_cast<int64_t>(i), 5);
  const std::vector<float> expected = reference_output(x);
  ASSERT_EQ(y.numel(), static_cast<int64_t>(expected.size()));
  for (size_t i = 0; i < expected.size(); ++i) {
    ASSERT_EQ(y.data<float>()[i], expected[i]) << "index " << i;
  }
}

TEST_F(ArtifactCliTest, RepeatPrintsLatencyAndProfile) {
  const Result r = run_cli("run " + path("model.so") + " --input x=" + path("x.npy") + " --output-dir " +
                           path("out") + " --repeat 5 --warmup 2 --threads 2 --profile");
  ASSERT_EQ(r.exit_code, 0) << r.output;
  expect_contains(r.output, "latency: median ");
  expect_contains(r.output, "over 5 runs after 2 warm-up, 2 threads");
  expect_contains(r.output, "add_relu");
  expect_contains(r.output, "over 5 profiled run(s)");
  // The header names the peak measured by the CLI for the 2 threads; the table has the rates.
  expect_contains(r.output, "peak: ");
  expect_contains(r.output, "GFLOP/s per core");
  expect_contains(r.output, "x 2 threads = ");
  expect_contains(r.output, "% of peak");
  // ... and the memory bandwidth measured for the same threads, for the %roof column.
  expect_contains(r.output, "bandwidth: ");
  expect_contains(r.output, "GB/s (2 threads streaming");
  expect_contains(r.output, "%roof");
  EXPECT_TRUE(fs::exists(path("out/y.npy")));
}

TEST_F(ArtifactCliTest, RelativePathIsTheFileNotALibrarySearch) {
  // dlopen("model.so") would search the library path; kiln run must load ./model.so.
  const Result r = run_cli("run model.so --input x=x.npy --output y2.npy", "", path(""));
  ASSERT_EQ(r.exit_code, 0) << r.output;
  EXPECT_TRUE(fs::exists(path("y2.npy")));
}

TEST_F(ArtifactCliTest, Inspect) {
  const Result r = run_cli("inspect " + path("model.so"));
  ASSERT_EQ(r.exit_code, 0) << r.output;
  expect_contains(r.output, "format version:   3");
  expect_contains(r.output, "x: f32[16, 64]");
  expect_contains(r.output, "runs here:        yes");
}

TEST_F(ArtifactCliTest, Errors) {
  Result r = run_cli("run " + path("model.so") + " --fill purple");  // (no --input at all: made up)
  EXPECT_EQ(r.exit_code, 2) << r.output;
  expect_contains(r.output, "--fill: purple not in {random,zeros,ones}");
  r = run_cli("run " + path("model.so") + " --input y=" + path("x.npy"));
  EXPECT_EQ(r.exit_code, 2) << r.output;
  expect_contains(r.output, "the artifact has no input named 'y'");
  r = run_cli("run " + path("model.so") + " --input x=" + path("wrong.npy"));
  EXPECT_EQ(r.exit_code, 2) << r.output;
  expect_contains(r.output, "expected f32[16, 64], got f32[64, 16]");
  r = run_cli("run " + path("model.so") + " --input x=" + path("x.npy") + " --output a.npy --output b.npy");
  EXPECT_EQ(r.exit_code, 2) << r.output;
  expect_contains(r.output, "given 2 times; the artifact has 1 outputs (y)");

  const std::string bytes = read_all(path("model.so"));
  write_all(path("truncated.so"), bytes.substr(0, bytes.size() / 2));
  r = run_cli("inspect " + path("truncated.so"));
  EXPECT_EQ(r.exit_code, 2) << r.output;
  expect_contains(r.output, "truncated");
  r = run_cli("run " + path("truncated.so") + " --input x=" + path("x.npy"));
  EXPECT_EQ(r.exit_code, 2) << r.output;
  expect_contains(r.output, "truncated");
  expect_contains(r.output, "hint: 'kiln inspect");

  // Artifact-only options on an ONNX model are refused, not ignored.
  r = run_cli("run model.onnx --repeat 3");
  EXPECT_EQ(r.exit_code, 2) << r.output;
  expect_contains(r.output, "apply to compiled artifacts only");

  // The runtime's CPU detection with a feature hidden (as on a smaller CPU): refused, no SIGILL.
  const std::string hidden = codegen::host_target().is_x86_64() ? "avx" : "neon";
  r = run_cli("run " + path("model.so") + " --input x=" + path("x.npy"), "KILN_RUNTIME_HIDE_CPU_FEATURES=" + hidden);
  EXPECT_EQ(r.exit_code, 2) << r.output;
  expect_contains(r.output, "error: " + path("model.so") + ": compiled for CPU");
  expect_contains(r.output, "features this CPU lacks: " + hidden);

  driver::ArtifactOptions options;
  options.edit_metadata = [](artifact::Metadata& m) {
    m.triple = "aarch64-unknown-linux-gnu";
    m.arch = "aarch64";
  };
  write_test_artifact(path("arm.so"), codegen::host_target(), options);
  r = run_cli("inspect " + path("arm.so"));
  EXPECT_EQ(r.exit_code, 0) << r.output;
  expect_contains(r.output, "runs here:        no: ");
  r = run_cli("run " + path("arm.so") + " --input x=" + path("x.npy"));
  EXPECT_EQ(r.exit_code, 2) << r.output;
  expect_contains(r.output, "built for aarch64");
}

}  // namespace
}  // namespace kiln::testing
