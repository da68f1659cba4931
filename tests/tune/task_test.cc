// Tuning tasks and search spaces (tune/task.h, topi/knob_space.h, tune/candidate.h):
//   - extraction is stable (same signatures and order twice, from fresh graphs), distinct bodies
//     have distinct signatures, and the call counts add up to the kernels the compiler builds;
//   - the signature depends on the target's layout facts (AVX2 vs AVX-512 lanes);
//   - every template's space holds its defaults, and every single-knob change of the defaults
//     that the space admits is accepted by apply_schedule; a sample of random points builds into
//     a candidate artifact.
#include <gtest/gtest.h>
#include <unistd.h>

#include <filesystem>
#include <map>
#include <random>
#include <set>

#include "kiln/codegen/target.h"
#include "kiln/driver/compile.h"
#include "kiln/topi/knob_space.h"
#include "kiln/tune/candidate.h"
#include "kiln/tune/task.h"
#include "tune_test_util.h"

namespace kiln::testing {
namespace {

namespace fs = std::filesystem;

TEST(TuneTask, ExtractionIsStableAndDistinct) {
  driver::CompileOptions o;
  o.target = "llvm -mcpu=znver3";
  const std::vector<tune::TuningTask> a = tune::extract_tasks(tune_cnn(), o);
  const std::vector<tune::TuningTask> b = tune::extract_tasks(tune_cnn(), o);
  ASSERT_EQ(a.size(), b.size());
  ASSERT_GE(a.size(), 4u);
  std::set<std::string> sigs;
  int calls = 0;
  for (size_t i = 0; i < a.size(); ++i) {
    EXPECT_EQ(a[i].signature, b[i].signature) << a[i].label;
    EXPECT_EQ(a[i].label, b[i].label);
    EXPECT_EQ(a[i].signature.size(), 16u);
    EXPECT_TRUE(sigs.insert(a[i].signature).second) << "duplicate signature " << a[i].label;
    EXPECT_GT(a[i].calls, 0);
    EXPECT_GT(a[i].flops, 0u) << a[i].label;
    calls += a[i].calls;
  }
  // The compiler builds one kernel call per task call (no group of this graph is split).
  const driver::CompileReport r =
      driver::compile_graph(tune_cnn(), (fs::temp_directory_path() / ("kiln-task-" + std::to_string(getpid()) + ".so")).string(), o);
  fs::remove(r.output_path);
  EXPECT_EQ(static_cast<size_t>(calls), r.kernel_calls.size());
  EXPECT_EQ(static_cast<int>(a.size()), r.distinct_kernels);
}

TEST(TuneTask, SignatureDependsOnTargetLayoutFacts) {
  driver::CompileOptions avx2, avx512;
  avx2.target = "llvm -mcpu=znver3";
  avx512.target = "llvm -mcpu=skylake-avx512 -vector-width=512";
  const std::vector<tune::TuningTask> a = tune::extract_tasks(tune_mlp(), avx2);
  const std::vector<tune::TuningTask> b = tune::extract_tasks(tune_mlp(), avx512);
  ASSERT_FALSE(a.empty());
  ASSERT_FALSE(b.empty());
  std::set<std::string> sa;
  for (const auto& t : a) sa.insert(t.signature);
  for (const auto& t : b) EXPECT_EQ(sa.count(t.signature), 0u) << t.label;
}

TEST(TuneTask, KnobSpacesAreValid) {
  driver::CompileOptions o;
  o.target = "llvm -mcpu=znver3";
  const codegen::Target target = codegen::parse_target(o.target);
  std::vector<tune::TuningTask> tasks = tune::extract_tasks(tune_cnn(), o);
  for (tune::TuningTask& t : tune::extract_tasks(tune_mlp(), o)) tasks.push_back(std::move(t));
  std::set<std::string> kinds;
  std::mt19937_64 rng(7);
  const fs::path dir = fs::temp_directory_path() / ("kiln-knob-space-" + std::to_string(getpid()));
  fs::create_directories(dir);
  int built = 0;
  for (const tune::TuningTask& t : tasks) {
    SCOPED_TRACE(t.label);
    const topi::GroupCompute gc = tune::task_compute(t, target);
    kinds.insert(topi::schedule_kind_name(gc.result.schedule));
    const topi::KnobSpace space = topi::knob_space(gc.result, target);
    const topi::Knobs def = topi::default_knobs(gc.result, target);
    EXPECT_TRUE(space.admits(def)) << def.to_string();
    EXPECT_TRUE(tune::knobs_accepted(gc, def));
    EXPECT_FALSE(space.knobs.empty());
    for (const topi::KnobChoice& c : space.knobs) {
      ASSERT_TRUE(def.has(c.name)) << c.name;
      EXPECT_TRUE(std::is_sorted(c.values.begin(), c.values.end()));
      EXPECT_NE(std::find(c.values.begin(), c.values.end(), def.get(c.name)), c.values.end()) << c.name;
      for (int64_t v : c.values) {
        topi::Knobs k = def;
        k.set(c.name, v);
        if (!space.admits(k)) continue;
        std::string why;
        EXPECT_TRUE(tune::knobs_accepted(gc, k, &why)) << k.to_string() << ": " << why;
      }
    }
    // Two random admitted points build into candidate artifacts.
    for (int n = 0, tries = 0; n < 2 && tries < 200; ++tries) {
      topi::Knobs k = def;
      for (const topi::KnobChoice& c : space.knobs) k.set(c.name, c.values[rng() % c.values.size()]);
      if (!space.admits(k) || !tune::knobs_accepted(gc, k)) continue;
      const tune::CandidateBuild b = tune::build_candidate(t, k, target, (dir / ("c" + std::to_string(built++) + ".so")).string());
      EXPECT_TRUE(b.ok) << k.to_string() << ": " << b.error;
      EXPECT_TRUE(fs::exists(b.path));
      ++n;
    }
  }
  fs::remove_all(dir);
  for (const char* kind : {"conv2d_nchwc", "depthwise", "matmul"}) EXPECT_EQ(kinds.count(kind), 1u) << kind;
  std::string all;
  for (const auto& k : kinds) all += k + " ";
  std::printf("templates covered: %s\n", all.c_str());
}

}  // namespace
}  // namespace kiln::testing
