// Measurement on many devices through Redis (kiln/tune/redis_measurer.h, kiln-tune-worker): a real
// redis-server on a free loopback port (no persistence, in a temp dir) and real kiln-tune-worker
// processes on this machine. Skipped, saying why, when redis-server is not installed.
//   - 3 workers answer 20 jobs, in order, with the same outputs as a local measurement;
//   - a worker killed (SIGKILL) while it holds a job: the job is re-delivered and answered;
//   - a job delivered more than 3 times is answered as failed;
//   - a worker lacking a CPU feature answers failed, and the tuner sends nothing no worker can run;
//   - a broker that is down, or no live worker: UserError with the fix.
#include <arpa/inet.h>
#include <gtest/gtest.h>
#include <netinet/in.h>
#include <signal.h>
#include <sys/socket.h>
#include <sys/wait.h>
#include <unistd.h>

#include <algorithm>
#include <chrono>
#include <filesystem>
#include <fstream>
#include <sstream>
#include <thread>

#include "kiln/runtime/c_api.h"
#include "kiln/support/error.h"
#include "kiln/tune/redis_measurer.h"
#include "measure_test_util.h"
#include "tune_measure/measure_wire.h"
#include "tune_measure/redis_connection.h"

namespace kiln::tune {
namespace {

using namespace std::chrono_literals;

int free_port() {
  const int s = ::socket(AF_INET, SOCK_STREAM, 0);
  sockaddr_in a{};
  a.sin_family = AF_INET;
  a.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
  ::bind(s, reinterpret_cast<sockaddr*>(&a), sizeof a);
  socklen_t len = sizeof a;
  ::getsockname(s, reinterpret_cast<sockaddr*>(&a), &len);
  ::close(s);
  return ntohs(a.sin_port);
}

std::string redis_server_path() {
  for (const char* p : {"/usr/bin/redis-server", "/usr/local/bin/redis-server"}) {
    if (::access(p, X_OK) == 0) return p;
  }
  return "";
}

// fork + exec with extra environment variables, stdout/stderr to `log`, in its own process group.
pid_t spawn(const std::vector<std::string>& argv, const std::vector<std::string>& env, const std::string& log) {
  const pid_t pid = ::fork();
  if (pid == 0) {
    ::setpgid(0, 0);
    for (const auto& e : env) ::putenv(const_cast<char*>(e.c_str()));
    std::FILE* f = std::fopen(log.c_str(), "w");
    if (f != nullptr) {
      ::dup2(::fileno(f), 1);
      ::dup2(::fileno(f), 2);
    }
    std::vector<char*> args;
    for (const auto& a : argv) args.push_back(const_cast<char*>(a.c_str()));
    args.push_back(nullptr);
    ::execv(args[0], args.data());
    ::_exit(127);
  }
  return pid;
}

void kill_and_reap(pid_t pid, int sig) {
  if (pid <= 0) return;
  ::kill(-pid, sig);
  ::kill(pid, sig);
  int status;
  ::waitpid(pid, &status, 0);
}

std::string read_file(const std::string& path) {
  std::ifstream in(path);
  std::stringstream s;
  s << in.rdbuf();
  return s.str();
}

class RedisMeasure : public ::testing::Test {
 protected:
  void SetUp() override {
    if (redis_server_path().empty()) {
      GTEST_SKIP() << "redis-server is not installed (scripts/install-deps.sh installs Debian's redis-server)";
    }
    port_ = free_port();
    const std::string dir = testing::test_path("redis-" + std::to_string(port_));
    std::filesystem::create_directories(dir);
    redis_ = spawn({redis_server_path(), "--port", std::to_string(port_), "--bind", "127.0.0.1", "--save", "",
                    "--appendonly", "no", "--dir", dir},
                   {}, dir + "/redis.log");
    for (int i = 0; i < 100; ++i) {  // up to 5 s for the server to listen
      try {
        redis::Connection c("127.0.0.1", port_, 1);
        return;
      } catch (const redis::ConnectionError&) {
        std::this_thread::sleep_for(50ms);
      }
    }
    FAIL() << "redis-server did not start: " << read_file(dir + "/redis.log");
  }

