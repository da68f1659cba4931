// Memory bandwidth probe (see memory_bandwidth.h).
#include "kiln/codegen/memory_bandwidth.h"

#include <algorithm>
#include <chrono>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <new>
#include <thread>
#include <vector>

namespace kiln::codegen {
namespace {

struct AlignedBuffer {
  explicit AlignedBuffer(size_t bytes) : data(static_cast<uint64_t*>(std::aligned_alloc(64, bytes))) {
    if (data == nullptr) throw std::bad_alloc();
    std::memset(data, 1, bytes);  // touch every page before timing
  }
  ~AlignedBuffer() { std::free(data); }
  uint64_t* data;
};

// dst[i] = src[i] + 1 over [begin, end): one read and one write stream, vectorized by the C++
// compiler; the +1 keeps it from becoming a memcpy with non-temporal stores.
void stream(const uint64_t* src, uint64_t* dst, size_t begin, size_t end) {
  for (size_t i = begin; i < end; ++i) dst[i] = src[i] + 1;
}

}  // namespace

std::string MemoryBandwidth::describe() const {
  char text[128];
  std::snprintf(text, sizeof text, "%.1f GB/s (%d thread%s streaming 2 x %zu MiB)", gbps, threads,
                threads == 1 ? "" : "s", buffer_bytes >> 20);
  return text;
}

MemoryBandwidth measure_memory_bandwidth(int threads, int repeats, size_t buffer_bytes) {
  MemoryBandwidth result;
  result.threads = std::max(1, threads);
  result.buffer_bytes = std::max<size_t>(buffer_bytes / 64 * 64, 64);
  const AlignedBuffer src(result.buffer_bytes), dst(result.buffer_bytes);
  const size_t words = result.buffer_bytes / sizeof(uint64_t);
  auto pass = [&] {
    std::vector<std::thread> workers;
    for (int t = 1; t < result.threads; ++t) {
      workers.emplace_back(stream, src.data, dst.data, words * t / result.threads, words * (t + 1) / result.threads);
    }
    stream(src.data, dst.data, 0, words / result.threads);
    for (auto& w : workers) w.join();
  };
  pass();  // warm-up (threads, TLB)
  for (int rep = 0; rep < std::max(1, repeats); ++rep) {
    const auto t0 = std::chrono::steady_clock::now();
    pass();
    const double s = std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
    if (s > 0) result.gbps = std::max(result.gbps, 2.0 * static_cast<double>(result.buffer_bytes) / s / 1e9);
  }
  return result;
}

}  // namespace kiln::codegen
