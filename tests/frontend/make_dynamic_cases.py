#!/usr/bin/env python3
"""Builds ONNX models with symbolic input dimensions, each with data sets at several sizes.

Usage: make_dynamic_cases.py OUT_DIR

Each case is OUT_DIR/cases/<name>/ with model.onnx and test_data_set_<k>/{input,output}_N.pb (the
layout of ONNX's node tests), one data set per size, so that one symbolic import is checked at
every size (tests/frontend/onnx_dynamic_cases.cc). Expected outputs come from numpy (the
hand-built shape arithmetic) and from PyTorch (the exported encoder). Run by CTest as a fixture
(tests/frontend/tests.cmake).
"""
import io
import os
import sys

import numpy as np
import onnx
import torch
import torch.nn as nn
from onnx import TensorProto, helper, numpy_helper

rng = np.random.default_rng(4321)
OUT = sys.argv[1]
CASES = os.path.join(OUT, "cases")


def randf(*shape):
    return rng.standard_normal(shape).astype(np.float32)


def i64(v):
    return np.array(v, np.int64)


def write_data_set(case_dir, k, inputs, outputs):
    d = os.path.join(case_dir, f"test_data_set_{k}")
    os.makedirs(d, exist_ok=True)
    for prefix, arrays in (("input", inputs), ("output", outputs)):
        for i, (n, a) in enumerate(arrays):
            with open(os.path.join(d, f"{prefix}_{i}.pb"), "wb") as f:
                f.write(numpy_helper.from_array(np.asarray(a), n).SerializeToString())


def shape_chain():
    """The shape arithmetic a PyTorch export writes, built by hand: x.view(b, t, 2, 4) through
    Shape -> Gather -> Unsqueeze -> Concat -> Reshape, torch.arange(t) as Range over Shape(x)[1],
    expand through Where(Equal(shape, -1), 1, shape), Reshape with 0 and -1, ConstantOfShape."""
    pos, bias = randf(16, 8), randf(8)

    def reference(x):
        b, t = x.shape[0], x.shape[1]
        h = x.reshape(b, t, 2, 4).transpose(0, 2, 1, 3) * 2.0
        h = h.transpose(0, 2, 1, 3).reshape(b, t, -1)
        h = h + pos[np.arange(t)][None] + np.broadcast_to(bias, (b, t, 8))
        h = h.reshape(b * t, 8).reshape(b, -1, 8)
        return (h * np.full((b, t, 1), 0.5, np.float32)).astype(np.float32)

    N = helper.make_node
    nodes = [
        N("Shape", ["x"], ["s"]),
        N("Gather", ["s", "c0"], ["b"], axis=0),
        N("Gather", ["s", "c1"], ["t"], axis=0),
        N("Unsqueeze", ["b", "ax0"], ["b1"]),
        N("Unsqueeze", ["t", "ax0"], ["t1"]),
        N("Concat", ["b1", "t1", "c2", "c4"], ["shape4"], axis=0),
        N("Reshape", ["x", "shape4"], ["x4"]),
        N("Transpose", ["x4"], ["x4t"], perm=[0, 2, 1, 3]),
        N("Mul", ["x4t", "two"], ["x4m"]),
        N("Transpose", ["x4m"], ["x4b"], perm=[0, 2, 1, 3]),
        N("Reshape", ["x4b", "keep_keep_rest"], ["h0"]),
        N("Cast", ["t"], ["tc"], to=TensorProto.INT64),
        N("Range", ["zero", "tc", "one"], ["ids"]),
        N("Gather", ["pos", "ids"], ["pe"], axis=0),
        N("Unsqueeze", ["pe", "ax0"], ["pe1"]),
        N("Add", ["h0", "pe1"], ["h1"]),
        N("Concat", ["b1", "t1", "c8"], ["eshape"], axis=0),
        N("Equal", ["eshape", "minus1s"], ["eq"]),
        N("Where", ["eq", "ones3", "eshape"], ["eshape2"]),
        N("Expand", ["bias", "eshape2"], ["bx"]),
        N("Add", ["h1", "bx"], ["h2"]),
        N("Mul", ["b1", "t1"], ["bt"]),
        N("Concat", ["bt", "c8"], ["flat"], axis=0),
        N("Reshape", ["h2", "flat"], ["h3"]),
        N("Concat", ["b1", "minus1", "c8"], ["unflat"], axis=0),
        N("Reshape", ["h3", "unflat"], ["h4"]),
        N("Concat", ["b1", "t1", "c1v"], ["hshape"], axis=0),
        N("ConstantOfShape", ["hshape"], ["half"], value=numpy_helper.from_array(np.array([0.5], np.float32))),
        N("Mul", ["h4", "half"], ["y"]),
    ]
    inits = [("c0", i64(0)), ("c1", i64(1)), ("ax0", i64([0])), ("c2", i64([2])), ("c4", i64([4])),
             ("c8", i64([8])), ("c1v", i64([1])), ("two", np.array(2.0, np.float32)),
             ("keep_keep_rest", i64([0, 0, -1])), ("zero", i64(0)), ("one", i64(1)), ("pos", pos),
             ("minus1s", i64([-1, -1, -1])), ("ones3", i64([1, 1, 1])), ("bias", bias), ("minus1", i64([-1]))]
    graph = helper.make_graph(
        nodes, "dynamic_shape_chain",
        [helper.make_tensor_value_info("x", TensorProto.FLOAT, ["batch", "seq", 8])],
        [helper.make_tensor_value_info("y", TensorProto.FLOAT, ["batch", "seq", 8])],
        initializer=[numpy_helper.from_array(a, n) for n, a in inits])
    model = helper.make_model(graph, opset_imports=[helper.make_opsetid("", 13)])
    model.ir_version = 8
    d = os.path.join(CASES, "dynamic_shape_chain")
    os.makedirs(d, exist_ok=True)
    onnx.save_model(model, os.path.join(d, "model.onnx"))
    for k, (b, t) in enumerate([(2, 5), (1, 1), (3, 16)]):
        x = randf(b, t, 8)
        write_data_set(d, k, [("x", x)], [("y", reference(x))])


