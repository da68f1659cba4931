// The C API's last-error message: set by failing calls, per thread, stable until the next failure.
#include <gtest/gtest.h>

#include <string>
#include <thread>

#include "kiln/runtime/c_api.h"

namespace {

TEST(LastErrorTest, SetAndGetRoundTrip) {
  kiln_set_last_error("something broke");
  EXPECT_STREQ(kiln_get_last_error(), "something broke");
  kiln_set_last_error(nullptr);  // NULL clears
  EXPECT_STREQ(kiln_get_last_error(), "");
}

TEST(LastErrorTest, IsThreadLocal) {
  kiln_set_last_error("main thread's error");
  std::string seen_in_other_before, seen_in_other_after;
  std::thread other([&] {
    seen_in_other_before = kiln_get_last_error();
    // A failing call on this thread sets only this thread's message.
    EXPECT_EQ(kiln_tensor_alloc(nullptr, -3, DLDataType{kDLFloat, 32, 1}, nullptr), -1);
    seen_in_other_after = kiln_get_last_error();
  });
  other.join();
  EXPECT_EQ(seen_in_other_before, "") << "a new thread starts with no error";
  EXPECT_EQ(seen_in_other_after, "kiln_tensor_alloc: out is NULL");
  EXPECT_STREQ(kiln_get_last_error(), "main thread's error");
}

TEST(LastErrorTest, TwoThreadsFailingAtOnceKeepTheirOwnMessages) {
  std::string a, b;
  auto fail = [](int64_t dim, std::string* out) {
    for (int i = 0; i < 1000; ++i) {
      const int64_t shape[1] = {dim};
      DLTensor* t = nullptr;
      EXPECT_EQ(kiln_tensor_alloc(shape, 1, DLDataType{kDLFloat, 32, 1}, &t), -1);
      std::string msg = kiln_get_last_error();
      if (i > 0 && msg != *out) {
        *out = "changed under us: " + msg;
        return;
      }
      *out = msg;
    }
  };
  std::thread ta(fail, -1, &a), tb(fail, -2, &b);
  ta.join();
  tb.join();
  EXPECT_EQ(a, "kiln_tensor_alloc: dimension 0 is negative (-1)");
  EXPECT_EQ(b, "kiln_tensor_alloc: dimension 0 is negative (-2)");
}

TEST(LastErrorTest, SuccessfulCallsLeaveTheMessage) {
  kiln_set_last_error("kept");
  const int64_t shape[1] = {4};
  DLTensor* t = nullptr;
  ASSERT_EQ(kiln_tensor_alloc(shape, 1, DLDataType{kDLFloat, 32, 1}, &t), 0);
  kiln_tensor_free(t);
  EXPECT_STREQ(kiln_get_last_error(), "kept");
}

}  // namespace
