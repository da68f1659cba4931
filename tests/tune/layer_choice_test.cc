// Graph-level tuning choices (issue 15; pass/layer_choice.h, tune/layer_tuner.h,
// tune/record_applicability.h):
//   - without records every pass keeps its rule (the graph equals an uncached compile's);
//   - layer records forcing Winograd on, then off, for every 3x3 conv change the compiled graph
//     (winograd kernels present / absent), and the artifact still matches the reference executor
//     (rtol 1e-4, atol 1e-5: Winograd F(4x4) rounds by ~1e-5 relative);
//   - a record setting a conv's output block to one vector gives that block in the graph;
//   - records of another device are ignored (graph as default, a note);
//   - kernel records of another knob space (another Kiln's templates) are ignored with a count,
//     schema-1 records (space unknown) apply only from this Kiln version;
//   - a layer alternative applies only when it beats the default's record by kLayerChoiceMinGain;
//   - the layer tuner records every alternative of every point (whole-model measurements), and a
//     compile with its records applies all of them;
//   - an alternative that looks faster only because the default was timed in a slow moment of one
//     pass is not chosen; one faster in both passes is (synthetic timings);
//   - a schema-1 file opens read-only unchanged and is migrated by a read-write open.
#include <gtest/gtest.h>
#include <unistd.h>

#include <array>
#include <filesystem>
#include <map>
#include <set>

#include "../driver/compile_test_util.h"
#include "kiln/codegen/target.h"
#include "kiln/driver/compile.h"
#include "kiln/ref/executor.h"
#include "kiln/tune/layer_tuner.h"
#include "kiln/tune/record_applicability.h"
#include "kiln/tune/records.h"
#include "kiln/tune/task.h"
#include "kiln/version.h"
#include "tune/sqlite_db.h"
#include "scripted_measurer.h"
#include "temp_dir_test.h"
#include "tune_test_util.h"

namespace kiln::testing {
namespace {

// x [1, 16, 14, 14] -> conv3x3 32 -> conv3x3 32 -> global average pool: two 3x3 convs.
ir::Graph two_convs() {
  int seed = 1;
  ir::NodePtr x = ir::make_input("x", {ir::DType::kF32, {1, 16, 14, 14}});
  ir::Value a = tune_conv(x->output(), 32, 3, 1, 1, seed);
  ir::Value b = tune_conv(a, 32, 3, 1, 1, seed);
  return ir::Graph({x}, {tune_call("global_avg_pool", {b})}, {"y"});
}

class LayerChoiceTest : public TempDirTest {
 protected:
  LayerChoiceTest() : TempDirTest("kiln-layer-choice") {}

  // The layer choice points of `graph`'s default compile.
  static std::vector<pass::LayerChoicePoint> points_of(const ir::Graph& graph) {
    driver::CompileOptions co;
    pass::LayerChoices probe;
    co.layer_choices = &probe;
    driver::run_compile_passes(graph, co, codegen::parse_target(co.target));
    std::vector<pass::LayerChoicePoint> out;
    for (const auto& m : probe.points) out.push_back(m.point);
    return out;
  }

  static tune::TuningRecord layer_record(const pass::LayerChoicePoint& p, int64_t value, const std::string& device) {
    tune::TuningRecord r;
    r.kind = tune::RecordKind::kLayer;
    r.task = p.signature();
    r.task_label = p.label;
    r.device = device;
    r.kiln_version = compiler_version();
    r.knobs = {{p.kind, value}};
    r.space = tune::layer_space_fingerprint(p);
    r.ok = true;
    r.verified = true;
    r.is_default = value == p.default_value;
    r.seconds = 1e-3;
    return r;
  }

  // Compiles with `db`, checks the outputs against the reference executor, returns the report.
  driver::CompileReport compile_and_check(const ir::Graph& graph, const std::string& db, const std::string& name) {
    driver::CompileOptions co;
    co.records = db;
    const std::string so = path(name + ".so");
    driver::CompileReport r = driver::compile_graph(graph, so, co);
    std::vector<ir::NDArray> inputs;
    for (const ir::NodePtr& in : graph.inputs()) inputs.push_back(tune_pattern(in->as_input().type().shape, 5, 1.0));
    const std::vector<ir::NDArray> want = ref::run_graph(graph, inputs);
    const std::vector<ir::NDArray> got = run_compiled(so, inputs);
    EXPECT_EQ(got.size(), want.size());
    for (size_t i = 0; i < got.size() && i < want.size(); ++i) expect_close(got[i], want[i], 1e-4, 1e-5, name);
    return r;
  }

