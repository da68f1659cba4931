// Greedy-by-size, best-fit arena planning of intermediate tensors (see memory_plan.h).
#include "kiln/driver/memory_plan.h"

#include <algorithm>
#include <limits>
#include <numeric>
#include <string>

#include "kiln/support/error.h"

namespace kiln::driver {

MemoryPlan plan_memory(const std::vector<TensorLifetime>& tensors, uint64_t alignment) {
  KILN_ICHECK(alignment != 0 && (alignment & (alignment - 1)) == 0) << "alignment must be a power of two";
  MemoryPlan plan;
  const size_t n = tensors.size();
  plan.offsets.assign(n, 0);
  std::vector<uint64_t> size(n);
  for (size_t i = 0; i < n; ++i) {
    if (tensors[i].last_step < tensors[i].first_step) {
      throw UserError(UserErrorKind::kInvalidArgument, "memory plan tensor " + std::to_string(i),
                      "its last step " + std::to_string(tensors[i].last_step) + " precedes its first step " +
                          std::to_string(tensors[i].first_step));
    }
    KILN_ICHECK(tensors[i].bytes <= std::numeric_limits<uint64_t>::max() / 2) << "tensor too large";
    size[i] = (tensors[i].bytes + alignment - 1) / alignment * alignment;
    plan.naive_bytes += size[i];
  }
  std::vector<size_t> order(n);
  std::iota(order.begin(), order.end(), 0);
  std::stable_sort(order.begin(), order.end(), [&](size_t a, size_t b) {
    if (size[a] != size[b]) return size[a] > size[b];
    return tensors[a].first_step < tensors[b].first_step;
  });
  std::vector<size_t> placed;
  std::vector<size_t> live;
  for (size_t t : order) {
    if (size[t] == 0) continue;  // takes no bytes; offset 0
    live.clear();
    for (size_t p : placed) {
      if (lifetimes_overlap(tensors[t], tensors[p])) live.push_back(p);
    }
    std::sort(live.begin(), live.end(), [&](size_t a, size_t b) { return plan.offsets[a] < plan.offsets[b]; });
    uint64_t cursor = 0;  // lowest free byte so far
    uint64_t best = std::numeric_limits<uint64_t>::max(), best_gap = std::numeric_limits<uint64_t>::max();
    for (size_t p : live) {
      if (plan.offsets[p] > cursor) {
        const uint64_t gap = plan.offsets[p] - cursor;
        if (gap >= size[t] && gap < best_gap) {
          best = cursor;
          best_gap = gap;
        }
      }
      cursor = std::max(cursor, plan.offsets[p] + size[p]);
    }
    plan.offsets[t] = best != std::numeric_limits<uint64_t>::max() ? best : cursor;
    plan.arena_bytes = std::max(plan.arena_bytes, plan.offsets[t] + size[t]);
    placed.push_back(t);
  }
  return plan;
}

}  // namespace kiln::driver
