#!/usr/bin/env python3
"""Writes a LLaMA-style decoder block as ONNX (opset 23, built with onnx.helper: torch 1.13 cannot
export Attention) plus an input and the numpy float64 reference output.

Block: h = x + Wo(Attention(RoPE(Wq n), RoPE(Wk n), Wv n)) with n = RMSNorm(x), grouped-query
attention (kv heads < q heads), causal; y = h + Wd(SiLU(Wg m) * (Wu m)) with m = RMSNorm(h).
The MLP is written as Sigmoid/Mul (what exporters emit for SiLU). Random weights, fixed seed.

Usage: make_llama_block.py OUT_DIR [--batch B --seq S --hidden H --heads NQ --kv-heads NKV --ffn F]
Writes OUT_DIR/llama_block.onnx, llama_block.x.npy, llama_block.output.npy.
"""
import argparse
import os
import sys

import numpy as np

try:
    import onnx
    from onnx import TensorProto, helper, numpy_helper
except ImportError as e:  # the ctest skips with this message
    print(f"make_llama_block.py: needs onnx for /usr/bin/python3 ({e})")
    sys.exit(2)


def rope_caches(seq, rot):
    inv = 1.0 / (10000.0 ** (np.arange(0, rot, 2, dtype=np.float64) / rot))
    ang = np.outer(np.arange(seq, dtype=np.float64), inv)  # [S, rot/2]
    return np.cos(ang), np.sin(ang)


def rms_norm(x, w, eps):
    return x / np.sqrt(np.mean(x * x, axis=-1, keepdims=True) + eps) * w


def rope(x, cos, sin):  # x [B, H, S, D], rotate-half
    half = x.shape[-1] // 2
    x1, x2 = x[..., :half], x[..., half:]
    c, s = cos[None, None], sin[None, None]
    return np.concatenate([c * x1 - s * x2, s * x1 + c * x2], axis=-1)


def reference(x, w, a):
    b, s, hid = x.shape
    nq, nkv = a.heads, a.kv_heads
    d = hid // nq
    cos, sin = rope_caches(s, d)
    n = rms_norm(x, w["ln1"], 1e-6)
    q = (n @ w["wq"]).reshape(b, s, nq, d).transpose(0, 2, 1, 3)
    k = (n @ w["wk"]).reshape(b, s, nkv, d).transpose(0, 2, 1, 3)
    v = (n @ w["wv"]).reshape(b, s, nkv, d).transpose(0, 2, 1, 3)
    q, k = rope(q, cos, sin), rope(k, cos, sin)
    k = np.repeat(k, nq // nkv, axis=1)
    v = np.repeat(v, nq // nkv, axis=1)
    scores = q @ k.transpose(0, 1, 3, 2) / np.sqrt(d)
    scores = scores + np.triu(np.full((s, s), -np.inf), k=1)
    p = np.exp(scores - scores.max(-1, keepdims=True))
    p /= p.sum(-1, keepdims=True)
    att = (p @ v).transpose(0, 2, 1, 3).reshape(b, s, hid)
    h = x + att @ w["wo"]
    m = rms_norm(h, w["ln2"], 1e-6)
    g = m @ w["wg"]
    return h + ((g / (1 + np.exp(-g))) * (m @ w["wu"])) @ w["wd"]


def build(a):
    rng = np.random.default_rng(0)
    hid, nq, nkv, ffn = a.hidden, a.heads, a.kv_heads, a.ffn
    d = hid // nq
    f = lambda *shape, scale=None: (rng.standard_normal(shape) * (scale or 1 / np.sqrt(shape[0]))).astype(np.float32)
    w = {
        "ln1": (1 + 0.1 * rng.standard_normal(hid)).astype(np.float32),
        "ln2": (1 + 0.1 * rng.standard_normal(hid)).astype(np.float32),
        "wq": f(hid, nq * d), "wk": f(hid, nkv * d), "wv": f(hid, nkv * d), "wo": f(nq * d, hid),
        "wg": f(hid, ffn), "wu": f(hid, ffn), "wd": f(ffn, hid),
    }
    cos, sin = rope_caches(a.seq, d)
    inits = [numpy_helper.from_array(v, k) for k, v in w.items()]
    inits += [numpy_helper.from_array(cos.astype(np.float32), "cos"), numpy_helper.from_array(sin.astype(np.float32), "sin"),
              numpy_helper.from_array(np.arange(a.seq, dtype=np.int64)[None].repeat(a.batch, 0), "pos")]
    mk = helper.make_node
    nodes = [
        mk("RMSNormalization", ["x", "ln1"], ["n1"], axis=-1, epsilon=1e-6),
        mk("MatMul", ["n1", "wq"], ["q3"]), mk("MatMul", ["n1", "wk"], ["k3"]), mk("MatMul", ["n1", "wv"], ["v3"]),
        mk("RotaryEmbedding", ["q3", "cos", "sin", "pos"], ["qr"], num_heads=nq),
        mk("RotaryEmbedding", ["k3", "cos", "sin", "pos"], ["kr"], num_heads=nkv),
        mk("Attention", ["qr", "kr", "v3"], ["att"], q_num_heads=nq, kv_num_heads=nkv, is_causal=1),
        mk("MatMul", ["att", "wo"], ["o"]), mk("Add", ["x", "o"], ["h"]),
        mk("RMSNormalization", ["h", "ln2"], ["n2"], axis=-1, epsilon=1e-6),
        mk("MatMul", ["n2", "wg"], ["g"]), mk("Sigmoid", ["g"], ["sg"]), mk("Mul", ["g", "sg"], ["silu"]),
        mk("MatMul", ["n2", "wu"], ["u"]), mk("Mul", ["silu", "u"], ["gu"]),
        mk("MatMul", ["gu", "wd"], ["dn"]), mk("Add", ["h", "dn"], ["y"]),
    ]
    shape = [a.batch, a.seq, hid]
    graph = helper.make_graph(nodes, "llama_block", [helper.make_tensor_value_info("x", TensorProto.FLOAT, shape)],
                              [helper.make_tensor_value_info("y", TensorProto.FLOAT, shape)], inits)
    model = helper.make_model(graph, opset_imports=[helper.make_opsetid("", 23)])
    model.ir_version = 10
    x = rng.standard_normal(shape).astype(np.float32)
    y = reference(x.astype(np.float64), {k: v.astype(np.float64) for k, v in w.items()}, a).astype(np.float32)
    return model, x, y


def main():
    p = argparse.ArgumentParser()
    p.add_argument("out")
    p.add_argument("--batch", type=int, default=1)
    p.add_argument("--seq", type=int, default=24)
    p.add_argument("--hidden", type=int, default=64)
    p.add_argument("--heads", type=int, default=4)
    p.add_argument("--kv-heads", type=int, default=2)
    p.add_argument("--ffn", type=int, default=176)
    p.add_argument("--name", default="llama_block")
    a = p.parse_args()
    os.makedirs(a.out, exist_ok=True)
    model, x, y = build(a)
    with open(os.path.join(a.out, a.name + ".onnx"), "wb") as fh:
        fh.write(model.SerializeToString())
    np.save(os.path.join(a.out, a.name + ".x.npy"), x)
    np.save(os.path.join(a.out, a.name + ".output.npy"), y)
    print(f"wrote {a.name}: x {list(x.shape)}, max|y| {np.abs(y).max():.3f}")


if __name__ == "__main__":
    main()
