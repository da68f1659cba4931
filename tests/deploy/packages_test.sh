#!/bin/sh
# The installed-package test (docs/deploy.md): builds the .deb packages with scripts/package.sh,
# unpacks them into a scratch root with `dpkg -x`, builds examples/c against the installed CMake
# package, compiles MobileNetV2 with the installed `kiln` and runs it with the example (amd64)
# and with the arm64 package's kiln-run-npy under qemu-aarch64, comparing with PyTorch's output
# (max|kiln - torch| / max|torch| <= 1e-3). Checks the arm64 libkiln_runtime's size (<= 1 MB) and
# DT_NEEDED (libc, libstdc++, libgcc_s, libm only), that lintian reports no tag (the remaining
# ones are overridden with reasons in cmake/packaging/lintian-overrides.*), and that every
# command it runs from the guide appears in docs/deploy.md verbatim.
# usage: packages_test.sh SOURCE_DIR BUILD_DIR WORK_DIR; exit 77 (skip) without dpkg-deb.
set -eu
src=$1 build=$2 work=$3
fail() { echo "FAIL: $*" >&2; exit 1; }
command -v dpkg-deb >/dev/null || { echo "SKIP: dpkg-deb not found (scripts/install-deps.sh installs dpkg-dev)"; exit 77; }
models=$build/models
[ -f "$models/mobilenetv2.onnx" ] || { echo "SKIP: $models/mobilenetv2.onnx missing (scripts/gen_test_models.py)"; exit 77; }
arm64=1
{ command -v aarch64-linux-gnu-gcc >/dev/null && command -v qemu-aarch64 >/dev/null; } || arm64=0
rm -rf "$work"; mkdir -p "$work"

# The guide's commands, run below; each must appear in docs/deploy.md as written here.
doc_commands="scripts/package.sh
scripts/build-runtime-aarch64.sh
kiln doctor --cross-triple aarch64-linux-gnu
kiln compile model.onnx --target 'llvm -mtriple=aarch64-linux-gnu -mcpu=neoverse-n1' -o model.so
kiln-run-npy model.so out input=input.npy
cmake -S examples/c -B build-example -DCMAKE_PREFIX_PATH=/usr
cmake --build build-example
build-example/run_model model.so
find_package(KilnRuntime 0.1 REQUIRED)
target_link_libraries(app PRIVATE Kiln::runtime)"
echo "$doc_commands" | while IFS= read -r c; do
  grep -qF -- "$c" "$src/docs/deploy.md" || fail "docs/deploy.md lacks the command: $c"
done

# 1. Packages (the arm64 runtime from the fixture's cross build, build/aarch64-runtime).
pk=$work/packages
if [ $arm64 = 1 ]; then
  KILN_BUILD_DIR=$build bash "$src/scripts/package.sh" --out "$pk" --arm64-build "$build/aarch64-runtime"
else
  echo "note: no AArch64 cross compiler or qemu-aarch64: amd64 packages only"
  KILN_BUILD_DIR=$build bash "$src/scripts/package.sh" --out "$pk" --no-arm64
fi
host_arch=$(dpkg --print-architecture)
multiarch=$(gcc -print-multiarch)
root=$work/root
for p in kiln-runtime kiln kiln-dev; do
  deb=$(ls "$pk"/${p}_*_"$host_arch".deb) || fail "no $p package for $host_arch"
  dpkg-deb --info "$deb" >/dev/null
  dpkg -x "$deb" "$root"
done
if [ -f "$pk/lintian.txt" ]; then
  if grep -E '^(E|W):' "$pk/lintian.txt"; then fail "lintian reports the tags above ($pk/lintian.txt)"; fi
  echo "lintian: clean (overrides with reasons: cmake/packaging/lintian-overrides.*)"
fi

# 2. examples/c against the installed CMake package (the guide's section 4, prefix = the root).
cd "$work"
cp -r "$src/examples" "$work/examples"
cmake -S examples/c -B build-example -DCMAKE_PREFIX_PATH="$root/usr" >/dev/null
cmake --build build-example >/dev/null
ldd build-example/run_npy | grep -q "$root/usr/lib/$multiarch/libkiln_runtime.so" ||
  fail "run_npy does not link the installed libkiln_runtime: $(ldd build-example/run_npy)"

# 3. The installed compiler (its libraries from the root), then the model on this machine.
export PATH="$root/usr/bin:$PATH" LD_LIBRARY_PATH="$root/usr/lib/$multiarch"
cp "$models/mobilenetv2.onnx" model.onnx
cp "$models/mobilenetv2.input.npy" input.npy
check() {  # OUTPUT.npy
  /usr/bin/python3 -c "
import sys, numpy as np
got, want = np.load(sys.argv[1]), np.load(sys.argv[2])
rel = float(np.abs(got - want).max() / np.abs(want).max())
print('%s: max|kiln - torch| / max|torch| = %.3g' % (sys.argv[1], rel))
sys.exit(0 if got.shape == want.shape and rel <= 1e-3 else 1)" "$1" "$models/mobilenetv2.output.npy" || fail "$1 differs from PyTorch"
}
kiln compile model.onnx -o model-host.so >/dev/null
mkdir -p out-host
build-example/run_npy model-host.so out-host input=input.npy
check out-host/output_0.npy
build-example/run_model model-host.so >/dev/null || fail "run_model failed"

# 4. The device: the arm64 runtime package under qemu-user.
if [ $arm64 = 1 ]; then
  kiln doctor --cross-triple aarch64-linux-gnu | grep 'cross link' || fail "kiln doctor --cross-triple"
  kiln compile model.onnx --target 'llvm -mtriple=aarch64-linux-gnu -mcpu=neoverse-n1' -o model.so >/dev/null
  dev=$work/device-root
  dpkg -x "$(ls "$pk"/kiln-runtime_*_arm64.deb)" "$dev"
  lib=$dev/usr/lib/aarch64-linux-gnu/libkiln_runtime.so.1
  size=$(stat -L -c %s "$lib")
  echo "arm64 libkiln_runtime: $size bytes"
  [ "$size" -le 1048576 ] || fail "arm64 libkiln_runtime is $size bytes (> 1 MB)"
  needed=$(aarch64-linux-gnu-readelf -d "$lib" | sed -n 's/.*(NEEDED).*\[\(.*\)\]/\1/p' | tr '\n' ' ')
  echo "arm64 libkiln_runtime needs: $needed"
  for n in $needed; do
    case "$n" in libc.so.6|libstdc++.so.6|libgcc_s.so.1|libm.so.6) ;; *) fail "arm64 runtime needs $n" ;; esac
  done
  mkdir -p out
  (unset LD_LIBRARY_PATH; qemu-aarch64 -L /usr/aarch64-linux-gnu -E LD_LIBRARY_PATH="$dev/usr/lib/aarch64-linux-gnu" \
     "$dev/usr/bin/kiln-run-npy" model.so out input=input.npy)
  check out/output_0.npy
fi
echo "PASS"
