"""kiln.quantize / kiln.compile(quantize="int8"): the QDQ model kiln writes, compiled and run, agrees
with the f32 model (cosine >= 0.99 on inputs that are not the calibration samples)."""
import numpy as np
import onnx

import kiln
import models


def cosine(a, b):
    a, b = a.ravel().astype(np.float64), b.ravel().astype(np.float64)
    return float(a @ b / (np.linalg.norm(a) * np.linalg.norm(b)))


def test_quantize_then_compile(tmp_path):
    proto, ref = models.mlp(batch=1, features=32, hidden=16, seed=3)
    rng = np.random.default_rng(0)
    calibration = rng.standard_normal((64, 32)).astype(np.float32)
    report = kiln.quantize(proto, calibration, tmp_path / "mlp.int8.onnx")
    assert report["path"] == str(tmp_path / "mlp.int8.onnx")
    assert report["samples"] == 64 and report["quantized_nodes"] >= 1
    ops = {n.op_type for n in onnx.load(report["path"]).graph.node}
    assert {"QuantizeLinear", "DequantizeLinear"} <= ops
    module = kiln.compile(report["path"]).load()
    x = rng.standard_normal((1, 32)).astype(np.float32)
    assert cosine(module(x), ref(x)) >= 0.99


def test_compile_with_quantize_and_calibration_files(tmp_path):
    proto, ref = models.mlp(batch=1, features=32, hidden=16, seed=4)
    rng = np.random.default_rng(1)
    np.save(tmp_path / "x.npy", rng.standard_normal((32, 32)).astype(np.float32))
    module = kiln.compile(proto, quantize="int8", calibration={"x": tmp_path / "x.npy"}).load()
    x = rng.standard_normal((1, 32)).astype(np.float32)
    assert cosine(module(x), ref(x)) >= 0.99
