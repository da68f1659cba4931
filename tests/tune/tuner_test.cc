// The search loop (tune/tuner.h) with the local measurer, and `compile --records`:
//   - a tuned artifact (CNN with every f32 template, MLP) computes what the reference executor
//     computes: |kiln - ref| <= 1e-5 + 1e-4 |ref| (f32, as tests/driver/compile_test.cc);
//   - compile_graph with records applies them ("tuned: K of T kernels") and ignores another
//     device's records with a note that counts them and names the device;
//   - resume continues without re-measuring a knob set; without --resume a used file is refused;
//   - a candidate that cannot run (here: its artifact replaced by a file that is not one) is a
//     failed record, and tuning goes on.
#include <gtest/gtest.h>
#include <unistd.h>

#include <filesystem>
#include <fstream>
#include <map>
#include <set>

#include "../driver/compile_test_util.h"
#include "kiln/codegen/target.h"
#include "kiln/driver/compile.h"
#include "kiln/ref/executor.h"
#include "kiln/support/error.h"
#include "kiln/tune/records.h"
#include "kiln/tune/task.h"
#include "kiln/tune/tuner.h"
#include "temp_dir_test.h"
#include "tune_test_util.h"

namespace kiln::testing {
namespace {

class TunerTest : public TempDirTest {
 protected:
  TunerTest() : TempDirTest("kiln-tuner-test") {}

  static tune::TuneOptions quick(const std::string& db, int64_t trials) {
    tune::TuneOptions o;
    o.records = db;
    o.trials = trials;
    o.batch = 3;
    o.measure.repeats = 3;
    o.measure.warmup = 1;
    o.measure.min_seconds = 0.002;
    o.measure.timeout_seconds = 20;
    return o;
  }

