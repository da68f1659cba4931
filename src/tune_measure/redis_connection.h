// A small RAII client for one Redis connection (hiredis, blocking), shared by the tuner side
// (redis_measurer.cc) and the worker (tune_worker.cc). Commands are argument vectors sent with
// redisCommandArgv and explicit lengths, so every argument (an artifact's bytes included) is
// binary-safe, like hiredis' %b. Also the key names and fields of the protocol (docs/tuning.md,
// "Tuning on many devices (Redis)").
#ifndef KILN_SRC_TUNE_MEASURE_REDIS_CONNECTION_H_
#define KILN_SRC_TUNE_MEASURE_REDIS_CONNECTION_H_

#include <hiredis/hiredis.h>

#include <map>
#include <memory>
#include <stdexcept>
#include <string>
#include <vector>

namespace kiln::tune::redis {

// The broker cannot be reached or the connection broke ("127.0.0.1:6390: Connection refused").
class ConnectionError : public std::runtime_error {
 public:
  using std::runtime_error::runtime_error;
};

struct ReplyDeleter {
  void operator()(redisReply* r) const {
    if (r != nullptr) freeReplyObject(r);
  }
};
using Reply = std::unique_ptr<redisReply, ReplyDeleter>;

class Connection {
 public:
  // Connects (TCP) within timeout_seconds; throws ConnectionError naming host:port.
  Connection(const std::string& host, int port, double timeout_seconds);
  Connection(Connection&&) noexcept;
  Connection& operator=(Connection&&) noexcept;
  ~Connection();

  // Sends one command and returns its reply (an error reply is returned, not thrown);
  // throws ConnectionError when the connection fails.
  Reply command(const std::vector<std::string>& args);
  // The same, but an error reply throws ConnectionError with Redis' message.
  Reply checked(const std::vector<std::string>& args);
  std::string address() const { return address_; }

 private:
  redisContext* context_ = nullptr;
  std::string address_;
};

// A reply element's string (bulk, status or error), "" for nil; integers as decimal text.
std::string text(const redisReply* r);
// A stream entry's field list [f1, v1, f2, v2, ...] as a map ({} for nil).
std::map<std::string, std::string> fields(const redisReply* r);

// ---- The protocol ------------------------------------------------------------------------
inline std::string jobs_key(const std::string& prefix) { return prefix + ":jobs"; }
inline std::string workers_key(const std::string& prefix) { return prefix + ":workers"; }
// Hash: job entry id -> hold_ms, the time a worker may hold that job before it counts as dead. Kept
// out of the job entry so a worker checking pending jobs never re-reads their artifact bytes.
inline std::string holds_key(const std::string& prefix) { return prefix + ":holds"; }
// The hold time of a job whose holds entry is missing (its tuner died between XADD and HSET).
inline constexpr int64_t kDefaultHoldMs = 600000;
inline std::string results_key(const std::string& prefix, const std::string& tuner) {
  return prefix + ":results:" + tuner;
}
inline constexpr const char* kGroup = "kiln-tune-workers";
// A job delivered more often than this (its workers died holding it) is answered as failed.
inline constexpr int kMaxDeliveries = 3;
// Workers refresh their registration this often; one silent for kAliveSeconds is not counted.
inline constexpr double kHeartbeatSeconds = 1;
inline constexpr double kAliveSeconds = 10;
// Reply streams expire a day after their last result (a tuner that died leaves no garbage).
inline constexpr int kReplyExpirySeconds = 86400;

// A worker's entry in <prefix>:workers: "heartbeat_ms=...;pid=...;host=...;features=a,b,c".
struct WorkerInfo {
  std::string name;
  int64_t heartbeat_ms = 0;  // unix time in ms
  std::string host;
  int64_t pid = 0;
  std::vector<std::string> features;
};
std::string encode_worker(const WorkerInfo& w);
WorkerInfo decode_worker(const std::string& name, const std::string& value);
std::vector<std::string> split_features(const std::string& csv);  // "a,b" -> {a, b}; "" -> {}
int64_t unix_ms();

}  // namespace kiln::tune::redis

#endif  // KILN_SRC_TUNE_MEASURE_REDIS_CONNECTION_H_
