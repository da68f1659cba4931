// The runtime's own CPU feature detection (cpuid/xgetbv, getauxval; no LLVM) agrees with LLVM's
// view of this host for every feature the artifact loader checks: otherwise an artifact could
// be refused on a CPU that runs it, or (worse) accepted on one that would SIGILL.
#include <gtest/gtest.h>

#include <set>
#include <sstream>

#include "kiln/codegen/target.h"
#include "kiln/runtime/artifact_format.h"
#include "kiln/runtime/c_api.h"

namespace kiln::testing {
namespace {

std::set<std::string> runtime_features() {
  char* text = nullptr;
  EXPECT_EQ(kiln_runtime_cpu_features(&text), 0) << kiln_get_last_error();
  std::set<std::string> out;
  std::stringstream ss(text ? text : "");
  std::string f;
  while (std::getline(ss, f, ',')) out.insert(f);
  kiln_free_text(text);
  return out;
}

TEST(RuntimeCpuFeatures, AgreeWithLlvmOnEveryCheckedFeature) {
  const auto& host = codegen::host_target();
  const std::set<std::string> have = runtime_features();
  const std::string arch = artifact::arch_of_triple(host.triple);
  ASSERT_FALSE(artifact::detectable_features(arch).empty()) << arch;
  for (const auto& f : artifact::detectable_features(arch)) {
    EXPECT_EQ(have.count(f) == 1, host.has_feature(f))
        << "feature '" << f << "': runtime says " << (have.count(f) ? "present" : "absent") << ", LLVM says "
        << (host.has_feature(f) ? "present" : "absent");
  }
  // Nothing outside the checked list is reported.
  const auto& known = artifact::detectable_features(arch);
  for (const auto& f : have) EXPECT_NE(std::find(known.begin(), known.end(), f), known.end()) << f;
}

}  // namespace
}  // namespace kiln::testing
