// The measurement worker (kiln/tune/tune_worker.h). One thread takes and measures jobs; a second
// one, with its own connection, refreshes the worker's registration every kHeartbeatSeconds so
// a tuner can count live workers even while one measures a slow candidate.
#include "kiln/tune/tune_worker.h"

#include <signal.h>
#include <stdlib.h>
#include <unistd.h>

#include <atomic>
#include <chrono>
#include <cstring>
#include <fstream>
#include <iostream>
#include <set>
#include <thread>

#include "kiln/runtime/c_api.h"
#include "kiln/tune/measure.h"
#include "measure_wire.h"
#include "redis_connection.h"

namespace kiln::tune {
namespace {

std::atomic<bool> g_stop{false};

void on_stop_signal(int) { g_stop.store(true); }

std::string host_name() {
  char buf[256] = {0};
  if (::gethostname(buf, sizeof buf - 1) != 0) return "host";
  return buf;
}

std::vector<std::string> this_cpu_features() {
  char* text = nullptr;
  if (kiln_runtime_cpu_features(&text) != 0) return {};
  std::vector<std::string> f = redis::split_features(text);
  kiln_free_text(text);
  return f;
}

class Worker {
 public:
  explicit Worker(const WorkerOptions& o)
      : o_(o),
        conn_(o.host, o.port, 5),
        jobs_(redis::jobs_key(o.prefix)),
        holds_(redis::holds_key(o.prefix)),
        features_(this_cpu_features()) {
    info_.name = o.name.empty() ? host_name() + "-" + std::to_string(::getpid()) : o.name;
    info_.host = host_name();
    info_.pid = ::getpid();
    info_.features = features_;
  }

  int run() {
    redis::Reply g = conn_.command({"XGROUP", "CREATE", jobs_, redis::kGroup, "0", "MKSTREAM"});
    if (g->type == REDIS_REPLY_ERROR && redis::text(g.get()).rfind("BUSYGROUP", 0) != 0) {
      throw redis::ConnectionError(conn_.address() + ": XGROUP CREATE failed: " + redis::text(g.get()));
    }
    register_now(conn_);
    std::thread heartbeat([this] { heartbeat_loop(); });
    std::cerr << "kiln-tune-worker " << info_.name << ": waiting for jobs on " << conn_.address() << " "
              << jobs_ << "\n";
    int done = 0;
    try {
      while (!g_stop.load() && !(o_.once && done > 0)) done += take_one_job() ? 1 : 0;
    } catch (...) {
      stop_heartbeat_ = true;
      heartbeat.join();
      throw;
    }
    stop_heartbeat_ = true;
    heartbeat.join();
    conn_.command({"HDEL", redis::workers_key(o_.prefix), info_.name});
    std::cerr << "kiln-tune-worker " << info_.name << ": stopped after " << done << " job(s)\n";
    return 0;
  }

 private:
  void register_now(redis::Connection& c) {
    redis::WorkerInfo w = info_;
    w.heartbeat_ms = redis::unix_ms();
    c.checked({"HSET", redis::workers_key(o_.prefix), info_.name, redis::encode_worker(w)});
  }

  void heartbeat_loop() {
    try {
      redis::Connection c(o_.host, o_.port, 5);
      while (!stop_heartbeat_.load()) {
        register_now(c);
        for (int i = 0; i < 10 && !stop_heartbeat_.load(); ++i) {
          std::this_thread::sleep_for(std::chrono::duration<double>(redis::kHeartbeatSeconds / 10));
        }
      }
    } catch (const std::exception& e) {
      std::cerr << "kiln-tune-worker " << info_.name << ": heartbeat stopped: " << e.what() << "\n";
    }
  }

  // Takes one job (a re-delivery first, else a new one, waiting up to 1 s); true when one ran.
  bool take_one_job() {
    if (reclaim_one()) return true;
    redis::Reply r = conn_.checked({"XREADGROUP", "GROUP", redis::kGroup, info_.name, "COUNT", "1", "BLOCK", "1000",
                                    "STREAMS", jobs_, ">"});
    if (r->type != REDIS_REPLY_ARRAY || r->elements == 0) return false;
    const redisReply* entries = r->element[0]->element[1];
    if (entries->elements == 0) return false;
    const redisReply* entry = entries->element[0];
    handle(redis::text(entry->element[0]), redis::fields(entry->element[1]), 1);
    return true;
  }

