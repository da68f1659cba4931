#!/usr/bin/env bash
# Kiln int8 vs Kiln f32 vs ONNX Runtime int8 on the same QDQ model, side by side (issue 13; a
# benchmark, not a test; figures in docs/int8.md).
#
#   scripts/bench-int8.sh F32.onnx QDQ.onnx INPUT.npy [--input-name input] [--threads "1 2"]
#                         [--rounds 5] [--iters 10] [--work DIR]
#
# Compiles F32.onnx and QDQ.onnx (the model `kiln quantize` wrote) with `kiln compile` (-O3), then
# per thread count runs, one right after the other in each round, Kiln int8 (`kiln run --repeat`),
# Kiln f32 and ONNX Runtime int8 on QDQ.onnx (`node ../shared/peers/ort_bench.js`), all on the
# same INPUT.npy; prints the median over the rounds of each engine's per-round median (each round:
# --iters timed runs after 2 warm-ups) and the ratios, then the same for the fastest run of all
# rounds (on a loaded machine the best run is the one least disturbed by other processes).
# Interleaving keeps the engines under the same machine load; on a shared machine say how loaded
# it was (the script prints the load average before and after). Environment: KILN_BUILD_DIR (scripts/build-dir.sh), KILN_PEERS
# (the directory holding ort_bench.js; default <source>/../shared/peers).
set -euo pipefail
root=$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)
[ $# -ge 3 ] || { sed -n '2,16p' "$0" | sed 's/^# \{0,1\}//'; exit 2; }
f32_model=$1 int8_model=$2 input=$3
shift 3
name=input threads="1" rounds=5 iters=10 work=${TMPDIR:-/tmp}/kiln-bench-int8-$(id -u)
while [ $# -gt 0 ]; do
  case "$1" in
    --input-name) name=$2; shift 2 ;;
    --threads) threads=$2; shift 2 ;;
    --rounds) rounds=$2; shift 2 ;;
    --iters) iters=$2; shift 2 ;;
    --work) work=$2; shift 2 ;;
    *) echo "bench-int8.sh: unknown argument '$1'" >&2; exit 2 ;;
  esac
done
build_dir=$(bash "$root/scripts/build-dir.sh")
kiln="$build_dir/bin/kiln"
peers=${KILN_PEERS:-$(realpath -m "$root/../shared/peers")}
mkdir -p "$work"
base=$(basename "$int8_model" .onnx)
for m in f32:"$f32_model" int8:"$int8_model"; do
  kind=${m%%:*} path=${m#*:}
  start=$(date +%s.%N)
  "$kiln" compile "$path" -o "$work/$base.$kind.so" >/dev/null
  echo "compiled $kind ($path) in $(echo "$(date +%s.%N) - $start" | bc) s"
done
echo "load average before: $(cut -d' ' -f1-3 /proc/loadavg)"
median() { sort -g | awk '{v[NR]=$1} END {print (NR % 2) ? v[(NR + 1) / 2] : (v[NR / 2] + v[NR / 2 + 1]) / 2}'; }
for t in $threads; do
  for f in k8 kf o8; do : >"$work/$f"; : >"$work/$f.min"; done
  kiln_run() {  # artifact, file: the median and the min of --iters runs
    "$kiln" run "$1" --input "$name=$input" --repeat "$iters" --warmup 2 --threads "$t" >"$work/out"
    sed -n 's/.*median \([0-9.]*\) ms.*/\1/p' "$work/out" >>"$work/$2"
    sed -n 's/.*(min \([0-9.]*\),.*/\1/p' "$work/out" >>"$work/$2.min"
  }
  for r in $(seq "$rounds"); do
    kiln_run "$work/$base.int8.so" k8
    kiln_run "$work/$base.f32.so" kf
    node "$peers/ort_bench.js" "$int8_model" --input "$name=$input" --threads "$t" --iters "$iters" --warmup 2 >"$work/out"
    sed -n 's/.*median_ms=\([0-9.]*\).*/\1/p' "$work/out" >>"$work/o8"
    sed -n 's/.*min_ms=\([0-9.]*\).*/\1/p' "$work/out" >>"$work/o8.min"
  done
  k8=$(median <"$work/k8") kf=$(median <"$work/kf") o8=$(median <"$work/o8")
  printf '%s threads=%s rounds=%s: Kiln int8 %.1f ms, Kiln f32 %.1f ms, ORT int8 %.1f ms; int8/f32 %.2f, Kiln int8/ORT int8 %.2f\n' \
    "$base" "$t" "$rounds" "$k8" "$kf" "$o8" "$(echo "$k8 / $kf" | bc -l)" "$(echo "$k8 / $o8" | bc -l)"
  k8=$(sort -g "$work/k8.min" | head -1) kf=$(sort -g "$work/kf.min" | head -1) o8=$(sort -g "$work/o8.min" | head -1)
  printf '%s threads=%s best run: Kiln int8 %.1f ms, Kiln f32 %.1f ms, ORT int8 %.1f ms; int8/f32 %.2f, Kiln int8/ORT int8 %.2f\n' \
    "$base" "$t" "$k8" "$kf" "$o8" "$(echo "$k8 / $kf" | bc -l)" "$(echo "$k8 / $o8" | bc -l)"
done
echo "load average after: $(cut -d' ' -f1-3 /proc/loadavg)"
