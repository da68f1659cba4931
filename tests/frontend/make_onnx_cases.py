#!/usr/bin/env python3
"""Builds small ONNX models, one per importer case, with numpy/PyTorch-computed expected outputs.

Usage: make_onnx_cases.py OUT_DIR

Each case is OUT_DIR/cases/<name>/ with model.onnx and test_data_set_0/{input,output}_N.pb (the
layout of ONNX's node tests, so the same runner reads both). OUT_DIR/bad/ holds the malformed and
unsupported models the error tests use. Run by CTest as a fixture (tests/frontend/tests.cmake).
"""
import os
import sys

import numpy as np
import onnx
import torch
import torch.nn.functional as F
from onnx import TensorProto, helper, numpy_helper

rng = np.random.default_rng(1234)
OUT = sys.argv[1]
CASES = os.path.join(OUT, "cases")
BAD = os.path.join(OUT, "bad")

NP_TO_ONNX = {np.float32: TensorProto.FLOAT, np.int64: TensorProto.INT64, np.bool_: TensorProto.BOOL,
              np.int32: TensorProto.INT32, np.float16: TensorProto.FLOAT16, np.uint8: TensorProto.UINT8,
              np.float64: TensorProto.DOUBLE, np.int8: TensorProto.INT8}


def onnx_type(a):
    return NP_TO_ONNX[a.dtype.type]


def randf(*shape):
    return rng.standard_normal(shape).astype(np.float32)


def save_case(name, nodes, inputs, outputs, initializers=(), opset=13, input_shapes=None, external=False):
    """inputs/outputs: lists of (name, array). Graph inputs are typed from the arrays."""
    d = os.path.join(CASES, name)
    os.makedirs(os.path.join(d, "test_data_set_0"), exist_ok=True)
    g_inputs = []
    for n, a in inputs:
        shape = input_shapes.get(n, list(a.shape)) if input_shapes else list(a.shape)
        g_inputs.append(helper.make_tensor_value_info(n, onnx_type(a), shape))
    g_outputs = [helper.make_tensor_value_info(n, onnx_type(a), list(a.shape)) for n, a in outputs]
    inits = [numpy_helper.from_array(a, n) for n, a in initializers]
    graph = helper.make_graph(nodes, name, g_inputs, g_outputs, initializer=inits)
    model = helper.make_model(graph, opset_imports=[helper.make_opsetid("", opset)])
    model.ir_version = 8
    path = os.path.join(d, "model.onnx")
    if external:
        onnx.save_model(model, path, save_as_external_data=True, all_tensors_to_one_file=True,
                        location="weights.bin", size_threshold=0)
    else:
        onnx.save_model(model, path)
    for i, (n, a) in enumerate(inputs):
        with open(os.path.join(d, "test_data_set_0", f"input_{i}.pb"), "wb") as f:
            f.write(numpy_helper.from_array(a, n).SerializeToString())
    for i, (n, a) in enumerate(outputs):
        with open(os.path.join(d, "test_data_set_0", f"output_{i}.pb"), "wb") as f:
            f.write(numpy_helper.from_array(np.asarray(a), n).SerializeToString())
    return model


def t(a):
    return torch.from_numpy(np.ascontiguousarray(a))


def simple(name, op, inputs, expected, opset=13, **attrs):
    node = helper.make_node(op, [n for n, _ in inputs], ["y"], **attrs)
    save_case(name, [node], inputs, [("y", expected.astype(expected.dtype))], opset=opset)


