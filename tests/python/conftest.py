"""pytest setup for Kiln's Python tests (scripts/run-tests.sh runs them with /usr/bin/python3).

`import kiln` resolves to the build tree's package ($KILN_BUILD_DIR/python, default ./build/python:
the extension next to links to python/kiln/*.py) unless KILN_TEST_INSTALLED=1, which tests the
kiln installed in the running interpreter instead. Skips everything, saying why, when the build
has no Python module (configured with -DKILN_BUILD_PYTHON=OFF)."""
import glob
import os
import sys

import pytest

ROOT = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))


def _build_dir():
    d = os.environ.get("KILN_BUILD_DIR", "build")
    return d if os.path.isabs(d) else os.path.join(ROOT, d)


if os.environ.get("KILN_TEST_INSTALLED") != "1":
    _package_parent = os.path.join(_build_dir(), "python")
    if glob.glob(os.path.join(_package_parent, "kiln", "_kiln*.so")):
        sys.path.insert(0, _package_parent)
    else:
        _missing = f"no Kiln Python module in {_package_parent} (build the target kiln_python; " \
                   "configure with pybind11-dev and python3-dev installed)"


if "_missing" in globals():
    collect_ignore_glob = ["test_*.py"]  # they import kiln

    def pytest_report_header(config):
        return f"kiln: every Python test skipped: {_missing}"

    def pytest_sessionfinish(session, exitstatus):
        if exitstatus == pytest.ExitCode.NO_TESTS_COLLECTED:
            print(f"\nkiln: Python tests skipped: {_missing}")
            session.exitstatus = pytest.ExitCode.OK


NODE_TESTS = os.path.join(os.path.dirname(ROOT), "shared", "onnx-node-tests")
