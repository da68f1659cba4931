"""Zero-copy inputs and outputs (data pointers compared), the copy rule, and DLPack with torch."""
import numpy as np
import pytest

import kiln
import models


@pytest.fixture(scope="module")
def mlp():
    proto, ref = models.mlp()
    return kiln.compile(proto).load(), ref


def test_aligned_input_is_read_in_place(mlp):
    module, ref = mlp
    x = kiln.empty((2, 4), np.float32)
    assert x.ctypes.data % 64 == 0 and x.flags.c_contiguous and x.flags.writeable
    x[...] = np.arange(8, dtype=np.float32).reshape(2, 4) - 3
    np.testing.assert_allclose(module(x), ref(x), rtol=1e-5, atol=1e-6)
    assert module.zero_copy_inputs == {"x": True}


def test_unaligned_input_is_copied(mlp):
    module, ref = mlp
    raw = kiln.empty((9,), np.float32)
    x = raw[1:].reshape(2, 4)  # contiguous, 4 bytes past a 64-byte boundary
    x[...] = 1.5
    np.testing.assert_allclose(module(x), ref(x), rtol=1e-5, atol=1e-6)
    assert module.zero_copy_inputs == {"x": False}


def test_non_contiguous_input_is_made_contiguous(mlp):
    module, ref = mlp
    x = np.arange(8, dtype=np.float32).reshape(4, 2).T  # a transposed view
    assert not x.flags.c_contiguous
    np.testing.assert_allclose(module(x), ref(np.ascontiguousarray(x)), rtol=1e-5, atol=1e-6)


def test_output_is_shared_with_dlpack_consumers(mlp):
    torch = pytest.importorskip("torch", reason="torch is not installed: DLPack exchange with torch untested")
    module, ref = mlp
    out = module(np.ones((2, 4), np.float32))
    t = torch.from_dlpack(out)
    assert t.data_ptr() == out.ctypes.data  # the same memory, no copy
    np.testing.assert_allclose(t.numpy(), ref(np.ones((2, 4), np.float32)), rtol=1e-5, atol=1e-6)
    capsule_consumer = np.from_dlpack(out)
    assert capsule_consumer.ctypes.data == out.ctypes.data


def test_torch_tensor_input_is_read_in_place(mlp):
    torch = pytest.importorskip("torch", reason="torch is not installed: DLPack exchange with torch untested")
    module, ref = mlp
    t = torch.randn(2, 4, dtype=torch.float32)
    if t.data_ptr() % 64 != 0:
        pytest.skip("this torch allocator does not align to 64 bytes")
    out = module(t)
    assert module.zero_copy_inputs == {"x": True}
    np.testing.assert_allclose(out, ref(t.numpy()), rtol=1e-5, atol=1e-6)
    # A non-contiguous tensor is made contiguous (copied), with the same result.
    tt = torch.randn(4, 2).t()
    np.testing.assert_allclose(module(tt), ref(tt.contiguous().numpy()), rtol=1e-5, atol=1e-6)


def test_output_never_aliases_an_input():
    from onnx import TensorProto, helper
    m = models.model([helper.make_node("Identity", ["x"], ["y"])],
                     [helper.make_tensor_value_info("x", TensorProto.FLOAT, [4])],
                     [helper.make_tensor_value_info("y", TensorProto.FLOAT, [4])])
    module = kiln.compile(m).load()
    x = kiln.empty((4,), np.float32)
    x[...] = [1, 2, 3, 4]
    y = module(x)
    x[...] = 0
    np.testing.assert_array_equal(y, [1, 2, 3, 4])
