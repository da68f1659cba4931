// Dispatch overhead of the runtime's thread pool (kiln_parallel_for): a benchmark program, not a
// test. For 1 and 2 threads (or the counts given as arguments) it times
//   back-to-back  loops issued one after another with a trivial body (the handoff cost alone),
//   with-gap      the same with ~20 us of serial work on the caller between loops (like a serial
//                 kernel between two parallel ones in a model run),
// and prints the median over batches of the time per loop in nanoseconds. Links only
// libkiln_runtime, so the same program measures another build's runtime through
// LD_LIBRARY_PATH (e.g. the main checkout's, for a before/after comparison).
#include <algorithm>
#include <atomic>
#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <vector>

#include "kiln/runtime/c_api.h"

namespace {

using Clock = std::chrono::steady_clock;

std::atomic<int64_t> g_sink{0};

int32_t trivial_body(int64_t begin, int64_t end, void*) {
  g_sink.fetch_add(end - begin, std::memory_order_relaxed);
  return 0;
}

void serial_work(double microseconds) {
  const auto until = Clock::now() + std::chrono::duration<double, std::micro>(microseconds);
  while (Clock::now() < until) {
  }
}

// Median over `batches` of the mean ns per loop, each batch `loops` loops of n items.
double median_ns_per_loop(int batches, int loops, int64_t n, double gap_us) {
  std::vector<double> per_loop;
  for (int b = 0; b < batches; ++b) {
    double gap_total = 0;
    const auto start = Clock::now();
    for (int i = 0; i < loops; ++i) {
      if (kiln_parallel_for(trivial_body, nullptr, n) != 0) {
        std::fprintf(stderr, "kiln_parallel_for failed: %s\n", kiln_get_last_error());
        std::exit(1);
      }
      if (gap_us > 0) {
        const auto g0 = Clock::now();
        serial_work(gap_us);
        gap_total += std::chrono::duration<double>(Clock::now() - g0).count();
      }
    }
    const double total = std::chrono::duration<double>(Clock::now() - start).count() - gap_total;
    per_loop.push_back(total / loops * 1e9);
  }
  std::sort(per_loop.begin(), per_loop.end());
  return per_loop[per_loop.size() / 2];
}

}  // namespace

int main(int argc, char** argv) {
  std::vector<int> thread_counts;
  for (int i = 1; i < argc; ++i) thread_counts.push_back(std::atoi(argv[i]));
  if (thread_counts.empty()) thread_counts = {1, 2};
  std::printf("kiln_parallel_for dispatch (runtime %s): median ns per loop, trivial body\n",
              kiln_runtime_version());
  std::printf("%8s  %14s  %14s\n", "threads", "back-to-back", "with 20us gap");
  for (int t : thread_counts) {
    if (kiln_set_num_threads(t) != 0) {
      std::fprintf(stderr, "kiln_set_num_threads(%d): %s\n", t, kiln_get_last_error());
      return 1;
    }
    median_ns_per_loop(3, 200, 1024, 0);  // warm-up: start the workers
    const double tight = median_ns_per_loop(15, 2000, 1024, 0);
    const double gap = median_ns_per_loop(15, 200, 1024, 20);
    std::printf("%8d  %14.0f  %14.0f\n", t, tight, gap);
  }
  return 0;
}