  // A job held by a worker that died: pending longer than its hold time (the job's measurement
  // timeout plus a margin, set by the tuner in <prefix>:holds). XCLAIM with that minimum idle time
  // is atomic, so of several workers that try, one gets it.
  bool reclaim_one() {
    redis::Reply p = conn_.checked({"XPENDING", jobs_, redis::kGroup, "IDLE", "1000", "-", "+", "128"});
    if (p->elements == 0) return false;
    std::vector<std::string> hmget = {"HMGET", holds_};
    for (size_t i = 0; i < p->elements; ++i) hmget.push_back(redis::text(p->element[i]->element[0]));
    redis::Reply holds = conn_.checked(hmget);
    for (size_t i = 0; i < p->elements; ++i) {
      const redisReply* e = p->element[i];
      const std::string id = redis::text(e->element[0]);
      const int64_t idle_ms = e->element[2]->integer, deliveries = e->element[3]->integer;
      const std::string hold = redis::text(holds->element[i]);
      const int64_t hold_ms = hold.empty() ? redis::kDefaultHoldMs : std::atoll(hold.c_str());
      if (idle_ms < hold_ms) continue;
      redis::Reply c = conn_.checked({"XCLAIM", jobs_, redis::kGroup, info_.name, std::to_string(hold_ms), id});
      if (c->elements == 0 || c->element[0]->type != REDIS_REPLY_ARRAY) continue;  // another worker won, or deleted
      std::cerr << "kiln-tune-worker " << info_.name << ": re-delivered job " << id << " (held " << idle_ms
                << " ms by " << redis::text(e->element[1]) << ", delivery " << deliveries + 1 << ")\n";
      handle(id, redis::fields(c->element[0]->element[1]), static_cast<int>(deliveries + 1));
      return true;
    }
    return false;
  }

  std::string missing_features(const std::string& csv) const {
    const std::set<std::string> have(features_.begin(), features_.end());
    std::string missing;
    for (const auto& f : redis::split_features(csv)) {
      if (have.count(f) == 0) missing += (missing.empty() ? "" : ",") + f;
    }
    return missing;
  }

  MeasureResult measure_job(const std::map<std::string, std::string>& f, int deliveries) {
    MeasureResult r;
    if (deliveries > redis::kMaxDeliveries) {
      r.error = "delivered " + std::to_string(deliveries) + " times: every worker that took it died before " +
                "answering (the candidate may kill its worker); not measured again";
      return r;
    }
    const std::string missing = missing_features(f.count("features") ? f.at("features") : "");
    if (!missing.empty()) {
      r.error = "worker " + info_.name + " lacks CPU features the candidate needs: " + missing;
      return r;
    }
    MeasureOptions options;
    try {
      options = wire::decode_options(f.count("options") ? f.at("options") : "");
    } catch (const std::exception& e) {
      r.error = e.what();
      return r;
    }
    const char* tmp = std::getenv("TMPDIR");
    std::string path = std::string(tmp != nullptr && *tmp != '\0' ? tmp : "/tmp") + "/kiln-tune-job-XXXXXX.so";
    const int fd = ::mkstemps(path.data(), 3);
    if (fd < 0) {
      r.error = "worker " + info_.name + " cannot create a temp file: " + std::strerror(errno);
      return r;
    }
    const std::string& bytes = f.count("artifact") ? f.at("artifact") : std::string();
    const bool written = ::write(fd, bytes.data(), bytes.size()) == static_cast<ssize_t>(bytes.size());
    ::close(fd);
    if (!written) r.error = "worker " + info_.name + " cannot write the candidate to " + path;
    else r = measure_artifact(path, options);
    ::unlink(path.c_str());
    return r;
  }

