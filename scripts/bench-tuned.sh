#!/usr/bin/env bash
# Tuned against untuned against ONNX Runtime, side by side (a benchmark for issue 15, not a test).
#
#   scripts/bench-tuned.sh MODEL.onnx --records F.db --input NAME=FILE.npy [--input ...]
#                          [--threads "1 2"] [--rounds 5] [--iters 10] [--cpus LIST] [-O N]
#
# Compiles MODEL twice with `kiln compile` (timed): without records and with `--records F.db`
# (the compiler's "tuned: K of T kernels" line is printed). Then, for each thread count and
# --rounds times, runs the untuned artifact, the tuned one (`kiln run --repeat`) and ONNX Runtime
# 1.30 (`node ../shared/peers/ort_bench.js`) one right after the other (the order rotating from
# round to round) on the same inputs, each --iters timed runs after 3 warm-ups, and prints the
# median of the per-round medians and the ratios tuned/untuned, tuned/ORT and untuned/ORT. The
# outputs of the two artifacts are compared (max |diff| printed; "byte-identical" when the
# records changed nothing). --cpus LIST runs every engine under `taskset -c LIST` (e.g. a core kept
# free of other work). Environment: KILN_BUILD_DIR, KILN_PEERS, KILN_PEERS_DIR (as bench-peers.sh).
set -euo pipefail
root=$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)
usage="usage: scripts/bench-tuned.sh MODEL.onnx --records F.db --input NAME=FILE.npy [--threads \"1 2\"] [--rounds N] [--iters N] [--cpus LIST] [-O N]"
[ $# -ge 1 ] || { echo "$usage" >&2; exit 2; }
model=$1; shift
records=""; inputs=(); threads="1 2"; rounds=5; iters=10; cpus=""; opt=()
while [ $# -gt 0 ]; do
  case "$1" in
    --records) records=$2; shift 2 ;;
    --input) inputs+=("$2"); shift 2 ;;
    --threads) threads=$2; shift 2 ;;
    --rounds) rounds=$2; shift 2 ;;
    --iters) iters=$2; shift 2 ;;
    --cpus) cpus=$2; shift 2 ;;
    -O) opt=(-O "$2"); shift 2 ;;
    -h|--help) sed -n '2,16p' "$0" | sed 's/^# \{0,1\}//'; exit 0 ;;
    *) echo "bench-tuned.sh: unknown argument '$1'; $usage" >&2; exit 2 ;;
  esac
