// End-to-end check that this machine can build and load artifacts (for `kiln doctor`): a
// one-kernel model (y = x * 2 + 1 over 64 f32 values) is generated for the host target through
// the tensor-expression API, LLVM object emission and write_artifact (so the C compiler/linker
// of c_compiler_command() is used), then loaded and run through libkiln_runtime's C API, and
// its output compared with the values computed here. Never throws: failures are reported.
#ifndef KILN_DRIVER_ARTIFACT_SELFTEST_H_
#define KILN_DRIVER_ARTIFACT_SELFTEST_H_

#include <string>

namespace kiln::driver {

struct ArtifactSelfTest {
  bool ok = false;
  std::string detail;  // what was done, or which step failed and why
};

ArtifactSelfTest self_test_artifact();

}  // namespace kiln::driver

#endif  // KILN_DRIVER_ARTIFACT_SELFTEST_H_
