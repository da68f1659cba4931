// `kiln compile` as a user runs it: the real binary on the built-in example (no generated files
// needed), its printed account, `kiln run` on the result, --dump-ir-after, and every usage error
// (exit code 2 with `error:` naming the problem).
#include <gtest/gtest.h>
#include <sys/wait.h>
#include <unistd.h>

#include <array>
#include <cstdio>
#include <filesystem>
#include <string>

namespace {

namespace fs = std::filesystem;

struct RunResult {
  int exit_code = -1;
  std::string output;  // stdout and stderr
};

RunResult run_kiln(const std::string& args) {
  const std::string cmd = std::string(KILN_CLI_PATH) + " " + args + " 2>&1";
  RunResult r;
  FILE* p = popen(cmd.c_str(), "r");
  if (p == nullptr) return r;
  std::array<char, 4096> buf;
  size_t n;
  while ((n = fread(buf.data(), 1, buf.size(), p)) > 0) r.output.append(buf.data(), n);
  const int status = pclose(p);
  r.exit_code = WIFEXITED(status) ? WEXITSTATUS(status) : -1;
  return r;
}

class CompileCli : public ::testing::Test {
 protected:
  void SetUp() override {
    dir_ = fs::temp_directory_path() / ("kiln-compile-cli-" + std::to_string(getpid()));
    fs::create_directories(dir_);
  }
  void TearDown() override { fs::remove_all(dir_); }
  std::string path(const std::string& name) const { return (dir_ / name).string(); }
  fs::path dir_;
};

TEST_F(CompileCli, ExampleCompilesPrintsItsAccountAndRuns) {
  RunResult c = run_kiln("compile --example tiny-cnn -o " + path("tiny.so"));
  ASSERT_EQ(c.exit_code, 0) << c.output;
  for (const char* needle : {"passes:", "FuseOps", "kernels: 7 calls", "[layout_transform+conv2d_nchwc+relu]", "planned", "naive", "phases:",
                             "codegen (LLVM)", "total", "wrote "}) {
    EXPECT_NE(c.output.find(needle), std::string::npos) << "missing '" << needle << "' in\n" << c.output;
  }
  ASSERT_TRUE(fs::exists(path("tiny_x.npy")));
  RunResult r = run_kiln("run " + path("tiny.so") + " --input x=" + path("tiny_x.npy") + " --output " + path("y.npy") +
                         " --repeat 3");
  ASSERT_EQ(r.exit_code, 0) << r.output;
  EXPECT_NE(r.output.find("latency: median"), std::string::npos) << r.output;
  RunResult i = run_kiln("inspect " + path("tiny.so"));
  EXPECT_EQ(i.exit_code, 0) << i.output;
  EXPECT_NE(i.output.find("example tiny-cnn"), std::string::npos) << i.output;
}

TEST_F(CompileCli, DumpIrAfterPass) {
  RunResult c = run_kiln("compile --example tiny-cnn -O 2 --dump-ir-after=FuseOps -o " + path("d.so"));
  ASSERT_EQ(c.exit_code, 0) << c.output;
  EXPECT_NE(c.output.find("// IR after FuseOps"), std::string::npos) << c.output;
  EXPECT_NE(c.output.find("fused("), std::string::npos) << c.output;
}

TEST_F(CompileCli, UsageErrorsExitTwoWithTheReason) {
  struct Case {
    std::string args, needle;
  };
  for (const Case& k : {Case{"compile -o " + path("x.so"), "no model given"},
                        Case{"compile " + path("missing.onnx") + " -o " + path("x.so"), "missing.onnx"},
                        Case{"compile --example huge-cnn -o " + path("x.so"), "huge-cnn"},
                        Case{"compile --example tiny-cnn -O 5 -o " + path("x.so"), "opt-level"},
                        Case{"compile --example tiny-cnn --target 'llvm -mcpu=not-a-cpu' -o " + path("x.so"), "not-a-cpu"},
                        Case{"compile --example tiny-cnn --dump-ir-after=NoSuchPass -o " + path("x.so"), "NoSuchPass"},
                        Case{"compile " + path("same.so"), "is the model itself"}}) {
    RunResult r = run_kiln(k.args);
    EXPECT_EQ(r.exit_code, 2) << k.args << "\n" << r.output;
    EXPECT_NE(r.output.find("error:"), std::string::npos) << k.args << "\n" << r.output;
    EXPECT_NE(r.output.find(k.needle), std::string::npos) << k.args << ": expected '" << k.needle << "' in\n" << r.output;
  }
  EXPECT_FALSE(fs::exists(path("x.so")));
}

}  // namespace
