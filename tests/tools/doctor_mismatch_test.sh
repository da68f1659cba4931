#!/bin/sh
# Runs the real `kiln doctor` against the test-only ABI-99 libkiln_runtime (see tests.cmake) and
# expects: exit status 1, the loaded runtime is the ABI-99 one, and one mismatch problem line.
# Usage: doctor_mismatch_test.sh KILN_EXECUTABLE ABI99_LIBRARY_DIR
kiln=$1
dir=$2
fail() { echo "FAIL: $*"; echo "--- kiln doctor output ---"; echo "$out"; exit 1; }

[ -f "$dir/libkiln_runtime.so.1" ] || { echo "FAIL: $dir/libkiln_runtime.so.1 was not built"; exit 1; }
out=$(env -u KILN_CC LD_LIBRARY_PATH="$dir" "$kiln" doctor 2>&1)
rc=$?
echo "$out"
[ "$rc" -eq 1 ] || fail "expected exit status 1, got $rc"
echo "$out" | grep -q "^    loaded from       $dir/libkiln_runtime.so.1\$" ||
  fail "the ABI-99 runtime in $dir was not the one loaded (LD_LIBRARY_PATH did not win over RUNPATH?)"
echo "$out" | grep -q "^  libkiln_runtime     .*runtime ABI 99\$" || fail "runtime ABI 99 not reported"
n=$(echo "$out" | grep -c "^problem: runtime ABI mismatch: libkiln_runtime at $dir/libkiln_runtime.so.1 has runtime ABI 99, but libkiln .* was built for runtime ABI 1; fix: use the libkiln_runtime built together with this libkiln.*LD_LIBRARY_PATH is set")
[ "$n" -eq 1 ] || fail "expected exactly one runtime ABI mismatch problem line, found $n"
echo "$out" | grep -q "^ok:" && fail "doctor said ok despite the mismatch"
# Control: without LD_LIBRARY_PATH the same executable finds the build's own runtime and passes.
out=$(env -u KILN_CC -u LD_LIBRARY_PATH "$kiln" doctor 2>&1)
rc=$?
[ "$rc" -eq 0 ] || fail "control run without LD_LIBRARY_PATH exited $rc"
echo "PASS: doctor detected the ABI mismatch (exit 1) and passes without it (exit 0)"
