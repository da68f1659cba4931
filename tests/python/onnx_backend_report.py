"""Summarizes a full run of test_onnx_backend.py (KILN_ONNX_BACKEND_ALL=1, pytest -v -rf logs):
ONNX BackendTest passes through kiln.onnx_backend vs the tests Kiln's own node-test runner passes
(onnx_node_suite.kiln_selection), and every test where the two disagree, with the failure.
A log cut short (a run stopped early) counts what it reached: the comparison is then over the tests
run. Usage: onnx_backend_report.py LOG... [--markdown OUT.md]. Exit 1 when the adapter's pass
count is more than 2% below Kiln's runner's over the same tests."""
import argparse
import os
import sys
import collections
import re

_here = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, _here)
_build = os.environ.get("KILN_BUILD_DIR", "build")
sys.path.insert(0, os.path.join(_build if os.path.isabs(_build) else os.path.join(_here, "..", "..", _build), "python"))
import onnx_node_suite as suite  # noqa: E402


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("logs", nargs="+")
    ap.add_argument("--markdown")
    args = ap.parse_args()
    results = {}
    for log in args.logs:
        for line in open(log, errors="replace"):
            m = re.match(r"\S+::OnnxBackendNodeModelTest::(test_\w+)_cpu (PASSED|FAILED|SKIPPED|ERROR)", line)
            if m:
                results[m.group(1)] = (m.group(2).lower(), "")
            m = re.match(r"(?:FAILED|ERROR) \S+::OnnxBackendNodeModelTest::(test_\w+)_cpu - (.*)", line)
            if m:
                results[m.group(1)] = ("failed", m.group(2)[:200])
    selection = {f: r for f, r in suite.kiln_selection().items() if f in results}  # the tests run
    kiln_pass = sum(1 for r in selection.values() if r is None)
    adapter_pass = sum(1 for s, _ in results.values() if s == "passed")
    lost = sorted(f for f, r in selection.items() if r is None and results[f][0] != "passed")
    gained = sorted(f for f, r in selection.items() if r is not None and results[f][0] == "passed")
    lines = [f"ONNX node tests run: {len(selection)} of {len(suite.kiln_selection())}; ONNX BackendTest through kiln.onnx_backend: {adapter_pass} pass, "
             f"{sum(1 for s, _ in results.values() if s == 'failed')} fail; Kiln's own runner: {kiln_pass} pass "
             f"({100.0 * (adapter_pass - kiln_pass) / max(kiln_pass, 1):+.1f}%)",
             f"of those, on the tests Kiln's runner passes: {kiln_pass - len(lost)} of {kiln_pass} pass here; "
             f"{len(gained)} more pass here that Kiln's runner does not count (below)",
             f"passing in Kiln's runner, failing through ONNX's runner: {len(lost)}"]
    lines += [f"| `{f}` | {results[f][1]} |" for f in lost]
    lines += [f"passing through ONNX's runner, not in Kiln's runner's passes: {len(gained)}"]
    lines += [f"| `{f}` | {selection[f]} |" for f in gained]
    # Per operator, against scripts/node-suite.sh's compiled counts in docs/onnx.md (which runs every
    # test, expanded function bodies of unsupported operators included), over operators fully run.
    op_of = suite.operator_of_tests()
    suite_pass = suite.node_suite_compiled_passes()
    tests_of = collections.defaultdict(list)
    for f, op in op_of.items():
        tests_of[op].append(f)
    full = [op for op, fs in tests_of.items() if op in suite_pass and all(f in results for f in fs)]
    here = {op: sum(results[f][0] == "passed" for f in tests_of[op]) for op in full}
    lines.append(f"against scripts/node-suite.sh's compiled passes (docs/onnx.md), over the {len(full)} operators "
                 f"whose {sum(len(tests_of[o]) for o in full)} tests all ran: {sum(here.values())} pass here, "
                 f"{sum(suite_pass[o] for o in full)} in the node suite")
    lines += [f"| {op} | here {here[op]} | node suite {suite_pass[op]} |" for op in sorted(full) if here[op] != suite_pass[op]]
    print("\n".join(lines))
    if args.markdown:
        open(args.markdown, "w").write("\n".join(lines) + "\n")
    return 0 if adapter_pass >= 0.98 * kiln_pass else 1


if __name__ == "__main__":
    sys.exit(main())
