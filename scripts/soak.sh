#!/usr/bin/env bash
# Load and soak runs of one shared artifact (issue 14; figures in docs/reliability.md).
#   scripts/soak.sh [ARTIFACT.so] [SOAK_SECONDS]
# Without ARTIFACT, compiles the built-in tiny-cnn example. Then:
#   1. 32 threads x 1,000 runs each, 16 different inputs, outputs bit-identical to single-threaded
#      runs, VmRSS growth printed, then allocation failure under a capped address space (--oom);
#   2. the soak: 4 threads running continuously for SOAK_SECONDS (default 600), VmRSS every 10 s.
# Exit status 0 when both pass. Build first: cmake --build build --target kiln_cli kiln_load_test.
set -euo pipefail
root=$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)
build=$(bash "$root/scripts/build-dir.sh")
artifact=${1:-}
seconds=${2:-600}
if [ -z "$artifact" ]; then
  artifact=$(mktemp -d)/tiny-cnn.so
  "$build/bin/kiln" compile --example tiny-cnn -o "$artifact" >/dev/null
fi
echo "== 32 threads x 1,000 runs: $artifact"
"$build/bin/kiln_load_test" "$artifact" --threads 32 --runs 1000 --oom
echo "== soak: 4 threads for $seconds s"
"$build/bin/kiln_load_test" "$artifact" --threads 4 --seconds "$seconds"
