// The progress line (kiln/support/progress.h): its text names the job, the phase, the count and
// the elapsed time, with an estimate of the time left only while a counted phase is under way;
// a Progress that is not shown writes nothing. (tests/python/test_cli_run.py runs kiln compile
// under a pseudo-terminal, piped and with --quiet.)
#include "kiln/support/progress.h"

#include <gtest/gtest.h>

#include <regex>
#include <thread>

namespace kiln {
namespace {

TEST(ProgressTest, LineNamesPhaseCountElapsedAndEstimate) {
  Progress p("kiln compile", false);  // not shown: line() still formats
  EXPECT_FALSE(p.shown());
  p.phase("passes");
  EXPECT_TRUE(std::regex_match(p.line(), std::regex(R"(kiln compile: passes  \d+\.\d s)"))) << p.line();
  p.phase("codegen (LLVM)", 4, "modules");
  EXPECT_TRUE(std::regex_match(p.line(), std::regex(R"(kiln compile: codegen \(LLVM\) 0/4 modules  \d+\.\d s)")))
      << p.line() << " (no estimate before the first item)";
  std::this_thread::sleep_for(std::chrono::milliseconds(20));
  p.step();
  EXPECT_TRUE(std::regex_match(p.line(), std::regex(R"(kiln compile: codegen \(LLVM\) 1/4 modules  \d+\.\d s  ~\d+\.\d s left)")))
      << p.line();
  p.step(3);
  EXPECT_TRUE(std::regex_match(p.line(), std::regex(R"(kiln compile: codegen \(LLVM\) 4/4 modules  \d+\.\d s)"))) << p.line();
}

TEST(ProgressTest, StepsFromSeveralThreadsAllCount) {
  Progress p("job", false);
  p.phase("work", 4000, "items");
  std::vector<std::thread> threads;
  for (int t = 0; t < 4; ++t) threads.emplace_back([&] { for (int i = 0; i < 1000; ++i) p.step(); });
  for (auto& t : threads) t.join();
  EXPECT_NE(p.line().find("4000/4000 items"), std::string::npos) << p.line();
}

TEST(ProgressTest, AHiddenProgressWritesNothing) {
  ::testing::internal::CaptureStderr();
  {
    Progress p("job", false);
    p.phase("a", 2);
    p.step(2);
    p.finish();
    Progress::erase_for_output();
  }
  EXPECT_EQ(::testing::internal::GetCapturedStderr(), "");
}

}  // namespace
}  // namespace kiln
