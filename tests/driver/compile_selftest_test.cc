// kiln doctor's compile check: compile_self_test() on this machine, and how the doctor judges
// and prints its result.
#include <gtest/gtest.h>

#include <cstdlib>
#include <sstream>

#include "kiln/driver/compile.h"
#include "kiln/driver/doctor.h"

namespace kiln::driver {
namespace {

TEST(CompileSelfTest, CompilesLoadsAndRunsOnThisMachine) {
  const CompileSelfTest r = compile_self_test();
  EXPECT_TRUE(r.ok) << r.detail;
  EXPECT_NE(r.detail.find("compiled"), std::string::npos) << r.detail;
}

TEST(CompileSelfTest, BrokenCompilerIsReportedNotThrown) {
  const char* old = std::getenv("KILN_CC");
  const std::string saved = old != nullptr ? old : "";
  setenv("KILN_CC", "/nonexistent/kiln-test-cc", 1);
  const CompileSelfTest r = compile_self_test();
  if (old != nullptr) {
    setenv("KILN_CC", saved.c_str(), 1);
  } else {
    unsetenv("KILN_CC");
  }
  EXPECT_FALSE(r.ok);
  EXPECT_NE(r.detail.find("failed"), std::string::npos) << r.detail;
}

TEST(CompileSelfTest, DoctorJudgesAndPrintsTheResult) {
  DoctorFacts f;
  f.compile_checked = true;
  f.compile_ok = false;
  f.compile_detail = "compiling the test graph failed: boom";
  const auto problems = judge_doctor_facts(f);
  bool found = false;
  for (const auto& p : problems) found |= p.what.find("cannot compile and run a model") != std::string::npos &&
                                          p.what.find("boom") != std::string::npos;
  EXPECT_TRUE(found);
  std::ostringstream out;
  print_doctor_report(f, problems, out);
  EXPECT_NE(out.str().find("compile + run"), std::string::npos) << out.str();
  EXPECT_NE(out.str().find("FAILED: compiling the test graph failed: boom"), std::string::npos) << out.str();

  f.compile_ok = true;
  f.compile_detail = "compiled (2 kernels)";
  for (const auto& p : judge_doctor_facts(f)) EXPECT_EQ(p.what.find("cannot compile"), std::string::npos) << p.what;
}

}  // namespace
}  // namespace kiln::driver
