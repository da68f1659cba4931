// Version queries of the runtime library.
#include "kiln/runtime/c_api.h"

#ifndef KILN_VERSION_STRING
#error "KILN_VERSION_STRING must be defined by the build"
#endif

// A build of the runtime may be given another ABI number (tests build such a library to check
// that `kiln doctor` catches the mismatch).
#ifndef KILN_RUNTIME_ABI_OVERRIDE
#define KILN_RUNTIME_ABI_OVERRIDE KILN_RUNTIME_ABI_VERSION
#endif

extern "C" const char* kiln_runtime_version(void) { return KILN_VERSION_STRING; }
extern "C" int32_t kiln_runtime_abi_version(void) { return KILN_RUNTIME_ABI_OVERRIDE; }
