"""kiln.compile / Artifact / kiln.load / Module.run against numpy (rtol 1e-5, atol 1e-6)."""
import os

import numpy as np
import pytest

import kiln
import models

TOL = dict(rtol=1e-5, atol=1e-6)


@pytest.fixture(scope="module")
def mlp():
    return models.mlp()


@pytest.fixture(scope="module")
def mlp_module(mlp):
    return kiln.compile(mlp[0]).load()


def test_version_and_libraries():
    v = kiln.versions()
    assert kiln.__version__ == v["kiln"] == v["compiler"] == v["runtime"]
    assert v["runtime_abi"] >= 1


@pytest.mark.parametrize("form", ["proto", "bytes", "path"])
def test_compile_from_every_model_form(mlp, tmp_path, form):
    proto, ref = mlp
    if form == "proto":
        model = proto
    elif form == "bytes":
        model = proto.SerializeToString()
    else:
        model = tmp_path / "mlp.onnx"
        model.write_bytes(proto.SerializeToString())
    art = kiln.compile(model, opt_level=3)
    x = np.random.default_rng(1).standard_normal((2, 4)).astype(np.float32)
    np.testing.assert_allclose(art.load().run({"x": x})["y"], ref(x), **TOL)


def test_report_is_data(mlp):
    report = kiln.compile(mlp[0]).report
    assert report["target"].startswith("llvm")
    assert [p["name"] for p in report["passes"]], "O3 runs passes"
    assert all(p["seconds"] >= 0 for p in report["passes"])
    assert report["kernels"] and all(k["symbol"].startswith("kiln_") for k in report["kernels"])
    assert "matmul" in report["kernels"][0]["fused_ops"]
    assert report["distinct_kernels"] >= 1
    assert report["memory"]["weights_bytes"] >= 4 * (4 * 3 + 3)
    assert list(report["phases"])[0] == "import (ONNX)"
    assert "kernels:" in report["summary"]


def test_opt_level_0_runs_no_passes_and_still_matches(mlp):
    art = kiln.compile(mlp[0], opt_level=0)
    x = np.ones((2, 4), np.float32)
    np.testing.assert_allclose(art.load()(x), mlp[1](x), **TOL)


def test_save_and_load(mlp, tmp_path):
    path = kiln.compile(mlp[0]).save(tmp_path / "mlp.so")
    assert os.path.getsize(path) > 0
    module = kiln.load(path)
    assert module.inputs == [kiln.TensorInfo("x", np.dtype(np.float32), (2, 4))]
    assert module.outputs == [kiln.TensorInfo("y", np.dtype(np.float32), (2, 3))]
    x = np.full((2, 4), 0.5, np.float32)
    np.testing.assert_allclose(module(x), mlp[1](x), **TOL)


def test_input_forms(mlp_module, mlp):
    x = np.random.default_rng(2).standard_normal((2, 4)).astype(np.float32)
    want = mlp[1](x)
    for got in (mlp_module.run({"x": x})["y"], mlp_module.run([x])["y"], mlp_module.run(x)["y"],
                mlp_module.run(x=x)["y"], mlp_module(x), mlp_module(x=x)):
        np.testing.assert_allclose(got, want, **TOL)


def test_input_symbolic_dimension_fixed_by_input_shapes():
    from onnx import TensorProto, helper
    m = models.model([helper.make_node("Relu", ["x"], ["y"])],
                     [helper.make_tensor_value_info("x", TensorProto.FLOAT, ["n", 3])],
                     [helper.make_tensor_value_info("y", TensorProto.FLOAT, ["n", 3])])
    module = kiln.compile(m, input_shapes={"x": (5, 3)}).load()
    assert module.inputs[0].shape == (5, 3)
    x = np.linspace(-1, 1, 15, dtype=np.float32).reshape(5, 3)
    np.testing.assert_array_equal(module(x), np.maximum(x, 0))


def test_bind_makes_an_input_constant():
    m = models.binary("Add", np.float32)
    b = np.arange(15, dtype=np.float32).reshape(3, 5)
    module = kiln.compile(m, bind={"b": b}).load()
    assert [t.name for t in module.inputs] == ["a"]
    a = np.ones((3, 5), np.float32)
    np.testing.assert_array_equal(module(a), a + b)


def test_multiple_outputs():
    module = kiln.compile(models.two_outputs()).load()
    x = np.arange(6, dtype=np.float32).reshape(2, 3)
    out = module.run({"x": x})
    assert list(out) == ["plus", "times"]
    np.testing.assert_array_equal(out["plus"], x + 1)
    np.testing.assert_array_equal(out["times"], x * 2)
    plus, times = module(x)
    np.testing.assert_array_equal(times, x * 2)


def test_outputs_of_earlier_runs_stay_valid(mlp_module, mlp):
    xs = [np.full((2, 4), v, np.float32) for v in (-1.0, 0.25, 2.0)]
    outs = [mlp_module(x) for x in xs]  # each held while the next run happens
    for x, out in zip(xs, outs):
        np.testing.assert_allclose(out, mlp[1](x), **TOL)


def test_threads_setting_and_profile(mlp_module, mlp):
    before = kiln.get_num_threads()
    try:
        mlp_module.set_num_threads(2)
        assert kiln.get_num_threads() == 2
        x = np.ones((2, 4), np.float32)
        np.testing.assert_allclose(mlp_module(x), mlp[1](x), **TOL)
    finally:
        kiln.set_num_threads(before)
    rows, text = mlp_module.profile(np.ones((2, 4), np.float32), repeat=3, report=True)
    assert rows and all(r["calls"] >= 1 and r["seconds"] >= 0 for r in rows)
    assert any("matmul" in r["fused_ops"] for r in rows)
    assert rows[0]["symbol"] in text


def test_doctor_reports_a_working_installation():
    result = kiln.doctor(print_report=False)
    assert result["ok"], result["problems"]
    assert "runtime" in result["text"]
