#!/usr/bin/env bash
# Runs every test: CTest (GoogleTest suites and script tests), then pytest when Python tests exist.
# Usage: run-tests.sh [BUILD_DIR]   (default: scripts/build-dir.sh)
set -euo pipefail
root=$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)
build_dir=${1:-$(bash "$root/scripts/build-dir.sh")}
jobs=$(bash "$root/scripts/job-count.sh")
echo "kiln: running CTest in $build_dir with $jobs parallel jobs"
ctest --test-dir "$build_dir" --output-on-failure -j "$jobs"
if compgen -G "$root/tests/python/test_*.py" >/dev/null; then
  echo "kiln: running pytest"
  KILN_BUILD_DIR="$build_dir" /usr/bin/python3 -m pytest -q "$root/tests/python"
fi
