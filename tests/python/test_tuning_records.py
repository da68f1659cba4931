"""kiln.compile(..., records=F.db): a tiny CNN tuned by the built `kiln tune` (a few trials),
compiled from Python with the records; the output matches a numpy reference (rtol 1e-4, atol
1e-5: Winograd, if a record picks it, rounds differently from the direct convolution)."""
import os
import subprocess

import numpy as np
import onnx
import onnx.numpy_helper
import pytest
from onnx import TensorProto, helper

import kiln
import models
from conftest import ROOT, _build_dir


def _kiln_cli():
    path = os.path.join(_build_dir(), "bin", "kiln")
    if not os.path.exists(path):
        pytest.skip(f"no kiln CLI at {path} (build the target kiln_cli)")
    return path


def _conv_relu(x, w, b):
    """3x3 convolution, stride 1, pad 1, + bias, relu (NCHW, numpy)."""
    n, c, h, wd = x.shape
    xp = np.pad(x, ((0, 0), (0, 0), (1, 1), (1, 1)))
    y = np.zeros((n, w.shape[0], h, wd), np.float64)
    for i in range(3):
        for j in range(3):
            y += np.einsum("nchw,mc->nmhw", xp[:, :, i:i + h, j:j + wd], w[:, :, i, j])
    return np.maximum(y + b[None, :, None, None], 0)


def _tiny_cnn():
    rng = np.random.default_rng(7)
    w1 = (rng.standard_normal((16, 8, 3, 3)) * 0.2).astype(np.float32)
    b1 = (rng.standard_normal(16) * 0.1).astype(np.float32)
    w2 = (rng.standard_normal((16, 16, 3, 3)) * 0.15).astype(np.float32)
    b2 = (rng.standard_normal(16) * 0.1).astype(np.float32)
    nodes = [helper.make_node("Conv", ["x", "w1", "b1"], ["c1"], pads=[1, 1, 1, 1]),
             helper.make_node("Relu", ["c1"], ["r1"]),
             helper.make_node("Conv", ["r1", "w2", "b2"], ["c2"], pads=[1, 1, 1, 1]),
             helper.make_node("Relu", ["c2"], ["y"])]
    m = models.model(nodes, [helper.make_tensor_value_info("x", TensorProto.FLOAT, [1, 8, 16, 16])],
                     [helper.make_tensor_value_info("y", TensorProto.FLOAT, [1, 16, 16, 16])],
                     [onnx.numpy_helper.from_array(a, n) for a, n in ((w1, "w1"), (b1, "b1"), (w2, "w2"), (b2, "b2"))])
    return m, lambda x: _conv_relu(_conv_relu(x, w1, b1), w2, b2)


def test_compile_with_records_from_kiln_tune(tmp_path):
    cli = _kiln_cli()
    m, reference = _tiny_cnn()
    onnx_path = str(tmp_path / "cnn.onnx")
    onnx.save(m, onnx_path)
    db = str(tmp_path / "cnn.db")
    # The whole-model check (docs/tuning.md) may turn the kernel records of so small a model down
    # on a noisy machine; this test is about the records reaching the compile, so it is skipped.
    run = subprocess.run([cli, "tune", onnx_path, "--records", db, "--trials", "6", "--repeats", "3",
                          "--no-model-check"], capture_output=True, text=True, timeout=600)
    assert run.returncode == 0, run.stderr
    assert "layer choices:" in run.stdout, run.stdout
    assert "model check:" not in run.stdout, run.stdout

    art = kiln.compile(onnx_path, records=db)
    tuned = art.report["tuned"]
    assert tuned["records"] == db
    assert tuned["kernels"] >= 1, art.report["summary"]
    assert tuned["kernel_records_off"] is False, tuned
    assert tuned["layer_choice_points"] >= 1 and tuned["layer_choices"] == tuned["layer_choice_points"], tuned
    assert f"tuned: {tuned['kernels']} of {art.report['distinct_kernels']} kernels, " in art.report["summary"]

    x = np.random.default_rng(3).standard_normal((1, 8, 16, 16)).astype(np.float32)
    y = art.load()(x)
    np.testing.assert_allclose(y, reference(x.astype(np.float64)), rtol=1e-4, atol=1e-5)

    untuned = kiln.compile(onnx_path)
    assert untuned.report["tuned"]["records"] == ""


def test_records_must_be_a_path(tmp_path):
    with pytest.raises(kiln.InvalidArgumentError):
        kiln.compile(models.mlp()[0], records=42)
    with pytest.raises(kiln.NotFoundError):
        kiln.compile(models.mlp()[0], records=str(tmp_path / "missing.db"))