  // Tunes `graph`, compiles it with the records, compares with the reference executor.
  void tune_and_check(const ir::Graph& graph, const std::string& name) {
    driver::CompileOptions co;
    const codegen::Target target = codegen::parse_target(co.target);
    const std::vector<tune::TuningTask> tasks = tune::extract_tasks(graph, co);
    const std::string db = path(name + ".db");
    std::unique_ptr<tune::Measurer> m = tune::make_local_measurer();
    const tune::TuneReport report = tune::tune_tasks(tasks, target, quick(db, static_cast<int64_t>(tasks.size()) + 5), *m);
    EXPECT_EQ(report.trials, static_cast<int64_t>(tasks.size()) + 5) << report.summary();
    for (const tune::TaskOutcome& t : report.tasks) EXPECT_GT(t.default_seconds, 0) << t.label;

    co.records = db;
    const std::string so = path(name + ".so");
    const driver::CompileReport r = driver::compile_graph(graph, so, co);
    EXPECT_EQ(r.tuned_kernels, r.distinct_kernels);  // every task has at least its default record
    EXPECT_NE(r.summary().find("tuned: " + std::to_string(r.tuned_kernels) + " of " +
                               std::to_string(r.distinct_kernels) + " kernels, "),
              std::string::npos)
        << r.summary();
    EXPECT_TRUE(r.records_note.empty()) << r.records_note;
    std::vector<ir::NDArray> inputs;
    int seed = 3;
    for (const ir::NodePtr& in : graph.inputs()) inputs.push_back(tune_pattern(in->as_input().type().shape, seed++, 1.0));
    const std::vector<ir::NDArray> want = ref::run_graph(graph, inputs);
    const std::vector<ir::NDArray> got = run_compiled(so, inputs);
    ASSERT_EQ(got.size(), want.size());
    for (size_t i = 0; i < got.size(); ++i) expect_close(got[i], want[i], 1e-4, 1e-5, name + " output " + std::to_string(i));
  }

};

TEST_F(TunerTest, TunedCnnMatchesReference) { tune_and_check(tune_cnn(), "cnn"); }
TEST_F(TunerTest, TunedMlpMatchesReference) { tune_and_check(tune_mlp(), "mlp"); }

TEST_F(TunerTest, OtherDeviceRecordsAreIgnoredWithANote) {
  driver::CompileOptions co;
  const codegen::Target target = codegen::parse_target(co.target);
  const std::vector<tune::TuningTask> tasks = tune::extract_tasks(tune_mlp(), co);
  const std::string db = path("other.db");
  {
    tune::RecordDatabase d = tune::RecordDatabase::open(db, tune::RecordDatabase::Mode::kCreate);
    for (const tune::TuningTask& t : tasks) {
      tune::TuningRecord r;
      r.task = t.signature;
      r.task_label = t.label;
      r.device = "aarch64-unknown-linux-gnu neoverse-v1 neon";
      r.kiln_version = "test";
      r.knobs = t.default_knobs.values();
      r.ok = true;
      r.seconds = 1e-6;
      r.is_default = true;
      d.add(r);
    }
  }
  co.records = db;
  const driver::CompileReport r = driver::compile_graph(tune_mlp(), path("mlp.so"), co);
  EXPECT_EQ(r.tuned_kernels, 0);
  EXPECT_NE(r.records_note.find(std::to_string(tasks.size()) + " record(s)"), std::string::npos) << r.records_note;
  EXPECT_NE(r.records_note.find("neoverse-v1"), std::string::npos) << r.records_note;
  EXPECT_NE(r.summary().find("tuned: 0 of"), std::string::npos);
  (void)target;
}

TEST_F(TunerTest, ResumeNeverRemeasures) {
  driver::CompileOptions co;
  const codegen::Target target = codegen::parse_target(co.target);
  const std::vector<tune::TuningTask> tasks = tune::extract_tasks(tune_mlp(), co);
  const std::string db = path("resume.db");
  std::unique_ptr<tune::Measurer> m = tune::make_local_measurer();
  const int64_t first = static_cast<int64_t>(tasks.size()) + 3;
  tune::tune_tasks(tasks, target, quick(db, first), *m);
  EXPECT_THROW(tune::tune_tasks(tasks, target, quick(db, first + 4), *m), UserError);
  tune::TuneOptions o = quick(db, first + 4);
  o.resume = true;
  const tune::TuneReport r = tune::tune_tasks(tasks, target, o, *m);
  EXPECT_EQ(r.measured_now, 4);
  EXPECT_EQ(r.trials, first + 4);
  tune::RecordDatabase d = tune::RecordDatabase::open(db, tune::RecordDatabase::Mode::kReadOnly);
  std::set<std::pair<std::string, std::map<std::string, int64_t>>> seen;
  for (const tune::TuningRecord& rec : d.all()) {
    EXPECT_TRUE(seen.insert({rec.task, rec.knobs}).second) << "measured twice: " << rec.task_label;
  }
  EXPECT_EQ(static_cast<int64_t>(seen.size()), first + 4);
}

// After the first `skip` jobs (the baselines, each measured twice), replaces every second job's artifact with a file
// that is not an artifact.
class BreakingMeasurer : public tune::Measurer {
 public:
  BreakingMeasurer(std::string junk, int skip)
      : junk_(std::move(junk)), inner_(tune::make_local_measurer()), skip_(skip) {}
  std::vector<tune::MeasureResult> measure(const std::vector<tune::MeasureJob>& jobs) override {
    std::vector<tune::MeasureJob> j = jobs;
    for (tune::MeasureJob& job : j) {
      if (job.id.rfind("default-again", 0) == 0) continue;  // the default's re-timing: not a candidate
      if (jobs_++ >= skip_ && jobs_ % 2 == 0) {
        job.artifact_path = junk_;
        ++broken;
      }
    }
    return inner_->measure(j);
  }
  std::string describe() const override { return "breaking " + inner_->describe(); }
  int broken = 0;

