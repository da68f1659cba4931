// Artifacts end to end: real kernels (tensor expressions → loop IR → LLVM object code) written
// into an artifact by driver::write_artifact, loaded by libkiln_runtime, run, and compared with
// the same model computed in plain C++ (artifact_test_util.h). Exact comparison: the kernels do
// one add, one max and exact scalings by 2 per element, the same operations in the same order
// as the reference, so f32 results are bit-identical.
#include <gtest/gtest.h>
#include <sys/resource.h>

#include <atomic>
#include <cctype>
#include <chrono>
#include <filesystem>
#include <regex>
#include <sstream>
#include <thread>

#include "artifact_test_util.h"
#include "kiln/runtime/kiln_runtime.hpp"
#include "kiln/support/error.h"

namespace kiln::testing {
namespace {

namespace rt = kiln::runtime;
namespace fs = std::filesystem;

class ArtifactTest : public ::testing::Test {
 protected:
  static void SetUpTestSuite() {
    dir_ = new fs::path(fs::temp_directory_path() / ("kiln-artifact-test-" + std::to_string(getpid())));
    fs::create_directories(*dir_);
    summary_ = new driver::ArtifactSummary(write_test_artifact((*dir_ / "model.so").string()));
  }
  static void TearDownTestSuite() {
    fs::remove_all(*dir_);
    delete dir_;
    delete summary_;
  }
  static std::string path(const std::string& name) { return (*dir_ / name).string(); }

