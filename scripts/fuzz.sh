#!/usr/bin/env bash
# libFuzzer runs (issue 14; figures in docs/reliability.md).
#   scripts/fuzz.sh TARGET SECONDS [extra libFuzzer flags]
# TARGET: npy (kiln::ir::parse_npy), artifact (libkiln_runtime's artifact reader and validator,
# and the metadata/plan decoders) or runtime_api (the C API with random shapes and dtypes, on the
# tiny-cnn artifact: $KILN_FUZZ_ARTIFACT). Builds fuzz/fuzz_TARGET.cc with clang++-19 (-fsanitize=fuzzer,
# address,undefined; Debian's clang-19 + libclang-rt-19-dev, from scripts/install-deps.sh) into
# build-fuzz/, seeds build-fuzz/corpus/TARGET from the test data (.npy files; small artifacts,
# compiling the tiny-cnn example when the main build has a kiln CLI), and runs for SECONDS with
# one job. Crashers land in build-fuzz/crashers/TARGET/; turn each into a regression test.
# Only one fuzzer at a time on a shared machine.
set -euo pipefail
root=$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)
target=${1:?usage: scripts/fuzz.sh npy|artifact|runtime_api SECONDS}
seconds=${2:?usage: scripts/fuzz.sh npy|artifact|runtime_api SECONDS}
shift 2
cxx=${KILN_FUZZ_CXX:-clang++-19}
command -v "$cxx" >/dev/null || { echo "error: fuzz.sh: $cxx not found; run scripts/install-deps.sh (clang-19, libclang-rt-19-dev)" >&2; exit 2; }
out="$root/build-fuzz"
mkdir -p "$out/corpus/$target" "$out/crashers/$target"
flags=(-std=c++20 -O1 -g -fsanitize=fuzzer,address,undefined -fno-sanitize-recover=undefined
       -I"$root/include" -DKILN_VERSION_STRING=\"fuzz\")
build="$(bash "$root/scripts/build-dir.sh")"
case "$target" in
  npy)
    srcs=("$root/fuzz/fuzz_npy.cc" "$root/src/ir/npy.cc" "$root/src/ir/ndarray.cc" "$root/src/ir/dtype.cc"
          "$root/src/support/error.cc")
    find "$root/tests" "$build" -maxdepth 4 -name '*.npy' -size -64k 2>/dev/null | head -200 |
      while read -r f; do cp -n "$f" "$out/corpus/$target/$(basename "$(dirname "$f")")_$(basename "$f")"; done
    len=65536 ;;
  artifact)
    srcs=("$root/fuzz/fuzz_artifact.cc" "$root"/src/runtime/*.cc)
    flags+=(-I"$root/src/runtime" -DKILN_RUNTIME_BUILDING -ldl -lpthread)
    if [ -x "$build/bin/kiln" ] && [ ! -f "$out/corpus/$target/tiny-cnn.so" ]; then
      "$build/bin/kiln" compile --example tiny-cnn -o "$out/corpus/$target/tiny-cnn.so" >/dev/null
    fi
    find "$build" -maxdepth 2 -name '*.so' -size -200k ! -name 'lib*' 2>/dev/null | head -20 |
      while read -r f; do cp -n "$f" "$out/corpus/$target/"; done
    len=131072 ;;
  runtime_api)
    srcs=("$root/fuzz/fuzz_runtime_api.cc" "$root"/src/runtime/*.cc)
    # -rdynamic: the artifact's kernels resolve kiln_parallel_for etc. from this executable.
    flags+=(-I"$root/src/runtime" -DKILN_RUNTIME_BUILDING -rdynamic -ldl -lpthread)
    if [ -z "${KILN_FUZZ_ARTIFACT:-}" ] && [ -x "$build/bin/kiln" ]; then
      export KILN_FUZZ_ARTIFACT="$out/tiny-cnn.so"
      [ -f "$KILN_FUZZ_ARTIFACT" ] || "$build/bin/kiln" compile --example tiny-cnn -o "$KILN_FUZZ_ARTIFACT" >/dev/null
    fi
    [ -n "$(ls "$out/corpus/$target")" ] || printf '\003\004\001\002\003\004\002\040\001\000' > "$out/corpus/$target/seed"
    len=256 ;;
  *) echo "error: fuzz.sh: unknown target '$target' (npy, artifact, runtime_api)" >&2; exit 2 ;;
esac
bin="$out/fuzz_$target"
newest=$(ls -t "${srcs[@]}" "$root"/include/kiln/runtime/*.h | head -1)
if [ ! -x "$bin" ] || [ "$newest" -nt "$bin" ]; then
  echo "fuzz.sh: building $bin"
  "$cxx" "${flags[@]}" "${srcs[@]}" -o "$bin"
fi
echo "fuzz.sh: $target for $seconds s, corpus $(ls "$out/corpus/$target" | wc -l) files"
# allocator_may_return_null: a failed allocation returns NULL, as it would in production, so the
# code's out-of-memory paths run instead of ASan aborting.
ASAN_OPTIONS=${ASAN_OPTIONS:-detect_leaks=1:allocator_may_return_null=1} "$bin" "$out/corpus/$target" -max_total_time="$seconds" -max_len=$len \
  -timeout=10 -rss_limit_mb=2048 -malloc_limit_mb=2048 -print_final_stats=1 -artifact_prefix="$out/crashers/$target/" "$@"
