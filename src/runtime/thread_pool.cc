// The runtime's thread pool behind kiln_parallel_for() (and the run scopes of thread_pool.h).
//
// Design: N-1 persistent workers plus the calling thread. A parallel loop is published as a "job"
// (body, closure, n, chunk count) followed by a release-store of a new generation number. The
// chunks are claimed, not assigned: the caller and every woken worker take chunk after chunk from
// one claim word (job number | chunk count | next chunk) by compare-and-swap until none is left,
// so a worker that is not running (asleep, or descheduled on a loaded machine) holds nothing up:
// the caller runs the chunks nobody claimed. The caller then waits until every claimed chunk is
// done. A thread uses the job's fields only after a successful claim, and the job cannot finish
// while a claimed chunk is running, so the job, whose closure lives on the caller's stack,
// outlives every use of it; a worker that wakes late sees another job number, or no chunk left,
// and touches nothing.
//   - Whole loops are serialized by run_mutex_: concurrent callers from different threads each get
//     the whole pool in turn, and every chunk of every loop runs exactly once.
//   - A call from inside a running body (on any pool thread or the caller) runs serially on that
//     thread: the pool is busy with the outer loop, and waiting for it would deadlock.
//   - Changing the thread count stops the workers (between loops) and starts the new number at the
//     next loop. Changing it from inside a body is refused (it would wait for its own loop).
//   - fork(): a child has none of the parent's workers (only the forking thread is copied). The
//     pool's pthread_atfork handlers hold both locks across fork() (so no loop and no sleeper is
//     mid-way), and in the child forget the workers (their handles leak, never joined) and start
//     fresh locks and condition variables: the child starts its own workers at its first loop
//     (the tuner's measuring child, src/tune_measure/, relies on this).
// Handoff (issue 6): a model issues 60-200 loops per inference, so waking workers through a
// condition variable on every loop (tens of microseconds each) is too slow. A worker that has
// finished a chunk spins on the generation word (pause instruction, clock checked every 64 spins)
// for a bounded time: kSpinInRun while a run is open (thread_pool.h; the executor opens one per
// inference), kSpinOutsideRun otherwise. Then it sleeps on a condition variable; the publisher
// notifies only when some worker sleeps (a sleeper count read after the generation store, both
// seq_cst, so a wake-up is never lost). The caller waits for the workers the same way: spin, then
// sleep. No allocation happens per loop or chunk: the job lives in the pool, and the last-error
// message is saved and restored only when the thread has one, in reused storage.
#include <pthread.h>

#include <algorithm>
#include <atomic>
#include <chrono>
#include <condition_variable>
#include <cstdio>
#include <cstdlib>
#include <mutex>
#include <new>
#include <stdexcept>
#include <string>
#include <thread>
#include <vector>

#include "kiln/runtime/c_api.h"
#include "last_error.h"
#include "thread_pool.h"

#if defined(__x86_64__) || defined(__i386__)
#include <immintrin.h>
#endif

namespace kiln::runtime {
namespace {

constexpr int32_t kMaxThreads = 1024;
// How long an idle worker (or the waiting caller) spins before it sleeps.
constexpr std::chrono::nanoseconds kSpinInRun = std::chrono::milliseconds(2);
constexpr std::chrono::nanoseconds kSpinOutsideRun = std::chrono::microseconds(50);
constexpr std::chrono::nanoseconds kSpinBeforeYield = std::chrono::microseconds(2);
constexpr size_t kCacheLine = 64;

inline void cpu_pause() {
#if defined(__x86_64__) || defined(__i386__)
  _mm_pause();
#elif defined(__aarch64__)
  asm volatile("yield" ::: "memory");
#endif
}

// Nesting depth of parallel bodies on this thread (0: not inside one).
thread_local int t_parallel_depth = 0;

// Marks this thread as running a parallel body for the guard's lifetime (exception-safe).
class InsideParallel {
 public:
  InsideParallel() { ++t_parallel_depth; }
  ~InsideParallel() { --t_parallel_depth; }
  InsideParallel(const InsideParallel&) = delete;
  InsideParallel& operator=(const InsideParallel&) = delete;
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

// Runs body over [begin, end). Returns true on success, leaving this thread's last-error message
// as it was; on failure returns false with *error set to the failure's message. The message is
// saved (in storage reused across calls) only when there is one, so the common path allocates
// nothing.
bool run_body(kiln_parallel_body body, void* closure, int64_t begin, int64_t end,
              std::string* error) {
  thread_local std::string t_saved_outer;  // depth 0; nested calls use their own string
  std::string saved_nested;
  std::string& saved = t_parallel_depth == 0 ? t_saved_outer : saved_nested;
  InsideParallel inside;
  const bool had_message = has_last_error();
  if (had_message) {
    saved.assign(kiln_get_last_error());
    assign_last_error("");  // so a failing body that sets no message is not blamed on an old one
  }
  int32_t rc = 0;
  try {
    rc = body(begin, end, closure);
  } catch (...) {
    // A C++ body must not throw through a C function pointer; say so rather than crash.
    *error = "parallel body threw a C++ exception on [" + std::to_string(begin) + ", " +
             std::to_string(end) + ")";
    return false;
  }
  if (rc == 0) {
    if (had_message) {
      assign_last_error(saved);
    } else if (has_last_error()) {
      assign_last_error("");
    }
    return true;
  }
  *error = kiln_get_last_error();
  if (error->empty()) {
    *error = "parallel body returned " + std::to_string(rc) + " on [" + std::to_string(begin) +
             ", " + std::to_string(end) + ") without setting an error message";
  }
  return false;
}

class ThreadPool {
 public:
  static ThreadPool& global() {
    static ThreadPool pool;
    return pool;
  }

