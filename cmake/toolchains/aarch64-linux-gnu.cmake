# CMake toolchain for AArch64 Linux (glibc) with Debian's cross compilers
# (g++-aarch64-linux-gnu, libc6-dev-arm64-cross; scripts/install-deps.sh installs them).
# Used by scripts/build-runtime-aarch64.sh with -DKILN_RUNTIME_ONLY=ON: the runtime needs no LLVM.
# Programs built with it run here under qemu-user (CMAKE_CROSSCOMPILING_EMULATOR).
set(CMAKE_SYSTEM_NAME Linux)
set(CMAKE_SYSTEM_PROCESSOR aarch64)
set(KILN_CROSS_PREFIX aarch64-linux-gnu)
set(CMAKE_C_COMPILER ${KILN_CROSS_PREFIX}-gcc)
set(CMAKE_CXX_COMPILER ${KILN_CROSS_PREFIX}-g++)
set(CMAKE_FIND_ROOT_PATH /usr/${KILN_CROSS_PREFIX})
set(CMAKE_FIND_ROOT_PATH_MODE_PROGRAM NEVER)
set(CMAKE_FIND_ROOT_PATH_MODE_LIBRARY ONLY)
set(CMAKE_FIND_ROOT_PATH_MODE_INCLUDE ONLY)
set(CMAKE_FIND_ROOT_PATH_MODE_PACKAGE ONLY)
find_program(KILN_QEMU_AARCH64 qemu-aarch64)
if(KILN_QEMU_AARCH64)
  set(CMAKE_CROSSCOMPILING_EMULATOR ${KILN_QEMU_AARCH64} -L /usr/${KILN_CROSS_PREFIX})
endif()
