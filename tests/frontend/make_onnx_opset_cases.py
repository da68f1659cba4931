#!/usr/bin/env python3
"""Builds the ONNX models of the old-opset and other-exporter tests, with numpy/PyTorch outputs.

Usage: make_onnx_opset_cases.py OUT_DIR

OUT_DIR/opset_cases/<name>/ holds model.onnx + test_data_set_0 (the node-test layout):
  - old operator forms (opsets 7..10) with their own semantics: Upsample-7/9, Resize-10 (ONNX's
    asymmetric coordinates; nearest rounds down when upsampling, up when downsampling), Slice-1,
    Pad-2, Clip-6, Dropout-7/10 masks, BatchNormalization-7 spatial=0, Split/Squeeze/Unsqueeze/
    ReduceMean/Softmax attributes, Gemm-7, pooling at 7/8, expected values computed with numpy;
  - graph forms other exporters write: unsorted nodes, initializers listed as inputs (IR 3),
    unused initializers and opset domains, weights in Constant nodes (value, value_float(s),
    value_int(s), sparse_value), empty and repeated node names, a channels-last CNN with
    Transposes around every Conv (tf2onnx style), expected values from PyTorch;
  - small CNNs exported by torch.onnx at opsets 7, 9 and 10 (an FPN-style neck with nearest
    upsampling: Upsample-7/9, Resize-10), expected values from PyTorch.
OUT_DIR/opset_bad/*.onnx are the error cases. Run by CTest as a fixture (tests/frontend/tests.cmake).
"""
import io
import os
import sys

import numpy as np
import onnx
import torch
import torch.nn as nn
import torch.nn.functional as F
from onnx import TensorProto, helper, numpy_helper

OUT = sys.argv[1]
CASES = os.path.join(OUT, "opset_cases")
BAD = os.path.join(OUT, "opset_bad")
rng = np.random.default_rng(77)

NP_TO_ONNX = {np.float32: TensorProto.FLOAT, np.int64: TensorProto.INT64, np.bool_: TensorProto.BOOL}


def randf(*shape):
    return rng.standard_normal(shape).astype(np.float32)


def write_data(d, inputs, outputs):
    os.makedirs(os.path.join(d, "test_data_set_0"), exist_ok=True)
    for i, (n, a) in enumerate(inputs):
        with open(os.path.join(d, "test_data_set_0", f"input_{i}.pb"), "wb") as f:
            f.write(numpy_helper.from_array(a, n).SerializeToString())
    for i, (n, a) in enumerate(outputs):
        with open(os.path.join(d, "test_data_set_0", f"output_{i}.pb"), "wb") as f:
            f.write(numpy_helper.from_array(np.asarray(a), n).SerializeToString())


def save_case(name, nodes, inputs, outputs, initializers=(), opset=9, ir_version=4, inputs_list_initializers=False,
              extra_opsets=(), extra_inits=()):
    d = os.path.join(CASES, name)
    g_inputs = [helper.make_tensor_value_info(n, NP_TO_ONNX[a.dtype.type], list(a.shape)) for n, a in inputs]
    inits = [numpy_helper.from_array(a, n) for n, a in list(initializers) + list(extra_inits)]
    if inputs_list_initializers:
        g_inputs += [helper.make_tensor_value_info(n, NP_TO_ONNX[a.dtype.type], list(a.shape)) for n, a in initializers]
    g_outputs = [helper.make_tensor_value_info(n, NP_TO_ONNX[np.asarray(a).dtype.type], list(np.asarray(a).shape))
                 for n, a in outputs]
    graph = helper.make_graph(nodes, name, g_inputs, g_outputs, initializer=inits)
    opsets = [helper.make_opsetid("", opset)] + [helper.make_opsetid(dom, v) for dom, v in extra_opsets]
    model = helper.make_model(graph, opset_imports=opsets)
    model.ir_version = ir_version
    os.makedirs(d, exist_ok=True)
    onnx.save_model(model, os.path.join(d, "model.onnx"))
    write_data(d, inputs, outputs)


