// The header-only C++ wrapper (kiln_runtime.hpp): RAII ownership, exceptions that carry the C
// API's last-error message, parallel_for with lambdas and exceptions.
#include "kiln/runtime/kiln_runtime.hpp"

#include <gtest/gtest.h>

#include <atomic>
#include <cstdint>
#include <stdexcept>
#include <string>
#include <vector>

namespace kiln::runtime {
namespace {

TEST(CppWrapperTest, EmptyAllocatesAndDescribes) {
  Tensor t = Tensor::empty({3, 5}, dtype_f32());
  ASSERT_TRUE(t.defined());
  EXPECT_EQ(t.ndim(), 2);
  EXPECT_EQ(t.shape(), (std::vector<int64_t>{3, 5}));
  EXPECT_EQ(t.numel(), 15);
  EXPECT_EQ(t.nbytes(), 60u);
  EXPECT_EQ(reinterpret_cast<uintptr_t>(t.data<float>()) % KILN_TENSOR_ALIGNMENT, 0u);
  for (int i = 0; i < 15; ++i) EXPECT_EQ(t.data<float>()[i], 0.0f) << "index " << i;
  Tensor scalar = Tensor::empty({}, dtype_i64());
  EXPECT_EQ(scalar.ndim(), 0);
  EXPECT_EQ(scalar.numel(), 1);
  EXPECT_EQ(scalar.nbytes(), 8u);
  EXPECT_TRUE(abi_matches());
}

TEST(CppWrapperTest, FailureThrowsWithLastErrorMessage) {
  try {
    Tensor::empty({2, -1}, dtype_f32());
    FAIL() << "expected RuntimeError";
  } catch (const RuntimeError& e) {
    EXPECT_STREQ(e.what(), "kiln_tensor_alloc: dimension 1 is negative (-1)");
  }
  EXPECT_THROW(set_num_threads(-4), RuntimeError);
}

TEST(CppWrapperTest, MoveTransfersOwnershipAndEmptyTensorThrows) {
  Tensor a = Tensor::empty({4}, dtype_u8());
  void* data = a.raw_data();
  Tensor b = std::move(a);
  EXPECT_FALSE(a.defined());  // NOLINT(bugprone-use-after-move): checking the moved-from state
  EXPECT_EQ(b.raw_data(), data);
  EXPECT_THROW(a.ndim(), RuntimeError);
  Tensor c;
  c = std::move(b);
  EXPECT_EQ(c.raw_data(), data);
  DLTensor* raw = c.release();
  EXPECT_FALSE(c.defined());
  EXPECT_EQ(kiln_tensor_free(raw), 0);
}

TEST(CppWrapperTest, ToDlpackMovesOwnershipToTheManagedTensor) {
  Tensor t = Tensor::empty({2, 2}, dtype_f64());
  t.data<double>()[3] = 1.25;
  void* data = t.raw_data();
  DLManagedTensor* m = std::move(t).to_dlpack();
  EXPECT_FALSE(t.defined());  // NOLINT(bugprone-use-after-move)
  EXPECT_EQ(m->dl_tensor.data, data);
  EXPECT_EQ(static_cast<double*>(m->dl_tensor.data)[3], 1.25);
  m->deleter(m);
}

TEST(CppWrapperTest, ParallelForWithLambda) {
  set_num_threads(3);
  std::vector<std::atomic<int>> hits(1000);
  parallel_for(1000, [&](int64_t b, int64_t e) {
    for (int64_t i = b; i < e; ++i) hits[i].fetch_add(1);
  });
  for (size_t i = 0; i < hits.size(); ++i) ASSERT_EQ(hits[i].load(), 1) << "index " << i;
  set_num_threads(0);
}

TEST(CppWrapperTest, ParallelForRethrowsTheBodysMessage) {
  set_num_threads(4);
  try {
    parallel_for(100, [](int64_t b, int64_t e) {
      if (b <= 80 && 80 < e) throw std::out_of_range("index 80 out of range");
    });
    FAIL() << "expected RuntimeError";
  } catch (const RuntimeError& e) {
    EXPECT_STREQ(e.what(), "index 80 out of range");
  }
  set_num_threads(0);
}

}  // namespace
}  // namespace kiln::runtime
