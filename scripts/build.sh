#!/usr/bin/env bash
# Configures (once) and builds Kiln. Build directory: scripts/build-dir.sh ($KILN_BUILD_DIR or
# ./build); job count: scripts/job-count.sh, printed first. Extra arguments go to the first
# `cmake` configure (e.g. -DKILN_LLVM_STATIC=OFF).
set -euo pipefail
root=$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)
build_dir=$(bash "$root/scripts/build-dir.sh")
jobs=$(bash "$root/scripts/job-count.sh" --explain)
echo "kiln: building in $build_dir"
bash "$root/scripts/configure.sh" "$build_dir" "$@"
start=$(date +%s)
cmake --build "$build_dir" -j "$jobs"
echo "kiln: build finished in $(( $(date +%s) - start )) s"
