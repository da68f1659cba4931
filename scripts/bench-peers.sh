#!/usr/bin/env bash
# Kiln against ONNX Runtime on the test models, side by side (a benchmark, not a test; issue 6).
#
#   scripts/bench-peers.sh [--models "resnet50 mobilenetv2 bert_encoder"] [--threads "1 2"]
#                          [--rounds 5] [--iters 10] [--no-lock] [--boost] [--int8]
#
# Builds Kiln if needed (scripts/build.sh), generates the models if missing
# (scripts/gen_test_models.py into <build>/models, as the test_models fixture does), compiles each
# with `kiln compile` (timed), then for each model and thread count runs Kiln (`kiln run`) and
# ONNX Runtime (`node ../shared/peers/ort_bench.js`) one right after the other on the same input,
# --rounds times, and prints the median of the per-round medians (each round times --iters runs
# after 3 warm-up runs) and the ratio Kiln/ORT. Each round (one Kiln run and one ORT run) holds
# the shared lock $KILN_BENCH_LOCK (default /tmp/kiln-bench.lock) so that two people never measure
# at once on a shared machine (--no-lock skips it). --boost runs each round in a session of its
# own whose autogroup has nice -10 (needs root or CAP_SYS_NICE): Linux's autogroup scheduling
# shares the cores between sessions regardless of the per-process nice of other people's builds,
# so without it a 2-thread run on a busy 2-core machine often gets about one core. Also prints
# libkiln_runtime.so's size.
# --int8 (issue 13): afterwards, for each CNN among the models (resnet50, mobilenetv2), quantizes
# it once with `kiln quantize --reduce-range` (minmax, 20 image-like calibration inputs; cached in
# the work directory) and runs scripts/bench-int8.sh on the f32 and QDQ models: Kiln int8, Kiln f32
# and ORT int8 on the same QDQ model, interleaved, with the ratios int8/f32 and Kiln/ORT int8.
#
# ONNX Runtime: the peer's node package, installed by ../shared/peers/setup.sh into
# $KILN_PEERS_DIR (default /tmp/kiln-peers); without it the ORT columns say "-" and the script
# says how to install it. Environment: KILN_BUILD_DIR (scripts/build-dir.sh), KILN_PEERS
# (the peers directory holding ort_bench.js; default <source>/../shared/peers).
set -euo pipefail
root=$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)
models="resnet50 mobilenetv2 bert_encoder"
threads="1 2"
rounds=5
iters=10
lock=1
boost=0
int8=0
while [ $# -gt 0 ]; do
  case "$1" in
    --models) models=$2; shift 2 ;;
    --threads) threads=$2; shift 2 ;;
    --rounds) rounds=$2; shift 2 ;;
    --iters) iters=$2; shift 2 ;;
    --no-lock) lock=0; shift ;;
    --boost) boost=1; shift ;;
    --int8) int8=1; shift ;;
    -h|--help) sed -n '2,27p' "$0" | sed 's/^# \{0,1\}//'; exit 0 ;;
    *) echo "bench-peers.sh: unknown argument '$1' (see --help)" >&2; exit 2 ;;
  esac
done
python=/usr/bin/python3
build_dir=$(bash "$root/scripts/build-dir.sh")
kiln="$build_dir/bin/kiln"
peers=${KILN_PEERS:-$(realpath -m "$root/../shared/peers")}
peers_dir=${KILN_PEERS_DIR:-/tmp/kiln-peers}
lock_file=${KILN_BENCH_LOCK:-/tmp/kiln-bench.lock}
work=${TMPDIR:-/tmp}/kiln-bench-peers-$(id -u)
mkdir -p "$work"

# 1. Kiln built?
if [ ! -x "$kiln" ] || [ ! -e "$build_dir/lib/libkiln_runtime.so" ]; then
  echo "bench-peers: building Kiln in $build_dir (scripts/build.sh)"
  bash "$root/scripts/build.sh"
fi

# 2. The models (the test fixture's generator: ResNet-50, MobileNetV2, BERT-style encoder).
model_dir="$build_dir/models"
for m in $models; do
  if [ ! -f "$model_dir/$m.onnx" ]; then
    echo "bench-peers: generating the test models into $model_dir (scripts/gen_test_models.py, about a minute)"
    "$python" "$root/scripts/gen_test_models.py" --out "$model_dir"
    break
  fi
done

# 3. ONNX Runtime available?
ort=1
if ! command -v node >/dev/null 2>&1; then
  ort=0; ort_why="node is not installed (apt-get install nodejs npm)"
elif [ ! -f "$peers/ort_bench.js" ]; then
  ort=0; ort_why="$peers/ort_bench.js not found (set KILN_PEERS to the peers directory)"
elif [ ! -d "$peers_dir/node_modules/onnxruntime-node" ] && [ ! -d "$peers/node_modules/onnxruntime-node" ]; then
  ort=0; ort_why="onnxruntime-node is not installed: run 'bash $peers/setup.sh' (installs it into $peers_dir, or \$KILN_PEERS_DIR)"
fi
[ $ort = 1 ] || echo "bench-peers: skipping ONNX Runtime: $ort_why"

input_arg() {  # the model's input as NAME=FILE.npy
  case "$1" in
    bert_encoder) echo "input_ids=$model_dir/bert_encoder.input_ids.npy" ;;
    *) echo "input=$model_dir/$1.input.npy" ;;
  esac
}
median() { "$python" -c 'import sys,statistics; v=[float(x) for x in sys.argv[1:]]; print("%.3f" % statistics.median(v) if v else "-")' "$@"; }
locked() { if [ $lock = 1 ] && command -v flock >/dev/null; then flock "$lock_file" "$@"; else "$@"; fi; }