  void TearDown() override {
    for (pid_t w : workers_) kill_and_reap(w, SIGKILL);
    kill_and_reap(redis_, SIGKILL);
  }

  RedisOptions options() const {
    RedisOptions o;
    o.port = port_;
    o.prefix = "test";
    o.wait_for_workers_seconds = 10;
    return o;
  }

  pid_t start_worker(const std::string& name, std::vector<std::string> env = {}) {
    env.push_back("TMPDIR=" + testing::test_dir());  // a killed worker's candidate file goes with the test dir
    const pid_t pid = spawn({KILN_TUNE_WORKER_PATH, "--redis", "127.0.0.1:" + std::to_string(port_), "--prefix", "test",
                             "--name", name},
                            env, log_of(name));
    workers_.push_back(pid);
    return pid;
  }

  std::string log_of(const std::string& name) const {
    return testing::test_path("worker-" + std::to_string(port_) + "-" + name + ".log");
  }

  // Waits until `n` workers are registered and alive.
  void wait_for_workers(Measurer& m, int n) {
    const std::string want = std::to_string(n) + (n == 1 ? " worker" : " workers");
    for (int i = 0; i < 200 && m.describe().find(want) == std::string::npos; ++i) std::this_thread::sleep_for(50ms);
    ASSERT_NE(m.describe().find(want), std::string::npos) << m.describe();
  }

  static MeasureOptions quick() {
    MeasureOptions o;
    o.repeats = 3;
    o.min_seconds = 0;
    o.timeout_seconds = 10;
    return o;
  }

