// measure_artifact and the local measurer (kiln/tune/measure.h) on a real artifact: the built-in
// tiny-cnn example, compiled by the built `kiln` at build time (tests.cmake). Faults are made with
// the child-only hook KILN_TUNE_MEASURE_TEST_FAULT (src/tune_measure/measure_child.h) and with
// files that are not artifacts; every one must come back as ok = false with the right message
// while this process carries on.
#include <gtest/gtest.h>
#include <stdlib.h>
#include <unistd.h>

#include <chrono>
#include <cstdio>
#include <filesystem>
#include <fstream>
#include <string>

#include "kiln/runtime/c_api.h"
#include "kiln/tune/measure.h"
#include "measure_test_util.h"
#include "tune_measure/measure_wire.h"
#include "tune_measure/run_statistics.h"

namespace kiln::tune {
namespace {

namespace fs = std::filesystem;

class MeasureArtifact : public ::testing::Test {
 protected:
  void TearDown() override { ::unsetenv("KILN_TUNE_MEASURE_TEST_FAULT"); }
  static std::string artifact() { return testing::tiny_artifact(); }
  static std::string path(const std::string& name) { return testing::test_path(name); }
};

TEST_F(MeasureArtifact, MeasuresSaneTimesAndReturnsOutputs) {
  MeasureOptions o;
  o.repeats = 7;
  o.min_seconds = 0;
  o.return_outputs = true;
  const MeasureResult r = measure_artifact(artifact(), o);
  ASSERT_TRUE(r.ok) << r.error;
  ASSERT_GE(r.runs.size(), 7u);
  for (double t : r.runs) {
    EXPECT_GT(t, 0);
    EXPECT_LT(t, 1.0);  // tiny-cnn runs in well under a millisecond; a second is a broken clock
  }
  EXPECT_GT(r.seconds, 0);
  EXPECT_LE(r.rejected, static_cast<int>(r.runs.size()) / 2);
  ASSERT_EQ(r.outputs.size(), 1u);
  EXPECT_FALSE(r.outputs[0].empty());
}

TEST_F(MeasureArtifact, SameSeedSameOutputsOtherSeedOtherOutputs) {
  MeasureOptions o;
  o.repeats = 2;
  o.min_seconds = 0;
  o.return_outputs = true;
  const MeasureResult a = measure_artifact(artifact(), o);
  const MeasureResult b = measure_artifact(artifact(), o);
  o.seed = 2;
  const MeasureResult c = measure_artifact(artifact(), o);
  ASSERT_TRUE(a.ok && b.ok && c.ok) << a.error << b.error << c.error;
  EXPECT_EQ(a.outputs, b.outputs);  // bit-identical: same inputs, same kernels
  EXPECT_NE(a.outputs, c.outputs);
}

TEST_F(MeasureArtifact, MinSecondsKeepsRunning) {
  MeasureOptions o;
  o.repeats = 1;
  o.min_seconds = 0.05;
  const auto t0 = std::chrono::steady_clock::now();
  const MeasureResult r = measure_artifact(artifact(), o);
  ASSERT_TRUE(r.ok) << r.error;
  double sum = 0;
  for (double t : r.runs) sum += t;
  EXPECT_GT(r.runs.size(), 1u);
  EXPECT_GE(std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count(), 0.05);
  EXPECT_GT(sum, 0);
}

TEST_F(MeasureArtifact, WithCacheEvictionATinyKernelStopsAtFourTimesRepeatsWithTheSameOutputs) {
  MeasureOptions o;
  o.repeats = 3;
  o.min_seconds = 100;  // never reached by tiny-cnn: the 4 x repeats cap ends the runs
  o.return_outputs = true;
  EXPECT_FALSE(o.flush_cache);  // the default
  o.flush_cache = true;
  const MeasureResult flushed = measure_artifact(artifact(), o);
  ASSERT_TRUE(flushed.ok) << flushed.error;
  EXPECT_EQ(flushed.runs.size(), 12u);
  o.flush_cache = false;
  o.min_seconds = 0;
  const MeasureResult hot = measure_artifact(artifact(), o);
  ASSERT_TRUE(hot.ok) << hot.error;
  EXPECT_EQ(flushed.outputs, hot.outputs);  // eviction changes timing only
}

TEST_F(MeasureArtifact, CrashingCandidateIsReportedWithItsSignal) {
  ::setenv("KILN_TUNE_MEASURE_TEST_FAULT", "segv", 1);
  const MeasureResult r = measure_artifact(artifact(), MeasureOptions{});
  EXPECT_FALSE(r.ok);
  EXPECT_EQ(r.error, "killed by signal 11 (SIGSEGV)");
}

TEST_F(MeasureArtifact, HangingCandidateTimesOut) {
  ::setenv("KILN_TUNE_MEASURE_TEST_FAULT", "hang", 1);
  MeasureOptions o;
  o.timeout_seconds = 0.5;
  const auto t0 = std::chrono::steady_clock::now();
  const MeasureResult r = measure_artifact(artifact(), o);
  const double took = std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
  EXPECT_FALSE(r.ok);
  EXPECT_EQ(r.error, "timed out after 0.5 s");
  EXPECT_LT(took, 5.0);
}

TEST_F(MeasureArtifact, ExitingCandidateIsReportedWithItsStatus) {
  ::setenv("KILN_TUNE_MEASURE_TEST_FAULT", "exit:3", 1);
  const MeasureResult r = measure_artifact(artifact(), MeasureOptions{});
  EXPECT_FALSE(r.ok);
  EXPECT_EQ(r.error, "the measuring process exited with status 3");
}

TEST_F(MeasureArtifact, TruncatedArtifactIsALoadError) {
  const auto size = fs::file_size(artifact());
  fs::copy_file(artifact(), path("truncated.so"), fs::copy_options::overwrite_existing);
  fs::resize_file(path("truncated.so"), size / 2);
  const MeasureResult r = measure_artifact(path("truncated.so"), MeasureOptions{});
  EXPECT_FALSE(r.ok);
  EXPECT_NE(r.error.find("cannot load the candidate: "), std::string::npos) << r.error;
  EXPECT_NE(r.error.find("truncated.so"), std::string::npos) << r.error;  // the runtime's own message
}

TEST_F(MeasureArtifact, NotAnArtifactIsALoadError) {
  std::ofstream(path("text.so")) << "not an artifact\n";
  const MeasureResult r = measure_artifact(path("text.so"), MeasureOptions{});
  EXPECT_FALSE(r.ok);
  EXPECT_NE(r.error.find("cannot load the candidate: "), std::string::npos) << r.error;
  const MeasureResult missing = measure_artifact(path("missing.so"), MeasureOptions{});
  EXPECT_FALSE(missing.ok);
  EXPECT_NE(missing.error.find("missing.so"), std::string::npos) << missing.error;
}

TEST_F(MeasureArtifact, LocalMeasurerKeepsJobOrderAndIds) {
  auto m = make_local_measurer();
  EXPECT_EQ(m->describe(), "local (1 process)");
  std::ofstream(path("bad.so")) << "x";
  MeasureOptions o;
  o.min_seconds = 0;
  const std::vector<MeasureResult> r =
      m->measure({{"a", artifact(), o}, {"b", path("bad.so"), o}, {"c", artifact(), o}});
  ASSERT_EQ(r.size(), 3u);
  EXPECT_EQ(r[0].id, "a");
  EXPECT_EQ(r[1].id, "b");
  EXPECT_EQ(r[2].id, "c");
  EXPECT_TRUE(r[0].ok) << r[0].error;
  EXPECT_FALSE(r[1].ok);
  EXPECT_TRUE(r[2].ok) << r[2].error;
}

// The caller has used the runtime's thread pool (its workers exist in the parent only): the forked
// child must start its own workers instead of waiting on the parent's.
TEST_F(MeasureArtifact, ParentThreadPoolDoesNotBreakTheChild) {
  ASSERT_EQ(kiln_set_num_threads(2), 0);
  KilnModule* module = nullptr;
  ASSERT_EQ(kiln_module_load(artifact().c_str(), &module), 0) << kiln_get_last_error();
  KilnExecutor* exec = nullptr;
  ASSERT_EQ(kiln_executor_create(module, &exec), 0);
  ASSERT_EQ(kiln_executor_run(exec), 0) << kiln_get_last_error();
  for (int threads : {2, 3, 1}) {
    MeasureOptions o;
    o.threads = threads;
    o.min_seconds = 0;
    o.timeout_seconds = 20;
    const MeasureResult r = measure_artifact(artifact(), o);
    EXPECT_TRUE(r.ok) << "threads=" << threads << ": " << r.error;
  }
  ASSERT_EQ(kiln_executor_run(exec), 0) << kiln_get_last_error();  // the parent's pool still works
  kiln_executor_free(exec);
  kiln_module_free(module);
}

TEST(RunStatistics, DropsSlowOutliersAndTakesTheMedian) {
  const RobustMedian m = robust_median({1.0, 1.1, 0.9, 1.05, 0.95, 10.0});
  EXPECT_EQ(m.rejected, 1);
  EXPECT_DOUBLE_EQ(m.median, 1.0);
  EXPECT_EQ(robust_median({}).median, 0);
  EXPECT_EQ(robust_median({2.0}).median, 2.0);
}

TEST(MeasureWire, ResultsAndOptionsRoundTrip) {
  MeasureResult r;
  r.id = "job 7";
  r.ok = true;
  r.seconds = 0.125;
  r.runs = {0.1, 0.125, 0.3};
  r.rejected = 1;
  r.outputs = {{'a', '\0', 'b'}, {}};
  const MeasureResult back = wire::decode_result(wire::encode_result(r));
  EXPECT_EQ(back.id, r.id);
  EXPECT_EQ(back.seconds, r.seconds);
  EXPECT_EQ(back.runs, r.runs);
  EXPECT_EQ(back.rejected, 1);
  EXPECT_EQ(back.outputs, r.outputs);
  MeasureOptions o;
  o.seed = 0xFFFFFFFFFFFFull;
  o.min_seconds = 0.1;
  o.return_outputs = true;
  o.flush_cache = true;
  const MeasureOptions ob = wire::decode_options(wire::encode_options(o));
  EXPECT_TRUE(ob.flush_cache);
  EXPECT_FALSE(wire::decode_options("flush_cache=0").flush_cache);
  EXPECT_EQ(ob.seed, o.seed);
  EXPECT_EQ(ob.min_seconds, o.min_seconds);
  EXPECT_TRUE(ob.return_outputs);
  EXPECT_THROW(wire::decode_options("bogus=1"), std::invalid_argument);
}

}  // namespace
}  // namespace kiln::tune
