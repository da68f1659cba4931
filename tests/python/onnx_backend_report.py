"""Summarizes a full run of test_onnx_backend.py (KILN_ONNX_BACKEND_ALL=1, --junitxml FILE):
ONNX BackendTest passes through kiln.onnx_backend vs the tests Kiln's own node-test runner passes
(onnx_node_suite.kiln_selection), and every test where the two disagree, with the failure.
Usage: onnx_backend_report.py JUNIT.xml [--markdown OUT.md]. Exit 1 when the adapter's pass count
is more than 2% below Kiln's runner's."""
import argparse
import collections
import os
import sys
import xml.etree.ElementTree as ET

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import onnx_node_suite as suite  # noqa: E402


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("junit")
    ap.add_argument("--markdown")
    args = ap.parse_args()
    results = {}
    for case in ET.parse(args.junit).getroot().iter("testcase"):
        name = case.get("name")
        if not name.endswith("_cpu"):
            continue
        folder = name[:-len("_cpu")]
        bad = case.find("failure") if case.find("failure") is not None else case.find("error")
        if case.find("skipped") is not None:
            results[folder] = ("skipped", case.find("skipped").get("message", ""))
        elif bad is not None:
            results[folder] = ("failed", (bad.get("message") or "").splitlines()[0][:200] if bad.get("message") else "")
        else:
            results[folder] = ("passed", "")
    selection = suite.kiln_selection()
    kiln_pass = sum(1 for r in selection.values() if r is None)
    adapter_pass = sum(1 for s, _ in results.values() if s == "passed")
    lost = sorted(f for f, r in selection.items() if r is None and results.get(f, ("missing",))[0] != "passed")
    gained = sorted(f for f, r in selection.items() if r is not None and results.get(f, ("",))[0] == "passed")
    causes = collections.Counter(results[f][1].split(":")[0] if f in results else "not run" for f in lost)
    lines = [f"ONNX node tests: {len(selection)}; ONNX BackendTest through kiln.onnx_backend: {adapter_pass} pass, "
             f"{sum(1 for s, _ in results.values() if s == 'failed')} fail; Kiln's own runner: {kiln_pass} pass "
             f"({100.0 * (adapter_pass - kiln_pass) / max(kiln_pass, 1):+.1f}%)",
             f"passing in Kiln's runner, failing through ONNX's runner: {len(lost)}"]
    lines += [f"| `{f}` | {results.get(f, ('', 'not run'))[1]} |" for f in lost]
    lines += [f"passing through ONNX's runner, not in Kiln's runner's passes: {len(gained)}"]
    lines += [f"| `{f}` | {selection[f]} |" for f in gained]
    print("\n".join(lines))
    if args.markdown:
        open(args.markdown, "w").write("\n".join(lines) + "\n")
    return 0 if adapter_pass >= 0.98 * kiln_pass else 1


if __name__ == "__main__":
    sys.exit(main())