  void handle(const std::string& entry_id, const std::map<std::string, std::string>& f, int deliveries) {
    if (f.count("id") == 0 || f.count("reply") == 0) {  // deleted (the tuner gave up) or not a job
      conn_.command({"XACK", jobs_, redis::kGroup, entry_id});
      conn_.command({"HDEL", holds_, entry_id});
      return;
    }
    MeasureResult r = measure_job(f, deliveries);
    r.id = f.at("id");
    const std::string& reply = f.at("reply");
    conn_.checked({"XADD", reply, "*", "id", r.id, "worker", info_.name, "ok", r.ok ? "1" : "0", "error", r.error,
                   "result", wire::encode_result(r)});
    conn_.command({"EXPIRE", reply, std::to_string(redis::kReplyExpirySeconds)});
    conn_.checked({"XACK", jobs_, redis::kGroup, entry_id});
    conn_.command({"XDEL", jobs_, entry_id});  // the artifact's bytes are not kept
    conn_.command({"HDEL", holds_, entry_id});
    std::cerr << "kiln-tune-worker " << info_.name << ": job " << r.id << ": "
              << (r.ok ? std::to_string(r.seconds * 1e3) + " ms" : "failed: " + r.error) << "\n";
  }

  WorkerOptions o_;
  redis::Connection conn_;
  std::string jobs_;
  std::string holds_;
  std::vector<std::string> features_;
  redis::WorkerInfo info_;
  std::atomic<bool> stop_heartbeat_{false};
};

int usage(const std::string& problem) {
  std::cerr << "error: kiln-tune-worker: " << problem << "\n"
            << "usage: kiln-tune-worker --redis HOST:PORT [--prefix P] [--name N] [--once]\n";
  return 2;
}

}  // namespace

int run_tune_worker(const WorkerOptions& options) {
  struct sigaction sa;
  std::memset(&sa, 0, sizeof sa);
  sa.sa_handler = on_stop_signal;
  ::sigaction(SIGINT, &sa, nullptr);
  ::sigaction(SIGTERM, &sa, nullptr);
  ::signal(SIGPIPE, SIG_IGN);
  try {
    Worker w(options);
    return w.run();
  } catch (const redis::ConnectionError& e) {
    std::cerr << "error: kiln-tune-worker: Redis broker " << e.what()
              << "\nhint: start redis-server there (docs/tuning.md), or check --redis HOST:PORT\n";
    return 1;
  }
}

int tune_worker_main(const std::vector<std::string>& args) {
  WorkerOptions o;
  bool have_redis = false;
  for (size_t i = 0; i < args.size(); ++i) {
    const std::string& a = args[i];
    auto value = [&](std::string* out) {
      if (i + 1 >= args.size()) return false;
      *out = args[++i];
      return true;
    };
    std::string v;
    if (a == "--once") {
      o.once = true;
    } else if (a == "--redis") {
      if (!value(&v)) return usage("--redis needs HOST:PORT");
      const size_t colon = v.rfind(':');
      if (colon == std::string::npos || colon == 0) return usage("--redis '" + v + "' is not HOST:PORT");
      o.host = v.substr(0, colon);
      o.port = std::atoi(v.c_str() + colon + 1);
      if (o.port <= 0 || o.port > 65535) return usage("--redis '" + v + "' has no valid port");
      have_redis = true;
    } else if (a == "--prefix") {
      if (!value(&o.prefix) || o.prefix.empty()) return usage("--prefix needs a name");
    } else if (a == "--name") {
      if (!value(&o.name) || o.name.empty()) return usage("--name needs a name");
    } else if (a == "-h" || a == "--help") {
      std::cout << "usage: kiln-tune-worker --redis HOST:PORT [--prefix P] [--name N] [--once]\n"
                << "Measures tuning candidates sent by `kiln tune --redis` (docs/tuning.md).\n";
      return 0;
    } else {
      return usage("unknown argument '" + a + "'");
    }
  }
  if (!have_redis) return usage("--redis HOST:PORT is required");
  return run_tune_worker(o);
}

}  // namespace kiln::tune
