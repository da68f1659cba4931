// The logging facility: spec parsing (levels, per-component overrides, malformed specs), the
// filter, the message format, and that disabled messages cost no formatting.
#include "kiln/support/logging.h"

#include <gtest/gtest.h>

#include <string>

#include "kiln/support/error.h"

namespace kiln {
namespace {

class LoggingTest : public ::testing::Test {
 protected:
  void TearDown() override { set_log_spec("warning"); }
};

TEST_F(LoggingTest, DefaultLevelAppliesToEveryComponent) {
  set_log_spec("info");
  EXPECT_TRUE(log_enabled("codegen", LogLevel::kInfo));
  EXPECT_TRUE(log_enabled("ir", LogLevel::kWarning));
  EXPECT_TRUE(log_enabled("ir", LogLevel::kError));
  EXPECT_FALSE(log_enabled("ir", LogLevel::kDebug));
}

TEST_F(LoggingTest, PerComponentOverridesLeaveOthersAtTheDefault) {
  set_log_spec("codegen=debug,ir=error");
  EXPECT_TRUE(log_enabled("codegen", LogLevel::kDebug));
  EXPECT_FALSE(log_enabled("codegen", LogLevel::kTrace));
  EXPECT_FALSE(log_enabled("ir", LogLevel::kWarning));
  EXPECT_TRUE(log_enabled("ir", LogLevel::kError));
  // Unnamed components keep the default level, warning.
  EXPECT_TRUE(log_enabled("pass", LogLevel::kWarning));
  EXPECT_FALSE(log_enabled("pass", LogLevel::kInfo));
}

TEST_F(LoggingTest, DefaultPlusOverridesInAnyOrder) {
  set_log_spec("codegen=trace,info,,");
  EXPECT_TRUE(log_enabled("codegen", LogLevel::kTrace));
  EXPECT_TRUE(log_enabled("frontend", LogLevel::kInfo));
  EXPECT_FALSE(log_enabled("frontend", LogLevel::kDebug));
  set_log_spec("warn");  // alias
  EXPECT_FALSE(log_enabled("codegen", LogLevel::kInfo));
}

TEST_F(LoggingTest, MalformedSpecsAreUserErrorsAndKeepTheOldFilter) {
  set_log_spec("codegen=debug");
  try {
    set_log_spec("codegen=loud");
    FAIL() << "expected UserError";
  } catch (const UserError& e) {
    EXPECT_EQ(e.kind(), UserErrorKind::kInvalidArgument);
    EXPECT_STREQ(e.what(), "KILN_LOG: unknown log level 'loud' in 'codegen=loud'");
    EXPECT_EQ(e.hint(), "use error, warning, info, debug or trace, e.g. KILN_LOG=codegen=debug");
  }
  EXPECT_TRUE(log_enabled("codegen", LogLevel::kDebug)) << "a failed set_log_spec changes nothing";
  try {
    set_log_spec("=debug");
    FAIL() << "expected UserError";
  } catch (const UserError& e) {
    EXPECT_STREQ(e.what(), "KILN_LOG: missing component name before '=' in '=debug'");
  }
  EXPECT_THROW(set_log_spec("verbose"), UserError);
  EXPECT_THROW(set_log_spec("ir=debug=trace"), UserError);
}

TEST_F(LoggingTest, EnabledMessageFormatAndDisabledMessageIsNotFormatted) {
  set_log_spec("codegen=debug");
  int evaluated = 0;
  auto count = [&] {
    ++evaluated;
    return 42;
  };
  testing::internal::CaptureStderr();
  KILN_LOG(codegen, kDebug) << "lowered " << count() << " loops";
  KILN_LOG(ir, kDebug) << "never printed " << count();
  KILN_LOG(codegen, kTrace) << "never printed " << count();
  const std::string err = testing::internal::GetCapturedStderr();
  EXPECT_EQ(err, "[kiln codegen debug] lowered 42 loops\n");
  EXPECT_EQ(evaluated, 1);
}

}  // namespace
}  // namespace kiln
