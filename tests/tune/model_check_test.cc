// The whole-model check of the kernel records (tune/model_check.h):
//   - the check's choice point follows the records: one more kernel record makes it another point
//     (an old verdict never judges new records);
//   - with the model slower with the kernel records (synthetic times), the check turns them down:
//     `kiln compile --records` then builds every kernel with its default schedule (says so), keeps
//     the layer choices, and the artifact still matches the reference executor (rtol 1e-4,
//     atol 1e-5);
//   - with the records faster in both passes they are kept and applied; faster in one pass only
//     (the default schedules timed in a slow moment) they are not;
//   - no kernel record other than the defaults' (or no records file): nothing measured.
#include <gtest/gtest.h>
#include <unistd.h>

#include <filesystem>

#include "../driver/compile_test_util.h"
#include "kiln/codegen/target.h"
#include "kiln/driver/compile.h"
#include "kiln/ref/executor.h"
#include "kiln/tune/model_check.h"
#include "kiln/tune/records.h"
#include "kiln/tune/task.h"
#include "kiln/version.h"
#include "scripted_measurer.h"
#include "temp_dir_test.h"
#include "tune_test_util.h"

namespace kiln::testing {
namespace {

class ModelCheckTest : public TempDirTest {
 protected:
  ModelCheckTest() : TempDirTest("kiln-model-check") {}
  void SetUp() override {
    TempDirTest::SetUp();
    int seed = 1;
    ir::NodePtr x = ir::make_input("x", {ir::DType::kF32, {1, 16, 12, 12}});
    ir::Value a = tune_conv(x->output(), 16, 3, 1, 1, seed);
    graph_ = ir::Graph({x}, {tune_call("global_avg_pool", {tune_conv(a, 32, 1, 1, 1, seed)})}, {"y"});
    options_.measure.repeats = 2;
    options_.measure.warmup = 1;
    options_.measure.min_seconds = 0.001;
    options_.measure.timeout_seconds = 30;
  }

  // A records file holding, for every kernel of the graph, the default's record and (`tuned`) a
  // verified non-default record (its default knobs, so the values are the default schedule's)
  // faster than the default's.
  std::string tuned_db(const std::string& name, bool tuned = true) {
    const std::string db = path(name);
    auto d = tune::RecordDatabase::open(db, tune::RecordDatabase::Mode::kCreate);
    for (const tune::TuningTask& t : tune::extract_tasks(graph_, driver::CompileOptions{})) {
      tune::TuningRecord r;
      r.task = t.signature;
      r.task_label = t.label;
      r.device = device_;
      r.kiln_version = compiler_version();
      r.knobs = t.default_knobs.values();
      r.ok = r.is_default = true;
      r.seconds = 2e-3;
      d.add(r);
      if (!tuned) continue;
      r.is_default = false;
      r.verified = true;
      r.seconds = 1e-3;
      d.add(r);
    }
    return db;
  }

  driver::CompileReport compile_and_check(const std::string& db, const std::string& name) {
    driver::CompileOptions co;
    co.records = db;
    const std::string so = path(name + ".so");
    driver::CompileReport r = driver::compile_graph(graph_, so, co);
    std::vector<ir::NDArray> inputs = {tune_pattern({1, 16, 12, 12}, 5, 1.0)};
    const std::vector<ir::NDArray> want = ref::run_graph(graph_, inputs);
    const std::vector<ir::NDArray> got = run_compiled(so, inputs);
    EXPECT_EQ(got.size(), want.size());
    for (size_t i = 0; i < got.size() && i < want.size(); ++i) expect_close(got[i], want[i], 1e-4, 1e-5, name);
    return r;
  }

  tune::ModelCheckReport check(const std::string& db, tune::Measurer& m) {
    tune::TuneOptions o = options_;
    o.records = db;
    return tune::check_kernel_records(graph_, driver::CompileOptions{}, o, m);
  }