def simple(name, op, x, expected, opset, extra_inputs=(), outputs=("y",), **attrs):
    node = helper.make_node(op, ["x"] + [n for n, _ in extra_inputs], list(outputs), **attrs)
    exp = expected if isinstance(expected, list) else [expected]
    save_case(name, [node], [("x", x)], list(zip(outputs, exp)), initializers=extra_inputs, opset=opset)


# ---- ONNX semantics of the old resize forms, in numpy ----

def nearest_asymmetric(x, scales):
    out = x
    for axis, s in enumerate(scales):
        n = out.shape[axis]
        m = int(np.floor(n * s))
        pos = np.arange(m) / s
        idx = np.floor(pos) if s >= 1 else np.ceil(pos)
        out = np.take(out, np.minimum(idx.astype(np.int64), n - 1), axis=axis)
    return out


def linear_asymmetric(x, scales):
    out = x.astype(np.float64)
    for axis, s in enumerate(scales):
        n = out.shape[axis]
        m = int(np.floor(n * s))
        pos = np.clip(np.arange(m) / s, 0, n - 1)
        i0 = np.floor(pos).astype(np.int64)
        i1 = np.minimum(i0 + 1, n - 1)
        w = (pos - i0).reshape([-1 if k == axis else 1 for k in range(out.ndim)])
        out = np.take(out, i0, axis=axis) * (1 - w) + np.take(out, i1, axis=axis) * w
    return out.astype(np.float32)