# One round: Kiln then ORT, one right after the other; prints "KILN_MS ORT_MS".
round() {
  local so=$1 onnx=$2 input=$3 t=$4 k o
  k=$("$kiln" run "$so" --input "$input" --threads "$t" --repeat "$iters" --warmup 3 |
      sed -n 's/^latency: median \([0-9.]*\) ms.*/\1/p')
  o=-
  if [ $ort = 1 ]; then
    o=$(KILN_PEERS_DIR=$peers_dir node "$peers/ort_bench.js" "$onnx" --input "$input" --threads "$t" \
          --iters "$iters" --warmup 3 | sed -n 's/.*median_ms=\([0-9.]*\).*/\1/p')
  fi
  echo "${k:--} ${o:--}"
}
# --boost: a new session (so a new autogroup) with nice -10, then the round.
boosted_round() {
  echo -10 > /proc/self/autogroup 2>/dev/null || echo "bench-peers: --boost: cannot raise the priority (not root?)" >&2
  round "$@"
}
export -f round boosted_round
export kiln peers peers_dir iters ort

echo "bench-peers: $(date -u '+%Y-%m-%d %H:%M UTC'); $(grep -m1 'model name' /proc/cpuinfo | sed 's/.*: //'), $(nproc) cores; load:$(uptime | sed 's/.*load average://')"
# The core's FMA throughput now (kiln doctor: best and median of 20 x 10 ms windows): a median
# well below the best means the core is shared right now and the figures are noisy.
fma_now() { "$kiln" doctor 2>/dev/null | sed -n 's/^ *FMA throughput *//p; s/^ *now *\(busy:.*\)/  \1/p'; }
echo "FMA before: $(fma_now)"
echo "bench-peers: $rounds rounds x $iters runs (after 3 warm-up) per engine, Kiln and ORT alternating"
declare -A compile_s
for m in $models; do
  start=$(date +%s.%N)
  "$kiln" compile "$model_dir/$m.onnx" -o "$work/$m.so" >/dev/null
  compile_s[$m]=$("$python" -c "import sys; print('%.2f' % (float(sys.argv[2]) - float(sys.argv[1])))" "$start" "$(date +%s.%N)")
done

printf '\n%-14s %7s %12s %12s %10s %10s\n' model threads "Kiln ms" "ORT ms" "Kiln/ORT" "compile s"
for m in $models; do
  for t in $threads; do
    ks=(); os=()
    for _ in $(seq "$rounds"); do
      if [ $boost = 1 ]; then
        read -r k o < <(locked setsid bash -c 'boosted_round "$@"' _ "$work/$m.so" "$model_dir/$m.onnx" "$(input_arg "$m")" "$t")
      else
        read -r k o < <(locked bash -c 'round "$@"' _ "$work/$m.so" "$model_dir/$m.onnx" "$(input_arg "$m")" "$t")
      fi
      [ "$k" != - ] && ks+=("$k")
      [ "$o" != - ] && os+=("$o")
    done
    km=$(median "${ks[@]}"); om=$(median "${os[@]}")
    ratio=-
    if [ "$km" != - ] && [ "$om" != - ]; then ratio=$("$python" -c "import sys; print('%.2f' % (float(sys.argv[1]) / float(sys.argv[2])))" "$km" "$om"); fi
    printf '%-14s %7s %12s %12s %10s %10s\n' "$m" "$t" "$km" "$om" "$ratio" "${compile_s[$m]}"
  done
done
size=$(stat -L -c %s "$build_dir/lib/libkiln_runtime.so")
echo
echo "libkiln_runtime.so: $size bytes ($("$python" -c "print('%.2f' % ($size / 1048576))") MB; target <= 1 MB)"
echo "load after: $(uptime | sed 's/.*load average://')"
echo "FMA after: $(fma_now)"

# --int8: the quantized CNNs side by side (scripts/bench-int8.sh).
if [ $int8 = 1 ]; then
  calib="$work/int8_calibration.npy"
  if [ ! -f "$calib" ]; then
    # 20 image-like 1x3x224x224 samples (scripts/int8-check.py's image_like, seed 10).
    "$python" - "$calib" <<'PY'
import sys
import numpy as np
rng = np.random.RandomState(10)
coarse = rng.randn(20, 3, 7, 7).astype(np.float32)
idx = np.arange(224) * 7 // 224
x = coarse[:, :, idx][:, :, :, idx] + 0.3 * rng.randn(20, 3, 224, 224).astype(np.float32)
x = (x - x.mean(axis=(0, 2, 3), keepdims=True)) / x.std(axis=(0, 2, 3), keepdims=True)
np.save(sys.argv[1], x.astype(np.float32))
PY
  fi
  for m in $models; do
    case "$m" in resnet50|mobilenetv2) ;; *) echo "bench-peers: --int8: skipping $m (CNNs only)"; continue ;; esac
    q="$work/$m.int8.onnx"
    if [ ! -f "$q" ] || [ "$model_dir/$m.onnx" -nt "$q" ]; then
      "$kiln" quantize "$model_dir/$m.onnx" --calibration "$calib" --reduce-range --report-samples 0 -o "$q" >/dev/null 2>&1 ||
        { echo "bench-peers: --int8: kiln quantize of $m failed" >&2; exit 1; }
    fi
    echo
    echo "int8 (kiln quantize --reduce-range): $m"
    KILN_PEERS=$peers bash "$root/scripts/bench-int8.sh" "$model_dir/$m.onnx" "$q" "$model_dir/$m.input.npy" \
      --threads "$threads" --rounds "$rounds" --iters "$iters" --work "$work/int8"
  done
fi
