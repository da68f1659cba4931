// The auto-tuner's search loop (include/kiln/tune/tuner.h).
#include "kiln/tune/tuner.h"

#include <algorithm>
#include <chrono>
#include <cmath>
#include <cstdlib>
#include <filesystem>
#include <map>
#include <memory>
#include <random>
#include <set>
#include <sstream>

#include "kiln/support/error.h"
#include "kiln/tune/candidate.h"
#include "kiln/tune/cost_model.h"
#include "kiln/tune/record_applicability.h"
#include "kiln/tune/records.h"
#include "kiln/version.h"
#include "tune/progress.h"

namespace kiln::tune {
namespace {

using Clock = std::chrono::steady_clock;

struct TaskState {
  const TuningTask* task = nullptr;
  int index = 0;
  topi::GroupCompute compute;
  topi::KnobSpace space;
  std::string space_fingerprint;   // topi::knob_space_fingerprint: stored with each record
  std::set<std::string> measured;  // Knobs::to_string of every knob set in the database
  std::vector<std::pair<topi::Knobs, double>> ok_runs;  // verified or default: knobs, seconds
  std::vector<std::vector<double>> features;
  std::vector<double> seconds;     // per feature row; 0 = failed
  double default_seconds = 0;
  int64_t default_row = -1;        // the default's row in features/seconds
  std::string default_artifact;    // the default's built kernel, kept for re-timing
  std::vector<std::vector<char>> default_outputs;
  bool have_default_outputs = false;
  double best_seconds = 0;
  topi::Knobs best_knobs;
  int64_t trials = 0;
  bool exhausted = false;
  std::unique_ptr<CostModel> model;
};

topi::Knobs knobs_of(const std::map<std::string, int64_t>& m) {
  topi::Knobs k;
  for (const auto& [name, v] : m) k.set(name, v);
  return k;
}

// The candidates of one round: random points of the space and mutations of the best ones, each
// admitted by the register limit, accepted by apply_schedule, and never measured before.
std::vector<topi::Knobs> sample_pool(TaskState& t, int pool, std::mt19937_64& rng) {
  std::vector<topi::Knobs> out;
  std::set<std::string> seen = t.measured;
  auto consider = [&](const topi::Knobs& k) {
    const std::string key = k.to_string();
    if (!seen.insert(key).second) return;
    if (!t.space.admits(k) || !knobs_accepted(t.compute, k)) return;
    out.push_back(k);
  };
  if (t.space.size() <= 4 * static_cast<int64_t>(pool)) {
    // Small space: enumerate it (then exhaustion is exact).
    std::vector<size_t> idx(t.space.knobs.size(), 0);
    while (true) {
      topi::Knobs k = t.task->default_knobs;
      for (size_t i = 0; i < idx.size(); ++i) k.set(t.space.knobs[i].name, t.space.knobs[i].values[idx[i]]);
      consider(k);
      size_t i = 0;
      while (i < idx.size() && ++idx[i] == t.space.knobs[i].values.size()) idx[i++] = 0;
      if (i == idx.size()) break;
    }
    std::shuffle(out.begin(), out.end(), rng);
    if (out.size() > static_cast<size_t>(pool)) out.resize(static_cast<size_t>(pool));
    return out;
  }
  std::vector<std::pair<topi::Knobs, double>> best = t.ok_runs;
  std::sort(best.begin(), best.end(), [](const auto& a, const auto& b) { return a.second < b.second; });
  if (best.size() > 3) best.resize(3);
  for (int attempt = 0; attempt < 20 * pool && static_cast<int>(out.size()) < pool; ++attempt) {
    topi::Knobs k = t.task->default_knobs;
    if (!best.empty() && attempt % 2 == 0) {
      k = best[static_cast<size_t>(attempt / 2) % best.size()].first;  // mutate one or two knobs
      const int changes = 1 + static_cast<int>(rng() % 2);
      for (int c = 0; c < changes; ++c) {
        const topi::KnobChoice& ch = t.space.knobs[rng() % t.space.knobs.size()];
        k.set(ch.name, ch.values[rng() % ch.values.size()]);
      }
    } else {
      for (const topi::KnobChoice& ch : t.space.knobs) k.set(ch.name, ch.values[rng() % ch.values.size()]);
    }
    consider(k);
  }
  return out;
}

}  // namespace

double TuneReport::model_speedup() const {
  double def = 0, best = 0;
  for (const TaskOutcome& t : tasks) {
    if (t.default_seconds <= 0) continue;
    def += t.calls * t.default_seconds;
    best += t.calls * (t.best_seconds > 0 ? t.best_seconds : t.default_seconds);
  }
  return best > 0 ? def / best : 1.0;
}

std::string TuneReport::summary() const {
  std::ostringstream os;
  os << "tuned " << tasks.size() << " task(s): " << trials << " trial(s) in the database (" << measured_now
     << " measured now, " << failed_now << " failed), " << format_duration(seconds) << "\n";
  os << "cost model: " << cost_model << "; measurer: " << measurer << "\n";
  char buf[64];
  for (size_t i = 0; i < tasks.size(); ++i) {
    const TaskOutcome& t = tasks[i];
    os << "  " << i << "  " << t.label << " x" << t.calls << "  trials " << t.trials;
    if (t.default_seconds > 0) {
      std::snprintf(buf, sizeof buf, "  %.4f -> %.4f ms (%.2fx)", t.default_seconds * 1e3, t.best_seconds * 1e3,
                    t.default_seconds / t.best_seconds);
      os << buf << "  " << t.best_knobs;
    } else {
      os << "  (default not measured)";
    }
    os << "\n";
  }
  std::snprintf(buf, sizeof buf, "%.3fx", model_speedup());
  os << "estimated whole-model speedup (sum of calls x kernel time): " << buf << "\n";
  return os.str();
}

TuneReport tune_tasks(const std::vector<TuningTask>& tasks, const codegen::Target& target, const TuneOptions& options,
                      Measurer& measurer) {
  if (options.trials <= 0 && options.time_budget_seconds <= 0) {
    throw UserError(UserErrorKind::kInvalidArgument, "kiln tune", "has neither a trial count nor a time budget",
                    "pass --trials N or --time-budget MINUTES");
  }
  const auto start = Clock::now();
  auto elapsed = [&] { return std::chrono::duration<double>(Clock::now() - start).count(); };
  RecordDatabase db = RecordDatabase::open(options.records, RecordDatabase::Mode::kCreate);
  const std::string device = DeviceKey::of(target).str();
  std::mt19937_64 rng(options.seed);
  TuneReport report;
  report.measurer = measurer.describe();

  // Task states, with what the database already holds.
  std::vector<TaskState> states(tasks.size());
  int64_t total = 0;
  for (size_t i = 0; i < tasks.size(); ++i) {
    TaskState& t = states[i];
    t.task = &tasks[i];
    t.index = static_cast<int>(i);
    t.compute = task_compute(tasks[i], target);
    t.space = topi::knob_space(t.compute.result, target);
    t.model = make_cost_model(options.seed + i);
    t.space_fingerprint = topi::knob_space_fingerprint(t.compute.result, t.space);
    for (const TuningRecord& r : db.records(tasks[i].signature, device)) {
      // Records of another search space (another Kiln's templates) are neither resumed from nor
      // counted: their knobs may mean other schedules now (record_applicability.h).
      if (r.kind != RecordKind::kKernel || !record_applies(r, t.space_fingerprint)) continue;
      const topi::Knobs k = knobs_of(r.knobs);
      t.measured.insert(k.to_string());
      ++t.trials;
      t.features.push_back(candidate_features(t.space, k, tasks[i].flops));
      t.seconds.push_back(r.ok && (r.verified || r.is_default) ? r.seconds : 0);
      if (r.is_default && r.ok) {
        t.default_seconds = r.seconds;
        t.default_row = static_cast<int64_t>(t.seconds.size()) - 1;
      }
      if (r.ok && (r.verified || r.is_default)) {
        t.ok_runs.emplace_back(k, r.seconds);
        if (t.best_seconds == 0 || r.seconds < t.best_seconds) {
          t.best_seconds = r.seconds;
          t.best_knobs = k;
        }
      }
    }
    total += t.trials;
  }
  if (total > 0 && !options.resume) {
    throw UserError(UserErrorKind::kInvalidArgument, "records file '" + options.records + "'",
                    "already holds " + std::to_string(total) + " record(s) of this model's tasks on this device",
                    "pass --resume to continue tuning from them, or choose another --records file");
  }
  report.cost_model = states.empty() ? "" : states[0].model->name();

  std::filesystem::path work = options.work_dir;
  bool own_work = false;
  if (work.empty()) {
    const char* tmp = std::getenv("TMPDIR");
    std::string pattern = std::string(tmp != nullptr && *tmp ? tmp : "/tmp") + "/kiln-tune-XXXXXX";
    if (mkdtemp(pattern.data()) == nullptr) {
      throw UserError(UserErrorKind::kIO, "kiln tune", "cannot create a temporary directory " + pattern,
                      "set TMPDIR to a writable directory");
    }
    work = pattern;
    own_work = true;
  }
  std::filesystem::create_directories(work);
  Progress progress(options.progress, options.progress_tty);
  int64_t counter = 0;
  MeasureOptions mo = options.measure;
  mo.return_outputs = true;

  auto budget_left = [&] {
    if (options.trials > 0 && total >= options.trials) return false;
    if (options.time_budget_seconds > 0 && elapsed() >= options.time_budget_seconds) return false;
    return true;
  };
  auto snapshot = [&] {
    ProgressSnapshot s;
    s.tasks_total = static_cast<int>(states.size());
    double def = 0, best = 0;
    for (const TaskState& t : states) {
      if (t.default_seconds <= 0) continue;
      ++s.tasks_started;
      def += t.task->calls * t.default_seconds;
      best += t.task->calls * t.best_seconds;
    }
    s.trials = total;
    s.trials_now = report.measured_now;
    s.trials_limit = options.trials;
    s.budget_seconds = options.time_budget_seconds;
    s.model_speedup = best > 0 ? def / best : 1.0;
    return s;
  };

  // The default's time measured again (re-timing in a confirmation batch, below): the task's
  // default time, and its best when the default is the best, become the lower of the two, in
  // memory and in the database (RecordDatabase::lower_default_seconds).
  auto lower_default = [&](TaskState& t, double seconds) {
    if (t.default_seconds <= 0 || seconds >= t.default_seconds) return;
    const std::string key = t.task->default_knobs.to_string();
    t.default_seconds = seconds;
    if (t.default_row >= 0) t.seconds[static_cast<size_t>(t.default_row)] = seconds;
    for (auto& [k, secs] : t.ok_runs) {
      if (k.to_string() == key) secs = seconds;
    }
    if (seconds < t.best_seconds) {
      t.best_seconds = seconds;
      t.best_knobs = t.task->default_knobs;
    }
    db.lower_default_seconds(t.task->signature, device, t.space_fingerprint, seconds);
  };

  // Against the winner's curse on a noisy machine: a default, and a candidate that would beat the
  // task's best, is measured once more (a second batch, so at another moment of the machine's
  // load): a default keeps the faster of its two measurements, a candidate the slower (it must
  // beat the task's best in both moments, not ride a burst that slowed the others in one);
  // failing the second time fails it. Outputs stay those of the first measurement. Every timed
  // run of both is kept in the record. The default is re-timed in every such batch
  // of candidates (job id "default-again-N"): a candidate is compared with the default measured at
  // the same moment, so a default first timed in one of the machine's slow moments does not make
  // every candidate look faster than it is (paired timing; the default keeps its fastest time).
  auto confirm_promising = [&](TaskState& t, const std::vector<MeasureJob>& jobs,
                               std::vector<MeasureResult>& results, bool is_default) {
    std::vector<MeasureJob> again;
    std::vector<size_t> which;
    for (size_t j = 0; j < jobs.size(); ++j) {
      const MeasureResult& m = results[j];
      if (!m.ok || (!is_default && t.best_seconds > 0 && m.seconds >= t.best_seconds)) continue;
      again.push_back(jobs[j]);
      again.back().id += "-again";
      again.back().options.return_outputs = false;
      which.push_back(j);
    }
    if (again.empty()) return;
    const bool retime_default = !is_default && !t.default_artifact.empty();
    if (retime_default) {
      MeasureJob d{"default-again-" + std::to_string(counter++), t.default_artifact, mo};
      d.options.return_outputs = false;
      again.push_back(d);
    }
    const std::vector<MeasureResult> second = measurer.measure(again);
    if (retime_default && second.size() == again.size() && second.back().ok) lower_default(t, second.back().seconds);
    for (size_t i = 0; i < which.size(); ++i) {
      MeasureResult& m = results[which[i]];
      if (!second.at(i).ok) {
        m.ok = false;
        m.error = "second measurement: " + second[i].error;
        continue;
      }
      m.seconds = is_default ? std::min(m.seconds, second[i].seconds) : std::max(m.seconds, second[i].seconds);
      m.runs.insert(m.runs.end(), second[i].runs.begin(), second[i].runs.end());
    }
  };

  // Builds and measures `cands` of task `t` (is_default: the baseline), recording each at once.
  auto run_batch = [&](TaskState& t, const std::vector<topi::Knobs>& cands, bool is_default, bool record) {
    std::vector<MeasureJob> jobs;
    std::vector<size_t> job_of(cands.size(), SIZE_MAX);
    std::vector<std::string> build_error(cands.size());
    for (size_t c = 0; c < cands.size(); ++c) {
      const std::string path = (work / ("cand_" + std::to_string(counter++) + ".so")).string();
      const CandidateBuild b = build_candidate(*t.task, cands[c], target, path);
      if (!b.ok) {
        build_error[c] = "build: " + b.error.substr(0, b.error.find('\n'));
        continue;
      }
      job_of[c] = jobs.size();
      jobs.push_back({std::to_string(counter - 1), path, mo});
    }
    std::vector<MeasureResult> results = jobs.empty() ? std::vector<MeasureResult>{} : measurer.measure(jobs);
    confirm_promising(t, jobs, results, is_default);
    for (size_t j = 0; j < jobs.size(); ++j) {
      // The default's kernel is kept (in the work folder) for re-timing beside later candidates.
      if (is_default && results.at(j).ok && t.default_artifact.empty()) {
        t.default_artifact = jobs[j].artifact_path;
        continue;
      }
      std::filesystem::remove(jobs[j].artifact_path);
    }
    for (size_t c = 0; c < cands.size(); ++c) {
      TuningRecord r;
      r.task = t.task->signature;
      r.task_label = t.task->label;
      r.device = device;
      r.kiln_version = compiler_version();
      r.knobs = cands[c].values();
      r.space = t.space_fingerprint;
      r.is_default = is_default;
      if (job_of[c] == SIZE_MAX) {
        r.error = build_error[c];
      } else {
        const MeasureResult& m = results.at(job_of[c]);
        r.ok = m.ok;
        r.error = m.error;
        r.seconds = m.seconds;
        if (m.ok && is_default) {
          t.default_outputs = m.outputs;
          t.have_default_outputs = true;
        } else if (m.ok && t.have_default_outputs) {
          std::string why;
          r.verified = outputs_match(t.task->group.output_types, t.default_outputs, m.outputs, &why);
          if (!r.verified) r.error = "outputs differ from the default schedule's: " + why;
        }
      }
      if (!record) continue;  // the default re-run on resume: outputs only
      db.add(r);
      ++total;
      ++t.trials;
      ++report.measured_now;
      if (!r.ok || (!r.verified && !r.is_default)) ++report.failed_now;
      t.measured.insert(cands[c].to_string());
      const bool good = r.ok && (r.verified || r.is_default);
      t.features.push_back(candidate_features(t.space, cands[c], t.task->flops));
      t.seconds.push_back(good ? r.seconds : 0);
      if (r.is_default && r.ok) {
        t.default_seconds = r.seconds;
        t.default_row = static_cast<int64_t>(t.seconds.size()) - 1;
      }
      if (good) {
        t.ok_runs.emplace_back(cands[c], r.seconds);
        if (t.best_seconds == 0 || r.seconds < t.best_seconds) {
          const bool improved = t.best_seconds > 0;
          t.best_seconds = r.seconds;
          t.best_knobs = cands[c];
          if (improved) {
            progress.improved(t.index, static_cast<int>(states.size()), t.task->label, t.task->calls,
                              t.default_seconds, t.best_seconds, cands[c].to_string());
          }
        }
      }
    }
  };

  // Baselines: the default of every task, largest (calls x FLOPs) first; on resume, the default
  // is re-run for its outputs only.
  std::vector<size_t> order(states.size());
  for (size_t i = 0; i < order.size(); ++i) order[i] = i;
  std::stable_sort(order.begin(), order.end(), [&](size_t a, size_t b) {
    return static_cast<double>(states[a].task->calls) * states[a].task->flops >
           static_cast<double>(states[b].task->calls) * states[b].task->flops;
  });
  for (size_t i : order) {
    TaskState& t = states[i];
    const bool recorded = t.measured.count(t.task->default_knobs.to_string()) != 0;
    if (!recorded && !budget_left()) break;
    run_batch(t, {t.task->default_knobs}, true, !recorded);
    if (!t.have_default_outputs) t.exhausted = true;  // the default does not run: nothing to compare with
    progress.round(snapshot());
  }

  // Rounds: the task where the model spends the most time, discounted by its trials.
  while (budget_left()) {
    TaskState* pick = nullptr;
    double best_priority = -1;
    for (TaskState& t : states) {
      if (t.exhausted || t.default_seconds <= 0 || t.space.knobs.empty()) continue;
      const double priority = t.task->calls * t.best_seconds / std::sqrt(1.0 + static_cast<double>(t.trials));
      if (priority > best_priority) {
        best_priority = priority;
        pick = &t;
      }
    }
    if (pick == nullptr) break;
    TaskState& t = *pick;
    std::vector<topi::Knobs> pool = sample_pool(t, options.pool, rng);
    if (pool.empty()) {
      t.exhausted = true;
      continue;
    }
    int64_t n = std::min<int64_t>(options.batch, static_cast<int64_t>(pool.size()));
    if (options.trials > 0) n = std::min(n, options.trials - total);
    std::vector<topi::Knobs> chosen;
    if (t.model->trained()) {
      std::vector<std::vector<double>> feats;
      for (const topi::Knobs& k : pool) feats.push_back(candidate_features(t.space, k, t.task->flops));
      const std::vector<double> score = t.model->predict(feats);
      std::vector<size_t> rank(pool.size());
      for (size_t i = 0; i < rank.size(); ++i) rank[i] = i;
      std::stable_sort(rank.begin(), rank.end(), [&](size_t a, size_t b) { return score[a] > score[b]; });
      // The top n - 1 by the model, then one at random from the rest (epsilon-greedy).
      const size_t greedy = n > 1 ? static_cast<size_t>(n - 1) : static_cast<size_t>(n);
      for (size_t i = 0; i < greedy; ++i) chosen.push_back(pool[rank[i]]);
      if (static_cast<int64_t>(chosen.size()) < n && pool.size() > greedy) {
        chosen.push_back(pool[rank[greedy + rng() % (pool.size() - greedy)]]);
      }
    } else {
      chosen.assign(pool.begin(), pool.begin() + n);  // the pool is in random order
    }
    run_batch(t, chosen, false, true);
    std::vector<double> scores;
    for (double s : t.seconds) scores.push_back(s > 0 ? t.default_seconds / s : 0.0);
    t.model->fit(t.features, scores);
    progress.round(snapshot());
  }
  progress.finish();
  for (const TaskState& t : states) {
    if (!t.default_artifact.empty()) std::filesystem::remove(t.default_artifact);
  }
  if (own_work) {
    std::error_code ec;
    std::filesystem::remove_all(work, ec);
  }

  for (const TaskState& t : states) {
    TaskOutcome o;
    o.signature = t.task->signature;
    o.label = t.task->label;
    o.calls = t.task->calls;
    o.trials = t.trials;
    o.default_seconds = t.default_seconds;
    o.best_seconds = t.best_seconds;
    o.best_knobs = t.best_knobs.to_string();
    report.tasks.push_back(o);
  }
  report.trials = total;
  report.seconds = elapsed();
  return report;
}

}  // namespace kiln::tune
