#!/usr/bin/python3
"""Generates Kiln's end-to-end test models: ONNX files, fixed inputs and PyTorch's outputs.

Usage: /usr/bin/python3 scripts/gen_test_models.py --out DIR [--force] [--only NAME ...]

Writes, with fixed seeds and random weights (no downloads):
  DIR/resnet50.onnx      torchvision ResNet-50, input [1, 3, 224, 224] f32
  DIR/mobilenetv2.onnx   torchvision MobileNetV2, input [1, 3, 224, 224] f32
  DIR/bert_encoder.onnx  BERT-style encoder: token-embedding Gather from i64 ids [1, 128], 4 layers,
                         hidden 256, 4 heads, GELU feed-forward, LayerNorm; output [1, 128, 256] f32
and for each model MODEL.<input name>.npy / MODEL.<output name>.npy, plus DIR/manifest.json:
  {"models": [{"name": ..., "onnx": "resnet50.onnx", "opset": 13,
               "inputs": {"input": "resnet50.input.npy"}, "outputs": {"output": "resnet50.output.npy"},
               "max_abs_output": ...}, ...]}
(file names are relative to DIR). Batch norms get realistic running statistics (re-estimated in
train mode on random batches with momentum=None) so outputs are not vanishingly small; each
reference output must be finite with max|out| >= 1e-3 or the script fails.

Regeneration is skipped when every file exists and DIR/.stamp holds this script's hash (--force
regenerates anyway).
"""
import argparse
import hashlib
import json
import math
import os
import sys

import numpy as np
import torch
import torch.nn as nn

OPSET = 13


def set_seed(seed):
    torch.manual_seed(seed)
    np.random.seed(seed)


def recalibrate_batch_norms(model, make_batch, batches):
    """Re-estimates every BatchNorm's running mean/var as a cumulative average over `batches` batches."""
    for m in model.modules():
        if isinstance(m, nn.modules.batchnorm._BatchNorm):
            m.reset_running_stats()
            m.momentum = None
    model.train()
    with torch.no_grad():
        for _ in range(batches):
            model(make_batch())
    model.eval()


class EncoderLayer(nn.Module):
    """Post-LayerNorm transformer layer with explicit attention matmuls (exports to MatMul/Softmax)."""

    def __init__(self, hidden, heads, ffn, seq):
        super().__init__()
        self.hidden, self.heads, self.seq = hidden, heads, seq
        self.head_dim = hidden // heads
        self.q = nn.Linear(hidden, hidden)
        self.k = nn.Linear(hidden, hidden)
        self.v = nn.Linear(hidden, hidden)
        self.o = nn.Linear(hidden, hidden)
        self.ln1 = nn.LayerNorm(hidden, eps=1e-5)
        self.ff1 = nn.Linear(hidden, ffn)
        self.ff2 = nn.Linear(ffn, hidden)
        self.ln2 = nn.LayerNorm(hidden, eps=1e-5)
        self.gelu = nn.GELU()

    def split_heads(self, t):
        # Literal sizes keep the exported Reshape shapes constant.
        return t.reshape(1, self.seq, self.heads, self.head_dim).transpose(1, 2)

    def forward(self, x):
        q, k, v = self.split_heads(self.q(x)), self.split_heads(self.k(x)), self.split_heads(self.v(x))
        scores = torch.matmul(q, k.transpose(2, 3)) / math.sqrt(self.head_dim)
        ctx = torch.matmul(torch.softmax(scores, dim=-1), v)
        ctx = ctx.transpose(1, 2).reshape(1, self.seq, self.hidden)
        x = self.ln1(x + self.o(ctx))
        return self.ln2(x + self.ff2(self.gelu(self.ff1(x))))


class BertEncoder(nn.Module):
    def __init__(self, vocab=1000, hidden=256, heads=4, layers=4, seq=128):
        super().__init__()
        self.tokens = nn.Embedding(vocab, hidden)
        self.positions = nn.Parameter(torch.randn(1, seq, hidden) * 0.02)
        self.ln = nn.LayerNorm(hidden, eps=1e-5)
        self.layers = nn.ModuleList([EncoderLayer(hidden, heads, 4 * hidden, seq) for _ in range(layers)])

    def forward(self, ids):
        x = self.ln(self.tokens(ids) + self.positions)
        for layer in self.layers:
            x = layer(x)
        return x


