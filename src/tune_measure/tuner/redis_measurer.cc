// The tuner side of measurement through Redis (kiln/tune/redis_measurer.h). Compiled into libkiln
// (src/tune_measure/CMakeLists.txt), not into kiln_tune_measure: it reports setup problems as
// kiln::UserError, a compiler-side type, and only the tuner needs it. The worker side is
// src/tune_measure/tune_worker.cc; the protocol's names are in redis_connection.h.
#include "kiln/tune/redis_measurer.h"

#include <unistd.h>

#include <algorithm>
#include <chrono>
#include <fstream>
#include <iterator>
#include <map>
#include <random>
#include <set>
#include <sstream>
#include <thread>

#include "kiln/runtime/c_api.h"
#include "kiln/support/error.h"
#include "tune_measure/measure_wire.h"
#include "tune_measure/redis_connection.h"

namespace kiln::tune {
namespace {

using Clock = std::chrono::steady_clock;

std::string seconds_text(double s) {
  std::ostringstream o;
  o << s;
  return o.str();
}

// The CPU features an artifact requires, from the runtime's description of the file (its
// "cpu features:" line; no code of the artifact is loaded). Throws std::runtime_error with the
// runtime's message for a file that is not a readable artifact.
std::vector<std::string> required_features(const std::string& path) {
  char* text = nullptr;
  if (kiln_artifact_describe(path.c_str(), &text) != 0) throw std::runtime_error(kiln_get_last_error());
  std::istringstream s(text);
  kiln_free_text(text);
  const std::string key = "cpu features:";
  for (std::string line; std::getline(s, line);) {
    if (line.rfind(key, 0) != 0) continue;
    const std::string value = line.substr(key.size());
    if (value.find("(none)") != std::string::npos) return {};
    return redis::split_features(value);
  }
  return {};
}

MeasureResult failed(const std::string& id, const std::string& error) {
  MeasureResult r;
  r.id = id;
  r.error = error;
  return r;
}

class RedisMeasurer final : public Measurer {
 public:
  explicit RedisMeasurer(const RedisOptions& o) : o_(o), conn_(connect(o)) {
    std::random_device rd;
    char host[128] = {0};
    ::gethostname(host, sizeof host - 1);
    tuner_ = std::string(host) + "-" + std::to_string(::getpid()) + "-" + std::to_string(rd() % 1000000);
    reply_ = redis::results_key(o_.prefix, tuner_);
  }

  ~RedisMeasurer() override {
    try {
      conn_.command({"DEL", reply_});
    } catch (...) {
    }
  }

  std::string describe() const override {
    const auto workers = live_workers();
    return "redis " + conn_.address() + " prefix " + o_.prefix + ", " + std::to_string(workers.size()) +
           (workers.size() == 1 ? " worker" : " workers");
  }

  std::vector<MeasureResult> measure(const std::vector<MeasureJob>& jobs) override {
    std::vector<MeasureResult> results(jobs.size());
    std::vector<bool> answered(jobs.size(), false);
    if (jobs.empty()) return results;
    const std::vector<redis::WorkerInfo> workers = wait_for_workers();
    std::map<std::string, size_t> index_of;  // wire id -> job index
    std::map<size_t, std::string> entry_of;  // job index -> stream entry id
    double longest_hold = 0;
    guarded([&] {
      for (size_t i = 0; i < jobs.size(); ++i) {
        std::string why;
        const std::string entry = send(jobs[i], workers, &index_of, i, &why);
        if (entry.empty()) {
          results[i] = failed(jobs[i].id, why);
          answered[i] = true;
        } else {
          entry_of[i] = entry;
          longest_hold = std::max(longest_hold, hold_seconds(jobs[i].options));
        }
      }
      collect(jobs, index_of, longest_hold, &results, &answered);
      const double timeout = job_timeout(longest_hold);
      for (size_t i = 0; i < jobs.size(); ++i) {
        if (answered[i]) continue;
        results[i] = failed(jobs[i].id, "no worker answered within " + seconds_text(timeout) + " s");
        conn_.command({"XDEL", redis::jobs_key(o_.prefix), entry_of[i]});  // withdrawn
        conn_.command({"HDEL", redis::holds_key(o_.prefix), entry_of[i]});
      }
    });
    return results;
  }

 private:
  static redis::Connection connect(const RedisOptions& o) {
    try {
      return redis::Connection(o.host, o.port, 5);
    } catch (const redis::ConnectionError& e) {
      throw unreachable(o, e.what());
    }
  }

  static UserError unreachable(const RedisOptions& o, const std::string& why) {
    return UserError(UserErrorKind::kIO, "Redis broker " + o.host + ":" + std::to_string(o.port),
                     "cannot reach it (" + why + ")",
                     "start redis-server (docs/tuning.md), or tune locally without --redis");
  }

  template <typename F>
  void guarded(F f) const {
    try {
      f();
    } catch (const redis::ConnectionError& e) {
      throw unreachable(o_, e.what());
    }
  }

  double hold_seconds(const MeasureOptions& m) const { return m.timeout_seconds + o_.reclaim_margin_seconds; }
  double job_timeout(double longest_hold) const {
    return o_.job_timeout_seconds > 0 ? o_.job_timeout_seconds : 2 * longest_hold + 10;
  }