 private:
  std::string junk_;
  std::unique_ptr<tune::Measurer> inner_;
  int skip_ = 0;
  int jobs_ = 0;
};

TEST_F(TunerTest, FailedCandidateIsRecordedAndTuningGoesOn) {
  driver::CompileOptions co;
  const codegen::Target target = codegen::parse_target(co.target);
  const std::vector<tune::TuningTask> tasks = tune::extract_tasks(tune_mlp(), co);
  const std::string junk = path("junk.so");
  std::ofstream(junk) << "not an artifact";
  BreakingMeasurer m(junk, 2 * static_cast<int>(tasks.size()));  // each default is measured twice
  const int64_t trials = static_cast<int64_t>(tasks.size()) + 6;
  const tune::TuneReport r = tune::tune_tasks(tasks, target, quick(path("fail.db"), trials), m);
  EXPECT_EQ(r.trials, trials);
  ASSERT_GT(m.broken, 0);
  tune::RecordDatabase d = tune::RecordDatabase::open(path("fail.db"), tune::RecordDatabase::Mode::kReadOnly);
  int failed = 0;
  for (const tune::TuningRecord& rec : d.all()) {
    if (!rec.ok) {
      ++failed;
      EXPECT_FALSE(rec.error.empty());
      EXPECT_FALSE(rec.verified);
    }
  }
  EXPECT_EQ(failed, m.broken);
}

// Inflates the first `inflated` jobs' times (the first task's default and its confirmation) 20x.
class SlowStartMeasurer : public tune::Measurer {
 public:
  explicit SlowStartMeasurer(int inflated) : inner_(tune::make_local_measurer()), inflated_(inflated) {}
  std::vector<tune::MeasureResult> measure(const std::vector<tune::MeasureJob>& jobs) override {
    std::vector<tune::MeasureResult> r = inner_->measure(jobs);
    for (tune::MeasureResult& m : r) {
      if (jobs_++ >= inflated_) continue;
      m.seconds *= 20;
      for (double& run : m.runs) run *= 20;
      first_default_ = m.seconds;
    }
    for (const tune::MeasureJob& j : jobs) retimed += j.id.rfind("default-again", 0) == 0;
    return r;
  }
  std::string describe() const override { return "slow-start " + inner_->describe(); }
  double first_default_ = 0;
  int retimed = 0;

 private:
  std::unique_ptr<tune::Measurer> inner_;
  int inflated_;
  int jobs_ = 0;
};

TEST_F(TunerTest, DefaultTimedInASlowMomentIsReTimedBesideTheCandidates) {
  driver::CompileOptions co;
  const codegen::Target target = codegen::parse_target(co.target);
  const std::vector<tune::TuningTask> tasks = tune::extract_tasks(tune_mlp(), co);
  SlowStartMeasurer m(2);  // the first task's default: its measurement and its confirmation
  const tune::TuneReport r = tune::tune_tasks(tasks, target, quick(path("slow.db"), static_cast<int64_t>(tasks.size()) + 6), m);
  ASSERT_GT(m.retimed, 0) << r.summary();
  // The first default measured is the largest task's (calls x FLOPs first).
  tune::RecordDatabase d = tune::RecordDatabase::open(path("slow.db"), tune::RecordDatabase::Mode::kReadOnly);
  int defaults = 0;
  for (const tune::TuningRecord& rec : d.all()) {
    if (!rec.is_default) continue;
    ++defaults;
    EXPECT_LT(rec.seconds, m.first_default_ / 4) << rec.task_label << ": the inflated default was not re-timed";
  }
  EXPECT_EQ(defaults, static_cast<int>(tasks.size()));
  for (const tune::TaskOutcome& t : r.tasks) {
    EXPECT_LT(t.default_seconds, m.first_default_ / 4) << t.label;
    EXPECT_LT(t.default_seconds / t.best_seconds, 4.0) << t.label << ": a candidate credited with the inflation";
  }
}

}  // namespace
}  // namespace kiln::testing
