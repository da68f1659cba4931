// driver::self_test_artifact(): succeeds on a working machine, and reports (never throws) a
// failing C compiler with the linking step named.
#include <gtest/gtest.h>

#include <cstdlib>

#include "kiln/driver/artifact_selftest.h"

namespace kiln::driver {
namespace {

TEST(ArtifactSelfTest, BuildsLoadsAndRunsHere) {
  const ArtifactSelfTest r = self_test_artifact();
  EXPECT_TRUE(r.ok) << r.detail;
  EXPECT_NE(r.detail.find("built, loaded and ran a one-kernel artifact"), std::string::npos) << r.detail;
}

TEST(ArtifactSelfTest, ReportsABrokenCompiler) {
  ASSERT_EQ(setenv("KILN_CC", "/bin/false", 1), 0);
  const ArtifactSelfTest r = self_test_artifact();
  unsetenv("KILN_CC");
  EXPECT_FALSE(r.ok);
  EXPECT_NE(r.detail.find("linking the artifact failed"), std::string::npos) << r.detail;
  EXPECT_NE(r.detail.find("/bin/false"), std::string::npos) << r.detail;
}

}  // namespace
}  // namespace kiln::driver
