// The runtime's thread pool behind kiln_parallel_for().
//
// Design: N-1 persistent workers plus the calling thread. A parallel loop is published as a "job"
// (body, closure, n, chunk count) under one mutex with a generation number; worker i runs chunk
// i+1, the caller runs chunk 0, and the caller waits until every chunk has finished before it
// returns (so the job, which lives on the caller's stack, outlives every use of it).
//   - Whole loops are serialized by run_mutex_: concurrent callers from different threads each get
//     the whole pool in turn, and every chunk of every loop runs exactly once.
//   - A call from inside a running body (on any pool thread or the caller) runs serially on that
//     thread: the pool is busy with the outer loop, and waiting for it would deadlock.
//   - Changing the thread count stops the workers (between loops) and starts the new number at the
//     next loop. Changing it from inside a body is refused (it would wait for its own loop).
// Waiting is by condition variables only; the low-overhead spin-then-sleep handoff that small
// kernels need comes later (issue 6) and changes nothing in this contract.
#include <algorithm>
#include <atomic>
#include <condition_variable>
#include <cstdio>
#include <cstdlib>
#include <mutex>
#include <stdexcept>
#include <string>
#include <thread>
#include <vector>

#include "kiln/runtime/c_api.h"
#include "last_error.h"

namespace kiln::runtime {
namespace {

constexpr int32_t kMaxThreads = 1024;

thread_local bool t_inside_parallel = false;

// Marks this thread as running a parallel body for the guard's lifetime (exception-safe).
class InsideParallel {
 public:
  InsideParallel() : outer_(t_inside_parallel) { t_inside_parallel = true; }
  ~InsideParallel() { t_inside_parallel = outer_; }
  InsideParallel(const InsideParallel&) = delete;
  InsideParallel& operator=(const InsideParallel&) = delete;

 private:
  bool outer_;
};

int32_t hardware_threads() {
  const unsigned hc = std::thread::hardware_concurrency();
  return hc == 0 ? 1 : static_cast<int32_t>(std::min<unsigned>(hc, kMaxThreads));
}

// The initial thread count: KILN_NUM_THREADS when it is a valid count, else one per core. A value
// that is set but invalid is reported on stderr (once), never silently ignored.
int32_t initial_thread_count() {
  const char* env = std::getenv("KILN_NUM_THREADS");
  if (env == nullptr || *env == '\0') return hardware_threads();
  char* end = nullptr;
  const long v = std::strtol(env, &end, 10);
  if (end != env && *end == '\0' && v >= 0 && v <= kMaxThreads) {
    return v == 0 ? hardware_threads() : static_cast<int32_t>(v);
  }
  std::fprintf(stderr,
               "kiln runtime: warning: ignoring KILN_NUM_THREADS='%s' (expected 0 for one per "
               "core, or 1..%d); using %d threads\n",
               env, kMaxThreads, hardware_threads());
  return hardware_threads();
}

// Runs body over [begin, end) and returns "" on success or the failure's message. This thread's
// last-error message is left as it was when the body succeeds.
std::string run_body(kiln_parallel_body body, void* closure, int64_t begin, int64_t end) {
  InsideParallel inside;
  std::string saved = kiln_get_last_error();
  kiln_set_last_error("");  // so a failing body that sets no message is not blamed on an old one
  int32_t rc = 0;
  try {
    rc = body(begin, end, closure);
  } catch (...) {
    // A C++ body must not throw through a C function pointer; say so rather than crash.
    return "parallel body threw a C++ exception on [" + std::to_string(begin) + ", " +
           std::to_string(end) + ")";
  }
  if (rc == 0) {
    kiln_set_last_error(saved.c_str());
    return "";
  }
  std::string message = kiln_get_last_error();
  if (message.empty()) {
    message = "parallel body returned " + std::to_string(rc) + " on [" + std::to_string(begin) +
              ", " + std::to_string(end) + ") without setting an error message";
  }
  return message;
}

class ThreadPool {
 public:
  static ThreadPool& global() {
    static ThreadPool pool;
    return pool;
  }

  ~ThreadPool() { stop_workers(); }

  void set_num_threads(int32_t n) {
    if (t_inside_parallel) {
      throw std::logic_error("cannot change the thread count from inside a parallel body");
    }
    std::lock_guard<std::mutex> run_lock(run_mutex_);
    if (n == num_threads_.load()) return;
    stop_workers();
    num_threads_ = n;
  }

