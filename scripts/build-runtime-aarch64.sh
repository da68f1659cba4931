#!/usr/bin/env bash
# Cross-builds libkiln_runtime and kiln-run-npy for AArch64 Linux (no LLVM: KILN_RUNTIME_ONLY),
# with Debian's cross compilers (cmake/toolchains/aarch64-linux-gnu.cmake).
#
# Usage: scripts/build-runtime-aarch64.sh [BUILD_DIR]   (default: <build dir>-aarch64, i.e.
#        ./build-aarch64 next to scripts/build-dir.sh's directory)
# Prints the built library's path last. Fails with a clear message when the cross compiler is
# missing (scripts/install-deps.sh installs g++-aarch64-linux-gnu and libc6-dev-arm64-cross).
set -euo pipefail
root=$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)
build=${1:-$(bash "$root/scripts/build-dir.sh")-aarch64}
for tool in aarch64-linux-gnu-gcc aarch64-linux-gnu-g++; do
  if ! command -v "$tool" >/dev/null 2>&1; then
    echo "error: build-runtime-aarch64: $tool not found" >&2
    echo "hint: run scripts/install-deps.sh (installs g++-aarch64-linux-gnu libc6-dev-arm64-cross)" >&2
    exit 1
  fi
done
generator=()
if [ ! -f "$build/CMakeCache.txt" ] && command -v ninja >/dev/null 2>&1; then generator=(-G Ninja); fi
# Debian's multiarch library directory (GNUInstallDirs picks it only for native builds).
if [ ! -f "$build/CMakeCache.txt" ] || ! grep -q '^CMAKE_INSTALL_LIBDIR:.*=lib/aarch64-linux-gnu$' "$build/CMakeCache.txt"; then
  cmake -S "$root" -B "$build" "${generator[@]}" --no-warn-unused-cli \
    -DCMAKE_TOOLCHAIN_FILE="$root/cmake/toolchains/aarch64-linux-gnu.cmake" \
    -DKILN_RUNTIME_ONLY=ON -DKILN_BUILD_TESTS=OFF -DCMAKE_BUILD_TYPE=Release \
    -DCMAKE_INSTALL_PREFIX=/usr -DCMAKE_INSTALL_LIBDIR=lib/aarch64-linux-gnu >/dev/null
fi
cmake --build "$build" -j "$(bash "$root/scripts/job-count.sh")"
echo "$build/lib/libkiln_runtime.so"