  ~ThreadPool() { stop_workers(); }

  void set_num_threads(int32_t n) {
    if (t_parallel_depth > 0) {
      throw std::logic_error("cannot change the thread count from inside a parallel body");
    }
    std::lock_guard<std::mutex> run_lock(run_mutex_);
    if (n == num_threads_.load()) return;
    stop_workers();
    num_threads_ = n;
  }

  int32_t num_threads() const { return num_threads_.load(); }

  void begin_run() { open_runs_.fetch_add(1, std::memory_order_relaxed); }
  void end_run() { open_runs_.fetch_sub(1, std::memory_order_relaxed); }

  int run(kiln_parallel_body body, void* closure, int64_t n) {
    if (n <= 0) return 0;
    if (t_parallel_depth > 0 || n == 1 || num_threads_.load() <= 1) return run_serial(body, closure, n);
    std::lock_guard<std::mutex> run_lock(run_mutex_);
    const int32_t threads = num_threads_.load();
    if (threads <= 1) return run_serial(body, closure, n);
    ensure_workers(threads);
    body_ = body;
    closure_ = closure;
    n_ = n;
    chunks_ = std::min<int64_t>(n, threads);
    failed_.store(false, std::memory_order_relaxed);
    done_.store(0, std::memory_order_relaxed);
    job_ = (job_ + 1) & kJobMask;
    claim_.store(make_claim(job_, chunks_, 0), std::memory_order_release);
    publish(generation_.load(std::memory_order_relaxed) + 1);
    std::string error;
    const bool ok = run_claimed_chunks(&error);
    wait_for_chunks();
    if (!ok) return fail(error);
    if (failed_.load(std::memory_order_acquire)) return fail(first_error_);
    return 0;
  }

 private:
  ThreadPool() : num_threads_(initial_thread_count()), cores_(hardware_threads()) {
    ::pthread_atfork(&ThreadPool::before_fork, &ThreadPool::after_fork_parent, &ThreadPool::after_fork_child);
  }

  // fork() from inside a parallel body keeps the locks as they are (the loop cannot finish in the
  // child anyway); any other fork() waits for the running loop.
  static thread_local bool t_fork_locked;
  static void before_fork() {
    t_fork_locked = t_parallel_depth == 0;
    if (!t_fork_locked) return;
    global().run_mutex_.lock();
    global().mutex_.lock();
  }
  static void after_fork_parent() {
    if (!t_fork_locked) return;
    global().mutex_.unlock();
    global().run_mutex_.unlock();
  }
  static void after_fork_child() {
    ThreadPool& p = global();
    new std::vector<std::thread>(std::move(p.workers_));  // leaked: the threads do not exist here
    p.workers_.clear();
    p.sleepers_.store(0);
    p.caller_sleeping_.store(false);
    p.stopping_.store(false);
    new (&p.work_cv_) std::condition_variable();  // waiters of the parent's threads are gone
    new (&p.done_cv_) std::condition_variable();
    new (&p.mutex_) std::mutex();
    new (&p.run_mutex_) std::mutex();
  }

