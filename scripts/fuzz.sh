#!/usr/bin/env bash
# libFuzzer runs (issue 14; figures in docs/reliability.md).
#   scripts/fuzz.sh TARGET SECONDS [extra libFuzzer flags, e.g. -runs=1000000]
#   scripts/fuzz.sh TARGET build          (only build build-fuzz/cmake/fuzz_TARGET)
# TARGET:
#   onnx_import  bytes -> kiln::frontend::import_onnx_bytes -> ir::verify_graph
#   ir_text      text -> ir::parse_graph -> verify -> print -> parse again (must round-trip)
#   npy          kiln::ir::parse_npy
#   artifact     libkiln_runtime's artifact reader and validator, the metadata/plan decoders
#   runtime_api  the C API with random shapes and dtypes, on the tiny-cnn artifact ($KILN_FUZZ_ARTIFACT)
# fuzz/CMakeLists.txt is configured once in build-fuzz/cmake with clang-19 (Debian's clang-19 +
# libclang-rt-19-dev, from scripts/install-deps.sh): the compiler layers the importer and parser
# need (support, ir, ref, frontend; no LLVM) and the runtime, with
# -fsanitize=fuzzer-no-link,address,undefined, then each target with -fsanitize=fuzzer. The
# corpus build-fuzz/corpus/TARGET is seeded from fuzz/seeds/TARGET (committed, minimized) and the
# test data: ONNX node-test models (../shared/onnx-node-tests) and the main build's .onnx files;
# `kiln ir` text of small node-test models and the text in tests/; .npy files; small artifacts.
# Runs one job for SECONDS. Crashers land in build-fuzz/crashers/TARGET/; each must become a
# regression test (tests/fuzz_regressions/). Only one fuzzer at a time on a shared machine.
set -euo pipefail
root=$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)
usage="usage: scripts/fuzz.sh onnx_import|ir_text|npy|artifact|runtime_api SECONDS|build [libFuzzer flags]"
target=${1:?$usage}
seconds=${2:?$usage}
shift 2
cxx=${KILN_FUZZ_CXX:-clang++-19}
command -v "$cxx" >/dev/null || { echo "error: fuzz.sh: $cxx not found; run scripts/install-deps.sh (clang-19, libclang-rt-19-dev)" >&2; exit 2; }
case "$target" in
  onnx_import|ir_text|npy|artifact|runtime_api) ;;
  *) echo "error: fuzz.sh: unknown target '$target'; $usage" >&2; exit 2 ;;
esac
out="$root/build-fuzz"
cmake_dir="$out/cmake"
if [ ! -f "$cmake_dir/CMakeCache.txt" ]; then
  cmake -S "$root/fuzz" -B "$cmake_dir" -DCMAKE_BUILD_TYPE=None -DCMAKE_CXX_COMPILER="$cxx" \
    -DCMAKE_C_COMPILER="${cxx/clang++/clang}" >/dev/null
fi
cmake --build "$cmake_dir" -j "${KILN_FUZZ_JOBS:-$(bash "$root/scripts/job-count.sh")}" --target "fuzz_$target"
bin="$cmake_dir/fuzz_$target"
[ "$seconds" = build ] && exit 0

corpus="$out/corpus/$target"
mkdir -p "$corpus" "$out/crashers/$target"
[ -d "$root/fuzz/seeds/$target" ] && cp -n "$root/fuzz/seeds/$target"/* "$corpus/" 2>/dev/null || true
build="$(bash "$root/scripts/build-dir.sh")"
kiln="$build/bin/kiln"
node_tests="$root/../shared/onnx-node-tests/node"
seed_once() { [ -f "$corpus/.seeded" ] || { "$@"; touch "$corpus/.seeded"; }; }
case "$target" in
  onnx_import)
    seed_onnx() {
      find "$node_tests" "$build" -name '*.onnx' -size -16k 2>/dev/null | while read -r f; do
        cp -n "$f" "$corpus/$(basename "$(dirname "$f")")_$(basename "$f")"
      done
    }
    seed_once seed_onnx
    len=16384 ;;
  ir_text)
    seed_text() {
      # The hand-written text in the tests (raw string literals that hold a graph).
      /usr/bin/python3 - "$root/tests" "$corpus" <<'PY'
import pathlib, re, sys
n = 0
for f in sorted(pathlib.Path(sys.argv[1]).rglob("*.cc")):
    for m in re.finditer(r'R"\((.*?)\)"', f.read_text(errors="replace"), re.S):
        if "graph(" in m.group(1):
            (pathlib.Path(sys.argv[2]) / f"{f.stem}_{n}.kir").write_text(m.group(1)); n += 1
PY
      # `kiln ir` of small node-test models, constants inline (no side table).
      if [ -x "$kiln" ]; then
        find "$node_tests" -name model.onnx -size -4k | sort | awk "NR % 8 == 1" | head -200 | while read -r f; do
          name=$(basename "$(dirname "$f")")
          "$kiln" ir "$f" --inline-limit 1024 > "$corpus/$name.kir" 2>/dev/null || rm -f "$corpus/$name.kir"
          [ ! -f "$corpus/$name.kir" ] || [ "$(stat -c %s "$corpus/$name.kir")" -le 8192 ] || rm -f "$corpus/$name.kir"
        done
      fi
    }
    seed_once seed_text
    len=8192 ;;
  npy)
    find "$root/tests" "$build" -maxdepth 4 -name '*.npy' -size -64k 2>/dev/null | head -200 |
      while read -r f; do cp -n "$f" "$corpus/$(basename "$(dirname "$f")")_$(basename "$f")"; done || true  # head closes the pipe
    len=65536 ;;
  artifact)
    if [ -x "$kiln" ] && [ ! -f "$corpus/tiny-cnn.so" ]; then
      "$kiln" compile --example tiny-cnn -o "$corpus/tiny-cnn.so" >/dev/null
    fi
    find "$build" -maxdepth 2 -name '*.so' -size -200k ! -name 'lib*' 2>/dev/null | head -20 |
      while read -r f; do cp -n "$f" "$corpus/"; done || true
    len=131072 ;;
  runtime_api)
    if [ -z "${KILN_FUZZ_ARTIFACT:-}" ] && [ -x "$kiln" ]; then
      export KILN_FUZZ_ARTIFACT="$out/tiny-cnn.so"
      [ -f "$KILN_FUZZ_ARTIFACT" ] || "$kiln" compile --example tiny-cnn -o "$KILN_FUZZ_ARTIFACT" >/dev/null
    fi
    [ -n "$(ls "$corpus")" ] || printf '\003\004\001\002\003\004\002\040\001\000' > "$corpus/seed"
    len=256 ;;
esac
echo "fuzz.sh: $target for $seconds s, corpus $(ls "$corpus" | wc -l) files"
# allocator_may_return_null: a failed allocation returns NULL, as it would in production, so the
# code's out-of-memory paths run instead of ASan aborting.
ASAN_OPTIONS=${ASAN_OPTIONS:-detect_leaks=1:allocator_may_return_null=1} "$bin" "$corpus" -max_total_time="$seconds" -max_len=$len \
  -timeout=10 -rss_limit_mb=2048 -malloc_limit_mb=2048 -print_final_stats=1 -artifact_prefix="$out/crashers/$target/" "$@"