  static fs::path* dir_;
  static driver::ArtifactSummary* summary_;
};
fs::path* ArtifactTest::dir_ = nullptr;
driver::ArtifactSummary* ArtifactTest::summary_ = nullptr;

std::vector<float> pattern(int seed) {
  std::vector<float> x(kRows * kCols);
  for (size_t i = 0; i < x.size(); ++i) x[i] = input_pattern(static_cast<int64_t>(i), seed);
  return x;
}

DLTensor view(std::vector<float>& v, std::vector<int64_t>& shape) {
  DLTensor t{};
  t.data = v.data();
  t.device = {kDLCPU, 0};
  t.ndim = static_cast<int32_t>(shape.size());
  t.dtype = rt::dtype_f32();
  t.shape = shape.data();
  return t;
}

void expect_output(rt::Executor& e, const std::vector<float>& x, const std::string& what) {
  const std::vector<float> expected = reference_output(x);
  const DLTensor& y = e.output(0);
  const float* got = static_cast<const float*>(y.data);
  for (size_t i = 0; i < expected.size(); ++i) {
    ASSERT_EQ(got[i], expected[i]) << what << ": index " << i << " actual " << got[i] << " expected " << expected[i];
  }
}

TEST_F(ArtifactTest, RunsAndMatchesReference) {
  rt::Module m = rt::Module::load(path("model.so"));
  ASSERT_EQ(m.num_inputs(), 1);
  ASSERT_EQ(m.num_outputs(), 1);
  EXPECT_STREQ(m.input_info(0).name, "x");
  EXPECT_EQ(m.input_info(0).ndim, 2);
  EXPECT_EQ(m.input_info(0).shape[1], kCols);
  EXPECT_EQ(m.output_index("y"), 0);
  rt::Executor e(m);
  std::vector<int64_t> shape{kRows, kCols};
  std::vector<float> x = pattern(1);
  DLTensor xt = view(x, shape);
  e.set_input("x", xt);
  e.run();
  expect_output(e, x, "first run");
  const void* out_data = e.output(0).data;

  // Second run, new input by index: same buffers (no reallocation), new result.
  std::vector<float> x2 = pattern(2);
  DLTensor xt2 = view(x2, shape);
  e.set_input(0, xt2);
  e.run();
  expect_output(e, x2, "second run");
  EXPECT_EQ(e.output(0).data, out_data);

  // get_output copies into a caller tensor.
  rt::Tensor out = rt::Tensor::empty({kRows, kCols}, rt::dtype_f32());
  e.get_output(0, *out.get());
  EXPECT_EQ(out.data<float>()[5], reference_output(x2)[5]);
}

TEST_F(ArtifactTest, ZeroCopyBoundInput) {
  rt::Module m = rt::Module::load(path("model.so"));
  rt::Executor e(m);
  rt::Tensor x = rt::Tensor::empty({kRows, kCols}, rt::dtype_f32());
  std::vector<float> values = pattern(3);
  std::copy(values.begin(), values.end(), x.data<float>());
  e.bind_input(0, *x.get());
  e.run();
  expect_output(e, values, "bound input");
  // Changing the caller's memory changes the next run's result: the input is not copied.
  for (int64_t i = 0; i < x.numel(); ++i) x.data<float>()[i] = values[i] = input_pattern(i, 4);
  e.run();
  expect_output(e, values, "bound input after change");
  // Misaligned memory cannot be bound (kernels assume 64-byte alignment).
  std::vector<float> big(kRows * kCols + 16);
  std::vector<int64_t> shape{kRows, kCols};
  DLTensor t = view(big, shape);
  t.data = reinterpret_cast<char*>(x.data<float>()) + 4;
  try {
    e.bind_input(0, t);
    FAIL() << "misaligned bind accepted";
  } catch (const rt::RuntimeError& err) {
    EXPECT_NE(std::string(err.what()).find("64-byte aligned"), std::string::npos) << err.what();
  }
}

TEST_F(ArtifactTest, InputChecks) {
  rt::Module m = rt::Module::load(path("model.so"));
  rt::Executor e(m);
  auto expect_error = [&](auto&& call, const std::string& needle) {
    try {
      call();
      FAIL() << "no error; expected one containing '" << needle << "'";
    } catch (const rt::RuntimeError& err) {
      EXPECT_NE(std::string(err.what()).find(needle), std::string::npos) << err.what();
    }
  };
  std::vector<float> x(kRows * kCols);
  std::vector<int64_t> wrong_shape{kCols, kRows};
  DLTensor t = view(x, wrong_shape);
  expect_error([&] { e.set_input(0, t); }, "expected f32[16, 64], got f32[64, 16]");
  std::vector<int64_t> shape{kRows, kCols};
  t = view(x, shape);
  t.dtype = rt::dtype_i32();
  expect_error([&] { e.set_input(0, t); }, "expected f32[16, 64], got i32[16, 64]");
  t.dtype = rt::dtype_f32();
  expect_error([&] { e.set_input("nope", t); }, "no input named 'nope' (its inputs: x)");
  expect_error([&] { e.set_input(3, t); }, "input index 3 out of range");
  expect_error([&] { m.output_index("z"); }, "no output named 'z'");
}

TEST_F(ArtifactTest, MemoryPlanSharesIntermediates) {
  // t1 and t3 are never live together: two buffers' worth instead of three.
  const uint64_t one = kRows * kCols * 4;
  EXPECT_EQ(summary_->naive_bytes, 3 * one);
  EXPECT_EQ(summary_->planned_bytes, 2 * one);
  EXPECT_EQ(summary_->num_kernels, 4u);
  EXPECT_EQ(summary_->weights_bytes, one);
  EXPECT_FALSE(summary_->metadata.required_features.empty());
}

TEST_F(ArtifactTest, ConcurrentExecutorsOverOneModule) {
  ASSERT_EQ(kiln_set_num_threads(2), 0);
  rt::Module m = rt::Module::load(path("model.so"));
  constexpr int kThreads = 4, kRuns = 40;
  std::atomic<int> failures{0};
  std::vector<std::string> messages(kThreads);
  std::vector<std::thread> threads;
  for (int t = 0; t < kThreads; ++t) {
    threads.emplace_back([&, t] {
      try {
        rt::Executor e(m);
        std::vector<int64_t> shape{kRows, kCols};
        for (int r = 0; r < kRuns; ++r) {
          std::vector<float> x = pattern(t * 100 + r);
          DLTensor xt = view(x, shape);
          e.set_input(0, xt);
          e.run();
          const std::vector<float> expected = reference_output(x);
          const float* got = static_cast<const float*>(e.output(0).data);
          for (size_t i = 0; i < expected.size(); ++i) {
            if (got[i] != expected[i]) {
              messages[t] = "thread " + std::to_string(t) + " run " + std::to_string(r) + " index " +
                            std::to_string(i) + ": actual " + std::to_string(got[i]) + " expected " +
                            std::to_string(expected[i]);
              ++failures;
              return;
            }
          }
        }
      } catch (const std::exception& err) {
        messages[t] = err.what();
        ++failures;
      }
    });
  }
  for (auto& th : threads) th.join();
  for (const auto& msg : messages) EXPECT_TRUE(msg.empty()) << msg;
  EXPECT_EQ(failures.load(), 0);
}

TEST_F(ArtifactTest, ModuleOutlivedByExecutor) {
  std::unique_ptr<rt::Executor> e;
  {
    rt::Module m = rt::Module::load(path("model.so"));
    e = std::make_unique<rt::Executor>(m);
  }  // the caller's module handle is gone; the executor keeps the module loaded
  std::vector<float> x = pattern(9);
  std::vector<int64_t> shape{kRows, kCols};
  DLTensor xt = view(x, shape);
  e->set_input(0, xt);
  e->run();
  expect_output(*e, x, "after module handle freed");
}

// Between runs the thread pool's workers sleep (they spin only while a run is open and briefly
// after it): 300 ms after the last run the process has used (almost) no CPU.
TEST_F(ArtifactTest, NoCoreBurnsBetweenRuns) {
  ASSERT_EQ(kiln_set_num_threads(2), 0);
  rt::Module m = rt::Module::load(path("model.so"));
  rt::Executor e(m);
  for (int i = 0; i < 20; ++i) e.run();
  std::this_thread::sleep_for(std::chrono::milliseconds(20));  // past any spin window
  rusage a{}, b{};
  getrusage(RUSAGE_SELF, &a);
  std::this_thread::sleep_for(std::chrono::milliseconds(300));
  getrusage(RUSAGE_SELF, &b);
  auto seconds = [](const rusage& u) {
    return static_cast<double>(u.ru_utime.tv_sec + u.ru_stime.tv_sec) +
           1e-6 * static_cast<double>(u.ru_utime.tv_usec + u.ru_stime.tv_usec);
  };
  EXPECT_LT(seconds(b) - seconds(a), 0.03) << "used " << (seconds(b) - seconds(a)) * 1e3 << " ms of CPU in 300 ms idle";
  kiln_set_num_threads(0);
}

TEST_F(ArtifactTest, ProfilerTable) {
  rt::Module m = rt::Module::load(path("model.so"));
  rt::Executor e(m);
  e.set_profiling(true);
  for (int i = 0; i < 5; ++i) e.run();
  const KilnKernelProfile p0 = e.kernel_profile(0);
  EXPECT_STREQ(p0.symbol, "add_relu");
  EXPECT_STREQ(p0.fused_ops, "add+relu");
  EXPECT_EQ(p0.calls, 5);
  EXPECT_GT(p0.total_seconds, 0.0);
  const std::string report = e.profile_report();
  for (const char* needle : {"kernel", "fused ops", "add_relu", "add+relu", "scale2", "multiply", "%",
                             "over 5 profiled run(s)"}) {
    EXPECT_NE(report.find(needle), std::string::npos) << needle << " missing from\n" << report;
  }
  // One row per symbol: scale2's two call sites are summed (2 calls per run); rows slowest first;
  // its GFLOP/s is its flops (1024 per call) over the summed time; % of peak against the peak given.
  const KilnKernelProfile s1 = e.kernel_profile(1), s2 = e.kernel_profile(2);
  const double want_gflops = 2.0 * kRows * kCols * 5 / (s1.total_seconds + s2.total_seconds) * 1e-9;
  const std::string table = e.profile_report(/*peak_gflops=*/1000.0);
  std::istringstream lines(table);
  std::string line;
  int scale2_rows = 0;
  double previous_us = 1e300;
  while (std::getline(lines, line)) {
    std::istringstream f(line);
    std::string rank, us, pct, cum, calls, us_call, gflops, peak, gbs, roof, symbol;
    if (!(f >> rank >> us >> pct >> cum >> calls >> us_call >> gflops >> peak >> gbs >> roof >> symbol) ||
        !std::isdigit(static_cast<unsigned char>(rank[0]))) {
      continue;  // the header and the totals
    }
    EXPECT_LE(std::stod(us), previous_us) << "rows are not sorted slowest first:\n" << table;
    previous_us = std::stod(us);
    EXPECT_NE(peak, "-") << line;
    if (symbol != "scale2") continue;
    ++scale2_rows;
    EXPECT_EQ(calls, "2") << line;
    EXPECT_NEAR(std::stod(gflops), want_gflops, 0.051 + 0.01 * want_gflops) << line;
    EXPECT_NEAR(std::stod(peak), want_gflops / 1000.0 * 100.0, 0.051) << line;
  }
  EXPECT_EQ(scale2_rows, 1) << table;
  EXPECT_NE(table.find("% of peak"), std::string::npos) << table;
  e.set_profiling(false);
  e.run();
  EXPECT_EQ(e.kernel_profile(0).calls, 0);
}

TEST_F(ArtifactTest, DescribeReadsTheFileOnly) {
  const std::string text = rt::describe_artifact(path("model.so"));
  for (const char* needle : {"format version:   3", "x: f32[16, 64]", "y: f32[16, 64]", "[0] add_relu  {add+relu}  (x, w, t1)",
                             "[3] add  {add}  (t3, x, y)", "3 intermediates", "runs here:        yes",
                             "8192 bytes in 1 storage block(s) (12288 bytes without reuse)"}) {
    EXPECT_NE(text.find(needle), std::string::npos) << needle << " missing from\n" << text;
  }
  EXPECT_NE(text.find(codegen::host_target().triple), std::string::npos) << text;
}

// The size by part (kiln inspect): the weights part holds at least the weights the metadata
// records, the code part is not empty, and the parts add up to the file's size (read here with
// std::filesystem).
TEST_F(ArtifactTest, SizeByPartAddsUpToTheFile) {
  const std::string text = rt::describe_artifact(path("model.so"));
  std::smatch m;
  const std::regex line(
      R"(size by part:     weights [\d.]+% \((\d+)\), code [\d.]+% \((\d+)\), plan [\d.]+% \((\d+)\), )"
      R"(metadata [\d.]+% \((\d+)\), other [\d.]+% \((\d+)\) bytes)");
  ASSERT_TRUE(std::regex_search(text, m, line)) << text;
  std::smatch w;
  ASSERT_TRUE(std::regex_search(text, w, std::regex(R"(weights:          (\d+) bytes)"))) << text;
  uint64_t sum = 0;
  for (int k = 1; k <= 5; ++k) sum += std::stoull(m[k].str());
  EXPECT_EQ(sum, fs::file_size(path("model.so")));
  EXPECT_GE(std::stoull(m[1].str()), std::stoull(w[1].str()));
  EXPECT_GT(std::stoull(m[2].str()), 0u);
  EXPECT_GT(std::stoull(m[3].str()), 0u);
}

TEST_F(ArtifactTest, LinkFailureNamesTheCommand) {
  driver::ArtifactOptions options;
  options.c_compiler = "/bin/false";
  try {
    write_test_artifact(path("never.so"), codegen::host_target(), options);
    FAIL() << "link with /bin/false succeeded";
  } catch (const UserError& e) {
    EXPECT_EQ(e.kind(), UserErrorKind::kIO);
    EXPECT_NE(std::string(e.what()).find("linking the artifact failed"), std::string::npos) << e.what();
    EXPECT_NE(std::string(e.what()).find("'/bin/false' -shared"), std::string::npos) << e.what();
  }
  EXPECT_FALSE(fs::exists(path("never.so")));
}

}  // namespace
}  // namespace kiln::testing