  int32_t num_threads() const { return num_threads_.load(); }

  int run(kiln_parallel_body body, void* closure, int64_t n) {
    if (n <= 0) return 0;
    if (t_inside_parallel || n == 1 || num_threads_.load() <= 1) {
      return finish(run_body(body, closure, 0, n));
    }
    std::lock_guard<std::mutex> run_lock(run_mutex_);
    const int32_t threads = num_threads_.load();
    if (threads <= 1) return finish(run_body(body, closure, 0, n));
    ensure_workers(threads);
    {
      std::lock_guard<std::mutex> lock(mutex_);
      body_ = body;
      closure_ = closure;
      n_ = n;
      chunks_ = std::min<int64_t>(n, threads);
      pending_ = chunks_ - 1;
      first_error_.clear();
      ++generation_;
    }
    work_cv_.notify_all();
    run_chunk(0);
    std::unique_lock<std::mutex> lock(mutex_);
    done_cv_.wait(lock, [&] { return pending_ == 0; });
    body_ = nullptr;
    closure_ = nullptr;
    return finish(first_error_);
  }

 private:
  ThreadPool() : num_threads_(initial_thread_count()) {}

  static int finish(const std::string& error) {
    if (error.empty()) return 0;
    set_last_error(error);
    return -1;
  }

  // Chunk c of [0, n_) split into chunks_ nearly equal contiguous ranges (no overflow for any n).
  void run_chunk(int64_t c) {
    const int64_t base = n_ / chunks_;
    const int64_t extra = n_ % chunks_;
    const int64_t begin = c * base + std::min(c, extra);
    const int64_t end = begin + base + (c < extra ? 1 : 0);
    std::string error = run_body(body_, closure_, begin, end);
    if (!error.empty()) {
      std::lock_guard<std::mutex> lock(mutex_);
      if (first_error_.empty()) first_error_ = std::move(error);
    }
  }

  // `seen` starts at the generation current when the worker was created, so a new worker never
  // mistakes the previous (finished) loop for work.
  void worker_loop(int64_t chunk, uint64_t seen) {
    std::unique_lock<std::mutex> lock(mutex_);
    for (;;) {
      work_cv_.wait(lock, [&] { return stopping_ || generation_ != seen; });
      if (stopping_) return;
      seen = generation_;
      if (chunk >= chunks_) continue;  // this loop has fewer chunks than threads
      lock.unlock();
      run_chunk(chunk);
      lock.lock();
      if (--pending_ == 0) done_cv_.notify_one();
    }
  }

  // Called with run_mutex_ held, between loops.
  void ensure_workers(int32_t threads) {
    if (static_cast<int32_t>(workers_.size()) == threads - 1) return;
    stop_workers();
    std::lock_guard<std::mutex> lock(mutex_);
    stopping_ = false;
    for (int32_t i = 1; i < threads; ++i) {
      workers_.emplace_back(&ThreadPool::worker_loop, this, i, generation_);
    }
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

  std::mutex run_mutex_;  // serializes whole parallel loops and thread-count changes
  std::vector<std::thread> workers_;  // guarded by run_mutex_
  std::atomic<int32_t> num_threads_;

  std::mutex mutex_;  // guards the job fields below
  std::condition_variable work_cv_;
  std::condition_variable done_cv_;
  bool stopping_ = false;
  uint64_t generation_ = 0;
  kiln_parallel_body body_ = nullptr;
  void* closure_ = nullptr;
  int64_t n_ = 0;
  int64_t chunks_ = 1;
  int64_t pending_ = 0;
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
    if (num_threads < 0 || num_threads > kiln::runtime::kMaxThreads) {
      throw std::invalid_argument("num_threads=" + std::to_string(num_threads) +
                                  " is out of range (0 for one per core, or 1..1024)");
    }
    const int32_t n = num_threads == 0 ? kiln::runtime::hardware_threads() : num_threads;
    kiln::runtime::ThreadPool::global().set_num_threads(n);
    return 0;
  });
}

extern "C" int32_t kiln_get_num_threads(void) {
  return kiln::runtime::ThreadPool::global().num_threads();
}
