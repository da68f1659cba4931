// Internal interface of the runtime's thread pool (thread_pool.cc) beyond the C API's
// kiln_parallel_for / kiln_set_num_threads.
//
// A "run" is a stretch of work that issues parallel loops in quick succession (one inference of
// a model: 60-200 loops). While at least one run is open, workers that finish a loop spin (with a
// pause instruction) for up to a few milliseconds waiting for the next one, so the handoff costs
// well under a microsecond instead of a futex wake-up. Outside runs they spin only briefly (tens
// of microseconds) after a loop and then sleep, so an idle pool never burns a core. Runs only
// change how long workers spin: results and the kiln_parallel_for contract are the same with or
// without them.
#ifndef KILN_SRC_RUNTIME_THREAD_POOL_H_
#define KILN_SRC_RUNTIME_THREAD_POOL_H_

namespace kiln::runtime {

void thread_pool_begin_run();  // may be nested and called from several threads
void thread_pool_end_run();    // one per begin

// Opens a run for its lifetime (exception-safe).
class ThreadPoolRun {
 public:
  ThreadPoolRun() { thread_pool_begin_run(); }
  ~ThreadPoolRun() { thread_pool_end_run(); }
  ThreadPoolRun(const ThreadPoolRun&) = delete;
  ThreadPoolRun& operator=(const ThreadPoolRun&) = delete;
};

}  // namespace kiln::runtime

#endif  // KILN_SRC_RUNTIME_THREAD_POOL_H_
