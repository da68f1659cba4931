"""ONNX's own backend test runner (onnx.backend.test.BackendTest) over the node tests in
../shared/onnx-node-tests, driving kiln.onnx_backend; and which of those tests Kiln's own node-test
runner passes (the same rule as tests/e2e/compile_node_tests_test.cc), for comparing the two.

Two adaptations of ONNX's runner, neither changing what a test checks:
  - the runner of Debian's onnx (1.12) reads the data bundled with onnx, which Debian does not ship:
    its loader is pointed at ../shared/onnx-node-tests/node (ONNX's node test data, 1.23);
  - its output comparison uses numpy.object, removed in numpy 1.24: assert_similar_outputs is the
    same comparison (dtype equal, then assert_allclose with the case's rtol/atol, NaN == NaN; object
    arrays exactly) without that name."""
import os
import re
from unittest import mock

import numpy as np
import onnx.backend.test
import onnx.backend.test.loader
import onnx.backend.test.runner

import kiln
import kiln.onnx_backend

ROOT = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
DATA = os.path.join(os.path.dirname(ROOT), "shared", "onnx-node-tests")

# Tests Kiln's own runner passes that fail through ONNX's runner, with the reason (docs/python.md).
ADAPTER_EXPECTED_FAILURES = {
    "test_range_bfloat16_type_positive_delta":
        "a bfloat16 input bound at compile time: kiln.compile(bind=...) takes numpy arrays, and numpy has no bfloat16",
    "test_range_bfloat16_type_positive_delta_expanded": "same as test_range_bfloat16_type_positive_delta",
}


def have_data():
    return os.path.isfile(os.path.join(DATA, "index.tsv")) and os.path.isdir(os.path.join(DATA, "node"))


def listed_failures():
    """{test: reason} of docs/onnx.md's "Expected node-test failures" table."""
    out, section = {}, False
    for line in open(os.path.join(ROOT, "docs", "onnx.md")):
        if line.startswith("#"):
            section = "Expected node-test failures" in line
        m = re.match(r"\| `(test_[^`]+)` \| (.*) \|\s*$", line) if section else None
        if m:
            out[m.group(1)] = m.group(2)
    return out


def node_suite_compiled_passes():
    """{operator: tests Kiln passes compiled} from docs/onnx.md's whole-node-suite table
    (scripts/node-suite.sh: every test run, compiled -O3, inputs bound as needed)."""
    out, section = {}, False
    for line in open(os.path.join(ROOT, "docs", "onnx.md")):
        if line.startswith("## "):
            section = "Whole node suite" in line
        m = re.match(r"\| (\S+) \| (\d+) \| (\d+) \| (\d+) \| (\d+) \| (\d+) \|\s*$", line) if section else None
        if m:
            out[m.group(1)] = int(m.group(4))
    return out


def operator_of_tests():
    """{test folder: op_type} from index.tsv."""
    with open(os.path.join(DATA, "index.tsv")) as f:
        next(f)
        return {cols[0]: cols[2] for cols in (line.split("\t") for line in f)}


def kiln_selection():
    """{test folder: None when Kiln's own runner runs and passes it, else the reason it does not}."""
    supported = set(kiln._kiln.onnx_supported_ops())
    min_opset = kiln._kiln.onnx_opset_range()[0]
    listed = listed_failures()
    out = {}
    with open(os.path.join(DATA, "index.tsv")) as f:
        next(f)
        for line in f:
            cols = line.rstrip("\n").split("\t")
            folder, domain, op, expanded, opset = cols[0], cols[1], cols[2], cols[3], cols[5]
            if domain not in ("ai.onnx", "") or op not in supported:
                out[folder] = f"operator {op} ({domain}) is not supported"
            elif opset == "-" or int(opset) < min_opset:
                out[folder] = f"opset {opset} is older than {min_opset}"
            elif expanded == "1" and not all(
                    o in supported for o in kiln._kiln.onnx_op_types(os.path.join(DATA, "node", folder, "model.onnx"))):
                out[folder] = "its function body uses an unsupported operator"
            elif folder in listed:
                out[folder] = "docs/onnx.md: " + listed[folder]
            else:
                out[folder] = None
    return out


def one_per_operator(selection):
    """The first test (by name) of each operator among those Kiln's runner passes."""
    chosen = {}
    with open(os.path.join(DATA, "index.tsv")) as f:
        next(f)
        for line in f:
            folder, op = line.split("\t")[0], line.split("\t")[2]
            if selection.get(folder) is None and folder not in ADAPTER_EXPECTED_FAILURES:
                chosen.setdefault(op, folder)
    return sorted(chosen.values())


def _load_model_tests(data_dir=None, kind=None):
    if kind != "node":
        return []
    return onnx.backend.test.loader.load_model_tests(data_dir=DATA, kind="node")


class KilnBackendTest(onnx.backend.test.BackendTest):
    def __init__(self, backend, parent_module):
        with mock.patch.object(onnx.backend.test.runner, "load_model_tests", _load_model_tests):
            super().__init__(backend, parent_module)

    @classmethod
    def assert_similar_outputs(cls, ref_outputs, outputs, rtol, atol):
        np.testing.assert_equal(len(outputs), len(ref_outputs))
        for ref, out in zip(ref_outputs, outputs):
            if isinstance(out, (list, tuple)):
                cls.assert_similar_outputs(ref, out, rtol, atol)
                continue
            np.testing.assert_equal(out.dtype, ref.dtype)
            if ref.dtype == object:
                np.testing.assert_array_equal(out, ref)
            else:
                np.testing.assert_allclose(out, ref, rtol=rtol, atol=atol)


def backend_test(parent_module, tests=None):
    """ONNX's BackendTest over Kiln, limited to `tests` (folder names) when given."""
    bt = KilnBackendTest(kiln.onnx_backend, parent_module)
    # Only the CPU variants (Kiln has no other device), only `tests`: the runner's other items are
    # dropped rather than reported as thousands of skips.
    keep = None if tests is None else {t + "_cpu" for t in tests}
    for items in bt._test_items.values():
        for name in [n for n in items if not n.endswith("_cpu") or (keep is not None and n not in keep)]:
            del items[name]
    return bt
