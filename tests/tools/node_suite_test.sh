#!/bin/sh
# kiln_node_suite on a few ONNX node tests (skips when ../shared/onnx-node-tests is absent): the run
# step writes one row per test with the reference and compiled outcomes (test_add_uint32 passes
# both; test_reshape_extended_dims passes compiled with its shape input bound; a model of another domain
# is an unsupported op), the report prints the totals line, and --update-doc splices the Markdown section
# between the markers of a scratch file, leaving the text around them alone.
# Usage: node_suite_test.sh KILN_NODE_SUITE SOURCE_DIR SCRATCH_DIR
tool=$1
root="$2/../shared/onnx-node-tests"
dir=$3
fail() { echo "FAIL: $*"; exit 1; }
if [ ! -f "$root/index.tsv" ]; then echo "SKIP: no ONNX node tests at $root"; exit 0; fi
rm -rf "$dir" && mkdir -p "$dir"
"$tool" run --root "$root" --out "$dir/kiln.tsv" --filter test_add_uint32 --jobs 1 || fail "run failed"
"$tool" run --root "$root" --out "$dir/k2.tsv" --filter test_reshape_extended_dims --jobs 1 || fail "run failed"
"$tool" run --root "$root" --out "$dir/k3.tsv" --filter test_adagrad_multiple --jobs 1 || fail "run failed"
tail -n +2 "$dir/k2.tsv" >> "$dir/kiln.tsv"
tail -n +2 "$dir/k3.tsv" >> "$dir/kiln.tsv"
cat "$dir/kiln.tsv"
grep -q "^test_add_uint32	pass		.*	pass		" "$dir/kiln.tsv" || fail "test_add_uint32 should pass reference and compiled"
grep -q "^test_reshape_extended_dims	pass	shape	.*	pass	shape	" "$dir/kiln.tsv" || fail "test_reshape_extended_dims should pass with 'shape' bound"
grep -q "^test_adagrad_multiple	unsupported-op	" "$dir/kiln.tsv" || fail "test_adagrad_multiple (no ai.onnx opset) should be an unsupported op"
printf 'before\n<!-- node-suite:begin -->\nold\n<!-- node-suite:end -->\nafter\n' > "$dir/doc.md"
printf 'test_add_uint32\tpass\t\ntest_adagrad_multiple\tfail\tsession: whatever\n' > "$dir/ort.tsv"
out=$("$tool" report --root "$root" --kiln "$dir/kiln.tsv" --ort "$dir/ort.tsv" --tsv "$dir/all.tsv" \
      --update-doc "$dir/doc.md" --command "scripts/node-suite.sh --update-docs") || fail "report failed"
echo "$out"
echo "$out" | grep -q "^TOTAL tests=3 kiln_ref=2 kiln_compiled=2 kiln_compiled_bound=1 ort=1$" || fail "wrong totals"
[ "$(head -1 "$dir/doc.md")" = before ] && [ "$(tail -1 "$dir/doc.md")" = after ] || fail "text around the markers changed"
grep -q "^| test_adagrad_multiple | ai.onnx.preview.training.Adagrad | unsupported-op | " "$dir/doc.md" ||
  fail "the failure list lacks test_adagrad_multiple (an unsupported op)"
grep -q "^old$" "$dir/doc.md" && fail "the old section was not replaced"
echo "ok"