def old_operator_cases():
    x = randf(1, 2, 3, 4)
    simple("upsample7_nearest", "Upsample", x, nearest_asymmetric(x, [1, 1, 2, 1.5]), 7, scales=[1.0, 1.0, 2.0, 1.5])
    sc = np.array([1, 1, 2, 2], np.float32)
    simple("upsample9_linear", "Upsample", x, linear_asymmetric(x, [1, 1, 2, 2]), 9, extra_inputs=[("scales", sc)],
           mode="linear")
    simple("upsample9_nearest", "Upsample", x, nearest_asymmetric(x, [1, 1, 3, 2]), 9,
           extra_inputs=[("scales", np.array([1, 1, 3, 2], np.float32))])
    d = np.arange(1, 9, dtype=np.float32).reshape(1, 1, 2, 4)
    down = np.array([1, 1, 0.6, 0.6], np.float32)
    simple("resize10_nearest_down", "Resize", d, nearest_asymmetric(d, down), 10, extra_inputs=[("scales", down)])
    mixed = np.array([1, 1, 2, 0.5], np.float32)
    simple("resize10_nearest_mixed", "Resize", x, nearest_asymmetric(x, mixed), 10, extra_inputs=[("scales", mixed)])
    simple("resize10_linear", "Resize", x, linear_asymmetric(x, [1, 1, 2, 0.5]), 10, extra_inputs=[("scales", mixed)],
           mode="linear")
    # Slice-1: attributes; negative starts, ends past the end, axes given and not.
    s = randf(3, 4, 5)
    simple("slice1_axes", "Slice", s, s[:, 1:-1, -3:], 9, starts=[1, -3], ends=[-1, 100], axes=[1, 2])
    simple("slice1_no_axes", "Slice", s, s[1:3, 0:2], 7, starts=[1, 0], ends=[3, 2])
    # Pad-2: pads and value attributes, constant and reflect.
    p = randf(1, 2, 3, 4)
    simple("pad2_constant", "Pad", p, np.pad(p, [(0, 0), (0, 0), (1, 2), (2, 1)], constant_values=1.5), 9,
           pads=[0, 0, 1, 2, 0, 0, 2, 1], value=1.5)
    simple("pad2_reflect", "Pad", p, np.pad(p, [(0, 0), (0, 0), (1, 1), (2, 0)], mode="reflect"), 10,
           pads=[0, 0, 1, 2, 0, 0, 1, 0], mode="reflect")
    # Clip-6: min/max attributes; an absent bound is the float range (inf clamps to FLT_MAX).
    c = randf(2, 5)
    simple("clip6_both", "Clip", c, np.clip(c, -0.5, 0.25), 9, min=-0.5, max=0.25)
    ci = np.array([[-np.inf, -1, 0, 2, np.inf]], np.float32)
    fmax = np.finfo(np.float32).max
    simple("clip6_max_only", "Clip", ci, np.clip(ci, -fmax, 1.0), 7, max=1.0)
    # Dropout-7: mask of the input's type; Dropout-10: bool mask; ratio ignored in inference.
    simple("dropout7_mask", "Dropout", c, [c, np.ones_like(c)], 7, outputs=("y", "mask"), ratio=0.3)
    simple("dropout10_mask", "Dropout", c, [c, np.ones(c.shape, np.bool_)], 10, outputs=("y", "mask"), ratio=0.3)
    # BatchNormalization-7 with spatial = 0: statistics per activation ([C, H, W]).
    b = randf(2, 3, 4, 5)
    sc_, bi, mean, var = randf(3, 4, 5), randf(3, 4, 5), randf(3, 4, 5), rng.uniform(0.5, 2, (3, 4, 5)).astype(np.float32)
    node = helper.make_node("BatchNormalization", ["x", "s", "b", "m", "v"], ["y"], spatial=0, epsilon=1e-3)
    y = (b - mean) / np.sqrt(var + 1e-3) * sc_ + bi
    save_case("batchnorm7_spatial0", [node], [("x", b)], [("y", y.astype(np.float32))],
              initializers=[("s", sc_), ("b", bi), ("m", mean), ("v", var)], opset=7)
    s1, b1, m1, v1 = randf(3), randf(3), randf(3), rng.uniform(0.5, 2, 3).astype(np.float32)
    node = helper.make_node("BatchNormalization", ["x", "s", "b", "m", "v"], ["y"])
    y = F.batch_norm(torch.from_numpy(b), torch.from_numpy(m1), torch.from_numpy(v1), torch.from_numpy(s1),
                     torch.from_numpy(b1), eps=1e-5).numpy()
    save_case("batchnorm7_spatial1", [node], [("x", b)], [("y", y)],
              initializers=[("s", s1), ("b", b1), ("m", m1), ("v", v1)], opset=7)
    # Attribute forms of Split, Squeeze, Unsqueeze, ReduceMean, ReduceSum, Softmax (< 13) at opset 9.
    a = randf(2, 1, 6)
    nodes = [helper.make_node("Split", ["x"], ["s0", "s1"], axis=2, split=[2, 4]),
             helper.make_node("Squeeze", ["s1"], ["q"], axes=[1]),
             helper.make_node("Unsqueeze", ["q"], ["u"], axes=[0]),
             helper.make_node("ReduceMean", ["u"], ["r"], axes=[-1], keepdims=0),
             helper.make_node("ReduceSum", ["s0"], ["rs"], axes=[2], keepdims=1),
             helper.make_node("Softmax", ["x"], ["sm"], axis=1)]
    u = a[:, :, 2:].reshape(2, 4)[None]
    flat = a.reshape(2, 6)
    sm = (np.exp(flat) / np.exp(flat).sum(1, keepdims=True)).reshape(a.shape)
    save_case("attribute_forms_opset9", nodes, [("x", a)],
              [("r", u.mean(-1)), ("rs", a[:, :, :2].sum(2, keepdims=True)), ("sm", sm.astype(np.float32))], opset=9)
    # Gemm-7 (C required, broadcast implicit), MaxPool-8, AveragePool-7 count_include_pad.
    ga, gb, gc = randf(3, 4), randf(5, 4), randf(5)
    node = helper.make_node("Gemm", ["x", "b", "c"], ["y"], transB=1, alpha=0.5, beta=2.0)
    save_case("gemm7", [node], [("x", ga)], [("y", 0.5 * ga @ gb.T + 2.0 * gc)], initializers=[("b", gb), ("c", gc)],
              opset=7)
    q = randf(1, 2, 5, 5)
    tq = torch.from_numpy(q)
    nodes = [helper.make_node("MaxPool", ["x"], ["mp"], kernel_shape=[2, 2], strides=[2, 2], pads=[0, 0, 1, 1]),
             helper.make_node("AveragePool", ["x"], ["ap"], kernel_shape=[3, 3], pads=[1, 1, 1, 1], count_include_pad=1)]
    mp = F.max_pool2d(F.pad(tq, (0, 1, 0, 1), value=-np.inf), 2, 2).numpy()
    ap = F.avg_pool2d(tq, 3, 1, 1, count_include_pad=True).numpy()
    save_case("pooling_opset8", nodes, [("x", q)], [("mp", mp), ("ap", ap)], opset=8)