  int port_ = 0;
  pid_t redis_ = -1;
  std::vector<pid_t> workers_;
};

TEST_F(RedisMeasure, ThreeWorkersAnswerTwentyJobsInOrder) {
  auto m = make_redis_measurer(options());
  for (const char* n : {"w1", "w2", "w3"}) start_worker(n);
  wait_for_workers(*m, 3);
  EXPECT_NE(m->describe().find("redis 127.0.0.1:" + std::to_string(port_) + " prefix test"), std::string::npos);
  std::vector<MeasureJob> jobs;
  MeasureOptions o = quick();
  o.return_outputs = true;
  for (int i = 0; i < 20; ++i) jobs.push_back({"job" + std::to_string(i), testing::tiny_artifact(), o});
  const std::vector<MeasureResult> r = m->measure(jobs);
  ASSERT_EQ(r.size(), 20u);
  const MeasureResult local = measure_artifact(testing::tiny_artifact(), o);
  ASSERT_TRUE(local.ok) << local.error;
  for (int i = 0; i < 20; ++i) {
    EXPECT_EQ(r[i].id, "job" + std::to_string(i));
    ASSERT_TRUE(r[i].ok) << r[i].error;
    EXPECT_GT(r[i].seconds, 0);
    EXPECT_GE(r[i].runs.size(), 3u);
    EXPECT_EQ(r[i].outputs, local.outputs);  // same seed, same machine: bit-identical
  }
  // A second batch on the same measurer (its reply stream is reused).
  const std::vector<MeasureResult> again = m->measure({jobs[0], jobs[1]});
  ASSERT_EQ(again.size(), 2u);
  EXPECT_TRUE(again[0].ok && again[1].ok) << again[0].error << again[1].error;
  EXPECT_EQ(again[1].id, "job1");
}

TEST_F(RedisMeasure, KilledWorkersJobIsRedeliveredAndAnswered) {
  RedisOptions ro = options();
  ro.reclaim_margin_seconds = 1;
  auto m = make_redis_measurer(ro);
  // The victim's measuring children hang (test hook): it holds its first job until killed.
  const pid_t victim = start_worker("victim", {"KILN_TUNE_MEASURE_TEST_FAULT=hang"});
  wait_for_workers(*m, 1);
  std::vector<MeasureJob> jobs;
  MeasureOptions o = quick();
  o.timeout_seconds = 3;  // hold time 4 s: re-delivered ~4 s after the victim took it
  for (int i = 0; i < 6; ++i) jobs.push_back({"j" + std::to_string(i), testing::tiny_artifact(), o});
  std::vector<MeasureResult> r;
  std::thread tuner([&] { r = m->measure(jobs); });
  redis::Connection c("127.0.0.1", port_, 1);
  bool held = false;
  for (int i = 0; i < 100 && !held; ++i) {
    std::this_thread::sleep_for(20ms);
    redis::Reply p = c.command({"XPENDING", "test:jobs", redis::kGroup, "-", "+", "10", "victim"});
    held = p->type == REDIS_REPLY_ARRAY && p->elements > 0;
  }
  ASSERT_TRUE(held) << "the victim never took a job";
  kill_and_reap(victim, SIGKILL);  // its measuring child dies with it (PR_SET_PDEATHSIG)
  workers_.erase(std::find(workers_.begin(), workers_.end(), victim));
  start_worker("a");
  start_worker("b");
  tuner.join();
  ASSERT_EQ(r.size(), 6u);
  for (int i = 0; i < 6; ++i) {
    EXPECT_EQ(r[i].id, "j" + std::to_string(i));
    EXPECT_TRUE(r[i].ok) << r[i].id << ": " << r[i].error;
  }
  const std::string logs = read_file(log_of("a")) + read_file(log_of("b"));
  EXPECT_NE(logs.find("re-delivered job"), std::string::npos) << logs;
}

TEST_F(RedisMeasure, JobDeliveredTooOftenIsAnsweredFailed) {
  redis::Connection c("127.0.0.1", port_, 1);
  c.checked({"XGROUP", "CREATE", "test:jobs", redis::kGroup, "0", "MKSTREAM"});
  redis::Reply added = c.checked({"XADD", "test:jobs", "*", "id", "doomed", "reply", "test:results:t", "artifact", "x",
                                  "options", "", "features", ""});
  c.checked({"HSET", "test:holds", redis::text(added.get()), "0"});
  // Four deliveries to workers that "died": a read and three claims by consumers that never answer.
  c.checked({"XREADGROUP", "GROUP", redis::kGroup, "ghost1", "COUNT", "1", "STREAMS", "test:jobs", ">"});
  redis::Reply p = c.checked({"XPENDING", "test:jobs", redis::kGroup, "-", "+", "1"});
  const std::string entry = redis::text(p->element[0]->element[0]);
  for (const char* ghost : {"ghost2", "ghost3", "ghost4"}) c.checked({"XCLAIM", "test:jobs", redis::kGroup, ghost, "0", entry});
  start_worker("w");
  redis::Reply r;
  for (int i = 0; i < 100; ++i) {
    r = c.checked({"XREAD", "BLOCK", "100", "STREAMS", "test:results:t", "0-0"});
    if (r->type == REDIS_REPLY_ARRAY && r->elements > 0) break;
  }
  ASSERT_TRUE(r->type == REDIS_REPLY_ARRAY && r->elements > 0) << "no answer: " << read_file(log_of("w"));
  const auto f = redis::fields(r->element[0]->element[1]->element[0]->element[1]);
  EXPECT_EQ(f.at("id"), "doomed");
  EXPECT_EQ(f.at("ok"), "0");
  EXPECT_NE(f.at("error").find("delivered 5 times"), std::string::npos) << f.at("error");
}

TEST_F(RedisMeasure, WorkerLackingACpuFeatureAnswersFailed) {
  // The runtime hides features listed in KILN_RUNTIME_HIDE_CPU_FEATURES (docs/runtime.md).
  start_worker("old", {"KILN_RUNTIME_HIDE_CPU_FEATURES=avx2"});
  auto m = make_redis_measurer(options());
  wait_for_workers(*m, 1);
  // A job requiring avx2 sent by hand reaches the worker: it answers failed, never runs it.
  redis::Connection c("127.0.0.1", port_, 1);
  std::ifstream in(testing::tiny_artifact(), std::ios::binary);
  const std::string bytes((std::istreambuf_iterator<char>(in)), std::istreambuf_iterator<char>());
  c.checked({"XADD", "test:jobs", "*", "id", "needs-avx2", "reply", "test:results:t", "artifact", bytes, "options",
             wire::encode_options(quick()), "features", "avx2"});
  redis::Reply r;
  for (int i = 0; i < 100; ++i) {
    r = c.checked({"XREAD", "BLOCK", "100", "STREAMS", "test:results:t", "0-0"});
    if (r->type == REDIS_REPLY_ARRAY && r->elements > 0) break;
  }
  ASSERT_TRUE(r->type == REDIS_REPLY_ARRAY && r->elements > 0) << read_file(log_of("old"));
  const auto f = redis::fields(r->element[0]->element[1]->element[0]->element[1]);
  EXPECT_EQ(f.at("error"), "worker old lacks CPU features the candidate needs: avx2");
  // The tuner does not send a candidate that needs a feature no live worker has.
  char* features = nullptr;
  ASSERT_EQ(kiln_runtime_cpu_features(&features), 0);
  const bool needs_avx2 = std::string(features).find("avx2") != std::string::npos;
  kiln_free_text(features);
  if (needs_avx2) {
    const std::vector<MeasureResult> res = m->measure({{"t", testing::tiny_artifact(), quick()}});
    ASSERT_EQ(res.size(), 1u);
    EXPECT_FALSE(res[0].ok);
    EXPECT_NE(res[0].error.find("no live worker has the CPU features"), std::string::npos) << res[0].error;
    EXPECT_NE(res[0].error.find("old lacks avx2"), std::string::npos) << res[0].error;
  }
}

TEST_F(RedisMeasure, BadArtifactComesBackFailedFromTheTunerSide) {
  start_worker("w");
  auto m = make_redis_measurer(options());
  wait_for_workers(*m, 1);
  std::ofstream(testing::test_path("bad.so")) << "not an artifact";
  const std::vector<MeasureResult> r =
      m->measure({{"bad", testing::test_path("bad.so"), quick()}, {"good", testing::tiny_artifact(), quick()}});
  ASSERT_EQ(r.size(), 2u);
  EXPECT_FALSE(r[0].ok);
  EXPECT_NE(r[0].error.find("not a loadable artifact"), std::string::npos) << r[0].error;
  EXPECT_TRUE(r[1].ok) << r[1].error;
}

TEST_F(RedisMeasure, NoLiveWorkerIsAUserError) {
  RedisOptions o = options();
  o.wait_for_workers_seconds = 0.3;
  auto m = make_redis_measurer(o);
  EXPECT_EQ(m->describe(), "redis 127.0.0.1:" + std::to_string(port_) + " prefix test, 0 workers");
  try {
    m->measure({{"x", testing::tiny_artifact(), quick()}});
    FAIL() << "expected a UserError";
  } catch (const UserError& e) {
    EXPECT_NE(e.reason().find("no kiln-tune-worker is alive"), std::string::npos) << e.what();
    EXPECT_NE(e.hint().find("kiln-tune-worker --redis 127.0.0.1:"), std::string::npos) << e.hint();
  }
}

TEST(RedisBroker, DownIsAUserErrorNamingItAndTheFix) {
  RedisOptions o;
  o.port = free_port();  // nothing listens there
  try {
    make_redis_measurer(o);
    FAIL() << "expected a UserError";
  } catch (const UserError& e) {
    EXPECT_EQ(e.subject(), "Redis broker 127.0.0.1:" + std::to_string(o.port));
    EXPECT_NE(e.hint().find("start redis-server"), std::string::npos) << e.hint();
    EXPECT_NE(e.hint().find("tune locally without --redis"), std::string::npos) << e.hint();
  }
}

TEST(TuneWorkerCli, BadArgumentsAndBrokerDown) {
  const std::string w = KILN_TUNE_WORKER_PATH;
  EXPECT_EQ(WEXITSTATUS(std::system((w + " --bogus > /dev/null 2>&1").c_str())), 2);
  EXPECT_EQ(WEXITSTATUS(std::system((w + " --redis nohost > /dev/null 2>&1").c_str())), 2);
  EXPECT_EQ(WEXITSTATUS(std::system((w + " --redis 127.0.0.1:" + std::to_string(free_port()) + " > /dev/null 2>&1").c_str())), 1);
  // `kiln tune-worker` is the same worker.
  EXPECT_EQ(WEXITSTATUS(std::system((std::string(KILN_CLI_PATH) + " tune-worker --bogus > /dev/null 2>&1").c_str())), 2);
}

}  // namespace
}  // namespace kiln::tune