  std::string device_ = tune::DeviceKey::of(codegen::parse_target("llvm")).str();
  ir::Graph graph_;
  tune::TuneOptions options_;
};

TEST_F(ModelCheckTest, PointFollowsTheRecords) {
  const codegen::Target target = codegen::parse_target("llvm");
  const pass::PipelineResult p = driver::run_compile_passes(graph_, driver::CompileOptions{}, target);
  auto db = tune::RecordDatabase::open(path("count.db"), tune::RecordDatabase::Mode::kCreate);
  const pass::LayerChoicePoint before = tune::kernel_records_point(p.graph, target, db, device_);
  EXPECT_EQ(before.kind, "kernel_records");
  EXPECT_EQ(before.default_value, 0);
  EXPECT_EQ(before.alternatives, (std::vector<int64_t>{0, 1}));
  EXPECT_EQ(before.signature(), tune::kernel_records_point(p.graph, target, db, device_).signature());
  const std::vector<tune::TuningTask> tasks = tune::extract_tasks(graph_, driver::CompileOptions{});
  ASSERT_FALSE(tasks.empty());
  tune::TuningRecord r;
  r.task = tasks[0].signature;
  r.device = device_;
  r.kiln_version = compiler_version();
  r.knobs = tasks[0].default_knobs.values();
  r.ok = r.is_default = true;
  r.seconds = 1e-3;
  db.add(r);
  EXPECT_NE(before.signature(), tune::kernel_records_point(p.graph, target, db, device_).signature());
  r.device = "another-device";  // other devices' records do not change it
  const std::string after = tune::kernel_records_point(p.graph, target, db, device_).signature();
  db.add(r);
  EXPECT_EQ(after, tune::kernel_records_point(p.graph, target, db, device_).signature());
}

TEST_F(ModelCheckTest, SlowerRecordsAreTurnedDownAndCompileSaysSo) {
  const std::string db = tuned_db("slower.db");
  const driver::CompileReport before = compile_and_check(db, "before");
  ASSERT_GT(before.tuned_kernels, 0) << before.summary();
  EXPECT_FALSE(before.kernel_records_off);

  ScriptedMeasurer on_slower({1.0, 1.0}, {1.2, 1.1});  // "off" (the default) 1.0 ms, "on" 1.2 / 1.1
  const tune::ModelCheckReport c = check(db, on_slower);
  ASSERT_TRUE(c.measured) << c.summary();
  EXPECT_FALSE(c.kept) << c.summary();
  EXPECT_DOUBLE_EQ(c.without_records_seconds, 1.0e-3);
  EXPECT_DOUBLE_EQ(c.with_records_seconds, 1.2e-3);  // its slower pass
  EXPECT_NE(c.summary().find("kernel records not used"), std::string::npos) << c.summary();

  const driver::CompileReport after = compile_and_check(db, "after");
  EXPECT_EQ(after.tuned_kernels, 0) << after.summary();
  EXPECT_TRUE(after.kernel_records_off);
  EXPECT_EQ(after.tuned_layer_choices, before.tuned_layer_choices);
  EXPECT_NE(after.summary().find("kernel records not applied: kiln tune's whole-model check"), std::string::npos)
      << after.summary();
}

TEST_F(ModelCheckTest, RecordsFasterInBothPassesAreKeptNotOnASlowMoment) {
  const std::string db = tuned_db("faster.db");
  ScriptedMeasurer on_faster({1.0, 1.0}, {0.8, 0.9});
  tune::ModelCheckReport c = check(db, on_faster);
  ASSERT_TRUE(c.measured) << c.summary();
  EXPECT_TRUE(c.kept) << c.summary();
  EXPECT_DOUBLE_EQ(c.with_records_seconds, 0.9e-3);
  const driver::CompileReport kept = compile_and_check(db, "kept");
  EXPECT_GT(kept.tuned_kernels, 0) << kept.summary();
  EXPECT_FALSE(kept.kernel_records_off);

  // "off" slow in the first pass only: "on" must win both passes to be kept.
  const std::string db2 = tuned_db("burst.db");
  ScriptedMeasurer burst({1.5, 1.0}, {0.8, 1.05});
  c = check(db2, burst);
  ASSERT_TRUE(c.measured) << c.summary();
  EXPECT_FALSE(c.kept) << c.summary();
  EXPECT_EQ(compile_and_check(db2, "burst").tuned_kernels, 0);
}

TEST_F(ModelCheckTest, NothingToCheckWithoutTunedKernels) {
  ScriptedMeasurer m({1.0, 1.0}, {0.5, 0.5});
  tune::ModelCheckReport c = check(path("missing.db"), m);
  EXPECT_FALSE(c.measured);
  EXPECT_NE(c.why_not.find("no records file"), std::string::npos) << c.why_not;

  const std::string db = tuned_db("defaults.db", false);
  c = check(db, m);
  EXPECT_FALSE(c.measured);
  EXPECT_NE(c.why_not.find("no kernel of the model has a record other than its default"), std::string::npos)
      << c.why_not;
}

}  // namespace
}  // namespace kiln::testing
