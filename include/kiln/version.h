// Versions of the compiler library (libkiln.so). Compare with the runtime's
// kiln_runtime_version()/kiln_runtime_abi_version() to detect mismatched libraries.
#ifndef KILN_VERSION_H_
#define KILN_VERSION_H_

namespace kiln {

// Kiln's version as libkiln.so was built, e.g. "0.1.0".
const char* compiler_version();
// ABI number of libkiln.so's C++ API.
int compiler_abi_version();
// The runtime ABI number libkiln was built against (what its artifacts and tools expect).
int expected_runtime_abi_version();

}  // namespace kiln

#endif  // KILN_VERSION_H_
