#!/usr/bin/env bash
# The README's first command: installs what is missing, builds, then runs Kiln's main job end to
# end on a built-in example model (no ONNX file, no Python, no torch needed):
#   kiln compile --example tiny-cnn -o DIR/tiny_cnn.so   (graph passes, fused kernels, LLVM, artifact)
#   kiln run DIR/tiny_cnn.so --input x=... --repeat 50  (libkiln_runtime; prints the latency)
# and finally `kiln doctor` (what this installation is made of; exit 1 on a problem).
# Needs only bash (make is not required); `make demo` calls this.
set -euo pipefail
root=$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)
bash "$root/scripts/install-deps.sh"
bash "$root/scripts/build.sh"
build_dir=$(bash "$root/scripts/build-dir.sh")
kiln="$build_dir/bin/kiln"
work=$(mktemp -d "${TMPDIR:-/tmp}/kiln-demo.XXXXXX")
trap 'rm -rf "$work"' EXIT
echo "== kiln compile --example tiny-cnn"
"$kiln" compile --example tiny-cnn -o "$work/tiny_cnn.so"
echo "== kiln run (libkiln_runtime)"
"$kiln" run "$work/tiny_cnn.so" --input "x=$work/tiny_cnn_x.npy" --output "$work/y.npy" --warmup 5 --repeat 50
echo "== kiln doctor"
"$kiln" doctor
