// Memory planner: no two tensors live at the same step overlap (hand-made and randomized plans),
// offsets are 64-byte aligned, reuse happens where lifetimes allow it, and the arena is never
// larger than one buffer per tensor.
#include <gtest/gtest.h>

#include <random>

#include "kiln/driver/memory_plan.h"
#include "kiln/support/error.h"

namespace kiln::driver {
namespace {

void expect_valid(const std::vector<TensorLifetime>& t, const MemoryPlan& p, const std::string& what) {
  ASSERT_EQ(p.offsets.size(), t.size());
  uint64_t naive = 0;
  for (size_t i = 0; i < t.size(); ++i) {
    const uint64_t size_i = (t[i].bytes + 63) / 64 * 64;
    naive += size_i;
    EXPECT_EQ(p.offsets[i] % 64, 0u) << what << " tensor " << i;
    EXPECT_LE(p.offsets[i] + size_i, p.arena_bytes) << what << " tensor " << i;
    for (size_t j = i + 1; j < t.size(); ++j) {
      if (!lifetimes_overlap(t[i], t[j]) || t[i].bytes == 0 || t[j].bytes == 0) continue;
      const uint64_t size_j = (t[j].bytes + 63) / 64 * 64;
      const bool disjoint = p.offsets[i] + size_i <= p.offsets[j] || p.offsets[j] + size_j <= p.offsets[i];
      ASSERT_TRUE(disjoint) << what << ": tensors " << i << " [" << p.offsets[i] << ", +" << size_i << ") steps "
                            << t[i].first_step << ".." << t[i].last_step << " and " << j << " [" << p.offsets[j]
                            << ", +" << size_j << ") steps " << t[j].first_step << ".." << t[j].last_step
                            << " are live together and overlap";
    }
  }
  EXPECT_EQ(p.naive_bytes, naive) << what;
  EXPECT_LE(p.arena_bytes, p.naive_bytes) << what;
  // Lower bound: the bytes live at the busiest step.
  int32_t last = 0;
  for (const auto& x : t) last = std::max(last, x.last_step);
  for (int32_t s = 0; s <= last; ++s) {
    uint64_t live = 0;
    for (const auto& x : t) {
      if (x.first_step <= s && s <= x.last_step) live += (x.bytes + 63) / 64 * 64;
    }
    EXPECT_GE(p.arena_bytes, live) << what << " step " << s;
  }
}

TEST(MemoryPlan, ChainReusesBuffers) {
  // A chain a -> b -> c -> d: each tensor lives for two steps; two buffers suffice.
  std::vector<TensorLifetime> t = {{1000, 0, 1}, {1000, 1, 2}, {1000, 2, 3}, {1000, 3, 4}};
  const MemoryPlan p = plan_memory(t);
  expect_valid(t, p, "chain");
  EXPECT_EQ(p.naive_bytes, 4u * 1024);
  EXPECT_EQ(p.arena_bytes, 2u * 1024);
}

TEST(MemoryPlan, SmallTensorFitsInAGap) {
  // big1 [0,1] and big2 [2,3] share; small [1,2] is live with both and must go elsewhere.
  std::vector<TensorLifetime> t = {{4096, 0, 1}, {4096, 2, 3}, {64, 1, 2}};
  const MemoryPlan p = plan_memory(t);
  expect_valid(t, p, "gap");
  EXPECT_EQ(p.arena_bytes, 4096u + 64u);
}

TEST(MemoryPlan, EmptyAndZeroSized) {
  EXPECT_EQ(plan_memory({}).arena_bytes, 0u);
  std::vector<TensorLifetime> t = {{0, 0, 3}, {100, 0, 3}};
  const MemoryPlan p = plan_memory(t);
  expect_valid(t, p, "zero");
  EXPECT_EQ(p.arena_bytes, 128u);
}

TEST(MemoryPlan, ReversedLifetimeIsAnError) {
  try {
    plan_memory({{10, 3, 1}});
    FAIL() << "accepted";
  } catch (const UserError& e) {
    EXPECT_NE(std::string(e.what()).find("last step 1 precedes its first step 3"), std::string::npos) << e.what();
  }
}

TEST(MemoryPlan, RandomizedPlansNeverOverlapLiveTensors) {
  std::mt19937 rng(1234);
  for (int trial = 0; trial < 300; ++trial) {
    const int steps = 1 + static_cast<int>(rng() % 40);
    const int count = static_cast<int>(rng() % 60);
    std::vector<TensorLifetime> t;
    for (int i = 0; i < count; ++i) {
      const int32_t a = static_cast<int32_t>(rng() % steps);
      const int32_t b = a + static_cast<int32_t>(rng() % 6);
      const uint64_t bytes = (rng() % 4 == 0) ? rng() % 100 : rng() % 200000;
      t.push_back({bytes, a, b});
    }
    expect_valid(t, plan_memory(t), "trial " + std::to_string(trial));
    if (::testing::Test::HasFatalFailure()) return;
  }
}

}  // namespace
}  // namespace kiln::driver
