#!/usr/bin/env bash
# Every ONNX node test Kiln supports, compiled for AArch64 (neoverse-n1) and run under qemu-user,
# against the tests' outputs (the CTest deploy.aarch64_node_tests runs a subset of operators).
# Usage: scripts/aarch64-node-tests.sh [Op1,Op2,...]   (default: all)
# Builds the needed targets and the AArch64 runtime first; ~30 min on 2 loaded cores.
set -euo pipefail
root=$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)
build=$(bash "$root/scripts/build-dir.sh")
bash "$root/scripts/configure.sh" "$build"
cmake --build "$build" -j "$(bash "$root/scripts/job-count.sh")" --target deploy.aarch64_node_tests
bash "$root/scripts/build-runtime-aarch64.sh" "$build/aarch64-runtime" >/dev/null
cd "$build"
KILN_NODE_TEST_OPS=${1:-all} "$build/bin/deploy.aarch64_node_tests"