def make_resnet50():
    import torchvision
    set_seed(0)
    model = torchvision.models.resnet50(weights=None)
    recalibrate_batch_norms(model, lambda: torch.randn(4, 3, 224, 224), batches=2)
    return model, {"input": torch.randn(1, 3, 224, 224)}


def make_mobilenetv2():
    import torchvision
    set_seed(1)
    model = torchvision.models.mobilenet_v2(weights=None)
    recalibrate_batch_norms(model, lambda: torch.randn(4, 3, 224, 224), batches=3)
    return model, {"input": torch.randn(1, 3, 224, 224)}


def make_bert_encoder():
    set_seed(2)
    model = BertEncoder().eval()
    return model, {"input_ids": torch.randint(0, 1000, (1, 128), dtype=torch.int64)}


MODELS = {"resnet50": make_resnet50, "mobilenetv2": make_mobilenetv2, "bert_encoder": make_bert_encoder}


def export(name, out_dir):
    model, inputs = MODELS[name]()
    model.eval()
    input_names = list(inputs)
    args = tuple(inputs[n] for n in input_names)
    with torch.no_grad():
        out = model(*args)
    out_np = out.numpy()
    max_abs = float(np.max(np.abs(out_np)))
    print(f"{name}: output {tuple(out_np.shape)} {out_np.dtype}, max|out| = {max_abs:.6g}, "
          f"mean|out| = {float(np.mean(np.abs(out_np))):.6g}")
    if not np.all(np.isfinite(out_np)) or max_abs < 1e-3:
        sys.exit(f"error: {name}: reference output is not sane (max|out| = {max_abs}, finite = "
                 f"{bool(np.all(np.isfinite(out_np)))}); check the batch-norm recalibration")
    onnx_file = f"{name}.onnx"
    torch.onnx.export(model, args, os.path.join(out_dir, onnx_file), input_names=input_names,
                      output_names=["output"], opset_version=OPSET, do_constant_folding=True)
    entry = {"name": name, "onnx": onnx_file, "opset": OPSET, "inputs": {}, "outputs": {},
             "max_abs_output": max_abs}
    for n in input_names:
        f = f"{name}.{n}.npy"
        np.save(os.path.join(out_dir, f), inputs[n].numpy())
        entry["inputs"][n] = f
    np.save(os.path.join(out_dir, f"{name}.output.npy"), out_np)
    entry["outputs"]["output"] = f"{name}.output.npy"
    return entry


def main():
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--out", required=True, help="output directory")
    parser.add_argument("--force", action="store_true", help="regenerate even when up to date")
    parser.add_argument("--only", nargs="*", choices=sorted(MODELS), help="generate only these models")
    args = parser.parse_args()
    os.makedirs(args.out, exist_ok=True)
    with open(__file__, "rb") as f:
        script_hash = hashlib.sha256(f.read()).hexdigest()
    names = args.only or list(MODELS)
    stamp_path = os.path.join(args.out, ".stamp")
    manifest_path = os.path.join(args.out, "manifest.json")
    if not args.force and not args.only and os.path.exists(stamp_path) and os.path.exists(manifest_path):
        with open(stamp_path) as f:
            stamp_ok = f.read().strip() == script_hash
        with open(manifest_path) as f:
            manifest = json.load(f)
        files = [m["onnx"] for m in manifest["models"]]
        files += [v for m in manifest["models"] for v in list(m["inputs"].values()) + list(m["outputs"].values())]
        if stamp_ok and all(os.path.exists(os.path.join(args.out, p)) for p in files):
            print(f"gen_test_models: {args.out} is up to date")
            return
    torch.set_num_threads(max(1, min(2, os.cpu_count() or 1)))
    entries = []
    if args.only and os.path.exists(manifest_path):
        with open(manifest_path) as f:
            entries = [m for m in json.load(f)["models"] if m["name"] not in names]
    for name in names:
        entries.append(export(name, args.out))
    entries.sort(key=lambda m: list(MODELS).index(m["name"]))
    with open(manifest_path, "w") as f:
        json.dump({"models": entries}, f, indent=2)
        f.write("\n")
    if not args.only:
        with open(stamp_path, "w") as f:
            f.write(script_hash + "\n")
    print(f"gen_test_models: wrote {len(names)} model(s) to {args.out}")


if __name__ == "__main__":
    main()