namespace kiln::testing {
namespace {

namespace rt = kiln::runtime;
namespace fs = std::filesystem;

// A kernel that fails (sets the last error, returns -1): run reports which kernel and why. It is
// called "add" like a kernel of the test model, which is loaded in the same process: each
// artifact must use its own symbols.
TEST(ArtifactKernelFailure, RunReportsTheKernelsMessage) {
  const fs::path dir = fs::temp_directory_path() / ("kiln-artifact-fail-" + std::to_string(getpid()));
  fs::create_directories(dir);
  codegen::LLVMModule module(codegen::host_target(), "failing");
  module.add_llvm_ir(R"(
@msg = private unnamed_addr constant [22 x i8] c"boom: bad input value\00"
declare void @kiln_set_last_error(ptr)
define i32 @add(ptr %args, i32 %n) {
  call void @kiln_set_last_error(ptr @msg)
  ret i32 -1
}
)", "always_fails.ll");
  driver::ArtifactBuilder b;
  const int32_t x = b.add_input("x", ir::DType::kF32, {4});
  const int32_t y = b.add_output("y", ir::DType::kF32, {4});
  b.add_kernel("add", "custom", {x, y});
  b.add_output_alias("x_again", x);  // a graph output that is the input itself
  b.add_object(module.object_code());
  driver::write_artifact(b, codegen::host_target(), (dir / "fails.so").string());
  write_test_artifact((dir / "model.so").string());
  rt::Module model = rt::Module::load((dir / "model.so").string());
  rt::Module m = rt::Module::load((dir / "fails.so").string());
  rt::Executor e(m);
  std::vector<float> values{1, 2, 3, 4};
  std::vector<int64_t> shape{4};
  DLTensor t{};
  t.data = values.data();
  t.device = {kDLCPU, 0};
  t.ndim = 1;
  t.dtype = rt::dtype_f32();
  t.shape = shape.data();
  e.set_input(0, t);
  try {
    e.run();
    FAIL() << "run succeeded";
  } catch (const rt::RuntimeError& err) {
    EXPECT_NE(std::string(err.what()).find("kernel 'add' (step 1 of 1) failed: boom: bad input value"),
              std::string::npos)
        << err.what();
  }
  // The aliased output reads the input's data.
  ASSERT_EQ(m.num_outputs(), 2);
  EXPECT_STREQ(m.output_info(1).name, "x_again");
  const float* alias = static_cast<const float*>(e.output(1).data);
  for (int i = 0; i < 4; ++i) EXPECT_EQ(alias[i], values[i]) << i;
  // The model's own "add" still runs (loaded after, and alongside, the failing one).
  rt::Executor good(model);
  std::vector<float> mx = pattern(11);
  std::vector<int64_t> model_shape{kRows, kCols};
  DLTensor xt = view(mx, model_shape);
  good.set_input(0, xt);
  good.run();
  expect_output(good, mx, "model next to another artifact with an 'add' kernel");
  fs::remove_all(dir);
}

}  // namespace
}  // namespace kiln::testing
