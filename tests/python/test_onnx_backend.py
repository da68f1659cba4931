"""ONNX's own BackendTest runner over ../shared/onnx-node-tests through kiln.onnx_backend.

In the test command: one node test per ONNX operator, among those Kiln's own node-test runner
passes (compiled, -O3, rtol 1e-3 / atol 1e-7 as ONNX's loader sets): each must pass here too.
KILN_ONNX_BACKEND_ALL=1 runs all 1802 tests (scripts/onnx-backend-tests.sh does, and compares
the pass count with Kiln's runner). Skipped when the node-test data is absent."""
import os

import pytest

import onnx_node_suite as suite

if not suite.have_data():
    pytest.skip(f"ONNX node tests not found at {suite.DATA} (optional data)", allow_module_level=True)

if os.environ.get("KILN_ONNX_BACKEND_ALL") == "1":
    _tests = None
    # KILN_ONNX_BACKEND_SHARD=i/n: every n-th test from the i-th (scripts/onnx-backend-tests.sh).
    shard = os.environ.get("KILN_ONNX_BACKEND_SHARD")
    if shard:
        i, n = (int(v) for v in shard.split("/"))
        _tests = sorted(suite.kiln_selection())[i::n]
else:
    _tests = suite.one_per_operator(suite.kiln_selection())

globals().update(suite.backend_test(__name__, _tests).test_cases)


def test_backend_basics():
    import numpy as np
    from onnx import helper
    import kiln.onnx_backend as backend
    assert backend.supports_device("CPU") and not backend.supports_device("CUDA")
    (y,) = backend.run_node(helper.make_node("Relu", ["x"], ["y"]), [np.array([-1, 2], np.float32)])
    np.testing.assert_array_equal(y, [0, 2])
    with pytest.raises(suite.kiln.InvalidArgumentError, match="CPU only"):
        backend.prepare(helper.make_model(helper.make_graph([], "g", [], [])), device="CUDA")
