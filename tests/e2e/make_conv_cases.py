#!/usr/bin/python3
"""Single-node ONNX cases of the convolution family beyond ONNX's node tests, with expected outputs
from independent references (PyTorch's conv/pool functions, or plain numpy loops that scatter every
input pixel through every tap for ConvTranspose and sum |x|^p windows for LpPool).

Usage: make_conv_cases.py OUT_DIR  ->  OUT_DIR/cases/<name>/{model.onnx, test_data_set_0/*.pb}
(the layout of ONNX's node tests, read by tests/frontend/onnx_case_runner.h). Run by CTest as part
of the conv_models fixture; tests/e2e/conv_models_e2e.cc runs each case on the reference executor
and compiled.
"""
import itertools
import os
import sys

import numpy as np
import onnx
import torch
import torch.nn.functional as F
from onnx import TensorProto, helper, numpy_helper

rng = np.random.default_rng(2026)
CASES = os.path.join(sys.argv[1], "cases")


def randf(*shape):
    return rng.standard_normal(shape).astype(np.float32)


def t(a):
    return torch.from_numpy(np.ascontiguousarray(a))


def save_case(name, node, inputs, y, initializers=(), opset=17, indices=None):
    d = os.path.join(CASES, name)
    os.makedirs(os.path.join(d, "test_data_set_0"), exist_ok=True)
    g = helper.make_graph(node if isinstance(node, list) else [node], name,
                          [helper.make_tensor_value_info(n, TensorProto.FLOAT, list(a.shape)) for n, a in inputs],
                          [helper.make_tensor_value_info("y", TensorProto.FLOAT, list(y.shape))] +
                          ([helper.make_tensor_value_info("z", TensorProto.INT64, list(indices.shape))] if indices is not None else []),
                          initializer=[numpy_helper.from_array(a, n) for n, a in initializers])
    m = helper.make_model(g, opset_imports=[helper.make_opsetid("", opset)])
    m.ir_version = 8
    onnx.save_model(m, os.path.join(d, "model.onnx"))
    for i, (n, a) in enumerate(inputs):
        with open(os.path.join(d, "test_data_set_0", f"input_{i}.pb"), "wb") as f:
            f.write(numpy_helper.from_array(a, n).SerializeToString())
    with open(os.path.join(d, "test_data_set_0", "output_0.pb"), "wb") as f:
        f.write(numpy_helper.from_array(y.astype(np.float32), "y").SerializeToString())
    if indices is not None:
        with open(os.path.join(d, "test_data_set_0", "output_1.pb"), "wb") as f:
            f.write(numpy_helper.from_array(indices.astype(np.int64), "z").SerializeToString())


def conv_transpose_ref(x, w, b, strides, pads, dilations, out_shape, groups):
    """Scatter form: y[n, g*Mg + m, i*s + k*d - pad_begin] += x[n, g*Cg + c, i] * w[g*Cg + c, m, k]."""
    n, c = x.shape[:2]
    mg = w.shape[1]
    cg = c // groups
    y = np.zeros((n, mg * groups) + tuple(out_shape), np.float64)
    spatial = len(out_shape)
    for i in itertools.product(*[range(s) for s in x.shape[2:]]):
        for k in itertools.product(*[range(s) for s in w.shape[2:]]):
            o = tuple(i[a] * strides[a] + k[a] * dilations[a] - pads[a] for a in range(spatial))
            if any(o[a] < 0 or o[a] >= out_shape[a] for a in range(spatial)):
                continue
            for g in range(groups):
                xs = x[(slice(None), slice(g * cg, (g + 1) * cg)) + i].astype(np.float64)   # [N, Cg]
                ws = w[(slice(g * cg, (g + 1) * cg), slice(None)) + k].astype(np.float64)   # [Cg, Mg]
                y[(slice(None), slice(g * mg, (g + 1) * mg)) + o] += xs @ ws
    if b is not None:
        y += b.reshape((-1,) + (1,) * spatial)
    return y


