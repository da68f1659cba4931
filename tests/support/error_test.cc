#include "kiln/support/error.h"

#include <gtest/gtest.h>

#include <string>

namespace kiln {
namespace {

TEST(ErrorTest, UserErrorFormatsSubjectReasonAndKeepsHint) {
  UserError e(UserErrorKind::kNotFound, "model.onnx", "no such file", "check the path");
  EXPECT_STREQ(e.what(), "model.onnx: no such file");
  EXPECT_EQ(e.kind(), UserErrorKind::kNotFound);
  EXPECT_EQ(e.hint(), "check the path");
}

TEST(ErrorTest, CheckFailureCarriesFileLineAndMessage) {
  try {
    int x = -1;
    KILN_ICHECK(x >= 0) << "x=" << x;
    FAIL() << "KILN_ICHECK did not throw";
  } catch (const InternalError& e) {
    const std::string what = e.what();
    EXPECT_NE(what.find("error_test.cc:"), std::string::npos) << what;
    EXPECT_NE(what.find("check failed: x >= 0: x=-1"), std::string::npos) << what;
  }
}

TEST(ErrorTest, PassingCheckDoesNotThrow) { EXPECT_NO_THROW({ KILN_ICHECK(1 + 1 == 2) << "math"; }); }

}  // namespace
}  // namespace kiln
