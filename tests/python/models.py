"""Small ONNX models built with onnx.helper for the Python tests, with numpy references."""
import numpy as np
import onnx
import onnx.numpy_helper
from onnx import TensorProto, helper

ONNX_TYPE = {np.dtype(np.float32): TensorProto.FLOAT, np.dtype(np.float64): TensorProto.DOUBLE,
             np.dtype(np.float16): TensorProto.FLOAT16, np.dtype(np.int8): TensorProto.INT8,
             np.dtype(np.int32): TensorProto.INT32, np.dtype(np.int64): TensorProto.INT64,
             np.dtype(np.uint8): TensorProto.UINT8, np.dtype(np.bool_): TensorProto.BOOL}


def model(nodes, inputs, outputs, initializers=(), opset=13):
    graph = helper.make_graph(nodes, "test", inputs, outputs, list(initializers))
    return helper.make_model(graph, opset_imports=[helper.make_opsetid("", opset)])


def mlp(batch=2, features=4, hidden=3, seed=0):
    """x[batch, features] -> relu(x @ W + b): (ModelProto, reference function)."""
    rng = np.random.default_rng(seed)
    w = rng.standard_normal((features, hidden)).astype(np.float32)
    b = rng.standard_normal(hidden).astype(np.float32)
    m = model([helper.make_node("MatMul", ["x", "W"], ["h"]), helper.make_node("Add", ["h", "b"], ["a"]),
               helper.make_node("Relu", ["a"], ["y"])],
              [helper.make_tensor_value_info("x", TensorProto.FLOAT, [batch, features])],
              [helper.make_tensor_value_info("y", TensorProto.FLOAT, [batch, hidden])],
              [onnx.numpy_helper.from_array(w, "W"), onnx.numpy_helper.from_array(b, "b")])
    return m, lambda x: np.maximum(x @ w + b, 0)


def binary(op, dtype, shape=(3, 5)):
    """a op b over one dtype (two inputs, one output)."""
    t = ONNX_TYPE[np.dtype(dtype)]
    out_t = TensorProto.BOOL if op in ("Less", "Greater", "Equal", "And", "Or", "Xor") else t
    return model([helper.make_node(op, ["a", "b"], ["c"])],
                 [helper.make_tensor_value_info("a", t, list(shape)), helper.make_tensor_value_info("b", t, list(shape))],
                 [helper.make_tensor_value_info("c", out_t, list(shape))])


def two_outputs(shape=(2, 3)):
    """x -> (x + 1, x * 2)"""
    one = onnx.numpy_helper.from_array(np.array(1, np.float32), "one")
    two = onnx.numpy_helper.from_array(np.array(2, np.float32), "two")
    return model([helper.make_node("Add", ["x", "one"], ["plus"]), helper.make_node("Mul", ["x", "two"], ["times"])],
                 [helper.make_tensor_value_info("x", TensorProto.FLOAT, list(shape))],
                 [helper.make_tensor_value_info("plus", TensorProto.FLOAT, list(shape)),
                  helper.make_tensor_value_info("times", TensorProto.FLOAT, list(shape))], [one, two])
