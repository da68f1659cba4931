#include "kiln/version.h"

#include "kiln/runtime/c_api.h"

namespace kiln {

const char* compiler_version() { return KILN_VERSION_STRING; }
int compiler_abi_version() { return KILN_COMPILER_ABI_VERSION; }
int expected_runtime_abi_version() { return KILN_RUNTIME_ABI_VERSION; }

}  // namespace kiln
