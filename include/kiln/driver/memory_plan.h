// Static memory planning for a plan's intermediate tensors.
//
// Input: for each intermediate tensor, its byte size and the first and last step (kernel index,
// inclusive) that touch it. Two tensors whose step ranges intersect are live at the same time
// and must not overlap; tensors whose ranges are disjoint may share bytes.
// Algorithm (greedy by size, as in TFLite's arena planner): tensors are placed from the largest
// to the smallest; each goes into the smallest gap between the already placed tensors that are
// live at the same time as it (best fit), or above them all. Offsets are multiples of
// `alignment`. The result is one arena (one storage block); plan.naive_bytes is what one buffer
// per tensor would take.
#ifndef KILN_DRIVER_MEMORY_PLAN_H_
#define KILN_DRIVER_MEMORY_PLAN_H_

#include <cstdint>
#include <vector>

namespace kiln::driver {

struct TensorLifetime {
  uint64_t bytes = 0;
  int32_t first_step = 0;
  int32_t last_step = 0;  // inclusive, >= first_step
};

struct MemoryPlan {
  std::vector<uint64_t> offsets;  // per tensor, in the arena
  uint64_t arena_bytes = 0;       // planned size (multiple of the alignment)
  uint64_t naive_bytes = 0;       // sum of every tensor's aligned size
};

// Plans `tensors` into one arena. UserError(kInvalidArgument) when a lifetime is reversed;
// alignment must be a power of two.
MemoryPlan plan_memory(const std::vector<TensorLifetime>& tensors, uint64_t alignment = 64);

// True when tensors i and j are live at a common step.
inline bool lifetimes_overlap(const TensorLifetime& a, const TensorLifetime& b) {
  return a.first_step <= b.last_step && b.first_step <= a.last_step;
}

}  // namespace kiln::driver

#endif  // KILN_DRIVER_MEMORY_PLAN_H_
