#!/bin/sh
# examples/c/run_model.c, built against libkiln_runtime only, runs a real artifact and prints what
# the model computed in plain C++ gives (make_test_artifact prints that).
# usage: c_example_test.sh MAKE_TEST_ARTIFACT RUN_MODEL WORKDIR
set -eu
make_artifact=$1 run_model=$2 work=$3
mkdir -p "$work"
"$make_artifact" "$work/model.so" > "$work/expected.txt"
"$run_model" "$work/model.so" 3 > "$work/actual.txt"
if ! diff -u "$work/expected.txt" "$work/actual.txt"; then
  echo "FAIL: run_model output differs from the reference" >&2
  exit 1
fi
# The example links libkiln_runtime and nothing of the compiler.
libs=$(ldd "$run_model")
echo "$libs"
echo "$libs" | grep -q 'libkiln_runtime\.so' || { echo "FAIL: run_model does not link libkiln_runtime" >&2; exit 1; }
if echo "$libs" | grep -q 'libkiln\.so'; then echo "FAIL: run_model links libkiln (the compiler)" >&2; exit 1; fi
# Bad artifact: a clear message and exit 1, never a crash.
head -c 1000 "$work/model.so" > "$work/truncated.so"
if "$run_model" "$work/truncated.so" 2> "$work/err.txt"; then echo "FAIL: truncated artifact accepted" >&2; exit 1; fi
grep -q 'error: loading the artifact: kiln_module_load: .*truncated' "$work/err.txt" || { cat "$work/err.txt"; exit 1; }
echo "PASS"