def graph_form_cases():
    x = randf(1, 3, 6, 6)
    w1, b1 = randf(4, 3, 3, 3), randf(4)
    w2 = randf(2, 4, 1, 1)
    tx = torch.from_numpy(x)
    ref = F.conv2d(F.relu(F.conv2d(tx, torch.from_numpy(w1), torch.from_numpy(b1), padding=1)), torch.from_numpy(w2))
    ref = ref.numpy()
    nodes = [helper.make_node("Conv", ["x", "w1", "b1"], ["c1"], pads=[1, 1, 1, 1]),
             helper.make_node("Relu", ["c1"], ["r1"]),
             helper.make_node("Conv", ["r1", "w2"], ["y"])]
    inits = [("w1", w1), ("b1", b1), ("w2", w2)]
    save_case("unsorted_nodes", list(reversed(nodes)), [("x", x)], [("y", ref)], initializers=inits, opset=9)
    save_case("initializers_as_inputs_ir3", nodes, [("x", x)], [("y", ref)], initializers=inits, opset=7, ir_version=3,
              inputs_list_initializers=True)
    save_case("unused_initializer_and_domains", nodes, [("x", x)], [("y", ref)], initializers=inits, opset=10,
              extra_opsets=[("ai.onnx.ml", 2), ("com.microsoft", 1)], extra_inits=[("unused", randf(7, 7))])
    # Every weight in a Constant node, in each of Constant's forms.
    dense = np.zeros(4, np.float32)
    dense[[0, 2]] = [0.5, -1.5]
    sparse = helper.make_sparse_tensor(numpy_helper.from_array(np.array([0.5, -1.5], np.float32), "v"),
                                       numpy_helper.from_array(np.array([0, 2], np.int64), "i"), [4])
    cnodes = [helper.make_node("Constant", [], ["w1"], value=numpy_helper.from_array(w1)),
              helper.make_node("Constant", [], ["b1"], value_floats=b1.tolist()),
              helper.make_node("Constant", [], ["sb"], sparse_value=sparse),
              helper.make_node("Constant", [], ["half"], value_float=0.5),
              helper.make_node("Constant", [], ["shape"], value_ints=[1, -1]),
              helper.make_node("Constant", [], ["k"], value_int=1),
              helper.make_node("Conv", ["x", "w1", "b1"], ["c1"], pads=[1, 1, 1, 1]),
              helper.make_node("GlobalAveragePool", ["c1"], ["g"]),
              helper.make_node("Reshape", ["g", "shape"], ["flat"]),
              helper.make_node("Mul", ["flat", "half"], ["m"]),
              helper.make_node("Add", ["m", "sb"], ["a"]),
              helper.make_node("Unsqueeze", ["a", "k"], ["y"])]
    c1 = F.conv2d(tx, torch.from_numpy(w1), torch.from_numpy(b1), padding=1).mean((2, 3)).numpy()
    save_case("constant_node_weights", cnodes, [("x", x)], [("y", (c1 * 0.5 + dense)[:, None, :])], opset=13)
    # Empty and repeated node names.
    named = [helper.make_node("Conv", ["x", "w1", "b1"], ["c1"], pads=[1, 1, 1, 1], name="layer"),
             helper.make_node("Relu", ["c1"], ["r1"], name="layer"),
             helper.make_node("Conv", ["r1", "w2"], ["y"], name="")]
    save_case("empty_and_repeated_names", named, [("x", x)], [("y", ref)], initializers=inits, opset=9)
    channels_last_cnn()


