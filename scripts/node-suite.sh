#!/usr/bin/env bash
# The whole ONNX node suite (every test in ../shared/onnx-node-tests/node, not only Kiln's supported
# ops) through Kiln's reference executor, Kiln compiled and ONNX Runtime 1.30, side by side, with
# ONNX's comparison rule (rtol 1e-3, atol 1e-7, same shape and dtype, NaN == NaN).
#
# Usage: scripts/node-suite.sh [--update-docs] [--markdown FILE] [--filter TEXT] [--jobs N]
#                              [--timeout S] [--no-ort] [--out DIR] [--root DIR]
#   Prints the per-operator table, the totals and Kiln's failures by category; writes
#   DIR/node-suite.tsv (per test: test, op, domain, opset, ref, compiled, bound, ort, reason,
#   ort_reason; default DIR: $build/node-suite). --update-docs regenerates the node-suite section
#   of docs/onnx.md (the table and every test Kiln compiled fails, with its reason); --markdown
#   writes that section to FILE instead.
# Builds kiln_node_suite when needed. ONNX Runtime comes from ../shared/peers/setup.sh (run here when
# absent); it runs in one node process beside Kiln's children and is restarted after a crash,
# which is recorded for the test it was running. Without node/npm the ORT column stays empty.
set -euo pipefail
root=$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)
build=$(bash "$root/scripts/build-dir.sh")
suite="$root/../shared/onnx-node-tests"
out="$build/node-suite"
jobs=2 timeout=120 filter="" ort=1 update_docs=0 markdown=""
cmdline="scripts/node-suite.sh $*"
while [ $# -gt 0 ]; do
  case "$1" in
    --update-docs) update_docs=1 ;;
    --markdown) markdown=$2; shift ;;
    --filter) filter=$2; shift ;;
    --jobs) jobs=$2; shift ;;
    --timeout) timeout=$2; shift ;;
    --no-ort) ort=0 ;;
    --out) out=$2; shift ;;
    --root) suite=$2; shift ;;
    -h|--help) sed -n '2,16p' "$0"; exit 0 ;;
    *) echo "error: unknown option $1 (see --help)" >&2; exit 2 ;;
  esac
  shift
done
[ -f "$suite/index.tsv" ] || { echo "error: no ONNX node suite at $suite (pass --root DIR)" >&2; exit 2; }
if [ "$update_docs" = 1 ] && [ -n "$filter" ]; then
  echo "error: --update-docs needs the whole suite (drop --filter)" >&2; exit 2
fi
mkdir -p "$out"
[ -f "$build/CMakeCache.txt" ] || bash "$root/scripts/configure.sh" "$build"
cmake --build "$build" -j "$(bash "$root/scripts/job-count.sh")" --target kiln_node_suite >/dev/null
tool="$build/bin/kiln_node_suite"

# ONNX Runtime, in the background: one node process, restarted after a crash.
ort_tsv="$out/ort.tsv"
ort_pid=""
if [ "$ort" = 1 ] && command -v node >/dev/null; then
  peers=${KILN_PEERS_DIR:-/tmp/kiln-peers}
  [ -d "$peers/node_modules/onnxruntime-node" ] || bash "$root/../shared/peers/setup.sh" "$peers" >/dev/null
  list="$out/tests.txt"
  awk -F'\t' -v f="$filter" 'NR > 1 && index($1, f) { print $1 }' "$suite/index.tsv" > "$list"
  (
    : > "$ort_tsv"
    for attempt in $(seq 1 50); do
      if KILN_PEERS_DIR="$peers" node "$root/tools/node_suite/ort_node_suite.js" "$suite/node" "$ort_tsv" \
           --tests "$list" --resume --current "$out/ort.current" >"$out/ort.log" 2>&1; then
        break
      fi
      cur=$(cat "$out/ort.current" 2>/dev/null || true)
      [ -n "$cur" ] || break
      printf '%s\tcrash\tonnxruntime-node process died (see %s)\n' "$cur" "$out/ort.log" >> "$ort_tsv"
      : > "$out/ort.current"
    done
  ) &
  ort_pid=$!
else
  : > "$ort_tsv"
  [ "$ort" = 1 ] && echo "note: node not found; ONNX Runtime column left empty" >&2
fi

"$tool" run --root "$suite" --out "$out/kiln.tsv" --jobs "$jobs" --timeout "$timeout" ${filter:+--filter "$filter"}
[ -n "$ort_pid" ] && wait "$ort_pid"

report=("$tool" report --root "$suite" --kiln "$out/kiln.tsv" --ort "$ort_tsv" --tsv "$out/node-suite.tsv")
[ "$update_docs" = 1 ] && report+=(--update-doc "$root/docs/onnx.md")
[ -n "$markdown" ] && report+=(--markdown "$markdown")
report+=(--command "$cmdline")
"${report[@]}"
echo "per-test results: $out/node-suite.tsv"