def main():
    os.makedirs(CASES, exist_ok=True)
    os.makedirs(BAD, exist_ok=True)
    a, b = randf(2, 3, 4), randf(3, 1)
    pos = np.abs(randf(2, 3, 4)) + 0.5
    simple("add_broadcast", "Add", [("a", a), ("b", b)], a + b)
    simple("sub", "Sub", [("a", a), ("b", b)], a - b)
    simple("mul", "Mul", [("a", a), ("b", b)], a * b)
    simple("div", "Div", [("a", a), ("b", pos)], a / pos)
    simple("pow", "Pow", [("a", pos), ("b", b)], np.power(pos, b))
    c = randf(4)
    simple("min_variadic", "Min", [("a", a), ("b", b), ("c", c)], np.minimum(np.minimum(a, b), c))
    simple("max", "Max", [("a", a), ("b", b)], np.maximum(a, b))
    ia, ib = rng.integers(0, 3, (3, 4)).astype(np.int64), rng.integers(0, 3, (4,)).astype(np.int64)
    simple("equal_int", "Equal", [("a", ia), ("b", ib)], ia == ib)
    cond = rng.integers(0, 2, (3, 1)).astype(np.bool_)
    simple("where", "Where", [("c", cond), ("x", a), ("y2", b)], np.where(cond, a, b))
    for op, fn in [("Relu", lambda x: np.maximum(x, 0)), ("Sigmoid", lambda x: 1 / (1 + np.exp(-x))),
                   ("Tanh", np.tanh), ("Exp", np.exp), ("Neg", np.negative), ("Abs", np.abs),
                   ("Erf", lambda x: torch.erf(t(x)).numpy())]:
        simple(op.lower(), op, [("x", a)], fn(a).astype(np.float32))
    simple("log", "Log", [("x", pos)], np.log(pos))
    simple("sqrt", "Sqrt", [("x", pos)], np.sqrt(pos))
    simple("reciprocal", "Reciprocal", [("x", pos)], 1 / pos)
    simple("hard_swish", "HardSwish", [("x", a * 4)], (a * 4) * np.clip(a * 4 / 6 + 0.5, 0, 1))
    simple("leaky_relu", "LeakyRelu", [("x", a)], np.where(a > 0, a, 0.2 * a), alpha=0.2)
    simple("hard_sigmoid", "HardSigmoid", [("x", a)], np.clip(0.3 * a + 0.4, 0, 1), alpha=0.3, beta=0.4)
    simple("gelu_tanh", "Gelu", [("x", a)], F.gelu(t(a), approximate="tanh").numpy(), opset=20, approximate="tanh")
    # Not on a run-time bool; Mod floored (fmod=0, integers) and truncated (fmod=1, floats).
    simple("not_runtime", "Not", [("x", cond)], np.logical_not(cond))
    im, idv = rng.integers(-9, 10, (3, 4)).astype(np.int64), np.array([3, -4, 5, -2], np.int64)
    simple("mod_int_floored", "Mod", [("a", im), ("b", idv)], np.mod(im, idv))
    simple("mod_float_fmod", "Mod", [("a", a * 5), ("b", pos)], np.fmod(a * 5, pos).astype(np.float32), fmod=1)
    # Range with constant inputs (folds to a constant), negative integer step: 10, 7, 4.
    rx = randf(3)
    save_case("range_int_negative_step", [helper.make_node("Range", ["s", "l", "d"], ["r"]),
                                          helper.make_node("Cast", ["r"], ["rf"], to=TensorProto.FLOAT),
                                          helper.make_node("Add", ["x", "rf"], ["y"])],
              [("x", rx)], [("y", rx + np.array([10, 7, 4], np.float32))], initializers=[("s", np.array(10, np.int64)),
                                                              ("l", np.array(2, np.int64)), ("d", np.array(-3, np.int64))])
    # Range over int64 values past 2^53 (not exact in a double): every element must be exact.
    big = 2**62 + 1
    rz = np.zeros(3, np.int64)
    save_case("range_int64_past_2pow53", [helper.make_node("Range", ["s", "l", "d"], ["r"]),
                                          helper.make_node("Add", ["x", "r"], ["y"])],
              [("x", rz)], [("y", np.array([big, big + 3, big + 6], np.int64))],
              initializers=[("s", np.array(big, np.int64)), ("l", np.array(big + 7, np.int64)),
                            ("d", np.array(3, np.int64))])
    # ScatterND with run-time data/updates and constant indices: rows of a [4, 3, 2] tensor, partial cover
    # (reduction none), and element indices with duplicates accumulated by reduction add (opset 16).
    sd, su = randf(4, 3, 2), randf(2, 3, 2)
    sidx = np.array([[2], [0]], np.int64)
    exp = sd.copy()
    exp[2], exp[0] = su[0], su[1]
    save_case("scatternd_runtime_rows", [helper.make_node("ScatterND", ["data", "idx", "upd"], ["y"])],
              [("data", sd), ("upd", su)], [("y", exp)], initializers=[("idx", sidx)])
    eidx = np.array([[1, 2, 0], [3, 0, 1], [1, 2, 0], [-1, 2, 1]], np.int64)
    eu = randf(4)
    exp = sd.copy()
    for (i, j, k), u in zip(eidx, eu):
        exp[i, j, k] += u
    save_case("scatternd_add_duplicates", [helper.make_node("ScatterND", ["data", "idx", "upd"], ["y"], reduction="add")],
              [("data", sd), ("upd", eu)], [("y", exp)], initializers=[("idx", eidx)], opset=16)
    # Clip with min/max inputs (constants via initializers), and with max omitted.
    save_case("clip", [helper.make_node("Clip", ["x", "lo", "hi"], ["y"])], [("x", a)],
              [("y", np.clip(a, -0.5, 0.7))], initializers=[("lo", np.array(-0.5, np.float32)), ("hi", np.array(0.7, np.float32))])
    save_case("clip_min_only", [helper.make_node("Clip", ["x", "lo"], ["y"])], [("x", a)],
              [("y", np.maximum(a, -0.5))], initializers=[("lo", np.array(-0.5, np.float32))])
    # Softmax: opset 11 coerces to 2-D around axis 1; opset 13 normalizes one axis.
    s = randf(2, 3, 4)
    flat = s.reshape(2, 12)
    sm11 = (np.exp(flat - flat.max(1, keepdims=True)) / np.exp(flat - flat.max(1, keepdims=True)).sum(1, keepdims=True)).reshape(2, 3, 4)
    simple("softmax_opset11", "Softmax", [("x", s)], sm11.astype(np.float32), opset=11)
    simple("softmax_axis1", "Softmax", [("x", s)], torch.softmax(t(s), 1).numpy(), axis=1)
    simple("log_softmax", "LogSoftmax", [("x", s)], torch.log_softmax(t(s), -1).numpy(), axis=-1)
    # Convolutions.
    x = randf(1, 4, 9, 9)
    w, bias = randf(6, 2, 3, 3), randf(6)
    ref = F.conv2d(t(x), t(w), t(bias), stride=2, padding=1, dilation=1, groups=2).numpy()
    save_case("conv_groups_bias", [helper.make_node("Conv", ["x", "w", "bias"], ["y"], strides=[2, 2], pads=[1, 1, 1, 1], group=2)],
              [("x", x)], [("y", ref)], initializers=[("w", w), ("bias", bias)])
    w2 = randf(3, 4, 3, 3)
    ref = F.conv2d(t(x), t(w2), None, padding=2, dilation=2).numpy()
    save_case("conv_dilation", [helper.make_node("Conv", ["x", "w"], ["y"], dilations=[2, 2], pads=[2, 2, 2, 2])],
              [("x", x)], [("y", ref)], initializers=[("w", w2)])
    # SAME_UPPER, stride 2, even kernel: total pad 2 -> (0 begin? no) begin 1? computed by hand with F.pad.
    w3 = randf(3, 4, 4, 4)
    # out = ceil(9/2) = 5; total = (5-1)*2 + 4 - 9 = 3; SAME_UPPER: begin 1, end 2; SAME_LOWER: begin 2, end 1
    xu = F.pad(t(x), (1, 2, 1, 2))
    xl = F.pad(t(x), (2, 1, 2, 1))
    save_case("conv_same_upper", [helper.make_node("Conv", ["x", "w"], ["y"], strides=[2, 2], auto_pad="SAME_UPPER")],
              [("x", x)], [("y", F.conv2d(xu, t(w3), stride=2).numpy())], initializers=[("w", w3)])
    save_case("conv_same_lower", [helper.make_node("Conv", ["x", "w"], ["y"], strides=[2, 2], auto_pad="SAME_LOWER", kernel_shape=[4, 4])],
              [("x", x)], [("y", F.conv2d(xl, t(w3), stride=2).numpy())], initializers=[("w", w3)])
    # BatchNormalization (inference).
    sc, bi, mu, var = randf(4), randf(4), randf(4), np.abs(randf(4)) + 0.5
    ref = F.batch_norm(t(x), t(mu), t(var), t(sc), t(bi), training=False, eps=1e-3).numpy()
    save_case("batch_norm", [helper.make_node("BatchNormalization", ["x", "s", "b", "m", "v"], ["y"], epsilon=1e-3)],
              [("x", x)], [("y", ref)], initializers=[("s", sc), ("b", bi), ("m", mu), ("v", var)])
    # Pooling.
    simple("max_pool_ceil", "MaxPool", [("x", x)], F.max_pool2d(t(x), 3, 2, 1, ceil_mode=True).numpy(),
           kernel_shape=[3, 3], strides=[2, 2], pads=[1, 1, 1, 1], ceil_mode=1)
    simple("avg_pool_include_pad", "AveragePool", [("x", x)], F.avg_pool2d(t(x), 3, 2, 1, count_include_pad=True).numpy(),
           kernel_shape=[3, 3], strides=[2, 2], pads=[1, 1, 1, 1], count_include_pad=1)
    simple("avg_pool_exclude_pad", "AveragePool", [("x", x)], F.avg_pool2d(t(x), 3, 2, 1, count_include_pad=False).numpy(),
           kernel_shape=[3, 3], strides=[2, 2], pads=[1, 1, 1, 1])
    simple("global_avg_pool", "GlobalAveragePool", [("x", x)], x.mean((2, 3), keepdims=True))
    simple("global_max_pool", "GlobalMaxPool", [("x", x)], x.max((2, 3), keepdims=True))
    # MatMul / Gemm.
    m1, m2 = randf(2, 1, 3, 5), randf(4, 5, 2)
    simple("matmul_batched", "MatMul", [("a", m1), ("b", m2)], np.matmul(m1, m2))
    ga, gb, gc = randf(3, 5), randf(4, 5), randf(4)
    save_case("gemm_trans_b", [helper.make_node("Gemm", ["a", "b", "c"], ["y"], transB=1, alpha=0.5, beta=2.0)],
              [("a", ga)], [("y", 0.5 * ga @ gb.T + 2.0 * gc)], initializers=[("b", gb), ("c", gc)])
    # Shape manipulation.
    simple("flatten_axis2", "Flatten", [("x", a)], a.reshape(6, 4), axis=2)
    save_case("reshape_zero_minus1", [helper.make_node("Reshape", ["x", "s"], ["y"])], [("x", a)],
              [("y", a.reshape(2, 12))], initializers=[("s", np.array([0, -1], np.int64))])
    # The target shape fed as a graph input: compiles with `--bind s=FILE.npy` (the tests bind it).
    save_case("reshape_shape_input", [helper.make_node("Reshape", ["x", "s"], ["y"])],
              [("x", a), ("s", np.array([2, 12], np.int64))], [("y", a.reshape(2, 12))])
    simple("transpose", "Transpose", [("x", a)], a.transpose(2, 0, 1), perm=[2, 0, 1])
    simple("concat_neg_axis", "Concat", [("a", a), ("b", a * 2)], np.concatenate([a, a * 2], -1), axis=-1)
    save_case("split_opset11_attr", [helper.make_node("Split", ["x"], ["y0", "y1"], axis=2, split=[1, 3])], [("x", a)],
              [("y0", a[:, :, :1]), ("y1", a[:, :, 1:])], opset=11)
    save_case("split_opset13_input", [helper.make_node("Split", ["x", "s"], ["y0", "y1"], axis=-1)], [("x", a)],
              [("y0", a[..., :3]), ("y1", a[..., 3:])], initializers=[("s", np.array([3, 1], np.int64))])
    x7 = randf(2, 3, 7)
    save_case("split_opset18_num_outputs", [helper.make_node("Split", ["x"], ["y0", "y1", "y2"], axis=2, num_outputs=3)],
              [("x", x7)], [("y0", x7[..., :3]), ("y1", x7[..., 3:6]), ("y2", x7[..., 6:])], opset=18)
    save_case("slice_negative_step", [helper.make_node("Slice", ["x", "st", "en", "ax", "sp"], ["y"])], [("x", a)],
              [("y", a[:, ::-2, 1:-1])],
              initializers=[("st", np.array([-1, 1], np.int64)), ("en", np.array([-100, -1], np.int64)),
                            ("ax", np.array([1, -1], np.int64)), ("sp", np.array([-2, 1], np.int64))])
    emb, ids = randf(10, 4), np.array([[0, -1, 3], [9, 2, 2]], np.int64)
    save_case("gather_embedding", [helper.make_node("Gather", ["e", "i"], ["y"], axis=0)], [("i", ids)],
              [("y", emb[ids])], initializers=[("e", emb)])
    simple("gather_axis_neg", "Gather", [("x", a), ("i", np.array([2, 0], np.int64))], a[:, :, [2, 0]], axis=-1)
    a1 = randf(2, 1, 4)
    simple("squeeze_opset11", "Squeeze", [("x", a1)], a1.reshape(2, 4), opset=11, axes=[1])
    save_case("squeeze_opset13", [helper.make_node("Squeeze", ["x", "ax"], ["y"])], [("x", a1)], [("y", a1.reshape(2, 4))],
              initializers=[("ax", np.array([-2], np.int64))])
    save_case("unsqueeze_opset13", [helper.make_node("Unsqueeze", ["x", "ax"], ["y"])], [("x", a)],
              [("y", a.reshape(1, 2, 3, 4, 1))], initializers=[("ax", np.array([0, -1], np.int64))])
    simple("unsqueeze_opset11", "Unsqueeze", [("x", a)], a.reshape(2, 1, 3, 4), opset=11, axes=[1])
    # A shape subgraph: Shape -> Gather -> Unsqueeze -> Concat -> Reshape folds to a constant shape.
    nodes = [helper.make_node("Shape", ["x"], ["s"]),
             helper.make_node("Gather", ["s", "zero"], ["n"], axis=0),
             helper.make_node("Unsqueeze", ["n", "ax0"], ["n1"]),
             helper.make_node("Concat", ["n1", "minus1"], ["shape"], axis=0),
             helper.make_node("Reshape", ["x", "shape"], ["y"])]
    save_case("shape_subgraph_folds", nodes, [("x", a)], [("y", a.reshape(2, 12))],
              initializers=[("zero", np.array(0, np.int64)), ("ax0", np.array([0], np.int64)), ("minus1", np.array([-1], np.int64))])
    nodes = [helper.make_node("Shape", ["x"], ["s"], start=1),
             helper.make_node("ConstantOfShape", ["s"], ["c"], value=helper.make_tensor("v", TensorProto.FLOAT, [1], [1.5])),
             helper.make_node("Add", ["x", "c"], ["y"])]
    save_case("constant_of_shape", nodes, [("x", a)], [("y", a + 1.5)], opset=15)
    save_case("expand", [helper.make_node("Expand", ["x", "s"], ["y"])], [("x", b)], [("y", np.broadcast_to(b, (2, 3, 4)).copy())],
              initializers=[("s", np.array([2, 1, 4], np.int64))])
    save_case("pad_reflect", [helper.make_node("Pad", ["x", "p"], ["y"], mode="reflect")], [("x", x)],
              [("y", np.pad(x, ((0, 0), (0, 0), (1, 2), (2, 1)), mode="reflect"))],
              initializers=[("p", np.array([0, 0, 1, 2, 0, 0, 2, 1], np.int64))])
    save_case("pad_constant_value", [helper.make_node("Pad", ["x", "p", "v"], ["y"])], [("x", a)],
              [("y", np.pad(a, ((0, 0), (1, 0), (0, 2)), constant_values=0.25))],
              initializers=[("p", np.array([0, 1, 0, 0, 0, 2], np.int64)), ("v", np.array(0.25, np.float32))])
    r = randf(1, 2, 3, 4)
    save_case("resize_nearest_sizes", [helper.make_node("Resize", ["x", "", "", "sz"], ["y"], mode="nearest",
                                                        coordinate_transformation_mode="asymmetric", nearest_mode="floor")],
              [("x", r)], [("y", F.interpolate(t(r), size=(6, 8), mode="nearest").numpy())],
              initializers=[("sz", np.array([1, 2, 6, 8], np.int64))])
    save_case("resize_linear_scales", [helper.make_node("Resize", ["x", "", "sc"], ["y"], mode="linear")],
              [("x", r)], [("y", F.interpolate(t(r), scale_factor=2, mode="bilinear", align_corners=False).numpy())],
              initializers=[("sc", np.array([1, 1, 2, 2], np.float32))])
    simple("reduce_mean_opset13", "ReduceMean", [("x", a)], a.mean(axis=(0, -1), keepdims=True), axes=[0, -1])
    save_case("reduce_mean_opset18", [helper.make_node("ReduceMean", ["x", "ax"], ["y"], keepdims=0)], [("x", a)],
              [("y", a.mean(axis=1))], initializers=[("ax", np.array([-2], np.int64))], opset=18)
    save_case("reduce_sum_opset13", [helper.make_node("ReduceSum", ["x", "ax"], ["y"])], [("x", a)],
              [("y", a.sum(axis=2, keepdims=True))], initializers=[("ax", np.array([2], np.int64))])
    simple("reduce_max_all", "ReduceMax", [("x", a)], a.max(keepdims=False).reshape(()), keepdims=0)
    ln_s, ln_b = randf(4), randf(4)
    save_case("layer_norm", [helper.make_node("LayerNormalization", ["x", "s", "b"], ["y"], axis=-1, epsilon=1e-5)],
              [("x", a)], [("y", F.layer_norm(t(a), (4,), t(ln_s), t(ln_b), 1e-5).numpy())],
              initializers=[("s", ln_s), ("b", ln_b)], opset=17)
    save_case("identity_dropout", [helper.make_node("Identity", ["x"], ["i"]), helper.make_node("Dropout", ["i"], ["y"])],
              [("x", a)], [("y", a)])
    simple("cast_to_int", "Cast", [("x", a * 3)], (a * 3).astype(np.int32), to=TensorProto.INT32)
    save_case("constant_node", [helper.make_node("Constant", [], ["c"], value_floats=[1.0, 2.0, 3.0, 4.0]),
                                helper.make_node("Mul", ["x", "c"], ["y"])],
              [("x", a)], [("y", a * np.array([1, 2, 3, 4], np.float32))])
    w_ext = randf(4, 3)
    save_case("external_data", [helper.make_node("MatMul", ["x", "w"], ["y"])], [("x", a)],
              [("y", a @ w_ext)], initializers=[("w", w_ext)], external=True)
    # A dynamic batch dimension: fixed by --input-shape in the tests.
    save_case("dynamic_batch", [helper.make_node("Relu", ["x"], ["y"])], [("x", a)], [("y", np.maximum(a, 0))],
              input_shapes={"x": ["N", 3, 4]})
    # Symbolic dimensions kept by the importer (OnnxImportOptions::symbolic_dims): a CNN with a
    # dynamic batch and image size, and an attention-like block with a dynamic batch and sequence.
    cw, cb = randf(4, 3, 3, 3), randf(4)
    fw, fb = randf(5, 4), randf(5)
    cx = randf(2, 3, 8, 6)
    ch = F.relu(F.conv2d(t(cx), t(cw), t(cb), padding=1))
    ch = F.max_pool2d(ch, 2)
    ch = ch.mean(dim=(2, 3))
    save_case("dynamic_cnn", [
        helper.make_node("Conv", ["x", "w", "b"], ["c"], pads=[1, 1, 1, 1]),
        helper.make_node("Relu", ["c"], ["r"]),
        helper.make_node("MaxPool", ["r"], ["p"], kernel_shape=[2, 2], strides=[2, 2]),
        helper.make_node("GlobalAveragePool", ["p"], ["g"]),
        helper.make_node("Flatten", ["g"], ["f"]),
        helper.make_node("Gemm", ["f", "fw", "fb"], ["y"], transB=1)],
        [("x", cx)], [("y", (ch @ t(fw).T + t(fb)).numpy())],
        initializers=[("w", cw), ("b", cb), ("fw", fw), ("fb", fb)],
        input_shapes={"x": ["batch", 3, "height", "width"]})
    ex, ew, es, eb = randf(2, 5, 8), randf(8, 8), randf(8), randf(8)
    eq = t(ex) @ t(ew)
    att = torch.softmax(eq @ eq.transpose(1, 2), dim=-1) @ eq
    ey = F.layer_norm(att + t(ex), (8,), t(es), t(eb), 1e-5)
    save_case("dynamic_attention", [
        helper.make_node("MatMul", ["x", "w"], ["q"]),
        helper.make_node("Transpose", ["q"], ["qt"], perm=[0, 2, 1]),
        helper.make_node("MatMul", ["q", "qt"], ["s"]),
        helper.make_node("Softmax", ["s"], ["p"], axis=-1),
        helper.make_node("MatMul", ["p", "q"], ["a"]),
        helper.make_node("Add", ["a", "x"], ["r"]),
        helper.make_node("LayerNormalization", ["r", "ls", "lb"], ["y"], axis=-1, epsilon=1e-5)],
        [("x", ex)], [("y", ey.numpy())], initializers=[("w", ew), ("ls", es), ("lb", eb)],
        input_shapes={"x": ["batch size", "seq", 8]}, opset=17)

    # Math / normalization converters with opset-dependent forms (expected values from numpy).
    hx = randf(2, 3, 4)
    flat = hx.reshape(2, 12)
    simple("hardmax_opset11_coerced_2d", "Hardmax", [("x", hx)],
           np.eye(12, dtype=np.float32)[flat.argmax(axis=1)].reshape(2, 3, 4), opset=11, axis=1)
    gx, gs, gb = randf(2, 6, 3, 3), randf(3), randf(3)
    gxd = gx.astype(np.float64).reshape(2, 3, -1)
    gy = (gxd - gxd.mean(axis=2, keepdims=True)) / np.sqrt(gxd.var(axis=2, keepdims=True) + 1e-5)
    gy = gy.reshape(2, 3, 2, 3, 3) * gs.reshape(1, 3, 1, 1, 1) + gb.reshape(1, 3, 1, 1, 1)
    simple("group_norm_opset18_per_group", "GroupNormalization", [("x", gx), ("scale", gs), ("bias", gb)],
           gy.reshape(2, 6, 3, 3).astype(np.float32), opset=18, num_groups=3)
    rx = randf(2, 3, 4)
    rxd = rx.astype(np.float64)
    simple("reduce_l2_opset13_axes_attr", "ReduceL2", [("x", rx)],
           np.sqrt((rxd ** 2).sum(axis=1)).astype(np.float32), axes=[1], keepdims=0)
    simple("reduce_log_sum_exp_opset13", "ReduceLogSumExp", [("x", rx * 30)],
           np.log(np.exp(rxd * 30).sum(axis=(0, 2), keepdims=True)).astype(np.float32), axes=[0, -1])
    simple("lp_norm_p1", "LpNormalization", [("x", rx)],
           (rxd / np.abs(rxd).sum(axis=1, keepdims=True)).astype(np.float32), axis=1, p=1)
    simple("argmin_last_index", "ArgMin", [("x", np.array([[3, 1, 1], [2, 2, 0]], np.float32))],
           np.array([[2], [2]], np.int64), axis=1, select_last_index=1)
    simple("bitshift_left_u8", "BitShift", [("a", np.array([1, 3, 255], np.uint8)), ("n", np.array([3, 1, 1], np.uint8))],
           np.array([8, 6, 254], np.uint8), opset=11, direction="LEFT")
    simple("mean_broadcast", "Mean", [("a", a), ("b", b)], ((a.astype(np.float64) + b) / 2).astype(np.float32))

    # Malformed and unsupported models for the error tests.
    with open(os.path.join(BAD, "not_onnx.onnx"), "w") as f:
        f.write("this is a text file, not an ONNX model\n" * 4)
    good = open(os.path.join(CASES, "conv_groups_bias", "model.onnx"), "rb").read()
    with open(os.path.join(BAD, "truncated.onnx"), "wb") as f:
        f.write(good[: len(good) // 2])

    def bad(name, nodes, opset=13, inits=()):
        g = helper.make_graph(nodes, name, [helper.make_tensor_value_info("x", TensorProto.FLOAT, [1, 4, 9, 9])],
                              [helper.make_tensor_value_info("y", TensorProto.FLOAT, None)],
                              initializer=[numpy_helper.from_array(v, n) for n, v in inits])
        m = helper.make_model(g, opset_imports=[helper.make_opsetid("", opset)])
        m.ir_version = 8
        onnx.save_model(m, os.path.join(BAD, name + ".onnx"))

    bad("unsupported_op", [helper.make_node("Bernoulli", ["x"], ["y"], name="my_bernoulli")])  # random: never compiled
    bad("unsupported_attr", [helper.make_node("Conv", ["x", "w"], ["y"], auto_pad="SAME_MIDDLE", name="conv0")],
        inits=[("w", randf(2, 4, 3, 3))])
    bad("unsupported_cast", [helper.make_node("Cast", ["x"], ["y"], to=TensorProto.STRING, name="cast0")])
    bad("opset_too_old", [helper.make_node("Relu", ["x"], ["y"])], opset=6)
    bad("opset_too_new", [helper.make_node("Relu", ["x"], ["y"])], opset=99)
    bad("conv4d", [helper.make_node("Reshape", ["x", "s"], ["r"]), helper.make_node("Conv", ["r", "w"], ["y"], name="c4d")],
        inits=[("s", np.array([1, 4, 3, 3, 3, 3], np.int64)), ("w", randf(2, 4, 1, 1, 1, 1))])
    bad("runtime_shape", [helper.make_node("Reshape", ["x", "x"], ["y"], name="reshape0")])
    bad("group_norm_bad_groups", [helper.make_node("GroupNormalization", ["x", "s", "b"], ["y"], num_groups=3,
                                                   name="gn0")],
        opset=18, inits=[("s", randf(3)), ("b", randf(3))])
    bad("lp_norm_p3", [helper.make_node("LpNormalization", ["x"], ["y"], p=3, name="lp0")])
    bad("bitshift_bad_direction", [helper.make_node("BitShift", ["x", "x"], ["y"], direction="UP", name="shift0")])
    bad("undefined_value", [helper.make_node("Relu", ["nowhere"], ["y"], name="relu0")])
    # Transformer operators (src/frontend/onnx/onnx_ops_attention.cc, onnx_ops_transformer.cc, onnx_ops_loss.cc).
    bad("attention_no_heads", [helper.make_node("Reshape", ["x", "s"], ["r"]),
                               helper.make_node("Attention", ["r", "r", "r"], ["y"], name="att0")],
        opset=23, inits=[("s", np.array([1, 9, 36], np.int64))])
    bad("attention_heads_mismatch", [helper.make_node("Attention", ["x", "k", "k"], ["y"], name="att1")], opset=23,
        inits=[("k", randf(1, 3, 9, 9))])
    bad("rms_norm_stash", [helper.make_node("RMSNormalization", ["x", "g"], ["y"], stash_type=0, name="rms0")], opset=23,
        inits=[("g", randf(9))])
    bad("rotary_odd_dim", [helper.make_node("RotaryEmbedding", ["x", "c", "c"], ["y"], rotary_embedding_dim=3, name="rope0")],
        opset=23, inits=[("c", randf(1, 9, 1))])
    bad("nll_float_target", [helper.make_node("NegativeLogLikelihoodLoss", ["x", "t"], ["y"], name="nll0")], opset=13,
        inits=[("t", randf(1, 9, 9))])
    print(f"wrote {len(os.listdir(CASES))} cases to {CASES} and {len(os.listdir(BAD))} bad models to {BAD}")


if __name__ == "__main__":
    main()
