#!/usr/bin/python3
"""Exports the convolution family's small whole-model test cases (SMALL_MODELS of
scripts/sweep_models/conv.py: DCGAN generator, U-Net, FCN head with a grouped ConvTranspose,
MelGAN-style vocoder, 1-D conv stacks, a 3-D encoder-decoder) for tests/e2e/conv_models_e2e.cc.

Usage: /usr/bin/python3 scripts/gen_conv_models.py --out DIR [--force]
Writes DIR/NAME.onnx, DIR/NAME.input.npy and DIR/NAME.output.npy (PyTorch's f32 output) per model,
with fixed seeds; skips when DIR/.stamp holds the hash of this script and of conv.py. Exits 0 with a
message (and writes nothing) when torch is missing: the test then skips.
"""
import argparse
import hashlib
import os
import sys

HERE = os.path.dirname(os.path.abspath(__file__))


def main():
    parser = argparse.ArgumentParser()
    parser.add_argument("--out", required=True)
    parser.add_argument("--force", action="store_true")
    args = parser.parse_args()
    try:
        import numpy as np
        import torch
    except ImportError as e:
        print(f"gen_conv_models: skipped ({e}); the conv whole-model tests will skip")
        return 0
    sys.path.insert(0, os.path.join(HERE, "sweep_models"))
    import conv  # noqa: E402

    digest = hashlib.sha256()
    for path in (__file__, conv.__file__):
        with open(path, "rb") as f:
            digest.update(f.read())
    stamp = os.path.join(args.out, ".stamp")
    os.makedirs(args.out, exist_ok=True)
    if not args.force and os.path.exists(stamp) and open(stamp).read() == digest.hexdigest():
        print("gen_conv_models: up to date")
        return 0
    for name, (factory, opset, _) in conv.SMALL_MODELS.items():
        torch.manual_seed(0)
        np.random.seed(0)
        model, x = factory()
        with torch.no_grad():
            ref = model(x)
        torch.onnx.export(model, (x,), os.path.join(args.out, f"{name}.onnx"), input_names=["input"],
                          output_names=["output"], opset_version=opset, do_constant_folding=True)
        np.save(os.path.join(args.out, f"{name}.input.npy"), x.numpy())
        np.save(os.path.join(args.out, f"{name}.output.npy"), ref.numpy())
        peak = float(np.max(np.abs(ref.numpy())))
        if not np.all(np.isfinite(ref.numpy())) or peak < 1e-3:
            raise RuntimeError(f"{name}: degenerate reference output (max|out| = {peak})")
        print(f"gen_conv_models: {name} opset {opset} input {tuple(x.shape)} output {tuple(ref.shape)}")
    with open(stamp, "w") as f:
        f.write(digest.hexdigest())
    return 0


if __name__ == "__main__":
    sys.exit(main())