  static int winograd_kernels(const driver::CompileReport& r) {
    int n = 0;
    for (const driver::KernelCall& k : r.kernel_calls) n += k.fused_ops.find("conv2d_winograd_nchwc") != std::string::npos;
    return n;
  }

  std::string device_ = tune::DeviceKey::of(codegen::parse_target("llvm")).str();
};

TEST_F(LayerChoiceTest, RecordsForceWinogradOnAndOff) {
  const ir::Graph graph = two_convs();
  const std::vector<pass::LayerChoicePoint> points = points_of(graph);
  std::vector<pass::LayerChoicePoint> wino;
  for (const auto& p : points) {
    if (p.kind == "winograd_tile") wino.push_back(p);
  }
  ASSERT_EQ(wino.size(), 2u) << "two distinct 3x3 conv structures";
  // Same points on every run, no names in them.
  EXPECT_EQ(points_of(graph).size(), points.size());
  EXPECT_EQ(points_of(two_convs())[0].signature(), points[0].signature());

  for (int64_t tile : {int64_t{4}, int64_t{0}}) {
    const std::string db = path("wino" + std::to_string(tile) + ".db");
    {
      auto d = tune::RecordDatabase::open(db, tune::RecordDatabase::Mode::kCreate);
      for (const auto& p : wino) d.add(layer_record(p, tile, device_));
    }
    const driver::CompileReport r = compile_and_check(graph, db, "wino" + std::to_string(tile));
    EXPECT_EQ(winograd_kernels(r), tile == 0 ? 0 : 2) << r.summary();
    EXPECT_EQ(r.tuned_layer_choices, 2) << r.summary();
    EXPECT_EQ(r.layer_choices, static_cast<int>(points.size()));
    EXPECT_NE(r.summary().find("2 of " + std::to_string(points.size()) + " layer choices"), std::string::npos)
        << r.summary();
  }

  // The same records for another device: ignored, the graph is the default one.
  const std::string other = path("other.db");
  {
    auto d = tune::RecordDatabase::open(other, tune::RecordDatabase::Mode::kCreate);
    for (const auto& p : wino) d.add(layer_record(p, p.default_value == 4 ? 0 : 4, "aarch64-unknown-linux-gnu a64fx sve"));
  }
  const driver::CompileReport r = compile_and_check(graph, other, "other");
  driver::CompileOptions plain;
  const driver::CompileReport d = driver::compile_graph(graph, path("plain.so"), plain);
  EXPECT_EQ(winograd_kernels(r), winograd_kernels(d));
  EXPECT_EQ(r.tuned_layer_choices, 0);
  EXPECT_NE(r.records_note.find("another device"), std::string::npos) << r.records_note;
}

// A layer alternative replaces the default only when it beats the default's record by more than
// kLayerChoiceMinGain (whole-model noise); kernel lookups keep the plain fastest record.
TEST_F(LayerChoiceTest, LayerAlternativeMustBeatTheDefaultByTheMargin) {
  const ir::Graph graph = two_convs();
  std::vector<pass::LayerChoicePoint> wino;
  for (const auto& p : points_of(graph)) {
    if (p.kind == "winograd_tile") wino.push_back(p);
  }
  ASSERT_EQ(wino.size(), 2u);
  driver::CompileOptions plain;
  const int default_wino = winograd_kernels(driver::compile_graph(graph, path("plain.so"), plain));
  for (const double gain : {0.01, 0.10}) {
    const std::string db = path("margin" + std::to_string(static_cast<int>(gain * 100)) + ".db");
    {
      auto d = tune::RecordDatabase::open(db, tune::RecordDatabase::Mode::kCreate);
      for (const auto& p : wino) {
        d.add(layer_record(p, p.default_value, device_));  // 1 ms
        tune::TuningRecord alt = layer_record(p, p.default_value == 0 ? 4 : 0, device_);
        alt.seconds = 1e-3 * (1.0 - gain);
        d.add(alt);
      }
    }
    const driver::CompileReport r = compile_and_check(graph, db, "margin" + std::to_string(static_cast<int>(gain * 100)));
    const int flipped = default_wino == 0 ? 2 : 0;
    EXPECT_EQ(winograd_kernels(r), gain > tune::kLayerChoiceMinGain ? flipped : default_wino) << gain << ": " << r.summary();
  }

  // best_applicable itself: the margin only when asked for, and only against a default record.
  const pass::LayerChoicePoint& p = wino[0];
  const std::string fp = tune::layer_space_fingerprint(p);
  tune::TuningRecord def = layer_record(p, p.default_value, device_);
  tune::TuningRecord alt = layer_record(p, p.default_value == 0 ? 4 : 0, device_);
  alt.seconds = 0.99e-3;
  EXPECT_FALSE(tune::best_applicable({def, alt}, tune::RecordKind::kLayer, fp, nullptr)->is_default);
  EXPECT_TRUE(tune::best_applicable({def, alt}, tune::RecordKind::kLayer, fp, nullptr, 0.02)->is_default);
  EXPECT_FALSE(tune::best_applicable({alt}, tune::RecordKind::kLayer, fp, nullptr, 0.02)->is_default);
  alt.seconds = 0.97e-3;
  EXPECT_FALSE(tune::best_applicable({def, alt}, tune::RecordKind::kLayer, fp, nullptr, 0.02)->is_default);
}

TEST_F(LayerChoiceTest, RecordSetsAConvOutputBlock) {
  const ir::Graph graph = two_convs();
  const int64_t lanes = codegen::parse_target("llvm").vector_lanes(32);
  const std::string db = path("block.db");
  int forced = 0;
  {
    auto d = tune::RecordDatabase::open(db, tune::RecordDatabase::Mode::kCreate);
    for (const auto& p : points_of(graph)) {
      if (p.kind != "oc_block" || p.default_value == lanes) continue;
      d.add(layer_record(p, lanes, device_));
      ++forced;
    }
  }
  if (forced == 0) GTEST_SKIP() << "every conv already takes one-vector blocks on this target";
  const driver::CompileReport r = compile_and_check(graph, db, "block");
  EXPECT_EQ(r.tuned_layer_choices, forced);
  bool found = false;
  for (const ir::NodePtr& n : r.pipeline.graph.topo_order()) {
    if (n->kind() != ir::NodeKind::kCall) continue;
    const ir::TensorType& t = n->output_types()[0];
    found |= t.rank() == 5 && t.shape[4] == lanes;
  }
  EXPECT_TRUE(found) << "a blocked value of " << lanes << " lanes";
}

TEST_F(LayerChoiceTest, KernelRecordsOfAnotherKnobSpaceAreIgnored) {
  const ir::Graph graph = tune_mlp();
  driver::CompileOptions co;
  const std::vector<tune::TuningTask> tasks = tune::extract_tasks(graph, co);
  ASSERT_GE(tasks.size(), 3u);
  const std::string db = path("versions.db");
  {
    auto d = tune::RecordDatabase::open(db, tune::RecordDatabase::Mode::kCreate);
    for (size_t i = 0; i < 3; ++i) {
      tune::TuningRecord r;
      r.task = tasks[i].signature;
      r.task_label = tasks[i].label;
      r.device = device_;
      r.knobs = tasks[i].default_knobs.values();
      r.ok = r.is_default = true;
      r.seconds = 1e-6;
      if (i == 0) {  // another Kiln's templates
        r.kiln_version = "0.0.9";
        r.space = "0123456789abcdef";
      } else if (i == 1) {  // a schema-1 record of another version: unknown space
        r.kiln_version = "0.0.9";
      } else {  // a schema-1 record of this version: applies
        r.kiln_version = compiler_version();
      }
      d.add(r);
    }
  }
  co.records = db;
  const driver::CompileReport r = driver::compile_graph(graph, path("mlp.so"), co);
  EXPECT_EQ(r.tuned_kernels, 1) << r.summary();
  EXPECT_NE(r.stale_note.find("2 record(s) from kiln 0.0.9"), std::string::npos) << r.stale_note;
  EXPECT_NE(r.stale_note.find("the schedule templates changed; re-tune"), std::string::npos) << r.stale_note;
  EXPECT_NE(r.summary().find(r.stale_note), std::string::npos);
}

TEST_F(LayerChoiceTest, LayerTunerMeasuresEveryAlternativeAndCompileAppliesThem) {
  int seed = 1;
  ir::NodePtr x = ir::make_input("x", {ir::DType::kF32, {1, 16, 12, 12}});
  const ir::Graph graph({x}, {tune_conv(x->output(), 16, 3, 1, 1, seed)}, {"y"});
  const std::vector<pass::LayerChoicePoint> points = points_of(graph);
  ASSERT_FALSE(points.empty());
  size_t alternatives = 0;
  for (const auto& p : points) alternatives += p.alternatives.size();

  const std::string db = path("layers.db");
  tune::TuneOptions o;
  o.records = db;
  o.measure.repeats = 3;
  o.measure.warmup = 1;
  o.measure.min_seconds = 0.002;
  o.measure.timeout_seconds = 30;
  std::unique_ptr<tune::Measurer> m = tune::make_local_measurer();
  const tune::LayerTuneReport report = tune::tune_layer_choices(graph, driver::CompileOptions{}, o, *m);
  EXPECT_EQ(report.points.size(), points.size()) << report.summary();
  EXPECT_EQ(report.failed_now, 0) << report.summary();
  const std::vector<tune::TuningRecord> all = tune::RecordDatabase::open(db, tune::RecordDatabase::Mode::kReadOnly).all();
  EXPECT_EQ(all.size(), alternatives);
  for (const tune::TuningRecord& r : all) {
    EXPECT_EQ(r.kind, tune::RecordKind::kLayer);
    EXPECT_TRUE(r.ok) << r.error;
    EXPECT_TRUE(r.is_default || r.verified) << r.task_label << ": " << r.error;
  }
  // A second run is refused without --resume, and with it measures nothing new.
  EXPECT_THROW(tune::tune_layer_choices(graph, driver::CompileOptions{}, o, *m), UserError);
  o.resume = true;
  EXPECT_EQ(tune::tune_layer_choices(graph, driver::CompileOptions{}, o, *m).measured_now, 0);

  const driver::CompileReport r = compile_and_check(graph, db, "tuned");
  EXPECT_EQ(r.tuned_layer_choices, static_cast<int>(points.size())) << r.summary();
}

// The layer tuner settles the heaviest points first (multiply-adds x layers sharing the point): of
// 3x3 convs 8 -> 8, 8 -> 16, twice 16 -> 16 (one point met by 2 layers) and 16 -> 48, the
// 16 -> 48 points come first and the 8 -> 8 point last. With no time left the report still lists
// every point, in the order a budget would have measured them, and measures none.
TEST_F(LayerChoiceTest, LayerTunerSettlesTheHeaviestPointsFirst) {
  int seed = 1;
  ir::NodePtr x = ir::make_input("x", {ir::DType::kF32, {1, 8, 12, 12}});
  ir::Value a = tune_conv(x->output(), 8, 3, 1, 1, seed);    // 8*8*9*144 MACs
  ir::Value b = tune_conv(a, 16, 3, 1, 1, seed);             // 8*16*9*144
  ir::Value c = tune_conv(b, 16, 3, 1, 1, seed);             // 16*16*9*144, twice
  ir::Value d = tune_conv(c, 16, 3, 1, 1, seed);
  ir::Value e = tune_conv(d, 48, 3, 1, 1, seed);             // 16*48*9*144
  const ir::Graph graph({x}, {tune_call("global_avg_pool", {e})}, {"y"});

  driver::CompileOptions co;
  pass::LayerChoices probe;
  co.layer_choices = &probe;
  driver::run_compile_passes(graph, co, codegen::parse_target(co.target));
  std::map<std::string, double> weight;  // signature -> MACs x layers
  bool shared = false;
  for (const auto& m : probe.points) {
    EXPECT_GT(m.point.macs, 0) << m.point.label;
    weight[m.point.signature()] = m.point.macs * static_cast<double>(m.layers);
    shared = shared || m.layers == 2;
    if (m.point.label.find("16->16") != std::string::npos) {
      EXPECT_EQ(m.layers, 2) << m.point.label;
      EXPECT_DOUBLE_EQ(m.point.macs, 16.0 * 16 * 9 * 144) << m.point.label;
    }
  }
  EXPECT_TRUE(shared) << "the two 16 -> 16 convs share one point";

  tune::TuneOptions o;
  o.records = path("order.db");
  o.time_budget_seconds = 1e-9;  // over budget before the first point: nothing measured
  std::unique_ptr<tune::Measurer> m = tune::make_local_measurer();
  const tune::LayerTuneReport report = tune::tune_layer_choices(graph, driver::CompileOptions{}, o, *m);
  EXPECT_EQ(report.measured_now, 0);
  ASSERT_EQ(report.points.size(), probe.points.size());
  for (size_t i = 1; i < report.points.size(); ++i) {
    EXPECT_GE(weight.at(report.points[i - 1].signature), weight.at(report.points[i].signature))
        << report.points[i - 1].label << " before " << report.points[i].label;
  }
  EXPECT_NE(report.points.front().label.find("16->48"), std::string::npos) << report.summary();
  EXPECT_NE(report.points.back().label.find("8->8"), std::string::npos) << report.summary();
}

TEST_F(LayerChoiceTest, AlternativeMustWinInBothPassesNotOnTheDefaultsSlowMoment) {
  ir::NodePtr x = ir::make_input("x", {ir::DType::kF32, {1, 16, 12, 12}});
  int seed = 1;
  const ir::Graph graph({x}, {tune_conv(x->output(), 16, 3, 1, 1, seed)}, {"y"});
  tune::TuneOptions o;
  o.measure.repeats = 2;
  o.measure.warmup = 1;
  o.measure.min_seconds = 0.001;
  o.measure.timeout_seconds = 30;
  // The default slow (1.5 ms) in the first pass only, the alternatives 0.8 then 1.05 ms: with
  // both passes pooled they "won" by ~25 %; each pass on its own, the default's 1.0 ms stands.
  o.records = path("burst.db");
  ScriptedMeasurer burst({1.5, 1.0}, {0.8, 1.05});
  for (const tune::LayerOutcome& p : tune::tune_layer_choices(graph, driver::CompileOptions{}, o, burst).points) {
    EXPECT_EQ(p.best_value, p.default_value) << p.label << " " << p.kind;
    EXPECT_DOUBLE_EQ(p.default_seconds, 1.0e-3) << p.label;
  }
  // Faster in both passes (0.8 and 0.9 against 1.0): chosen, credited with its slower pass.
  o.records = path("real.db");
  ScriptedMeasurer real({1.0, 1.0}, {0.8, 0.9});
  for (const tune::LayerOutcome& p : tune::tune_layer_choices(graph, driver::CompileOptions{}, o, real).points) {
    EXPECT_NE(p.best_value, p.default_value) << p.label << " " << p.kind;
    EXPECT_DOUBLE_EQ(p.best_seconds, 0.9e-3) << p.label;
  }
}

TEST_F(LayerChoiceTest, SchemaOneFilesOpenAndMigrate) {
  const std::string db = path("v1.db");
  {
    tune::SqliteDb s = tune::SqliteDb::open(db, false, true);
    s.exec(
        "PRAGMA application_id = 1263094862;"
        "CREATE TABLE kiln_meta(key TEXT PRIMARY KEY, value TEXT NOT NULL);"
        "INSERT INTO kiln_meta VALUES ('schema_version', '1'), ('created_by', 'kiln 0.0.9'), ('created_unix', '1');"
        "CREATE TABLE records(id INTEGER PRIMARY KEY, task TEXT NOT NULL, task_label TEXT NOT NULL,"
        "  device TEXT NOT NULL, kiln_version TEXT NOT NULL, knobs TEXT NOT NULL, ok INTEGER NOT NULL,"
        "  error TEXT NOT NULL, seconds REAL NOT NULL, is_default INTEGER NOT NULL, verified INTEGER NOT NULL,"
        "  created_unix INTEGER NOT NULL);"
        "INSERT INTO records(task, task_label, device, kiln_version, knobs, ok, error, seconds, is_default,"
        "  verified, created_unix) VALUES ('abc', 'conv', 'dev', '0.0.9', 'tile_ow=4', 1, '', 0.5, 1, 0, 1);");
  }
  {
    const auto ro = tune::RecordDatabase::open(db, tune::RecordDatabase::Mode::kReadOnly);
    const std::vector<tune::TuningRecord> all = ro.all();
    ASSERT_EQ(all.size(), 1u);
    EXPECT_EQ(all[0].kind, tune::RecordKind::kKernel);
    EXPECT_EQ(all[0].space, "");
    EXPECT_FALSE(tune::record_applies(all[0], "anything"));  // 0.0.9 is not this Kiln
  }
  EXPECT_EQ(tune::SqliteDb::open(db, true, false).query_text("SELECT value FROM kiln_meta WHERE key = 'schema_version'"),
            "1");
  {
    auto rw = tune::RecordDatabase::open(db, tune::RecordDatabase::Mode::kCreate);
    tune::TuningRecord r = rw.all().at(0);
    r.kind = tune::RecordKind::kLayer;
    r.space = "s";
    rw.add(r);
    ASSERT_EQ(rw.all().size(), 2u);
    EXPECT_EQ(rw.all()[1].kind, tune::RecordKind::kLayer);
    EXPECT_EQ(rw.all()[0].knobs.at("tile_ow"), 4);
  }
  EXPECT_EQ(tune::SqliteDb::open(db, true, false).query_text("SELECT value FROM kiln_meta WHERE key = 'schema_version'"),
            "2");
}

}  // namespace
}  // namespace kiln::testing
