#!/usr/bin/env python3
"""Builds small pre-quantized ONNX models (onnx.helper) with numpy/PyTorch expected outputs.

Usage: make_quant_cases.py OUT_DIR

OUT_DIR/cases/<name>/ (model.onnx + test_data_set_0, the node-test layout): a QDQ CNN (per-channel
and per-tensor weights, i32 and float biases, Relu, MaxPool, a residual Add, GlobalAveragePool,
Flatten, MatMul), QLinearConv and DynamicQuantizeLinear -> ConvInteger (the IS-Net pattern).
Expected outputs: the ONNX definitions evaluated in numpy (float64 sums, so a quantized value may
differ by one unit where the f32 engines round a tie the other way). OUT_DIR/bad/ holds models
with bad quantization parameters for the error tests. Run by CTest as a fixture.
"""
import os
import sys

import numpy as np
import onnx
import torch
import torch.nn.functional as F
from onnx import TensorProto, helper, numpy_helper

rng = np.random.default_rng(7)
OUT = sys.argv[1]
TYPES = {np.float32: TensorProto.FLOAT, np.uint8: TensorProto.UINT8, np.int8: TensorProto.INT8,
         np.int32: TensorProto.INT32}


def save(dirname, nodes, inputs, outputs, inits, opset=13, ms=False):
    os.makedirs(os.path.join(dirname, "test_data_set_0"), exist_ok=True)
    g_in = [helper.make_tensor_value_info(n, TYPES[a.dtype.type], list(a.shape)) for n, a in inputs]
    g_out = [helper.make_tensor_value_info(n, TYPES[a.dtype.type], list(a.shape)) for n, a in outputs]
    graph = helper.make_graph(nodes, os.path.basename(dirname), g_in, g_out,
                              initializer=[numpy_helper.from_array(np.asarray(a), n) for n, a in inits])
    opsets = [helper.make_opsetid("", opset)] + ([helper.make_opsetid("com.microsoft", 1)] if ms else [])
    model = helper.make_model(graph, opset_imports=opsets)
    model.ir_version = 8
    onnx.save_model(model, os.path.join(dirname, "model.onnx"))
    for kind, values in (("input", inputs), ("output", outputs)):
        for i, (n, a) in enumerate(values):
            with open(os.path.join(dirname, "test_data_set_0", f"{kind}_{i}.pb"), "wb") as f:
                f.write(numpy_helper.from_array(a, n).SerializeToString())


def quant(x, s, zp, dt, axis=None):
    s, zp = np.asarray(s, np.float32), np.asarray(zp)
    if axis is not None and s.ndim == 1:
        shape = [1] * x.ndim
        shape[axis] = -1
        s, zp = s.reshape(shape), zp.reshape(shape)
    info = np.iinfo(dt)
    return np.clip(np.rint(x.astype(np.float32) / s) + zp.astype(np.float64), info.min, info.max).astype(dt)


def dequant(q, s, zp, axis=None):
    s, zp = np.asarray(s, np.float32), np.asarray(zp)
    if axis is not None and s.ndim == 1:
        shape = [1] * q.ndim
        shape[axis] = -1
        s, zp = s.reshape(shape), zp.reshape(shape)
    return ((q.astype(np.int32) - zp.astype(np.int32)).astype(np.float32) * s).astype(np.float32)


def conv(x, w, b=None, pad=0):
    y = F.conv2d(torch.from_numpy(x.astype(np.float64)), torch.from_numpy(w.astype(np.float64)),
                 None if b is None else torch.from_numpy(b.astype(np.float64)), padding=pad)
    return y.numpy().astype(np.float32)


def qdq(name, s, zp, dt):
    """Q then DQ nodes of `name` with initializers; returns (nodes, inits, output name)."""
    zp_arr = np.array(zp, dtype=dt)
    nodes = [helper.make_node("QuantizeLinear", [name, f"{name}_s", f"{name}_z"], [f"{name}_q"]),
             helper.make_node("DequantizeLinear", [f"{name}_q", f"{name}_s", f"{name}_z"], [f"{name}_dq"])]
    return nodes, [(f"{name}_s", np.array(s, np.float32)), (f"{name}_z", zp_arr)], f"{name}_dq"


