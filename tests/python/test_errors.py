"""Every error path raises a kiln.KilnError subclass with the CLI's message and hint."""
import numpy as np
import pytest
from onnx import TensorProto, helper

import kiln
import models
from kiln import _native


@pytest.fixture(scope="module")
def mlp_module():
    return kiln.compile(models.mlp()[0]).load()


def raises(cls, match, f):
    with pytest.raises(cls, match=match) as info:
        f()
    assert isinstance(info.value, kiln.KilnError)
    return info.value


# ---- compile ----

def test_model_of_the_wrong_type():
    e = raises(kiln.InvalidArgumentError, "not a path, bytes or onnx.ModelProto", lambda: kiln.compile(42))
    assert e.hint and "onnx.load" in str(e) and isinstance(e, ValueError)


def test_missing_model_file(tmp_path):
    e = raises(kiln.NotFoundError, "no such file", lambda: kiln.compile(tmp_path / "nope.onnx"))
    assert e.kind == "not found" and e.subject.endswith("nope.onnx") and "\nhint: " in str(e)


def test_malformed_model_bytes():
    e = raises(kiln.ModelParseError, "not a valid ONNX model", lambda: kiln.compile(b"not a model"))
    assert e.kind == "parse error"


def test_unsupported_operator_names_the_node():
    m = models.model([helper.make_node("NoSuchOp", ["x"], ["y"], name="mystery")],
                     [helper.make_tensor_value_info("x", TensorProto.FLOAT, [2])],
                     [helper.make_tensor_value_info("y", TensorProto.FLOAT, [2])])
    e = raises(kiln.UnsupportedError, "node 'mystery' \\(NoSuchOp\\)", lambda: kiln.compile(m))
    assert "supported operators" in e.hint


def test_bad_options():
    m = models.mlp()[0]
    raises(kiln.InvalidArgumentError, "opt_level", lambda: kiln.compile(m, opt_level=7))
    raises(kiln.InvalidArgumentError, "opt_level", lambda: kiln.compile(m, opt_level="3"))
    raises(kiln.InvalidArgumentError, "target 'bogus'", lambda: kiln.compile(m, target="bogus"))
    raises(kiln.InvalidArgumentError, "target", lambda: kiln.compile(m, target=None))
    raises(kiln.NotFoundError, "no input of that name", lambda: kiln.compile(m, input_shapes={"nope": [1]}))
    raises(kiln.InvalidArgumentError, "does not fit", lambda: kiln.compile(m, input_shapes={"x": [3, 4]}))
    raises(kiln.InvalidArgumentError, "sequence of integers", lambda: kiln.compile(m, input_shapes={"x": "2x4"}))
    raises(kiln.InvalidArgumentError, "bound to it is i64",
           lambda: kiln.compile(models.binary("Add", np.float32), bind={"b": np.zeros((3, 5), np.int64)}))


def test_quantize_errors(tmp_path):
    m = models.mlp()[0]
    raises(kiln.InvalidArgumentError, "is not a quantization", lambda: kiln.compile(m, quantize="int4"))
    raises(kiln.InvalidArgumentError, "no output path", lambda: kiln.quantize(m, np.zeros((4, 4), np.float32)))
    raises(kiln.InvalidArgumentError, "is not a path, an array or a dict",
           lambda: kiln.quantize(m, 3, tmp_path / "q.onnx"))
    raises(kiln.KilnError, "calibration", lambda: kiln.quantize(m, np.zeros((4, 5), np.float32), tmp_path / "q.onnx"))
    raises(kiln.KilnError, "calibration", lambda: kiln.quantize(m, np.zeros((4, 4), np.int32), tmp_path / "q.onnx"))
    raises(kiln.KilnError, "minmax", lambda: kiln.quantize(m, np.zeros((4, 4), np.float32), tmp_path / "q.onnx",
                                                           method="bogus"))


def test_save_into_a_missing_directory(tmp_path):
    art = kiln.compile(models.mlp()[0])
    raises(kiln.KilnIOError, "cannot write the artifact", lambda: art.save(tmp_path / "no" / "dir" / "m.so"))


# ---- load ----

def test_load_missing_and_non_artifact_files(tmp_path):
    raises(kiln.RunError, "kiln_module_load", lambda: kiln.load(tmp_path / "missing.so"))
    junk = tmp_path / "junk.so"
    junk.write_bytes(b"\0" * 128)
    raises(kiln.RunError, "not an ELF shared library", lambda: kiln.load(junk))


# ---- run ----

def test_wrong_dtype_and_shape(mlp_module):
    e = raises(kiln.InvalidArgumentError, "has dtype float64, the model expects float32",
               lambda: mlp_module(np.zeros((2, 4))))
    assert "astype(numpy.float32)" in e.hint
    e = raises(kiln.InvalidArgumentError, "has shape \\[3, 4\\], the model expects \\[2, 4\\]",
               lambda: mlp_module(np.zeros((3, 4), np.float32)))
    assert "input_shapes" in e.hint


def test_wrong_names_and_counts(mlp_module):
    x = np.zeros((2, 4), np.float32)
    raises(kiln.NotFoundError, "input 'nope'", lambda: mlp_module.run({"nope": x}))
    raises(kiln.InvalidArgumentError, "missing input", lambda: mlp_module.run({}))
    raises(kiln.InvalidArgumentError, "got 2 input", lambda: mlp_module.run([x, x]))
    raises(kiln.InvalidArgumentError, "got 0 input", lambda: mlp_module.run())
    raises(kiln.InvalidArgumentError, "both positionally and as keywords", lambda: mlp_module.run(x, x=x))


def test_unrepresentable_inputs(mlp_module):
    raises(kiln.UnsupportedError, "complex64 has no Kiln equivalent",
           lambda: mlp_module(np.zeros((2, 4), np.complex64)))
    raises(kiln.UnsupportedError, "dtype object", lambda: mlp_module(object()))
    big_endian = np.zeros((2, 4), ">f4")
    raises(kiln.UnsupportedError, "native byte order", lambda: mlp_module(big_endian))


def test_tensor_that_requires_grad(mlp_module):
    torch = pytest.importorskip("torch", reason="torch is not installed")
    e = raises(kiln.InvalidArgumentError, "cannot be read through DLPack",
               lambda: mlp_module(torch.zeros(2, 4, requires_grad=True)))
    assert "detach" in e.hint


def test_bad_profile_and_thread_counts(mlp_module):
    raises(kiln.InvalidArgumentError, "repeat must be >= 1",
           lambda: mlp_module.profile(np.zeros((2, 4), np.float32), repeat=0))
    raises(kiln.RunError, "out of range", lambda: kiln.set_num_threads(-1))


# ---- the extension itself ----

def test_module_built_for_another_python_is_refused_with_a_clear_message():
    msg = _native.mismatch_message(["/x/kiln/_kiln.cpython-39-x86_64-linux-gnu.so"],
                                   ".cpython-311-x86_64-linux-gnu.so", "3.11.2")
    assert "built for another Python (_kiln.cpython-39-x86_64-linux-gnu.so)" in msg
    assert "Python 3.11.2" in msg and "pip install" in msg
    assert _native.mismatch_message(["/x/_kiln.cpython-311-x86_64-linux-gnu.so"],
                                    ".cpython-311-x86_64-linux-gnu.so", "3.11.2") is None
