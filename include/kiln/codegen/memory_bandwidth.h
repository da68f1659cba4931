// The machine's memory bandwidth, measured (never assumed), for the profiler's roofline check
// (`kiln run --profile`, src/runtime/profile_report.h): `threads` threads each stream their share
// of a buffer well past the last-level cache (read it, write a second one), a few times, best run
// kept. Counts the bytes read plus the bytes written, the way the profiler counts a kernel's
// argument bytes. About 30 ms.
#ifndef KILN_CODEGEN_MEMORY_BANDWIDTH_H_
#define KILN_CODEGEN_MEMORY_BANDWIDTH_H_

#include <cstddef>
#include <string>

namespace kiln::codegen {

struct MemoryBandwidth {
  double gbps = 0;  // GB/s (1e9 bytes), read + written
  int threads = 1;
  size_t buffer_bytes = 0;  // each of the two buffers
  // "18.3 GB/s (2 threads streaming 2 x 64 MiB)"
  std::string describe() const;
};

MemoryBandwidth measure_memory_bandwidth(int threads, int repeats = 5, size_t buffer_bytes = size_t{64} << 20);

}  // namespace kiln::codegen

#endif  // KILN_CODEGEN_MEMORY_BANDWIDTH_H_