def qdq_cnn():
    x = rng.uniform(-3, 3, (1, 3, 12, 12)).astype(np.float32)
    w1 = rng.integers(-100, 100, (8, 3, 3, 3)).astype(np.int8)
    w1s = rng.uniform(0.002, 0.01, 8).astype(np.float32)
    xs, x_zp = np.float32(0.03), np.uint8(128)
    b1s = (w1s * xs).astype(np.float32)
    b1 = rng.integers(-2000, 2000, 8).astype(np.int32)
    w2 = rng.integers(-127, 127, (8, 8, 3, 3)).astype(np.int8)
    w2s = np.float32(0.004)
    b2 = rng.uniform(-0.3, 0.3, 8).astype(np.float32)
    w3 = rng.integers(-127, 127, (8, 10)).astype(np.int8)
    w3s = np.float32(0.01)
    s1, s2, s3, s4, s5 = (np.float32(v) for v in (0.02, 0.04, 0.05, 0.02, 0.03))
    nodes, inits = [], []

    def add(n, i, out):
        nodes.extend(n)
        inits.extend(i)
        return out
    a = add(*qdq("x", xs, x_zp, np.uint8))
    inits += [("w1", w1), ("w1_s", w1s), ("w1_z", np.zeros(8, np.int8)), ("b1", b1), ("b1_s", b1s),
              ("b1_z", np.zeros(8, np.int32)), ("w2", w2), ("w2_s", w2s), ("w2_z", np.int8(0)), ("b2", b2),
              ("w3", w3), ("w3_s", w3s), ("w3_z", np.int8(0))]
    nodes += [helper.make_node("DequantizeLinear", ["w1", "w1_s", "w1_z"], ["w1_dq"], axis=0),
              helper.make_node("DequantizeLinear", ["b1", "b1_s", "b1_z"], ["b1_dq"], axis=0),
              helper.make_node("Conv", [a, "w1_dq", "b1_dq"], ["c1"], pads=[1, 1, 1, 1]),
              helper.make_node("Relu", ["c1"], ["r1"])]
    r1 = add(*qdq("r1", s1, 0, np.uint8))
    nodes.append(helper.make_node("MaxPool", [r1], ["p1"], kernel_shape=[2, 2], strides=[2, 2]))
    p1 = add(*qdq("p1", s1, 0, np.uint8))
    nodes += [helper.make_node("DequantizeLinear", ["w2", "w2_s", "w2_z"], ["w2_dq"]),
              helper.make_node("Conv", [p1, "w2_dq", "b2"], ["c2"], pads=[1, 1, 1, 1])]
    c2 = add(*qdq("c2", s2, 128, np.uint8))
    nodes.append(helper.make_node("Add", [c2, p1], ["res"]))
    res = add(*qdq("res", s3, 128, np.uint8))
    nodes += [helper.make_node("GlobalAveragePool", [res], ["gap"]), helper.make_node("Flatten", ["gap"], ["flat"])]
    flat = add(*qdq("flat", s4, 128, np.uint8))
    nodes += [helper.make_node("DequantizeLinear", ["w3", "w3_s", "w3_z"], ["w3_dq"]),
              helper.make_node("MatMul", [flat, "w3_dq"], ["mm"])]
    out = add(*qdq("mm", s5, 0, np.int8))
    nodes.append(helper.make_node("Identity", [out], ["y"]))
    # numpy
    xd = dequant(quant(x, xs, x_zp, np.uint8), xs, x_zp)
    c1 = conv(xd, dequant(w1, w1s, np.zeros(8, np.int8), 0), dequant(b1, b1s, np.zeros(8, np.int32), 0), 1)
    r1v = dequant(quant(np.maximum(c1, 0), s1, 0, np.uint8), s1, 0)
    p1v = F.max_pool2d(torch.from_numpy(r1v), 2).numpy()
    p1v = dequant(quant(p1v, s1, 0, np.uint8), s1, 0)
    c2v = dequant(quant(conv(p1v, dequant(w2, w2s, 0), b2, 1), s2, 128, np.uint8), s2, 128)
    resv = dequant(quant(c2v + p1v, s3, 128, np.uint8), s3, 128)
    flatv = dequant(quant(resv.mean(axis=(2, 3), dtype=np.float64).astype(np.float32), s4, 128, np.uint8), s4, 128)
    mmv = (flatv.astype(np.float64) @ dequant(w3, w3s, 0).astype(np.float64)).astype(np.float32)
    y = dequant(quant(mmv, s5, 0, np.int8), s5, 0)
    save(os.path.join(OUT, "cases", "qdq_cnn"), nodes, [("x", x)], [("y", y)], inits)