  static int fail(const std::string& error) {
    set_last_error(error);
    return -1;
  }

  static int run_serial(kiln_parallel_body body, void* closure, int64_t n) {
    std::string error;
    return run_body(body, closure, 0, n, &error) ? 0 : fail(error);
  }

  // The claim word: job number (bits 32..63), chunk count (16..31), next unclaimed chunk (0..15).
  // Chunk counts are at most kMaxThreads, so they fit in 16 bits.
  static constexpr uint64_t kJobMask = 0xffffffffu;
  static uint64_t make_claim(uint64_t job, int64_t chunks, int64_t next) {
    return (job << 32) | (static_cast<uint64_t>(chunks) << 16) | static_cast<uint64_t>(next);
  }

  // Claims the next chunk of the job in claim_ (its chunk count in *chunks), or returns -1 when
  // none is left. After a claim the job's fields (body_, closure_, n_, chunks_) are those of the
  // claimed job: they were written before claim_ was stored (release, read here by acquire), and
  // the job cannot finish (so they cannot be rewritten) until this chunk is counted done.
  int64_t claim_chunk(int64_t* chunks) {
    uint64_t w = claim_.load(std::memory_order_acquire);
    for (;;) {
      const int64_t next = static_cast<int64_t>(w & 0xffffu);
      *chunks = static_cast<int64_t>((w >> 16) & 0xffffu);
      if (next >= *chunks) return -1;
      if (claim_.compare_exchange_weak(w, w + 1, std::memory_order_acq_rel, std::memory_order_acquire)) return next;
    }
  }

  // Runs chunks of the current job until none is left to claim; counts each one done. Returns
  // false with *error set when a chunk this thread ran failed (the caller reports its own).
  bool run_claimed_chunks(std::string* error) {
    bool ok = true;
    int64_t chunks = 0;
    for (int64_t c; (c = claim_chunk(&chunks)) >= 0;) {
      if (!run_body(body_, closure_, chunk_begin(c), chunk_begin(c + 1), error)) ok = false;
      finish_chunk(chunks);
    }
    return ok;
  }

  // Counts a chunk done (`chunks`: its job's count, from the claim word: once the last chunk is
  // counted the caller may start the next job and rewrite chunks_); wakes a sleeping caller.
  void finish_chunk(int64_t chunks) {
    if (done_.fetch_add(1, std::memory_order_seq_cst) + 1 == chunks &&
        caller_sleeping_.load(std::memory_order_seq_cst)) {
      { std::lock_guard<std::mutex> lock(mutex_); }
      done_cv_.notify_one();
    }
  }

  // Start of chunk c of [0, n_) split into chunks_ nearly equal contiguous ranges (no overflow).
  int64_t chunk_begin(int64_t c) const {
    const int64_t base = n_ / chunks_;
    const int64_t extra = n_ % chunks_;
    return c * base + std::min(c, extra);
  }

  // Makes generation `g` (with the job fields written before it) visible to the workers, waking
  // the sleeping ones.
  void publish(uint64_t g) {
    generation_.store(g, std::memory_order_seq_cst);
    if (sleepers_.load(std::memory_order_seq_cst) > 0) {
      { std::lock_guard<std::mutex> lock(mutex_); }
      work_cv_.notify_all();
    }
  }

  // No spinning when the pool has more threads than cores: the spinners would take the cores
  // that the threads they wait for need.
  std::chrono::nanoseconds spin_budget() const {
    if (num_threads_.load(std::memory_order_relaxed) > cores_) {
      return std::chrono::nanoseconds(0);
    }
    return open_runs_.load(std::memory_order_relaxed) > 0 ? kSpinInRun : kSpinOutsideRun;
  }

  // Spins until pred() holds or the spin budget is spent; true when pred() held. After the first
  // kSpinBeforeYield the spinner also yields its core every 64 checks, so on a loaded machine a
  // thread that some other spinner waits for can run.
  template <typename Pred>
  bool spin_until(Pred pred) const {
    const auto start = std::chrono::steady_clock::now();
    for (uint32_t i = 1;; ++i) {
      if (pred()) return true;
      cpu_pause();
      if (i % 64 == 0) {
        const auto spent = std::chrono::steady_clock::now() - start;
        if (spent > spin_budget()) return pred();
        if (spent > kSpinBeforeYield) std::this_thread::yield();
      }
    }
  }

