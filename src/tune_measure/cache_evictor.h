// Evicts the CPU caches between timed runs of a candidate (measure_child.cc).
//
// A kernel measured alone runs again and again on the same inputs, so its weights stay in the
// caches; inside a model they arrive from memory, pushed out by every other layer's weights. A
// schedule that wins with hot weights can lose in the model (ResNet-50's stage-4 1x1 convs: a
// candidate 1.08x faster alone was 1.37x slower in the model). Like TVM's
// `enable_cpu_cache_flush`, the measurer therefore evicts the caches before each timed run by
// writing a buffer twice the size of the last-level cache (sysfs, else 32 MiB assumed; at most
// 256 MiB): portable (no clflush), and it evicts the executor's internal buffers too, which the
// measurer cannot address. The eviction is not timed.
#pragma once

#include <cstddef>
#include <vector>

namespace kiln::tune {

class CacheEvictor {
 public:
  CacheEvictor();
  void evict();
  size_t bytes() const { return buffer_.size(); }

 private:
  std::vector<unsigned char> buffer_;
  unsigned char round_ = 0;
};

// The size of this machine's largest data/unified cache in bytes (sysfs), or 0 when unknown.
size_t last_level_cache_bytes();

}  // namespace kiln::tune
