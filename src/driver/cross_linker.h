// The linker for artifacts of a foreign architecture (e.g. AArch64 artifacts compiled on an
// x86-64 workstation). Contract:
//   find_cross_linker(triple)  chooses, in order: $KILN_CC (a clang gets --target and ld.lld,
//                              anything else is taken as that triple's GNU driver); the GNU cross
//                              driver `<gnu triple>-gcc` (Debian: gcc-aarch64-linux-gnu +
//                              libc6-dev-arm64-cross), which links against the target's libm so
//                              the artifact records its real DT_NEEDED; clang with ld.lld and
//                              -nostdlib (libm symbols then resolve in the loading process).
//                              `command` is empty when none is installed.
//   probe_cross_link(linker)   links a trivial shared object with it and checks its ELF machine.
// Internal to libkiln (the artifact writer and `kiln doctor` use it).
#ifndef KILN_SRC_DRIVER_CROSS_LINKER_H_
#define KILN_SRC_DRIVER_CROSS_LINKER_H_

#include <string>

namespace kiln::driver {

struct CrossLinker {
  std::string triple;   // LLVM triple linked for, e.g. "aarch64-unknown-linux-gnu"
  std::string command;  // the compiler driver that links; empty when none is available
  std::string flags;    // appended after the link inputs
  std::string origin;   // "$KILN_CC", "GNU cross compiler" or "clang + ld.lld"
};

// "aarch64-unknown-linux-gnu" -> "aarch64-linux-gnu" (Debian's cross tool prefix).
std::string gnu_triple(const std::string& llvm_triple);

CrossLinker find_cross_linker(const std::string& llvm_triple);

// What to install so that find_cross_linker(llvm_triple) finds a linker.
std::string cross_link_hint(const std::string& llvm_triple);

// "" when `linker` built a shared object of the triple's ELF machine, else why not.
std::string probe_cross_link(const CrossLinker& linker);

}  // namespace kiln::driver

#endif  // KILN_SRC_DRIVER_CROSS_LINKER_H_
