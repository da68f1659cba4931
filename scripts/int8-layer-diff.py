#!/usr/bin/python3
"""Where do Kiln and ONNX Runtime first disagree on a QDQ model? (issue 13, docs/int8.md "Interop")

Adds every QuantizeLinear output (the 8-bit activations; with --f32 also every other node's f32
output) of MODEL as a graph output, runs the model in ONNX Runtime (scripts/ort_run_samples.js
--output-dir) and compiled by Kiln (`kiln compile` + `kiln run --output-dir`) on the same input,
and prints, in the model's node order, each tensor on which the two engines differ: for 8-bit
tensors the number of elements that differ and the largest difference in quantization steps, for
f32 ones the largest relative difference. The first rows are where the divergence starts.

Usage: /usr/bin/python3 scripts/int8-layer-diff.py MODEL.int8.onnx --input NAME=FILE.npy [...]
       [--sample I] [--f32] [--work DIR] [--build build] [--rows N]
Each FILE.npy holds samples stacked on axis 0 (as scripts/int8-check.py writes them); --sample
picks one (a batch-1 slice).
"""
import argparse
import os
import re
import subprocess
import sys

import numpy as np
import onnx
from onnx import helper, shape_inference

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))


def run(cmd):
    r = subprocess.run(cmd, capture_output=True, text=True)
    if r.returncode != 0:
        raise RuntimeError("%s failed (%d):\n%s%s" % (" ".join(cmd), r.returncode, r.stdout[-3000:], r.stderr[-3000:]))
    return r.stdout


def file_name_for(name):
    """The file name `kiln run --output-dir` and ort_run_samples.js --output-dir give an output."""
    out = re.sub(r"[^A-Za-z0-9_.-]", "_", name)
    return ("_" + out if not out or out[0] == "." else out) + ".npy"


def exposed_model(model, with_f32):
    """MODEL with the tensors to compare as extra graph outputs; returns (model, [(name, producer op)])."""
    inferred = shape_inference.infer_shapes(model)
    types = {v.name: v.type for v in list(inferred.graph.value_info) + list(inferred.graph.output)}
    outputs = {o.name for o in model.graph.output}
    picked = []
    for node in model.graph.node:
        if node.op_type in ("DequantizeLinear", "Constant") or (node.op_type != "QuantizeLinear" and not with_f32):
            continue
        for name in node.output[:1]:
            if name in types and name not in outputs:
                picked.append((name, node.op_type))
                outputs.add(name)
                model.graph.output.append(helper.make_value_info(name, types[name]))
    return model, picked


def compare(name, a, b):
    """(differs, description) of tensor `name` from Kiln (a) and ORT (b)."""
    if a.shape != b.shape:
        return True, "shapes differ: Kiln %s, ORT %s" % (a.shape, b.shape)
    if a.dtype.kind in "iu":
        d = np.abs(a.astype(np.int64) - b.astype(np.int64))
        n = int((d > 0).sum())
        return n > 0, "%d of %d differ (%.4f%%), max %d steps" % (n, d.size, 100.0 * n / d.size, int(d.max()) if d.size else 0)
    a64, b64 = a.astype(np.float64).ravel(), b.astype(np.float64).ravel()
    scale = max(float(np.abs(b64).max()), 1e-30)
    rel = float(np.abs(a64 - b64).max()) / scale
    cos = float(a64 @ b64 / max(np.sqrt((a64 @ a64) * (b64 @ b64)), 1e-30))
    return rel > 1e-5, "max |diff| / max |ORT| %.2e, cosine %.6f" % (rel, cos)


def main():
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("model")
    ap.add_argument("--input", action="append", required=True, help="NAME=FILE.npy (samples on axis 0)")
    ap.add_argument("--sample", type=int, default=0)
    ap.add_argument("--f32", action="store_true", help="also compare every f32 node output")
    ap.add_argument("--work", default="/tmp/kiln-int8-layer-diff")
    ap.add_argument("--build", default=os.path.join(ROOT, "build"))
    ap.add_argument("--rows", type=int, default=25, help="differing tensors to print (the first ones)")
    args = ap.parse_args()
    os.makedirs(args.work, exist_ok=True)

    model, picked = exposed_model(onnx.load(args.model), args.f32)
    dbg = os.path.join(args.work, "exposed.onnx")
    onnx.save(model, dbg)
    inputs = []
    for spec in args.input:
        name, path = spec.split("=", 1)
        f = os.path.join(args.work, "in_%s.npy" % re.sub(r"[^A-Za-z0-9_]", "_", name))
        np.save(f, np.load(path)[args.sample:args.sample + 1])
        inputs.append("%s=%s" % (name, f))
    ort_dir, kiln_dir = os.path.join(args.work, "ort"), os.path.join(args.work, "kiln")
    for d in (ort_dir, kiln_dir):
        os.makedirs(d, exist_ok=True)
        for f in os.listdir(d):
            os.remove(os.path.join(d, f))
    run(["node", os.path.join(ROOT, "scripts", "ort_run_samples.js"), dbg, "--output-dir", ort_dir] +
        sum([["--input", i] for i in inputs], []))
    kiln = os.path.join(args.build, "bin", "kiln")
    so = os.path.join(args.work, "exposed.so")
    run([kiln, "compile", dbg, "-o", so])
    run([kiln, "run", so, "--output-dir", kiln_dir] + sum([["--input", i] for i in inputs], []))

    final = model.graph.output[0].name
    shown = differing = 0
    for name, op in [(final, "model output")] + picked:
        a = np.load(os.path.join(kiln_dir, file_name_for(name)))
        b = np.load(os.path.join(ort_dir, file_name_for(name)))
        differs, text = compare(name, a, b)
        differing += differs
        if name == final or (differs and shown < args.rows):
            print("%-14s %-40s %s" % (op, name, text))
            shown += name != final
    print("%d of %d compared tensors differ" % (differing, len(picked) + 1))
    return 0


if __name__ == "__main__":
    sys.exit(main())
