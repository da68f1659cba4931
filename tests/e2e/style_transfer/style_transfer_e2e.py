#!/usr/bin/python3
"""Whole-model test: the fast-neural-style TransformerNet (reflection pads, InstanceNormalization,
nearest x2 Resize, ReLU; scripts/sweep_models/mathops.py), narrowed to width 16 with 2 residual
blocks so that it compiles in seconds, exported by torch.onnx at opsets 11 and 17, compiled with
`kiln compile` and run with `kiln run`; the output must match PyTorch's float64 run within
max|kiln - torch64| <= 1e-4 * max|torch64| (f32 kernels with f32 sums; measured ~1e-6).

Usage: style_transfer_e2e.py --kiln build/tools/kiln/kiln --out DIR. Exits 77 (skip) without torch.
"""
import argparse
import copy
import os
import subprocess
import sys

ROOT = os.path.dirname(os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__)))))


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--kiln", required=True)
    ap.add_argument("--out", required=True)
    args = ap.parse_args()
    try:
        import numpy as np
        import torch
    except ImportError as e:
        print(f"SKIP: torch/numpy not available ({e}); the style-transfer model test needs them")
        return 77
    sys.path.insert(0, os.path.join(ROOT, "scripts", "sweep_models"))
    from mathops import TransformerNet  # noqa: E402

    os.makedirs(args.out, exist_ok=True)
    failures = []
    for opset in (11, 17):
        torch.manual_seed(opset)
        model = TransformerNet(width=16, residual_blocks=2).eval()
        x = torch.rand(1, 3, 64, 48) * 255.0
        name = os.path.join(args.out, f"style_transfer_op{opset}")
        torch.onnx.export(model, (x,), name + ".onnx", input_names=["input"], output_names=["output"],
                          opset_version=opset, do_constant_folding=True)
        with torch.no_grad():
            ref64 = copy.deepcopy(model).double()(x.double()).numpy()
        np.save(name + ".input.npy", x.numpy())
        for cmd in ([args.kiln, "compile", name + ".onnx", "-o", name + ".so"],
                    [args.kiln, "run", name + ".so", "--input", f"input={name}.input.npy", "--output", name + ".out.npy"]):
            r = subprocess.run(cmd, capture_output=True, text=True)
            if r.returncode != 0:
                print(r.stdout + r.stderr)
                failures.append(f"opset {opset}: {' '.join(cmd[:2])} failed")
                break
        else:
            got = np.load(name + ".out.npy")
            if got.shape != ref64.shape:
                failures.append(f"opset {opset}: shape {got.shape} != {ref64.shape}")
                continue
            err = float(np.max(np.abs(got - ref64))) / float(np.max(np.abs(ref64)))
            print(f"style_transfer opset {opset}: output {got.shape}, max|kiln - torch64| / max|torch64| = {err:.2e}")
            if not err <= 1e-4:
                failures.append(f"opset {opset}: relative error {err:.2e} > 1e-4")
    for f in failures:
        print("FAIL:", f)
    return 1 if failures else 0


if __name__ == "__main__":
    sys.exit(main())
