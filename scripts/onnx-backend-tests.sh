#!/usr/bin/env bash
# Runs ONNX's own backend test runner (onnx.backend.test.BackendTest) over all 1802 node tests of
# ../shared/onnx-node-tests through kiln.onnx_backend (tests/python/test_onnx_backend.py with
# KILN_ONNX_BACKEND_ALL=1), in $KILN_ONNX_BACKEND_JOBS pytest processes (default 2, each every
# n-th test), then compares the pass count with Kiln's own node-test runner's
# (tests/python/onnx_backend_report.py; fails when more than 2% below). Long: every test compiles.
# Usage: onnx-backend-tests.sh [BUILD_DIR]  (default scripts/build-dir.sh). Writes BUILD_DIR/onnx-backend/.
set -euo pipefail
root=$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)
build_dir=${1:-$(bash "$root/scripts/build-dir.sh")}
jobs=${KILN_ONNX_BACKEND_JOBS:-2}
out="$build_dir/onnx-backend"
rm -rf "$out" && mkdir -p "$out"
export KILN_BUILD_DIR="$build_dir" KILN_ONNX_BACKEND_ALL=1
pids=()
for ((i = 0; i < jobs; i++)); do
  KILN_ONNX_BACKEND_SHARD="$i/$jobs" /usr/bin/python3 -m pytest -v -rf -p no:cacheprovider \
    "$root/tests/python/test_onnx_backend.py" > "$out/pytest-$i.log" 2>&1 &
  pids+=($!)
done
for p in "${pids[@]}"; do wait "$p" || true; done
/usr/bin/python3 "$root/tests/python/onnx_backend_report.py" "$out"/pytest-*.log --markdown "$out/report.md"