  // Waits until every chunk of the current job is done (the caller has claimed or run them all).
  void wait_for_chunks() {
    auto done = [&] { return done_.load(std::memory_order_seq_cst) == chunks_; };
    if (spin_until(done)) return;
    std::unique_lock<std::mutex> lock(mutex_);
    caller_sleeping_.store(true, std::memory_order_seq_cst);
    done_cv_.wait(lock, done);
    caller_sleeping_.store(false, std::memory_order_relaxed);
  }

  // The generation after `seen`, once published.
  uint64_t wait_for_job(uint64_t seen) {
    uint64_t g = seen;
    auto fresh = [&] { return (g = generation_.load(std::memory_order_seq_cst)) != seen; };
    if (spin_until(fresh)) return g;
    std::unique_lock<std::mutex> lock(mutex_);
    sleepers_.fetch_add(1, std::memory_order_seq_cst);
    work_cv_.wait(lock, fresh);
    sleepers_.fetch_sub(1, std::memory_order_relaxed);
    return g;
  }

  // `seen` starts at the generation current when the worker was created, so a new worker never
  // mistakes the previous (finished) loop for work.
  void worker_loop(uint64_t seen) {
    std::string error;
    for (;;) {
      seen = wait_for_job(seen);
      if (stopping_.load(std::memory_order_acquire)) return;
      int64_t chunks = 0;
      for (int64_t c; (c = claim_chunk(&chunks)) >= 0;) {
        if (!run_body(body_, closure_, chunk_begin(c), chunk_begin(c + 1), &error)) {
          {
            std::lock_guard<std::mutex> lock(mutex_);
            if (!failed_.load(std::memory_order_relaxed)) first_error_ = error;
          }
          failed_.store(true, std::memory_order_release);
          assign_last_error("");  // a worker's own message is not kept across loops
        }
        finish_chunk(chunks);
      }
    }
  }

  // Called with run_mutex_ held, between loops.
  void ensure_workers(int32_t threads) {
    if (static_cast<int32_t>(workers_.size()) == threads - 1) return;
    stop_workers();
    stopping_.store(false, std::memory_order_relaxed);
    const uint64_t g = generation_.load(std::memory_order_relaxed);
    workers_.reserve(static_cast<size_t>(threads - 1));
    for (int32_t i = 1; i < threads; ++i) workers_.emplace_back(&ThreadPool::worker_loop, this, g);
  }

  void stop_workers() {
    if (workers_.empty()) return;
    stopping_.store(true, std::memory_order_relaxed);
    publish(generation_.load(std::memory_order_relaxed) + 1);
    for (auto& w : workers_) w.join();
    workers_.clear();
  }

  std::mutex run_mutex_;  // serializes whole parallel loops and thread-count changes
  std::vector<std::thread> workers_;  // guarded by run_mutex_

  // Cache lines grouped by writer. The job line: written by the caller (under run_mutex_) before
  // the generation store, read by the workers (in one transfer) after they load that generation.
  // Then the acknowledgements (workers), the sleep flags (rarely written) and the settings the
  // spinners read every 64 spins.
  alignas(kCacheLine) std::atomic<uint64_t> generation_{0};
  kiln_parallel_body body_ = nullptr;
  void* closure_ = nullptr;
  int64_t n_ = 0;
  int64_t chunks_ = 1;
  uint64_t job_ = 0;  // the job number in claim_ (caller only)
  std::atomic<bool> stopping_{false};
  alignas(kCacheLine) std::atomic<uint64_t> claim_{0};  // claim word (make_claim): no chunk left
  alignas(kCacheLine) std::atomic<int64_t> done_{0};  // chunks of the job finished
  std::atomic<bool> failed_{false};
  alignas(kCacheLine) std::atomic<int32_t> sleepers_{0};
  std::atomic<bool> caller_sleeping_{false};
  alignas(kCacheLine) std::atomic<int32_t> num_threads_;
  std::atomic<int32_t> open_runs_{0};
  const int32_t cores_;

  alignas(kCacheLine) std::mutex mutex_;  // sleeping and waking, and first_error_
  std::condition_variable work_cv_;
  std::condition_variable done_cv_;
  std::string first_error_;
};

thread_local bool ThreadPool::t_fork_locked = false;

}  // namespace

void thread_pool_begin_run() { ThreadPool::global().begin_run(); }
void thread_pool_end_run() { ThreadPool::global().end_run(); }

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
