#!/usr/bin/env bash
# The README's second command: installs what is missing, builds, and runs every test (CTest, then
# pytest once Python tests exist). Needs only bash; `make check` and .ci/run call this.
#
#   scripts/check.sh --sanitize address,undefined   the same in build-asan/ with ASan + UBSan
#   scripts/check.sh --sanitize thread               build-tsan/ with TSan: the runtime's
#                                                    concurrency checks (kiln_load_test) only
# (docs/reliability.md has their cost and last results; they are not part of .ci/run.)
set -euo pipefail
root=$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)
sanitize=""
if [ "${1:-}" = "--sanitize" ]; then
  sanitize=${2:?usage: scripts/check.sh [--sanitize address,undefined|thread]}
fi
bash "$root/scripts/install-deps.sh"
if [ -z "$sanitize" ]; then
  bash "$root/scripts/build.sh"
  bash "$root/scripts/run-tests.sh" "$(bash "$root/scripts/build-dir.sh")"
  exit 0
fi
main_build=$(bash "$root/scripts/build-dir.sh")
case "$sanitize" in
  thread) dir="$root/build-tsan" ;;
  *) dir="$root/build-asan" ;;
esac
export KILN_BUILD_DIR="$dir"
# allocator_may_return_null: a failed huge allocation returns NULL as it does without ASan, so the
# tests of Kiln's out-of-memory errors see the error they check instead of ASan's abort.
export ASAN_OPTIONS=${ASAN_OPTIONS:-detect_leaks=1:abort_on_error=1:allocator_may_return_null=1}
export UBSAN_OPTIONS=${UBSAN_OPTIONS:-print_stacktrace=1:halt_on_error=1}
export TSAN_OPTIONS=${TSAN_OPTIONS:-halt_on_error=1:second_deadlock_stack=1}
cached=$(grep -s '^KILN_SANITIZE:' "$dir/CMakeCache.txt" | cut -d= -f2 || true)
if [ "$cached" != "$sanitize" ]; then
  bash "$root/scripts/configure.sh" "$dir" -DKILN_SANITIZE="$sanitize"
fi
jobs=$(bash "$root/scripts/job-count.sh")
if [ "$sanitize" = thread ]; then
  # Only the runtime and the load test are instrumented; the artifact comes from the main build's
  # CLI when there is one (its kernels are plain generated code either way: TSan watches the
  # runtime's threads, queues and buffers, which is where races would be).
  cli="$main_build/bin/kiln"
  targets=(kiln_runtime kiln_load_test)
  [ -x "$cli" ] || { targets+=(kiln_cli); cli="$dir/bin/kiln"; }
  cmake --build "$dir" -j "$jobs" --target "${targets[@]}"
  artifact="$dir/tsan-tiny-cnn.so"
  "$cli" compile --example tiny-cnn -o "$artifact" >/dev/null
  "$dir/bin/kiln_load_test" "$artifact" --threads 16 --runs 200
  exit 0
fi
cmake --build "$dir" -j "$jobs"
bash "$root/scripts/run-tests.sh" "$dir"
