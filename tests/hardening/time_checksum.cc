// kiln_time_checksum ARTIFACT.so [REPEATS]: the whole-file checksum's cost against the whole load.
// For each repeat (interleaved): kiln_module_load + kiln_module_free (read, every check, dlopen,
// dlsym), then reading the file and verifying its checksum alone. Prints the medians and the
// ratio (docs/reliability.md, "Whole-file checksum cost"), and the one-lane hash64 over the same
// bytes for comparison (the loader no longer recomputes the weights' hash64: the file's covers it).
#include <algorithm>
#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <fstream>
#include <iterator>
#include <string>
#include <vector>

#include "kiln/runtime/artifact_checksum.h"
#include "kiln/runtime/artifact_format.h"
#include "kiln/runtime/c_api.h"

namespace {
double now_ms() {
  return std::chrono::duration<double, std::milli>(std::chrono::steady_clock::now().time_since_epoch()).count();
}
double median(std::vector<double> v) {
  std::sort(v.begin(), v.end());
  return v[v.size() / 2];
}
}  // namespace

int main(int argc, char** argv) {
  if (argc < 2) {
    std::fprintf(stderr, "usage: %s ARTIFACT.so [REPEATS]\n", argv[0]);
    return 2;
  }
  const int repeats = argc > 2 ? std::atoi(argv[2]) : 9;
  std::vector<double> load, read, hash, old_hash;
  size_t size = 0;
  for (int r = 0; r < repeats; ++r) {
    double t0 = now_ms();
    KilnModule* m = nullptr;
    if (kiln_module_load(argv[1], &m) != 0) {
      std::fprintf(stderr, "error: %s\n", kiln_get_last_error());
      return 1;
    }
    kiln_module_free(m);
    load.push_back(now_ms() - t0);
    t0 = now_ms();
    std::ifstream in(argv[1], std::ios::binary);
    const std::string bytes((std::istreambuf_iterator<char>(in)), std::istreambuf_iterator<char>());
    size = bytes.size();
    const double t1 = now_ms();
    const auto sum = kiln::artifact::read_file_checksum(bytes);
    hash.push_back(now_ms() - t1);
    const double t2 = now_ms();  // the one-lane hash64 over the same bytes (what the weights hash cost)
    volatile uint64_t sink = kiln::artifact::hash64(bytes.data(), bytes.size());
    (void)sink;
    old_hash.push_back(now_ms() - t2);
    read.push_back(t1 - t0);
    if (!sum || !sum->ok()) {
      std::fprintf(stderr, "error: no valid checksum\n");
      return 1;
    }
  }
  const double l = median(load), h = median(hash);
  std::printf("%s: %zu repeats, median load %.1f ms, file read %.1f ms, checksum %.1f ms (%.1f%% of the load, %.2f GB/s); "
              "one-lane hash64 over the same bytes %.1f ms\n",
              argv[1], load.size(), l, median(read), h, 100.0 * h / l, static_cast<double>(size) / (h * 1e6), median(old_hash));
  return 0;
}