def channels_last_cnn():
    """tf2onnx's form of a channels-last CNN: NHWC input, every Conv/MaxPool wrapped in
    Transposes, bias adds, relus, the residual add and the concat done in NHWC."""
    x = randf(1, 8, 8, 3)
    to_nchw, to_nhwc = [0, 3, 1, 2], [0, 2, 3, 1]
    ws = {"w1": randf(8, 3, 3, 3) * 0.3, "w2": randf(8, 8, 3, 3) * 0.2, "w3": randf(6, 16, 1, 1) * 0.3}
    bs = {"b1": randf(8), "b2": randf(8), "b3": randf(6)}
    nodes = []

    def conv(inp, w, b, out, pads):
        nodes.extend([helper.make_node("Transpose", [inp], [out + "_nchw"], perm=to_nchw),
                      helper.make_node("Conv", [out + "_nchw", w], [out + "_c"], pads=pads),
                      helper.make_node("Transpose", [out + "_c"], [out + "_t"], perm=to_nhwc),
                      helper.make_node("Add", [out + "_t", b], [out])])

    conv("x", "w1", "b1", "a1", [1, 1, 1, 1])
    nodes.append(helper.make_node("Relu", ["a1"], ["r1"]))
    conv("r1", "w2", "b2", "a2", [1, 1, 1, 1])
    nodes += [helper.make_node("Add", ["a2", "r1"], ["s2"]), helper.make_node("Relu", ["s2"], ["r2"]),
              helper.make_node("Concat", ["r1", "r2"], ["cat"], axis=3),
              helper.make_node("Transpose", ["cat"], ["cat_nchw"], perm=to_nchw),
              helper.make_node("MaxPool", ["cat_nchw"], ["mp"], kernel_shape=[2, 2], strides=[2, 2]),
              helper.make_node("Transpose", ["mp"], ["mp_t"], perm=to_nhwc),
              helper.make_node("Mul", ["mp_t", "scale"], ["ms"])]
    conv("ms", "w3", "b3", "y", [0, 0, 0, 0])
    scale = np.float32(0.75)
    t = {k: torch.from_numpy(v) for k, v in {**ws, **bs}.items()}
    h = torch.from_numpy(x).permute(0, 3, 1, 2)
    r1 = F.relu(F.conv2d(h, t["w1"], t["b1"], padding=1))
    r2 = F.relu(F.conv2d(r1, t["w2"], t["b2"], padding=1) + r1)
    mp = F.max_pool2d(torch.cat([r1, r2], 1), 2) * 0.75
    y = F.conv2d(mp, t["w3"], t["b3"]).permute(0, 2, 3, 1).numpy()
    inits = list(ws.items()) + list(bs.items()) + [("scale", np.array(scale, np.float32))]
    save_case("channels_last_cnn", nodes, [("x", x)], [("y", y)], initializers=inits, opset=9)
    # The classifier form: global average pool as ReduceMean over H, W of NHWC, then MatMul.
    fc = randf(6, 5)
    head = [helper.make_node("ReduceMean", ["y"], ["gap"], axes=[1, 2], keepdims=0),
            helper.make_node("MatMul", ["gap", "fc"], ["logits"])]
    logits = y.mean(axis=(1, 2)) @ fc
    save_case("channels_last_classifier", nodes + head, [("x", x)], [("logits", logits.astype(np.float32))],
              initializers=inits + [("fc", fc)], opset=9)