done
[ -f "$model" ] || { echo "bench-tuned.sh: model '$model' not found" >&2; exit 2; }
[ -n "$records" ] && [ -f "$records" ] || { echo "bench-tuned.sh: --records F.db is required and must exist (make it with kiln tune)" >&2; exit 2; }
[ ${#inputs[@]} -gt 0 ] || { echo "bench-tuned.sh: at least one --input NAME=FILE.npy is required" >&2; exit 2; }
python=/usr/bin/python3
build_dir=$(bash "$root/scripts/build-dir.sh")
kiln="$build_dir/bin/kiln"
[ -x "$kiln" ] || { echo "bench-tuned.sh: $kiln not built (run scripts/build.sh)" >&2; exit 2; }
peers=${KILN_PEERS:-$(realpath -m "$root/../shared/peers")}
peers_dir=${KILN_PEERS_DIR:-/tmp/kiln-peers}
ort=1
[ -f "$peers/ort_bench.js" ] && [ -d "$peers_dir/node_modules/onnxruntime-node" ] || {
  ort=0; echo "bench-tuned: skipping ONNX Runtime (install it with: bash $peers/setup.sh)"; }
work=$(mktemp -d "${TMPDIR:-/tmp}/kiln-bench-tuned.XXXXXX")
trap 'rm -rf "$work"' EXIT
pin=(); [ -n "$cpus" ] && pin=(taskset -c "$cpus")
in_args=(); for i in "${inputs[@]}"; do in_args+=(--input "$i"); done
now() { date +%s.%N; }
secs() { "$python" -c "import sys; print('%.2f' % (float(sys.argv[2]) - float(sys.argv[1])))" "$1" "$2"; }
median() { "$python" -c 'import sys,statistics; v=[float(x) for x in sys.argv[1:]]; print("%.3f" % statistics.median(v) if v else "-")' "$@"; }
ratio() { if [ "$1" = - ] || [ "$2" = - ]; then echo -; else "$python" -c "import sys; print('%.3f' % (float(sys.argv[1]) / float(sys.argv[2])))" "$1" "$2"; fi; }

echo "bench-tuned: $(date -u '+%Y-%m-%d %H:%M UTC'); $(grep -m1 'model name' /proc/cpuinfo | sed 's/.*: //'), $(nproc) cores${cpus:+, pinned to CPU $cpus}; load:$(uptime | sed 's/.*load average://')"
# The core's FMA throughput now (kiln doctor: best and median of 20 x 10 ms windows): a median
# well below the best means the core is shared right now and the figures are noisy.
fma_now() { "$kiln" doctor 2>/dev/null | sed -n 's/^ *FMA throughput *//p; s/^ *now *\(busy:.*\)/  \1/p'; }
echo "FMA before: $(fma_now)"
t0=$(now); "${pin[@]}" "$kiln" compile "$model" "${opt[@]}" -o "$work/untuned.so" >/dev/null; cu=$(secs "$t0" "$(now)")
t0=$(now); "${pin[@]}" "$kiln" compile "$model" "${opt[@]}" -o "$work/tuned.so" --records "$records" 2>&1 | grep -i 'tuned' || true; ct=$(secs "$t0" "$(now)")
echo "compile: untuned ${cu} s, tuned ${ct} s"
"${pin[@]}" "$kiln" run "$work/untuned.so" "${in_args[@]}" --output "$work/untuned.npy" >/dev/null
"${pin[@]}" "$kiln" run "$work/tuned.so" "${in_args[@]}" --output "$work/tuned.npy" >/dev/null
"$python" -c "import numpy as n,sys; a=n.load(sys.argv[1]); b=n.load(sys.argv[2]); print('outputs: max |tuned - untuned| = %.3g (max |untuned| %.3g)' % (abs(a.astype('f8')-b).max(), abs(b).max()))" "$work/tuned.npy" "$work/untuned.npy"
cmp -s "$work/untuned.so" "$work/tuned.so" && echo "artifacts: the tuned one is byte-identical to the untuned one (the records changed no kernel; their ratio is this machine's noise)"

kiln_ms() { "${pin[@]}" "$kiln" run "$1" "${in_args[@]}" --threads "$2" --repeat "$iters" --warmup 3 | sed -n 's/^latency: median \([0-9.]*\) ms.*/\1/p'; }
ort_ms() { KILN_PEERS_DIR=$peers_dir "${pin[@]}" node "$peers/ort_bench.js" "$model" "${in_args[@]}" --threads "$1" --iters "$iters" --warmup 3 | sed -n 's/.*median_ms=\([0-9.]*\).*/\1/p'; }
echo "$rounds rounds x $iters runs (after 3 warm-up) per engine: untuned, tuned, ORT alternating (order rotated per round)"
printf '\n%7s %12s %12s %12s %14s %10s %12s\n' threads "untuned ms" "tuned ms" "ORT ms" "tuned/untuned" "tuned/ORT" "untuned/ORT"
for t in $threads; do
  us=(); ts=(); os=()
  # The engines' order rotates from round to round (round r starts with engine r mod 3), so that
  # none always runs right after the same one (on this VM the first of a round was often the
  # fastest, whichever it was).
  for r in $(seq "$rounds"); do
    for k in 0 1 2; do
      case $(((r + k) % 3)) in
        0) us+=("$(kiln_ms "$work/untuned.so" "$t")") ;;
        1) ts+=("$(kiln_ms "$work/tuned.so" "$t")") ;;
        2) [ $ort = 1 ] && os+=("$(ort_ms "$t")") ;;
      esac
    done
  done
  um=$(median "${us[@]}"); tm=$(median "${ts[@]}"); om=-
  [ $ort = 1 ] && om=$(median "${os[@]}")
  printf '%7s %12s %12s %12s %14s %10s %12s\n' "$t" "$um" "$tm" "$om" "$(ratio "$tm" "$um")" "$(ratio "$tm" "$om")" "$(ratio "$um" "$om")"
done
echo "load after: $(uptime | sed 's/.*load average://')"
echo "FMA after: $(fma_now)"
