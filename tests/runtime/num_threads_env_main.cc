// Run by CTest with KILN_NUM_THREADS set in the environment (see tests.cmake): checks that the
// runtime's initial thread count honours it. Usage: runtime_num_threads_env EXPECTED_COUNT|cores
// Exits 0 when kiln_get_num_threads() == EXPECTED_COUNT ("cores": one per hardware thread) and
// a loop really runs as that many chunks.
#include <atomic>
#include <cstdio>
#include <cstdlib>
#include <string>
#include <thread>

#include "kiln/runtime/c_api.h"

int main(int argc, char** argv) {
  if (argc != 2) {
    std::fprintf(stderr, "usage: %s EXPECTED_COUNT\n", argv[0]);
    return 2;
  }
  const char* env = std::getenv("KILN_NUM_THREADS");
  const int expected = std::string(argv[1]) == "cores"
                           ? static_cast<int>(std::thread::hardware_concurrency())
                           : std::atoi(argv[1]);
  const int got = kiln_get_num_threads();
  std::printf("KILN_NUM_THREADS=%s -> kiln_get_num_threads()=%d (expected %d)\n",
              env ? env : "(unset)", got, expected);
  if (got != expected) return 1;
  std::atomic<int> chunks{0};
  auto body = [](int64_t, int64_t, void* c) -> int32_t {
    static_cast<std::atomic<int>*>(c)->fetch_add(1);
    return 0;
  };
  if (kiln_parallel_for(body, &chunks, 1000) != 0) return 1;
  std::printf("a 1000-iteration loop ran as %d chunks\n", chunks.load());
  return chunks.load() == expected ? 0 : 1;
}
