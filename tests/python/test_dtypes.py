"""Every dtype numpy and Kiln share, through compiled kernels (exact for integers and bools)."""
import numpy as np
import pytest

import kiln
import models


@pytest.mark.parametrize("dtype", [np.float32, np.float64, np.float16, np.int8, np.int32, np.int64, np.uint8])
def test_add(dtype):
    module = kiln.compile(models.binary("Add", dtype)).load()
    rng = np.random.default_rng(0)
    a = (rng.standard_normal((3, 5)) * 10).astype(dtype)
    b = (rng.standard_normal((3, 5)) * 10).astype(dtype)
    out = module.run({"a": a, "b": b})["c"]
    assert out.dtype == np.dtype(dtype) and module.outputs[0].dtype == np.dtype(dtype)
    np.testing.assert_allclose(out, a + b, rtol=1e-3 if dtype == np.float16 else 1e-6)


def test_bool_out_of_a_comparison():
    module = kiln.compile(models.binary("Less", np.float32)).load()
    a = np.arange(15, dtype=np.float32).reshape(3, 5)
    b = np.full((3, 5), 7, np.float32)
    out = module(a, b)
    assert out.dtype == np.bool_
    np.testing.assert_array_equal(out, a < b)


def test_bool_in_and_out():
    module = kiln.compile(models.binary("And", np.bool_)).load()
    a = np.array([[True, False, True, False, True]] * 3)
    b = np.array([[True, True, False, False, True]] * 3)
    np.testing.assert_array_equal(module(a, b), a & b)


def test_bfloat16_is_exchanged_as_uint16_bit_patterns():
    from onnx import TensorProto, helper
    m = models.model([helper.make_node("Cast", ["x"], ["h"], to=TensorProto.BFLOAT16),
                      helper.make_node("Add", ["h", "h"], ["y"])],
                     [helper.make_tensor_value_info("x", TensorProto.FLOAT, [4])],
                     [helper.make_tensor_value_info("y", TensorProto.BFLOAT16, [4])])
    module = kiln.compile(m).load()
    assert module.outputs[0].dtype == "bfloat16"
    x = np.array([1.0, -2.5, 0.15625, 3.0], np.float32)  # exact in bfloat16
    y = module(x)
    assert y.dtype == np.uint16
    np.testing.assert_array_equal((y.astype(np.uint32) << 16).view(np.float32), 2 * x)
    back = models.model([helper.make_node("Cast", ["b"], ["f"], to=TensorProto.FLOAT)],
                        [helper.make_tensor_value_info("b", TensorProto.BFLOAT16, [4])],
                        [helper.make_tensor_value_info("f", TensorProto.FLOAT, [4])])
    np.testing.assert_array_equal(kiln.compile(back).load()(y), 2 * x)
