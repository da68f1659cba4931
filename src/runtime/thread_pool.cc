// The runtime's thread pool behind kiln_parallel_for(): persistent workers that each take one
// contiguous chunk of [0, n); the calling thread runs chunk 0 itself. One parallel loop runs at a
// time per pool (callers are serialized); a nested call runs serially.
#include <algorithm>
#include <atomic>
#include <condition_variable>
#include <cstdlib>
#include <mutex>
#include <string>
#include <thread>
#include <vector>

#include "kiln/runtime/c_api.h"
#include "last_error.h"

namespace kiln::runtime {
namespace {

thread_local bool t_inside_parallel = false;

int32_t default_thread_count() {
  if (const char* env = std::getenv("KILN_NUM_THREADS")) {
    char* end = nullptr;
    long v = std::strtol(env, &end, 10);
    if (end != env && *end == '\0' && v > 0 && v <= 1024) return static_cast<int32_t>(v);
  }
  unsigned hc = std::thread::hardware_concurrency();
  return hc == 0 ? 1 : static_cast<int32_t>(hc);
}

class ThreadPool {
 public:
  static ThreadPool& global() {
    static ThreadPool pool;
    return pool;
  }

  ~ThreadPool() { stop_workers(); }

  void set_num_threads(int32_t n) {
    std::lock_guard<std::mutex> run_lock(run_mutex_);
    stop_workers();
    num_threads_ = n;
  }

  int32_t num_threads() const { return num_threads_; }

  int run(kiln_parallel_body body, void* closure, int64_t n) {
    if (n <= 0) return 0;
    if (t_inside_parallel || num_threads_ <= 1 || n == 1) return run_serial(body, closure, n);
    std::lock_guard<std::mutex> run_lock(run_mutex_);
    ensure_workers();
    const int64_t chunks = std::min<int64_t>(n, num_threads_);
    {
      std::lock_guard<std::mutex> lock(mutex_);
      body_ = body;
      closure_ = closure;
      n_ = n;
      chunks_ = chunks;
      pending_ = static_cast<int>(chunks - 1);
      failed_ = false;
      first_error_.clear();
      ++generation_;
    }
    work_cv_.notify_all();
    run_chunk(0);
    std::unique_lock<std::mutex> lock(mutex_);
    done_cv_.wait(lock, [&] { return pending_ == 0; });
    if (failed_) {
      set_last_error(first_error_);
      return -1;
    }
    return 0;
  }

 private:
  ThreadPool() : num_threads_(default_thread_count()) {}

  static int run_serial(kiln_parallel_body body, void* closure, int64_t n) {
    const bool outer = t_inside_parallel;
    t_inside_parallel = true;
    int32_t rc = body(0, n, closure);
    t_inside_parallel = outer;
    return rc == 0 ? 0 : -1;
  }

  // Runs chunk `c` of the current loop; records the first failure.
  void run_chunk(int64_t c) {
    const int64_t begin = n_ * c / chunks_;
    const int64_t end = n_ * (c + 1) / chunks_;
    t_inside_parallel = true;
    int32_t rc = 0;
    try {
      rc = body_(begin, end, closure_);
    } catch (...) {
      rc = -1;
      kiln_set_last_error("parallel body threw a C++ exception");
    }
    t_inside_parallel = false;
    if (rc != 0) {
      std::lock_guard<std::mutex> lock(mutex_);
      if (!failed_) {
        failed_ = true;
        first_error_ = kiln_get_last_error();
        if (first_error_.empty()) first_error_ = "parallel body returned " + std::to_string(rc);
      }
    }
  }

  void worker_loop(int worker_index) {
    uint64_t seen = 0;
    for (;;) {
      std::unique_lock<std::mutex> lock(mutex_);
      work_cv_.wait(lock, [&] { return stopping_ || generation_ != seen; });
      if (stopping_) return;
      seen = generation_;
      const int64_t chunk = worker_index + 1;
      if (chunk >= chunks_) continue;
      lock.unlock();
      run_chunk(chunk);
      lock.lock();
      if (--pending_ == 0) done_cv_.notify_one();
    }
  }

  void ensure_workers() {
    if (static_cast<int32_t>(workers_.size()) == num_threads_ - 1) return;
    stop_workers();
    stopping_ = false;
    for (int i = 0; i < num_threads_ - 1; ++i) workers_.emplace_back(&ThreadPool::worker_loop, this, i);
  }

  void stop_workers() {
    {
      std::lock_guard<std::mutex> lock(mutex_);
      stopping_ = true;
    }
    work_cv_.notify_all();
    for (auto& w : workers_) w.join();
    workers_.clear();
  }

  std::mutex run_mutex_;  // serializes whole parallel loops and resizes
  std::mutex mutex_;      // guards the fields below
  std::condition_variable work_cv_;
  std::condition_variable done_cv_;
  std::vector<std::thread> workers_;
  std::atomic<int32_t> num_threads_;
  bool stopping_ = false;
  uint64_t generation_ = 0;
  kiln_parallel_body body_ = nullptr;
  void* closure_ = nullptr;
  int64_t n_ = 0;
  int64_t chunks_ = 1;
  int pending_ = 0;
  bool failed_ = false;
  std::string first_error_;
};

}  // namespace
}  // namespace kiln::runtime

extern "C" int kiln_parallel_for(kiln_parallel_body body, void* closure, int64_t n) {
  return kiln::runtime::guarded_call("kiln_parallel_for", [&] {
    if (body == nullptr) throw std::invalid_argument("body is NULL");
    return kiln::runtime::ThreadPool::global().run(body, closure, n);
  });
}

extern "C" int kiln_set_num_threads(int32_t num_threads) {
  return kiln::runtime::guarded_call("kiln_set_num_threads", [&] {
    if (num_threads < 0 || num_threads > 1024) {
      throw std::invalid_argument("num_threads=" + std::to_string(num_threads) +
                                  " is out of range (0 for one per core, or 1..1024)");
    }
    int32_t n = num_threads;
    if (n == 0) {
      unsigned hc = std::thread::hardware_concurrency();
      n = hc == 0 ? 1 : static_cast<int32_t>(hc);
    }
    kiln::runtime::ThreadPool::global().set_num_threads(n);
    return 0;
  });
}

extern "C" int32_t kiln_get_num_threads(void) {
  return kiln::runtime::ThreadPool::global().num_threads();
}
