// kiln_parallel_for under contention: exact coverage of every index by exactly one chunk, several
// caller threads at once, nested calls, failures and their messages, thread-count changes.
#include <gtest/gtest.h>
#include <sys/resource.h>

#include <atomic>
#include <chrono>
#include <cstdint>
#include <mutex>
#include <set>
#include <string>
#include <thread>
#include <utility>
#include <vector>

#include "kiln/runtime/c_api.h"

namespace {

// Counts how often each index was visited, and which threads ran chunks.
struct Coverage {
  explicit Coverage(int64_t n) : hits(static_cast<size_t>(n)) {}
  std::vector<std::atomic<int>> hits;
  std::mutex mutex;
  std::set<std::thread::id> threads;
  std::vector<std::pair<int64_t, int64_t>> chunks;
};

int32_t count_body(int64_t begin, int64_t end, void* closure) {
  auto* c = static_cast<Coverage*>(closure);
  for (int64_t i = begin; i < end; ++i) c->hits[static_cast<size_t>(i)].fetch_add(1);
  std::lock_guard<std::mutex> lock(c->mutex);
  c->threads.insert(std::this_thread::get_id());
  c->chunks.emplace_back(begin, end);
  return 0;
}

// Every index in [0, n) was visited exactly once; reports the first bad index.
void expect_exact_coverage(const Coverage& c, const std::string& what) {
  for (size_t i = 0; i < c.hits.size(); ++i) {
    ASSERT_EQ(c.hits[i].load(), 1) << what << ": index " << i << " visited " << c.hits[i].load()
                                   << " times (expected 1)";
  }
}

class ThreadPoolTest : public ::testing::Test {
 protected:
  void SetUp() override { ASSERT_EQ(kiln_set_num_threads(4), 0) << kiln_get_last_error(); }
  void TearDown() override { kiln_set_num_threads(0); }
};

TEST_F(ThreadPoolTest, CoversEveryIndexOnceForManySizes) {
  for (int64_t n : {1, 2, 3, 4, 5, 7, 8, 100, 1001, 65536}) {
    Coverage c(n);
    ASSERT_EQ(kiln_parallel_for(count_body, &c, n), 0) << kiln_get_last_error();
    expect_exact_coverage(c, "n=" + std::to_string(n));
    // Chunks are contiguous, at most one per thread, and nearly equal (sizes differ by <= 1).
    EXPECT_LE(c.chunks.size(), 4u) << "n=" << n;
    int64_t lo = INT64_MAX, hi = 0;
    for (auto [b, e] : c.chunks) {
      lo = std::min(lo, e - b);
      hi = std::max(hi, e - b);
    }
    EXPECT_LE(hi - lo, 1) << "n=" << n;
  }
}

TEST_F(ThreadPoolTest, UsesSeveralThreads) {
  // Each chunk waits until all four have started, which only works if they run concurrently.
  struct Barrier {
    std::atomic<int> arrived{0};
    std::set<std::thread::id> threads;
    std::mutex mutex;
  } b;
  auto body = [](int64_t, int64_t, void* closure) -> int32_t {
    auto* b = static_cast<Barrier*>(closure);
    b->arrived.fetch_add(1);
    for (int spin = 0; b->arrived.load() < 4 && spin < 2000000; ++spin) std::this_thread::yield();
    std::lock_guard<std::mutex> lock(b->mutex);
    b->threads.insert(std::this_thread::get_id());
    return 0;
  };
  ASSERT_EQ(kiln_parallel_for(body, &b, 4), 0);
  EXPECT_EQ(b.threads.size(), 4u);
  EXPECT_EQ(b.threads.count(std::this_thread::get_id()), 1u) << "the caller takes part";
}

TEST_F(ThreadPoolTest, ConcurrentCallersEachGetExactCoverage) {
  constexpr int kCallers = 8;
  constexpr int kRounds = 50;
  std::atomic<int> failures{0};
  std::vector<std::thread> callers;
  for (int t = 0; t < kCallers; ++t) {
    callers.emplace_back([t, &failures] {
      for (int r = 0; r < kRounds; ++r) {
        const int64_t n = 97 + 13 * t + r;
        Coverage c(n);
        if (kiln_parallel_for(count_body, &c, n) != 0) {
          failures.fetch_add(1);
          continue;
        }
        for (auto& h : c.hits) {
          if (h.load() != 1) {
            failures.fetch_add(1);
            break;
          }
        }
      }
    });
  }
  for (auto& c : callers) c.join();
  EXPECT_EQ(failures.load(), 0) << "some concurrent loop missed or repeated an index";
}

TEST_F(ThreadPoolTest, NestedCallRunsSeriallyAndCorrectly) {
  constexpr int64_t kOuter = 6, kInner = 50;
  struct Nested {
    std::vector<std::atomic<int>> hits = std::vector<std::atomic<int>>(kOuter * kInner);
    std::atomic<int> inner_chunks{0};
  } nested;
  struct Inner {
    Nested* nested;
    int64_t row;
  };
  auto inner_body = [](int64_t b, int64_t e, void* closure) -> int32_t {
    auto* in = static_cast<Inner*>(closure);
    in->nested->inner_chunks.fetch_add(1);
    for (int64_t j = b; j < e; ++j) in->nested->hits[in->row * kInner + j].fetch_add(1);
    return 0;
  };
  struct Outer {
    Nested* nested;
    kiln_parallel_body inner;
  } outer{&nested, inner_body};
  auto outer_body = [](int64_t b, int64_t e, void* closure) -> int32_t {
    auto* o = static_cast<Outer*>(closure);
    for (int64_t i = b; i < e; ++i) {
      Inner in{o->nested, i};
      if (kiln_parallel_for(o->inner, &in, kInner) != 0) return -1;
    }
    return 0;
  };
  ASSERT_EQ(kiln_parallel_for(outer_body, &outer, kOuter), 0) << kiln_get_last_error();
  for (size_t i = 0; i < nested.hits.size(); ++i) {
    ASSERT_EQ(nested.hits[i].load(), 1) << "index " << i;
  }
  EXPECT_EQ(nested.inner_chunks.load(), kOuter) << "each nested loop ran as one serial chunk";
}

int32_t fail_on_chunk_with_index_3(int64_t begin, int64_t end, void*) {
  if (begin <= 3 && 3 < end) {
    kiln_set_last_error("index 3 is cursed");
    return 7;
  }
  return 0;
}

TEST_F(ThreadPoolTest, FailingBodyReturnsMinusOneWithItsMessage) {
  kiln_set_last_error("");
  EXPECT_EQ(kiln_parallel_for(fail_on_chunk_with_index_3, nullptr, 100), -1);
  // Index 3 is in chunk 0, [0, 25), run by whichever thread claims it (its message reaches the caller).
  EXPECT_STREQ(kiln_get_last_error(), "index 3 is cursed");
  // A failure on a worker's chunk is carried to the caller too.
  auto fail_late = [](int64_t begin, int64_t end, void*) -> int32_t {
    if (end == 100) {
      kiln_set_last_error("last chunk failed");
      return 1;
    }
    return 0;
  };
  EXPECT_EQ(kiln_parallel_for(fail_late, nullptr, 100), -1);
  EXPECT_STREQ(kiln_get_last_error(), "last chunk failed");
  // The pool keeps working after failures.
  Coverage c(1000);
  ASSERT_EQ(kiln_parallel_for(count_body, &c, 1000), 0);
  expect_exact_coverage(c, "after failures");
}

TEST_F(ThreadPoolTest, FailureWithoutMessageIsNamed) {
  kiln_set_last_error("stale message from before");
  auto fail_silently = [](int64_t begin, int64_t, void*) -> int32_t { return begin == 0 ? 5 : 0; };
  EXPECT_EQ(kiln_parallel_for(fail_silently, nullptr, 8), -1);
  EXPECT_EQ(std::string(kiln_get_last_error()),
            "parallel body returned 5 on [0, 2) without setting an error message");
}

TEST_F(ThreadPoolTest, SerialFailureIsReportedToo) {
  ASSERT_EQ(kiln_set_num_threads(1), 0);
  EXPECT_EQ(kiln_parallel_for(fail_on_chunk_with_index_3, nullptr, 10), -1);
  EXPECT_STREQ(kiln_get_last_error(), "index 3 is cursed");
}

TEST_F(ThreadPoolTest, SuccessKeepsCallersLastError) {
  kiln_set_last_error("earlier failure");
  Coverage c(64);
  ASSERT_EQ(kiln_parallel_for(count_body, &c, 64), 0);
  EXPECT_STREQ(kiln_get_last_error(), "earlier failure");
}

TEST_F(ThreadPoolTest, NullBodyAndEmptyRange) {
  EXPECT_EQ(kiln_parallel_for(nullptr, nullptr, 10), -1);
  EXPECT_STREQ(kiln_get_last_error(), "kiln_parallel_for: body is NULL");
  Coverage c(0);
  EXPECT_EQ(kiln_parallel_for(count_body, &c, 0), 0);
  EXPECT_EQ(kiln_parallel_for(count_body, &c, -5), 0);
  EXPECT_TRUE(c.chunks.empty());
}

TEST_F(ThreadPoolTest, SetNumThreadsChangesChunkingAndValidates) {
  for (int32_t threads : {1, 2, 3, 7, 4}) {
    ASSERT_EQ(kiln_set_num_threads(threads), 0);
    EXPECT_EQ(kiln_get_num_threads(), threads);
    Coverage c(1000);
    ASSERT_EQ(kiln_parallel_for(count_body, &c, 1000), 0);
    expect_exact_coverage(c, "threads=" + std::to_string(threads));
    EXPECT_EQ(c.chunks.size(), static_cast<size_t>(threads));
    // Chunks are claimed, not assigned: a worker that has not started yet leaves its chunk to the
    // others (the caller included), so at most `threads` threads take part.
    EXPECT_GE(c.threads.size(), 1u);
    EXPECT_LE(c.threads.size(), static_cast<size_t>(threads));
  }
  ASSERT_EQ(kiln_set_num_threads(0), 0);
  EXPECT_EQ(kiln_get_num_threads(), static_cast<int32_t>(std::thread::hardware_concurrency()));
  EXPECT_EQ(kiln_set_num_threads(-1), -1);
  EXPECT_STREQ(kiln_get_last_error(),
               "kiln_set_num_threads: num_threads=-1 is out of range (0 for one per core, or "
               "1..1024)");
  EXPECT_EQ(kiln_set_num_threads(5000), -1);
}

TEST_F(ThreadPoolTest, SetNumThreadsFromInsideABodyIsRefused) {
  struct Result {
    std::atomic<int> refused{0};
  } r;
  auto body = [](int64_t, int64_t, void* closure) -> int32_t {
    if (kiln_set_num_threads(2) == -1 &&
        std::string(kiln_get_last_error()).find("from inside a parallel body") !=
            std::string::npos) {
      static_cast<Result*>(closure)->refused.fetch_add(1);
    }
    return 0;
  };
  ASSERT_EQ(kiln_parallel_for(body, &r, 4), 0);
  EXPECT_EQ(r.refused.load(), 4);
  EXPECT_EQ(kiln_get_num_threads(), 4);
}

TEST_F(ThreadPoolTest, ResizingWhileOtherThreadsRunLoops) {
  std::atomic<bool> stop{false};
  std::atomic<int> failures{0};
  std::vector<std::thread> callers;
  for (int t = 0; t < 3; ++t) {
    callers.emplace_back([&] {
      while (!stop.load()) {
        Coverage c(513);
        if (kiln_parallel_for(count_body, &c, 513) != 0) failures.fetch_add(1);
        for (auto& h : c.hits) {
          if (h.load() != 1) failures.fetch_add(1);
        }
      }
    });
  }
  for (int i = 0; i < 40; ++i) {
    ASSERT_EQ(kiln_set_num_threads(1 + i % 5), 0);
    std::this_thread::yield();
  }
  stop = true;
  for (auto& c : callers) c.join();
  EXPECT_EQ(failures.load(), 0);
}

// Workers spin only for a bounded time after a loop (50 us outside executor runs), then sleep:
// over 300 ms of idleness the process uses (almost) no CPU. A pool that kept spinning would use a
// whole core (about 300 ms per spinning worker).
double process_cpu_seconds() {
  rusage u{};
  getrusage(RUSAGE_SELF, &u);
  return static_cast<double>(u.ru_utime.tv_sec + u.ru_stime.tv_sec) +
         1e-6 * static_cast<double>(u.ru_utime.tv_usec + u.ru_stime.tv_usec);
}

TEST_F(ThreadPoolTest, IdlePoolDoesNotBurnACore) {
  ASSERT_EQ(kiln_set_num_threads(2), 0);
  Coverage c(1000);
  ASSERT_EQ(kiln_parallel_for(count_body, &c, 1000), 0);
  std::this_thread::sleep_for(std::chrono::milliseconds(20));  // past any spin window
  const double before = process_cpu_seconds();
  std::this_thread::sleep_for(std::chrono::milliseconds(300));
  const double used = process_cpu_seconds() - before;
  EXPECT_LT(used, 0.03) << "the idle pool used " << used * 1e3 << " ms of CPU in 300 ms";
  // And it still works after sleeping.
  Coverage d(1000);
  ASSERT_EQ(kiln_parallel_for(count_body, &d, 1000), 0);
  expect_exact_coverage(d, "after sleeping");
}

}  // namespace