def lp_pool_ref(x, p, kernel, strides, pads, dilations, ceil_mode):
    spatial = len(kernel)
    outs = []
    for a in range(spatial):
        size, k, s, d, pb, pe = x.shape[2 + a], kernel[a], strides[a], dilations[a], pads[a], pads[spatial + a]
        span = size + pb + pe - ((k - 1) * d + 1)
        o = (-(-span // s) if ceil_mode else span // s) + 1
        if ceil_mode and (o - 1) * s >= size + pb:
            o -= 1
        outs.append(o)
    y = np.zeros(x.shape[:2] + tuple(outs), np.float64)
    for o in itertools.product(*[range(v) for v in outs]):
        acc = np.zeros(x.shape[:2])
        for k in itertools.product(*[range(v) for v in kernel]):
            i = tuple(o[a] * strides[a] - pads[a] + k[a] * dilations[a] for a in range(spatial))
            if all(0 <= i[a] < x.shape[2 + a] for a in range(spatial)):
                acc += np.abs(x[(slice(None), slice(None)) + i].astype(np.float64)) ** p
        y[(slice(None), slice(None)) + o] = acc ** (1.0 / p)
    return y


def conv_transpose_case(name, xshape, wshape, groups, strides, pads, dilations, output_padding, bias=True,
                        output_shape=None, auto_pad=None):
    x, w = randf(*xshape), randf(*wshape)
    b = randf(wshape[1] * groups) if bias else None
    spatial = len(xshape) - 2
    full = [strides[a] * (xshape[2 + a] - 1) + output_padding[a] + (wshape[2 + a] - 1) * dilations[a] + 1
            for a in range(spatial)]
    attrs = dict(strides=strides, dilations=dilations, group=groups, output_padding=output_padding)
    if output_shape is not None:
        total = [full[a] - output_shape[a] for a in range(spatial)]
        begin = [tt // 2 if auto_pad == "SAME_UPPER" else tt - tt // 2 for tt in total]
        pads = begin + [total[a] - begin[a] for a in range(spatial)]
        out = output_shape
        attrs["output_shape"] = output_shape
        if auto_pad:
            attrs["auto_pad"] = auto_pad
    else:
        out = [full[a] - pads[a] - pads[spatial + a] for a in range(spatial)]
        attrs["pads"] = pads
    y = conv_transpose_ref(x, w, b, strides, pads, dilations, out, groups)
    inputs = [("x", x)]
    inits = [("w", w)] + ([("b", b)] if bias else [])
    node = helper.make_node("ConvTranspose", ["x", "w"] + (["b"] if bias else []), ["y"], **attrs)
    save_case(name, node, inputs, y, inits)


def main():
    os.makedirs(CASES, exist_ok=True)
    # ConvTranspose: a 1x1 latent input (matmul form) with asymmetric pads and output_padding.
    conv_transpose_case("convtranspose_point_input_pads", (2, 5, 1, 1), (5, 3, 4, 3), 1, [2, 2], [1, 0, 0, 1], [1, 1], [1, 0])
    # Kernel smaller than the stride: a phase no tap reaches is the bias.
    conv_transpose_case("convtranspose_1d_kernel_below_stride", (1, 2, 5), (2, 3, 2), 1, [3], [0, 1], [1], [2])
    # 3-D, groups 2, per-axis strides/dilations, asymmetric pads, output_padding.
    conv_transpose_case("convtranspose_3d_groups_dilations", (1, 4, 3, 4, 3), (4, 3, 3, 2, 3), 2, [2, 3, 1],
                        [1, 0, 2, 0, 1, 1], [2, 1, 2], [1, 2, 0])
    # Same window in every phase (one conv with prod(s)*M channels), 2x2 stride 2, no bias.
    conv_transpose_case("convtranspose_2x2_stride2_same_window", (2, 6, 5, 7), (6, 4, 2, 2), 1, [2, 2], [0, 0, 0, 0],
                        [1, 1], [0, 0], bias=False)
    # Groups with a waste-free union window (one conv, channels ordered [group, phase, m]), and a
    # depthwise-like one (C/group = 1) whose phases differ (union window, zero taps).
    conv_transpose_case("convtranspose_groups_2x2_stride2_one_conv", (2, 4, 3, 5), (4, 3, 2, 2), 2, [2, 2], [0, 0, 0, 0],
                        [1, 1], [0, 0])
    conv_transpose_case("convtranspose_depthwise_k6_s3_union_window", (1, 3, 4, 5), (3, 2, 6, 6), 3, [3, 3], [1, 2, 2, 1],
                        [1, 1], [1, 0])
    # output_shape with SAME_LOWER (extra padding at the beginning) and a larger output (negative pads).
    conv_transpose_case("convtranspose_output_shape_same_lower", (1, 2, 3, 3), (2, 2, 3, 3), 1, [2, 2], None, [1, 1],
                        [0, 0], output_shape=[6, 5], auto_pad="SAME_LOWER")
    conv_transpose_case("convtranspose_output_shape_grown", (1, 2, 3, 4), (2, 3, 3, 2), 1, [2, 1], None, [1, 1],
                        [0, 0], output_shape=[9, 6])
    # 1-D Conv: stride, dilation, asymmetric pads, bias.
    x, w, b = randf(2, 3, 20), randf(4, 3, 5), randf(4)
    y = F.conv1d(F.pad(t(x), (2, 1)), t(w), t(b), stride=3, dilation=2).numpy()
    save_case("conv1d_stride_dilation_pads", helper.make_node("Conv", ["x", "w", "b"], ["y"], strides=[3], dilations=[2], pads=[2, 1]),
              [("x", x)], y, [("w", w), ("b", b)])
    # 3-D Conv: groups, per-axis stride/dilation, SAME_LOWER.
    x, w = randf(1, 4, 5, 6, 7), randf(6, 2, 3, 2, 3)
    strides, dil = [2, 1, 2], [1, 2, 1]
    pads = []
    for a in range(3):
        size, k = x.shape[2 + a], w.shape[2 + a]
        out = -(-size // strides[a])
        total = max(0, (out - 1) * strides[a] + (k - 1) * dil[a] + 1 - size)
        pads.append((total - total // 2, total // 2))  # SAME_LOWER: the extra pad at the beginning
    xp = F.pad(t(x), (pads[2][0], pads[2][1], pads[1][0], pads[1][1], pads[0][0], pads[0][1]))
    y = F.conv3d(xp, t(w), None, stride=strides, dilation=dil, groups=2).numpy()
    save_case("conv3d_groups_dilation_same_lower",
              helper.make_node("Conv", ["x", "w"], ["y"], strides=strides, dilations=dil, group=2, auto_pad="SAME_LOWER"),
              [("x", x)], y, [("w", w)])
    # Conv1d -> BatchNormalization -> Relu -> Conv1d (an exporter that leaves batch norms unfused).
    x, w1, w2 = randf(2, 3, 16), randf(5, 3, 3), randf(4, 5, 3)
    gamma, beta, mean, var = randf(5), randf(5), randf(5), (np.abs(randf(5)) + 0.5).astype(np.float32)
    h = F.batch_norm(F.conv1d(t(x), t(w1), padding=1), t(mean), t(var), t(gamma), t(beta), eps=1e-5)
    y = F.conv1d(F.relu(h), t(w2), stride=2).numpy()
    save_case("conv1d_batchnorm_relu_conv1d",
              [helper.make_node("Conv", ["x", "w1"], ["c1"], pads=[1, 1]),
               helper.make_node("BatchNormalization", ["c1", "gamma", "beta", "mean", "var"], ["b1"], epsilon=1e-5),
               helper.make_node("Relu", ["b1"], ["r1"]),
               helper.make_node("Conv", ["r1", "w2"], ["y"], strides=[2])],
              [("x", x)], y, [("w1", w1), ("w2", w2), ("gamma", gamma), ("beta", beta), ("mean", mean), ("var", var)])
    # Pooling at 1-D and 3-D.
    x = randf(2, 3, 6, 9, 7)
    y = F.max_pool3d(t(x), (2, 3, 2), (2, 2, 1), (1, 1, 0), (1, 2, 1), ceil_mode=True).numpy()
    save_case("maxpool3d_ceil_dilation", helper.make_node("MaxPool", ["x"], ["y"], kernel_shape=[2, 3, 2], strides=[2, 2, 1],
                                                          pads=[1, 1, 0, 1, 1, 0], dilations=[1, 2, 1], ceil_mode=1),
              [("x", x)], y)
    y, idx = F.max_pool3d(t(x), (2, 2, 3), (1, 2, 2), (1, 0, 1), (2, 1, 1), ceil_mode=True, return_indices=True)
    plane = np.arange(x.shape[0] * x.shape[1]).reshape(x.shape[0], x.shape[1], 1, 1, 1) * np.prod(x.shape[2:])
    node = helper.make_node("MaxPool", ["x"], ["y", "z"], kernel_shape=[2, 2, 3], strides=[1, 2, 2], pads=[1, 0, 1, 1, 0, 1],
                            dilations=[2, 1, 1], ceil_mode=1)
    save_case("maxpool3d_indices", node, [("x", x)], y.numpy(), indices=idx.numpy() + plane)
    y = F.avg_pool3d(t(x), (3, 2, 3), (2, 2, 2), (1, 0, 1), ceil_mode=True, count_include_pad=False).numpy()
    save_case("avgpool3d_ceil_exclude_pad", helper.make_node("AveragePool", ["x"], ["y"], kernel_shape=[3, 2, 3], strides=[2, 2, 2],
                                                             pads=[1, 0, 1, 1, 0, 1], ceil_mode=1, count_include_pad=0),
              [("x", x)], y)
    x = randf(2, 5, 17)
    y = F.avg_pool1d(t(x), 4, 3, 2, ceil_mode=True, count_include_pad=True).numpy()
    save_case("avgpool1d_ceil_include_pad", helper.make_node("AveragePool", ["x"], ["y"], kernel_shape=[4], strides=[3], pads=[2, 2],
                                                             ceil_mode=1, count_include_pad=1),
              [("x", x)], y)
    # LpPool: p = 3 in 3-D, p = 1 in 1-D with ceil_mode and dilation.
    x = randf(1, 3, 5, 6, 5)
    y = lp_pool_ref(x, 3, [2, 3, 2], [1, 2, 2], [0, 1, 1, 1, 1, 0], [1, 1, 1], False)
    save_case("lppool3d_p3", helper.make_node("LpPool", ["x"], ["y"], p=3, kernel_shape=[2, 3, 2], strides=[1, 2, 2],
                                              pads=[0, 1, 1, 1, 1, 0]), [("x", x)], y, opset=18)
    x = randf(2, 4, 16)
    y = lp_pool_ref(x, 1, [3], [2], [1, 0], [2], True)
    save_case("lppool1d_p1_ceil_dilation", helper.make_node("LpPool", ["x"], ["y"], p=1, kernel_shape=[3], strides=[2], pads=[1, 0],
                                                            dilations=[2], ceil_mode=1), [("x", x)], y, opset=18)
    # GlobalLpPool at rank 5, p = 3.
    x = randf(2, 3, 2, 3, 4)
    y = (np.abs(x.astype(np.float64)) ** 3).sum(axis=(2, 3, 4), keepdims=True) ** (1 / 3)
    save_case("globallppool3d_p3", helper.make_node("GlobalLpPool", ["x"], ["y"], p=3), [("x", x)], y)
    print(f"make_conv_cases: wrote {len(os.listdir(CASES))} cases to {CASES}")


if __name__ == "__main__":
    main()
