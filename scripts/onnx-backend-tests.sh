#!/usr/bin/env bash
# Runs ONNX's own backend test runner (onnx.backend.test.BackendTest) over all 1802 node tests of
# ../shared/onnx-node-tests through kiln.onnx_backend (tests/python/test_onnx_backend.py with
# KILN_ONNX_BACKEND_ALL=1), then compares its pass count with Kiln's own node-test runner's
# (tests/python/onnx_backend_report.py; fails when more than 2% below). Minutes: every test compiles.
# Usage: onnx-backend-tests.sh [BUILD_DIR]  (default scripts/build-dir.sh). Writes BUILD_DIR/onnx-backend/.
set -euo pipefail
root=$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)
build_dir=${1:-$(bash "$root/scripts/build-dir.sh")}
out="$build_dir/onnx-backend"
mkdir -p "$out"
export KILN_BUILD_DIR="$build_dir" KILN_ONNX_BACKEND_ALL=1
/usr/bin/python3 -m pytest -q -p no:cacheprovider "$root/tests/python/test_onnx_backend.py" \
  --junitxml "$out/junit.xml" > "$out/pytest.log" 2>&1 || true
tail -n 3 "$out/pytest.log"
/usr/bin/python3 "$root/tests/python/onnx_backend_report.py" "$out/junit.xml" --markdown "$out/report.md"