class FpnNeck(nn.Module):
    """A small FPN-style detector neck: a 3-stage backbone, lateral 1x1 convs, top-down nearest
    upsampling to the lateral's size (torchvision's FPN form: a Shape subgraph feeding Upsample-9 /
    Resize-10) and 3x3 output convs, outputs concatenated after flattening. `static_sizes`: sizes as
    constants (torch exports no computed size at opsets 7/8)."""

    def __init__(self, static_sizes=False):
        super().__init__()
        self.static_sizes = static_sizes
        self.stem = nn.Sequential(nn.Conv2d(3, 8, 3, 2, 1), nn.BatchNorm2d(8), nn.ReLU())
        self.c3 = nn.Sequential(nn.Conv2d(8, 16, 3, 2, 1), nn.BatchNorm2d(16), nn.ReLU())
        self.c4 = nn.Sequential(nn.Conv2d(16, 32, 3, 2, 1), nn.BatchNorm2d(32), nn.ReLU(), nn.MaxPool2d(3, 1, 1))
        self.lat = nn.ModuleList([nn.Conv2d(c, 16, 1) for c in (8, 16, 32)])
        self.out = nn.ModuleList([nn.Conv2d(16, 16, 3, 1, 1) for _ in range(3)])

    def upsample(self, p, like):
        size = [int(s) for s in like.shape[-2:]] if self.static_sizes else like.shape[-2:]
        return F.interpolate(p, size=size, mode="nearest")

    def forward(self, x):
        f2 = self.stem(x)
        f3 = self.c3(f2)
        f4 = self.c4(f3)
        p4 = self.lat[2](f4)
        p3 = self.lat[1](f3) + self.upsample(p4, f3)
        p2 = self.lat[0](f2) + self.upsample(p3, f2)
        outs = [torch.flatten(self.out[i](p), 1) for i, p in enumerate((p2, p3, p4))]
        return torch.softmax(torch.cat(outs, 1), dim=1) * 1000.0


def torch_cases():
    torch.manual_seed(3)
    model = FpnNeck().eval()
    with torch.no_grad():
        for m in model.modules():  # non-trivial batch-norm statistics
            if isinstance(m, nn.BatchNorm2d):
                m.running_mean.uniform_(-0.5, 0.5)
                m.running_var.uniform_(0.5, 2.0)
        x = torch.randn(1, 3, 32, 32)
        y = model(x).numpy()
    for opset in (7, 9, 10):
        d = os.path.join(CASES, f"torch_fpn_opset{opset}")
        os.makedirs(d, exist_ok=True)
        buf = io.BytesIO()
        model.static_sizes = opset < 9
        torch.onnx.export(model, (x,), buf, opset_version=opset, input_names=["x"], output_names=["y"],
                          do_constant_folding=True)
        m = onnx.load_from_string(buf.getvalue())
        assert m.opset_import[0].version == opset
        onnx.save_model(m, os.path.join(d, "model.onnx"))
        write_data(d, [("x", x.numpy())], [("y", y)])


def bad_cases():
    os.makedirs(BAD, exist_ok=True)

    def bad(name, nodes, opset=9, inputs=None, inits=()):
        inputs = inputs or [helper.make_tensor_value_info("x", TensorProto.FLOAT, [1, 4])]
        g = helper.make_graph(nodes, name, inputs, [helper.make_tensor_value_info("y", TensorProto.FLOAT, None)],
                              initializer=[numpy_helper.from_array(v, n) for n, v in inits])
        m = helper.make_model(g, opset_imports=[helper.make_opsetid("", opset)])
        m.ir_version = 4
        onnx.save_model(m, os.path.join(BAD, name + ".onnx"))

    bad("opset5", [helper.make_node("Relu", ["x"], ["y"])], opset=5)
    bad("cycle", [helper.make_node("Add", ["x", "b"], ["a"], name="first"),
                  helper.make_node("Relu", ["a"], ["b"], name="second"),
                  helper.make_node("Relu", ["a"], ["y"])])
    bad("two_producers", [helper.make_node("Relu", ["x"], ["y"], name="one"),
                          helper.make_node("Neg", ["x"], ["y"], name="two")])
    bad("unknown_op_opset9", [helper.make_node("MaxRoiPool", ["x", "x"], ["y"], name="roi_pooler", pooled_shape=[2, 2])])
    sym = [helper.make_tensor_value_info("x", TensorProto.FLOAT, ["N", 3, "H", "W"]),
           helper.make_tensor_value_info("z", TensorProto.FLOAT, ["batch", 5])]
    bad("symbolic_dims", [helper.make_node("Relu", ["x"], ["y"]), helper.make_node("Relu", ["z"], ["y2"])], inputs=sym)


def main():
    os.makedirs(CASES, exist_ok=True)
    old_operator_cases()
    graph_form_cases()
    torch_cases()
    bad_cases()
    print(f"wrote {len(os.listdir(CASES))} cases to {CASES} and {len(os.listdir(BAD))} bad models to {BAD}")


if __name__ == "__main__":
    main()