  std::vector<redis::WorkerInfo> live_workers() const {
    std::vector<redis::WorkerInfo> live;
    guarded([&] {
      redis::Reply r = conn_.checked({"HGETALL", redis::workers_key(o_.prefix)});
      const int64_t now = redis::unix_ms();
      for (size_t i = 0; i + 1 < r->elements; i += 2) {
        redis::WorkerInfo w = redis::decode_worker(redis::text(r->element[i]), redis::text(r->element[i + 1]));
        if (now - w.heartbeat_ms <= static_cast<int64_t>(redis::kAliveSeconds * 1000)) live.push_back(w);
      }
    });
    return live;
  }

  std::vector<redis::WorkerInfo> wait_for_workers() {
    const auto deadline = Clock::now() + std::chrono::duration<double>(o_.wait_for_workers_seconds);
    for (;;) {
      std::vector<redis::WorkerInfo> live = live_workers();
      if (!live.empty()) return live;
      if (Clock::now() >= deadline) {
        throw UserError(UserErrorKind::kNotFound,
                        "Redis broker " + conn_.address() + " (prefix " + o_.prefix + ")",
                        "no kiln-tune-worker is alive (waited " + seconds_text(o_.wait_for_workers_seconds) + " s)",
                        "start `kiln-tune-worker --redis " + conn_.address() + " --prefix " + o_.prefix +
                            "` on each device (docs/tuning.md)");
      }
      std::this_thread::sleep_for(std::chrono::milliseconds(200));
    }
  }

  // Publishes one job; returns its stream entry id, or "" with *why when it cannot be sent.
  std::string send(const MeasureJob& job, const std::vector<redis::WorkerInfo>& workers,
                   std::map<std::string, size_t>* index_of, size_t index, std::string* why) {
    std::ifstream in(job.artifact_path, std::ios::binary);
    if (!in) {
      *why = "cannot read the candidate artifact " + job.artifact_path;
      return "";
    }
    const std::string bytes((std::istreambuf_iterator<char>(in)), std::istreambuf_iterator<char>());
    std::vector<std::string> needs;
    try {
      needs = required_features(job.artifact_path);
    } catch (const std::exception& e) {
      *why = std::string("not a loadable artifact: ") + e.what();
      return "";
    }
    std::string lacking;  // each worker and what it lacks, for the message
    bool runnable = false;
    for (const auto& w : workers) {
      const std::set<std::string> have(w.features.begin(), w.features.end());
      std::string missing;
      for (const auto& f : needs) {
        if (have.count(f) == 0) missing += (missing.empty() ? "" : ",") + f;
      }
      if (missing.empty()) runnable = true;
      else lacking += (lacking.empty() ? "" : "; ") + w.name + " lacks " + missing;
    }
    if (!runnable) {
      *why = "no live worker has the CPU features the candidate needs (" + lacking +
             "); compile candidates for the workers' CPU";
      return "";
    }
    std::string csv;
    for (const auto& f : needs) csv += (csv.empty() ? "" : ",") + f;
    const std::string wire_id = tuner_ + "#" + std::to_string(++sequence_);
    (*index_of)[wire_id] = index;
    const auto hold_ms = static_cast<int64_t>(hold_seconds(job.options) * 1000);
    redis::Reply r = conn_.checked({"XADD", redis::jobs_key(o_.prefix), "*", "id", wire_id, "reply", reply_, "artifact",
                                    bytes, "options", wire::encode_options(job.options), "features", csv});
    const std::string entry = redis::text(r.get());
    conn_.checked({"HSET", redis::holds_key(o_.prefix), entry, std::to_string(hold_ms)});
    return entry;
  }

  // Reads the reply stream until every job is answered or no result has come for the job timeout.
  void collect(const std::vector<MeasureJob>& jobs, const std::map<std::string, size_t>& index_of,
               double longest_hold, std::vector<MeasureResult>* results, std::vector<bool>* answered) {
    const auto quiet_limit = std::chrono::duration<double>(job_timeout(longest_hold));
    auto last_progress = Clock::now();
    auto left = [&] { return std::count(answered->begin(), answered->end(), false); };
    while (left() > 0 && Clock::now() - last_progress < quiet_limit) {
      redis::Reply r = conn_.checked({"XREAD", "COUNT", "64", "BLOCK", "500", "STREAMS", reply_, last_id_});
      if (r->type != REDIS_REPLY_ARRAY || r->elements == 0) continue;
      const redisReply* entries = r->element[0]->element[1];
      for (size_t e = 0; e < entries->elements; ++e) {
        last_id_ = redis::text(entries->element[e]->element[0]);
        const auto f = redis::fields(entries->element[e]->element[1]);
        const auto id = f.find("id");
        if (id == f.end()) continue;
        const auto it = index_of.find(id->second);
        if (it == index_of.end() || (*answered)[it->second]) continue;  // an earlier batch, or a duplicate
        MeasureResult m;
        try {
          m = wire::decode_result(f.count("result") ? f.at("result") : "");
        } catch (const std::exception& ex) {
          m = failed("", std::string("garbled result from worker ") + (f.count("worker") ? f.at("worker") : "?") +
                             ": " + ex.what());
        }
        m.id = jobs[it->second].id;
        (*results)[it->second] = std::move(m);
        (*answered)[it->second] = true;
        last_progress = Clock::now();
      }
    }
  }

  RedisOptions o_;
  mutable redis::Connection conn_;  // describe() asks the broker too
  std::string tuner_;
  std::string reply_;
  std::string last_id_ = "0-0";
  uint64_t sequence_ = 0;
};

}  // namespace

std::unique_ptr<Measurer> make_redis_measurer(const RedisOptions& options) {
  return std::make_unique<RedisMeasurer>(options);
}

}  // namespace kiln::tune
