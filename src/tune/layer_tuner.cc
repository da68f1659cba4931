// Graph-level tuning by whole-model measurement: see include/kiln/tune/layer_tuner.h.
#include "kiln/tune/layer_tuner.h"

#include <algorithm>
#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <filesystem>
#include <map>
#include <ostream>
#include <sstream>

#include "kiln/codegen/target.h"
#include "kiln/support/error.h"
#include "kiln/tune/record_applicability.h"
#include "kiln/tune/records.h"
#include "kiln/version.h"
#include "tune/whole_model.h"

namespace kiln::tune {

namespace {

using Clock = std::chrono::steady_clock;

// A LayerChoices that sets `point` to `value` and leaves every other point at its default.
pass::LayerChoices flipping(const std::string& signature, int64_t value) {
  pass::LayerChoices c;
  c.lookup = [signature, value](const pass::LayerChoicePoint& p) -> std::optional<int64_t> {
    if (p.signature() == signature) return value;
    return std::nullopt;
  };
  return c;
}

}  // namespace

std::string LayerTuneReport::summary() const {
  std::ostringstream os;
  os << "layer choices: " << points.size() << " point(s), " << measured_now << " whole-model measurement(s) ("
     << failed_now << " failed or unverified)\n";
  char buf[160];
  for (const LayerOutcome& p : points) {
    os << "  " << p.label << ": ";
    if (p.default_seconds <= 0) {
      os << "not measured\n";
      continue;
    }
    std::snprintf(buf, sizeof buf, "%s=%lld %.4f ms -> %s=%lld %.4f ms (%.2fx)", p.kind.c_str(),
                  static_cast<long long>(p.default_value), p.default_seconds * 1e3, p.kind.c_str(),
                  static_cast<long long>(p.best_value), p.best_seconds * 1e3, p.default_seconds / p.best_seconds);
    os << buf << "\n";
  }
  return os.str();
}

LayerTuneReport tune_layer_choices(const ir::Graph& graph, const driver::CompileOptions& options,
                                   const TuneOptions& tune, Measurer& measurer) {
  const auto start = Clock::now();
  auto elapsed = [&] { return std::chrono::duration<double>(Clock::now() - start).count(); };
  const codegen::Target target = codegen::parse_target(options.target);
  const std::string device = DeviceKey::of(target).str();
  driver::CompileOptions co = options;
  co.records.clear();  // alternatives are measured with the default kernel schedules

  // The choice points the pipeline meets.
  pass::LayerChoices probe;
  co.layer_choices = &probe;
  driver::run_compile_passes(graph, co, target);
  LayerTuneReport report;
  if (probe.points.empty()) return report;

  RecordDatabase db = RecordDatabase::open(tune.records, RecordDatabase::Mode::kCreate);
  std::vector<std::map<int64_t, TuningRecord>> known(probe.points.size());  // value -> best record
  int64_t held = 0;
  for (size_t i = 0; i < probe.points.size(); ++i) {
    const pass::LayerChoicePoint& p = probe.points[i].point;
    for (const TuningRecord& r : db.records(p.signature(), device)) {
      if (r.kind != RecordKind::kLayer || !record_applies(r, layer_space_fingerprint(p))) continue;
      auto it = r.knobs.find(p.kind);
      if (it == r.knobs.end()) continue;
      ++held;
      auto [slot, fresh] = known[i].emplace(it->second, r);
      if (!fresh && r.ok && (!slot->second.ok || r.seconds < slot->second.seconds)) slot->second = r;
    }
  }
  if (held > 0 && !tune.resume) {
    throw UserError(UserErrorKind::kInvalidArgument, "records file '" + tune.records + "'",
                    "already holds " + std::to_string(held) + " layer-choice record(s) of this model on this device",
                    "pass --resume to continue tuning from them, or choose another --records file");
  }

  bool own_work = false;
  const std::filesystem::path work = make_work_dir(tune.work_dir, "kiln-tune-layers", &own_work);
  std::vector<ir::TensorType> out_types;
  for (const ir::Value& v : graph.outputs()) out_types.push_back(v.type());
  MeasureOptions mo = tune.measure;
  int counter = 0;
  std::string default_path;  // the default model's artifact, once built

  // The heaviest points first (multiply-adds x layers sharing the point), so that a time budget
  // spends itself where the model spends its time; ties keep the order first met.
  std::vector<size_t> order(probe.points.size());
  for (size_t i = 0; i < order.size(); ++i) order[i] = i;
  auto weight = [&](size_t i) { return probe.points[i].point.macs * static_cast<double>(probe.points[i].layers); };
  std::stable_sort(order.begin(), order.end(), [&](size_t a, size_t b) { return weight(a) > weight(b); });
  for (size_t position = 0; position < order.size(); ++position) {
    const size_t i = order[position];
    const pass::LayerChoicePoint& p = probe.points[i].point;
    LayerOutcome outcome;
    outcome.signature = p.signature();
    outcome.label = p.label;
    outcome.kind = p.kind;
    outcome.default_value = outcome.best_value = p.default_value;
    outcome.alternatives = static_cast<int64_t>(p.alternatives.size());
    std::vector<int64_t> todo;
    for (int64_t v : p.alternatives) {
      if (!known[i].count(v)) todo.push_back(v);
    }
    const bool over_budget = tune.time_budget_seconds > 0 && elapsed() >= tune.time_budget_seconds;
    if (!todo.empty() && !over_budget) {
      if (std::find(todo.begin(), todo.end(), p.default_value) == todo.end()) todo.insert(todo.begin(), p.default_value);
      std::stable_partition(todo.begin(), todo.end(), [&](int64_t v) { return v == p.default_value; });
      // Build the whole model once per value (the default first: its outputs are the reference).
      std::vector<MeasureJob> jobs;
      std::vector<size_t> job_of(todo.size(), SIZE_MAX);
      std::vector<std::string> build_error(todo.size());
      for (size_t a = 0; a < todo.size(); ++a) {
        const bool is_default = todo[a] == p.default_value;
        if (is_default && !default_path.empty()) {  // built once, measured next to every point's alternatives
          job_of[a] = jobs.size();
          jobs.push_back({std::to_string(counter++), default_path, mo});
          jobs.back().options.return_outputs = true;
          continue;
        }
        pass::LayerChoices choice = is_default ? pass::LayerChoices{} : flipping(outcome.signature, todo[a]);
        driver::CompileOptions ao = co;
        ao.layer_choices = &choice;
        const std::string path = (work / ("layer_" + std::to_string(counter++) + ".so")).string();
        try {
          driver::compile_graph(graph, path, ao);
        } catch (const Error& e) {
          const std::string what = e.what();
          build_error[a] = "build: " + what.substr(0, what.find('\n'));
          continue;
        }
        if (is_default) default_path = path;
        job_of[a] = jobs.size();
        jobs.push_back({std::to_string(counter - 1), path, mo});
        jobs.back().options.return_outputs = true;
      }
      // The default model once more at the end of each batch: it keeps the faster of its two
      // positions, so an alternative must beat the default's good moment, not a load burst.
      size_t closing = SIZE_MAX;
      if (job_of[0] != SIZE_MAX && jobs.size() > 1) {
        closing = jobs.size();
        jobs.push_back(jobs[job_of[0]]);
        jobs.back().id += "-close";
        jobs.back().options.return_outputs = false;
      }
      std::vector<MeasureResult> first = jobs.empty() ? std::vector<MeasureResult>{} : measurer.measure(jobs);
      for (MeasureJob& j : jobs) {
        j.id += "-again";
        j.options.return_outputs = false;
      }
      const std::vector<MeasureResult> second = jobs.empty() ? std::vector<MeasureResult>{} : measurer.measure(jobs);
      for (const MeasureJob& j : jobs) {
        if (j.artifact_path != default_path) std::filesystem::remove(j.artifact_path);
      }
      const MeasureResult* reference = job_of[0] != SIZE_MAX && first.at(job_of[0]).ok ? &first[job_of[0]] : nullptr;
      for (size_t a = 0; a < todo.size(); ++a) {
        const int64_t value = todo[a];
        const bool is_default = value == p.default_value;
        if (is_default && known[i].count(value)) continue;  // re-run as the reference only
        TuningRecord r;
        r.kind = RecordKind::kLayer;
        r.task = outcome.signature;
        r.task_label = p.label;
        r.device = device;
        r.kiln_version = compiler_version();
        r.knobs = {{p.kind, value}};
        r.space = layer_space_fingerprint(p);
        r.is_default = is_default;
        if (job_of[a] == SIZE_MAX) {
          r.error = build_error[a];
        } else {
          const MeasureResult& m1 = first.at(job_of[a]);
          const MeasureResult& m2 = second.at(job_of[a]);
          r.ok = m1.ok && m2.ok;
          r.error = !m1.ok ? m1.error : !m2.ok ? "second measurement: " + m2.error : "";
          if (r.ok) {
            const bool closed = is_default && closing != SIZE_MAX;
            r.seconds = two_pass_seconds(m1, m2, is_default, closed ? &first[closing] : nullptr,
                                         closed ? &second[closing] : nullptr);
          }
          if (r.ok && !is_default) {
            std::string why = "the default model could not be measured";
            r.verified = reference != nullptr && outputs_match(out_types, reference->outputs, m1.outputs, &why);
            if (!r.verified) r.error = "outputs differ from the default model's: " + why;
          }
        }
        db.add(r);
        ++report.measured_now;
        if (!r.ok || (!r.verified && !r.is_default)) ++report.failed_now;
        known[i].emplace(value, r);
      }
    }
    // The outcome from everything known about the point (this run's and earlier records).
    for (const auto& [value, r] : known[i]) {
      if (!r.ok || !(r.is_default || r.verified)) continue;
      if (r.is_default) outcome.default_seconds = r.seconds;
      if (outcome.best_seconds == 0 || r.seconds < outcome.best_seconds) {
        outcome.best_seconds = r.seconds;
        outcome.best_value = value;
      }
    }
    if (tune.progress != nullptr && outcome.default_seconds > 0) {
      char buf[200];
      std::snprintf(buf, sizeof buf, "[tune] layer %zu/%zu %s: %s %lld -> %lld (%.3f -> %.3f ms model)\n", position + 1,
                    probe.points.size(), p.label.c_str(), p.kind.c_str(), static_cast<long long>(p.default_value),
                    static_cast<long long>(outcome.best_value), outcome.default_seconds * 1e3,
                    outcome.best_seconds * 1e3);
      *tune.progress << buf << std::flush;
    }
    report.points.push_back(std::move(outcome));
  }
  if (own_work) std::filesystem::remove_all(work);
  report.seconds = elapsed();
  return report;
}

}  // namespace kiln::tune