def qlinear_conv():
    x = rng.integers(0, 255, (1, 4, 9, 9)).astype(np.uint8)
    w = rng.integers(-127, 127, (6, 4, 3, 3)).astype(np.int8)
    xs, xz, ws, wz = np.float32(0.02), np.uint8(120), rng.uniform(0.002, 0.01, 6).astype(np.float32), np.zeros(6, np.int8)
    ys, yz = np.float32(0.05), np.uint8(100)
    b = rng.integers(-3000, 3000, 6).astype(np.int32)
    acc = F.conv2d(torch.from_numpy(x.astype(np.float64) - 120), torch.from_numpy(w.astype(np.float64)),
                   torch.from_numpy(b.astype(np.float64)), stride=2, padding=1).numpy()
    mult = (xs * ws / ys).astype(np.float32).reshape(1, 6, 1, 1)
    y = np.clip(np.rint(acc * mult) + 100, 0, 255).astype(np.uint8)
    node = helper.make_node("QLinearConv", ["x", "xs", "xz", "w", "ws", "wz", "ys", "yz", "b"], ["y"],
                            strides=[2, 2], pads=[1, 1, 1, 1])
    save(os.path.join(OUT, "cases", "qlinear_conv"), [node], [("x", x)], [("y", y)],
         [("xs", xs), ("xz", xz), ("w", w), ("ws", ws), ("wz", wz), ("ys", ys), ("yz", yz), ("b", b)], opset=13)


def dynamic_conv_integer():
    """x -> DynamicQuantizeLinear -> ConvInteger -> Cast -> Mul(x_scale * w_scale): IS-Net's layers."""
    x = rng.uniform(-2, 3, (1, 3, 10, 10)).astype(np.float32)
    w = rng.integers(0, 255, (5, 3, 3, 3)).astype(np.uint8)
    wz, ws = np.uint8(127), np.float32(0.01)
    lo, hi = min(0.0, float(x.min())), max(0.0, float(x.max()))
    s = np.float32((np.float32(hi) - np.float32(lo)) / np.float32(255))
    zp = np.uint8(np.clip(np.rint(-np.float32(lo) / s), 0, 255))
    q = quant(x, s, zp, np.uint8)
    acc = F.conv2d(torch.from_numpy(q.astype(np.float64) - float(zp)), torch.from_numpy(w.astype(np.float64) - 127),
                   padding=1).numpy()
    y = (acc.astype(np.float32) * (s * ws)).astype(np.float32)
    nodes = [helper.make_node("DynamicQuantizeLinear", ["x"], ["q", "s", "z"]),
             helper.make_node("ConvInteger", ["q", "w", "z", "wz"], ["acc"], pads=[1, 1, 1, 1]),
             helper.make_node("Cast", ["acc"], ["accf"], to=TensorProto.FLOAT),
             helper.make_node("Mul", ["s", "ws"], ["sw"]),
             helper.make_node("Mul", ["accf", "sw"], ["y"])]
    save(os.path.join(OUT, "cases", "dynamic_conv_integer"), nodes, [("x", x)], [("y", y)],
         [("w", w), ("wz", wz), ("ws", ws)], opset=11)


def bad_models():
    x = np.zeros((1, 4), np.float32)
    y = np.zeros((1, 4), np.uint8)

    def q_model(name, scale, zp, **attrs):
        node = helper.make_node("QuantizeLinear", ["x", "s", "z"], ["y"], name="quant_node", **attrs)
        save(os.path.join(OUT, "bad", name), [node], [("x", x)], [("y", y)], [("s", scale), ("z", zp)])
    q_model("zero_scale", np.float32(0), np.uint8(0))
    q_model("negative_scale", np.float32(-0.5), np.uint8(0))
    q_model("nan_scale", np.float32(np.nan), np.uint8(0))
    q_model("axis_length_mismatch", np.ones(3, np.float32), np.zeros(3, np.uint8))
    d_node = helper.make_node("DequantizeLinear", ["y", "s", "z"], ["x"], name="dequant_node")
    save(os.path.join(OUT, "bad", "zero_point_dtype"), [d_node], [("y", y)], [("x", x)],
         [("s", np.float32(0.1)), ("z", np.int8(0))])
    save(os.path.join(OUT, "bad", "int32_zero_point"), [d_node], [("y", np.zeros((1, 4), np.int32))], [("x", x)],
         [("s", np.float32(0.1)), ("z", np.int32(7))])
    g_node = helper.make_node("QGemm", ["y", "s", "z", "y", "s", "z"], ["x"], name="qgemm_node", domain="com.microsoft")
    save(os.path.join(OUT, "bad", "contrib_qgemm"), [g_node], [("y", y)], [("x", x)],
         [("s", np.float32(0.1)), ("z", np.uint8(0))], ms=True)


qdq_cnn()
qlinear_conv()
dynamic_conv_integer()
bad_models()
print("wrote", OUT)
