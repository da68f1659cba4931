// The Redis client and the protocol's small encodings (redis_connection.h).
#include "redis_connection.h"

#include <chrono>
#include <cmath>
#include <sstream>

namespace kiln::tune::redis {
namespace {

timeval to_timeval(double seconds) {
  timeval tv;
  tv.tv_sec = static_cast<time_t>(seconds);
  tv.tv_usec = static_cast<suseconds_t>((seconds - std::floor(seconds)) * 1e6);
  return tv;
}

}  // namespace

Connection::Connection(const std::string& host, int port, double timeout_seconds)
    : address_(host + ":" + std::to_string(port)) {
  context_ = redisConnectWithTimeout(host.c_str(), port, to_timeval(timeout_seconds));
  if (context_ == nullptr) throw ConnectionError(address_ + ": cannot allocate a connection");
  if (context_->err != 0) {
    const std::string why = context_->errstr;
    redisFree(context_);
    context_ = nullptr;
    throw ConnectionError(address_ + ": " + why);
  }
  // Commands block at most ~1 s on the server (XREAD/XREADGROUP BLOCK); a reply slower than this
  // means the broker is gone.
  redisSetTimeout(context_, to_timeval(30));
}

Connection::Connection(Connection&& o) noexcept : context_(o.context_), address_(std::move(o.address_)) {
  o.context_ = nullptr;
}

Connection& Connection::operator=(Connection&& o) noexcept {
  if (this != &o) {
    if (context_ != nullptr) redisFree(context_);
    context_ = o.context_;
    address_ = std::move(o.address_);
    o.context_ = nullptr;
  }
  return *this;
}

Connection::~Connection() {
  if (context_ != nullptr) redisFree(context_);
}

Reply Connection::command(const std::vector<std::string>& args) {
  if (context_ == nullptr) throw ConnectionError(address_ + ": not connected");
  std::vector<const char*> argv;
  std::vector<size_t> lens;
  for (const auto& a : args) {
    argv.push_back(a.data());
    lens.push_back(a.size());
  }
  auto* r = static_cast<redisReply*>(redisCommandArgv(context_, static_cast<int>(args.size()), argv.data(), lens.data()));
  if (r == nullptr) {
    throw ConnectionError(address_ + ": " + (context_->errstr[0] != '\0' ? context_->errstr : "connection lost"));
  }
  return Reply(r);
}

Reply Connection::checked(const std::vector<std::string>& args) {
  Reply r = command(args);
  if (r->type == REDIS_REPLY_ERROR) {
    throw ConnectionError(address_ + ": " + args.front() + " failed: " + std::string(r->str, r->len));
  }
  return r;
}

std::string text(const redisReply* r) {
  if (r == nullptr) return "";
  switch (r->type) {
    case REDIS_REPLY_STRING:
    case REDIS_REPLY_STATUS:
    case REDIS_REPLY_ERROR: return std::string(r->str, r->len);
    case REDIS_REPLY_INTEGER: return std::to_string(r->integer);
    default: return "";
  }
}

std::map<std::string, std::string> fields(const redisReply* r) {
  std::map<std::string, std::string> m;
  if (r == nullptr || r->type != REDIS_REPLY_ARRAY) return m;
  for (size_t i = 0; i + 1 < r->elements; i += 2) m[text(r->element[i])] = text(r->element[i + 1]);
  return m;
}

std::string encode_worker(const WorkerInfo& w) {
  std::string features;
  for (const auto& f : w.features) features += (features.empty() ? "" : ",") + f;
  return "heartbeat_ms=" + std::to_string(w.heartbeat_ms) + ";pid=" + std::to_string(w.pid) + ";host=" + w.host +
         ";features=" + features;
}

WorkerInfo decode_worker(const std::string& name, const std::string& value) {
  WorkerInfo w;
  w.name = name;
  std::istringstream s(value);
  std::string item;
  while (std::getline(s, item, ';')) {
    const size_t eq = item.find('=');
    if (eq == std::string::npos) continue;
    const std::string key = item.substr(0, eq), v = item.substr(eq + 1);
    if (key == "heartbeat_ms") w.heartbeat_ms = std::atoll(v.c_str());
    else if (key == "pid") w.pid = std::atoll(v.c_str());
    else if (key == "host") w.host = v;
    else if (key == "features") w.features = split_features(v);
  }
  return w;
}

std::vector<std::string> split_features(const std::string& csv) {
  std::vector<std::string> out;
  std::istringstream s(csv);
  std::string f;
  while (std::getline(s, f, ',')) {
    while (!f.empty() && f.front() == ' ') f.erase(f.begin());
    while (!f.empty() && f.back() == ' ') f.pop_back();
    if (!f.empty()) out.push_back(f);
  }
  return out;
}

int64_t unix_ms() {
  return std::chrono::duration_cast<std::chrono::milliseconds>(std::chrono::system_clock::now().time_since_epoch())
      .count();
}

}  // namespace kiln::tune::redis
