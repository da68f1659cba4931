#!/usr/bin/env bash
# Builds Kiln's Debian packages with CPack (cmake/KilnPackaging.cmake), one command:
#   kiln-runtime, kiln, kiln-dev for this machine's architecture (from the main build), and
#   kiln-runtime for arm64 (from the AArch64 cross build, scripts/build-runtime-aarch64.sh),
# then runs lintian on them when it is installed (its report: OUT/lintian.txt).
#
# Usage: scripts/package.sh [--out DIR] [--no-arm64] [--arm64-build DIR]
#   DIR defaults to <build dir>/packages; the AArch64 build directory to <build dir>-aarch64.
#   Prints the .deb paths last, one a line.
# The main build is configured with -DCMAKE_INSTALL_PREFIX=/usr (Debian's multiarch library
# directory); only the packaged targets are built here.
set -euo pipefail
root=$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)
build=$(bash "$root/scripts/build-dir.sh")
out="$build/packages" arm64=1 arm64_build=""
while [ $# -gt 0 ]; do
  case "$1" in
    --out) out=$2; shift ;;
    --no-arm64) arm64=0 ;;
    --arm64-build) arm64_build=$2; shift ;;
    -h|--help) sed -n '2,10p' "$0"; exit 0 ;;
    *) echo "error: package.sh: unknown option $1 (see --help)" >&2; exit 2 ;;
  esac
  shift
done
for tool in cpack dpkg-deb; do
  command -v "$tool" >/dev/null 2>&1 || { echo "error: package.sh: $tool not found" >&2
    echo "hint: run scripts/install-deps.sh (cmake, dpkg-dev)" >&2; exit 1; }
done
rm -rf "$out"/*.deb
mkdir -p "$out"
out=$(cd "$out" && pwd)
jobs=$(bash "$root/scripts/job-count.sh")

build_packages() {  # BUILD_DIR TARGETS...
  local dir=$1; shift
  cmake --build "$dir" -j "$jobs" --target "$@"
  rm -rf "$dir/cpack-out"
  (cd "$dir" && cpack -G DEB > "$dir/cpack.log" 2>&1) || { cat "$dir/cpack.log" >&2; exit 1; }
  cp "$dir"/cpack-out/*.deb "$out/"
}

if ! grep -q '^CMAKE_INSTALL_PREFIX:PATH=/usr$' "$build/CMakeCache.txt" 2>/dev/null; then
  bash "$root/scripts/configure.sh" "$build" -DCMAKE_INSTALL_PREFIX=/usr
fi
build_packages "$build" kiln_runtime kiln_run_npy kiln kiln_cli
if [ "$arm64" = 1 ]; then
  arm64_build=${arm64_build:-$build-aarch64}
  bash "$root/scripts/build-runtime-aarch64.sh" "$arm64_build" >/dev/null
  build_packages "$arm64_build" kiln_runtime kiln_run_npy
fi
if command -v lintian >/dev/null 2>&1; then
  # Runs as root here (CI), which lintian refuses without --allow-root.
  lintian --allow-root --tag-display-limit 0 "$out"/*.deb > "$out/lintian.txt" 2>&1 || true
  echo "package.sh: lintian: $(grep -c '^E:' "$out/lintian.txt" || true) errors, $(grep -c '^W:' "$out/lintian.txt" || true) warnings ($out/lintian.txt)" >&2
fi
ls "$out"/*.deb