class EncoderLayer(nn.Module):
    """A BERT-style layer written the way model code is: x.shape read at run time, view/transpose
    into heads, an additive attention mask, GELU feed-forward, post-norm."""

    def __init__(self, d, heads):
        super().__init__()
        self.heads = heads
        self.qkv, self.out = nn.Linear(d, 3 * d), nn.Linear(d, d)
        self.ln1, self.ln2 = nn.LayerNorm(d), nn.LayerNorm(d)
        self.ff = nn.Sequential(nn.Linear(d, 4 * d), nn.GELU(), nn.Linear(4 * d, d))

    def forward(self, x, mask):
        b, t, d = x.shape
        q, k, v = self.qkv(x).split(d, dim=-1)
        q, k, v = (z.view(b, t, self.heads, d // self.heads).transpose(1, 2) for z in (q, k, v))
        a = (q @ k.transpose(-1, -2)) / (d // self.heads) ** 0.5
        a = a + (1.0 - mask[:, None, None, :]) * -10000.0
        a = (a.softmax(-1) @ v).transpose(1, 2).reshape(b, t, d)
        x = self.ln1(x + self.out(a))
        return self.ln2(x + self.ff(x))


class Encoder(nn.Module):
    def __init__(self, vocab=100, d=32, heads=4, layers=2, max_len=64):
        super().__init__()
        self.tok, self.pos = nn.Embedding(vocab, d), nn.Embedding(max_len, d)
        self.ln = nn.LayerNorm(d)
        self.layers = nn.ModuleList([EncoderLayer(d, heads) for _ in range(layers)])

    def forward(self, ids, mask):
        pos = torch.arange(ids.shape[1]).unsqueeze(0)
        x = self.ln(self.tok(ids) + self.pos(pos))
        for layer in self.layers:
            x = layer(x, mask)
        return x


def torch_encoder():
    """The encoder exported by torch.onnx with dynamic batch and seq; expected outputs from
    PyTorch at four sizes (the last sequence padded, so the mask matters)."""
    torch.manual_seed(0)
    model = Encoder().eval()
    ids = torch.randint(0, 100, (2, 7))
    mask = torch.ones(2, 7)
    buf = io.BytesIO()
    dynamic = {0: "batch", 1: "seq"}
    torch.onnx.export(model, (ids, mask), buf, opset_version=17, input_names=["input_ids", "attention_mask"],
                      output_names=["hidden"], dynamic_axes={"input_ids": dynamic, "attention_mask": dynamic,
                                                             "hidden": dynamic})
    d = os.path.join(CASES, "torch_encoder")
    os.makedirs(d, exist_ok=True)
    with open(os.path.join(d, "model.onnx"), "wb") as f:
        f.write(buf.getvalue())
    for k, (b, t) in enumerate([(2, 7), (1, 1), (3, 16), (4, 64)]):
        ids = torch.randint(0, 100, (b, t))
        mask = torch.ones(b, t)
        mask[-1, t - t // 3:] = 0.0
        with torch.no_grad():
            hidden = model(ids, mask).numpy()
        write_data_set(d, k, [("input_ids", ids.numpy()), ("attention_mask", mask.numpy())], [("hidden", hidden)])


def main():
    os.makedirs(CASES, exist_ok=True)
    shape_chain()
    torch_encoder()
    print(f"wrote {len(os.listdir(CASES))} dynamic cases to {CASES}")


if __name__ == "__main__":
    main()
