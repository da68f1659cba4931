#!/usr/bin/env bash
# Runs every test: CTest (GoogleTest suites and script tests), then pytest when Python tests exist.
# Usage: run-tests.sh [BUILD_DIR]   (default: scripts/build-dir.sh)
set -euo pipefail
root=$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)
build_dir=${1:-$(bash "$root/scripts/build-dir.sh")}
jobs=$(bash "$root/scripts/job-count.sh")
# The compiles of the tests keep their kernel cache in the build tree, not in the user's home
# (driver/kernel_cache.h); a test run starts from whatever an earlier one left there.
export KILN_CACHE_DIR=${KILN_CACHE_DIR:-$build_dir/kernel-cache}
echo "kiln: running CTest in $build_dir with $jobs parallel jobs"
ctest --test-dir "$build_dir" --output-on-failure -j "$jobs"
if compgen -G "$root/tests/python/test_*.py" >/dev/null; then
  echo "kiln: running pytest"
  # An AddressSanitizer build's Python module needs the ASan runtime loaded first (the interpreter
  # is not instrumented), and the interpreter's own allocations at exit are not ours to report.
  asan_env=()
  if grep -qs '^KILN_SANITIZE:.*=.*address' "$build_dir/CMakeCache.txt"; then
    cxx=$(grep -s '^CMAKE_CXX_COMPILER:' "$build_dir/CMakeCache.txt" | cut -d= -f2)
    asan_env=(LD_PRELOAD="$("${cxx:-g++}" -print-file-name=libasan.so) $("${cxx:-g++}" -print-file-name=libubsan.so)"
              ASAN_OPTIONS="${ASAN_OPTIONS:-}:detect_leaks=0")
  fi
  env "${asan_env[@]}" KILN_BUILD_DIR="$build_dir" /usr/bin/python3 -m pytest -q "$root/tests/python"
fi
