#!/usr/bin/env python3
"""Compile a torchvision classifier with Kiln from Python and run it on a numpy image and on a
torch tensor; print the top-5 classes and the latency, and (--check) compare with PyTorch.

    /usr/bin/python3 examples/python/classify.py --model resnet50 --check
    /usr/bin/python3 examples/python/classify.py --model mobilenet_v2 --image photo.npy  # HxWx3 uint8

Weights are random (seeded; no download happens here), with batch-norm statistics recalibrated on
random batches so activations stay in a realistic range; the class indices are therefore
meaningless, but the pipeline is the one a pretrained model takes: torchvision -> ONNX
(torch.onnx.export) -> kiln.compile -> kiln.load -> module.run."""
import argparse
import os
import statistics
import sys
import tempfile
import time

import numpy as np
import torch
import torchvision

import kiln

MEAN = np.array([0.485, 0.456, 0.406], np.float32).reshape(3, 1, 1)
STD = np.array([0.229, 0.224, 0.225], np.float32).reshape(3, 1, 1)


def preprocess(image_hwc_uint8):
    """HxWx3 uint8 (224x224) -> float32[1, 3, 224, 224], ImageNet normalization."""
    x = image_hwc_uint8.astype(np.float32).transpose(2, 0, 1) / 255.0
    return ((x - MEAN) / STD)[None]


def top5(logits):
    p = np.exp(logits - logits.max())
    p /= p.sum()
    idx = np.argsort(-p)[:5]
    return [(int(i), float(p[i])) for i in idx]


def build_model(name):
    torch.manual_seed(0)
    model = getattr(torchvision.models, name)(weights=None)
    model.train()
    with torch.no_grad():  # batch-norm statistics from random batches (cumulative average)
        for m in model.modules():
            if isinstance(m, torch.nn.BatchNorm2d):
                m.reset_running_stats()
                m.momentum = None
        for _ in range(2):
            model(torch.randn(4, 3, 224, 224))
    return model.eval()


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--model", default="resnet50", help="a torchvision.models classifier (default resnet50)")
    ap.add_argument("--image", help="HxWx3 uint8 .npy, 224x224 (default: a random image)")
    ap.add_argument("--repeat", type=int, default=20)
    ap.add_argument("--threads", type=int, default=0, help="0: one per core")
    ap.add_argument("--check", action="store_true", help="compare with PyTorch: max|kiln-torch|/max|torch| <= 1e-4")
    args = ap.parse_args()

    model = build_model(args.model)
    rng = np.random.default_rng(0)
    image = np.load(args.image) if args.image else rng.integers(0, 256, (224, 224, 3), dtype=np.uint8)
    x = preprocess(image)

    with tempfile.TemporaryDirectory() as tmp:
        onnx_path = os.path.join(tmp, f"{args.model}.onnx")
        torch.onnx.export(model, torch.from_numpy(x), onnx_path, input_names=["input"], output_names=["logits"],
                          opset_version=13)
        t = time.perf_counter()
        artifact = kiln.compile(onnx_path)
        print(f"compiled {args.model} in {time.perf_counter() - t:.1f} s: {len(artifact.report['kernels'])} kernel "
              f"calls, {artifact.report['memory']['planned_bytes'] / 2**20:.1f} MiB of intermediates")
        module = kiln.load(artifact.save(os.path.join(tmp, f"{args.model}.so")))

    kiln.set_num_threads(args.threads)
    logits = module.run({"input": x})["logits"][0]  # a numpy image
    print("top-5 (numpy input):", ", ".join(f"class {i} {p:.3f}" for i, p in top5(logits)))
    tx = torch.from_numpy(x.copy())
    logits_t = torch.from_dlpack(module(tx))[0]  # a torch tensor in (DLPack), a torch tensor out
    print("top-5 (torch input):", ", ".join(f"class {i} {p:.3f}" for i, p in top5(logits_t.numpy())))

    times = []
    for _ in range(args.repeat):
        t = time.perf_counter()
        module(tx)
        times.append(time.perf_counter() - t)
    print(f"latency: median {statistics.median(times) * 1e3:.2f} ms over {args.repeat} runs "
          f"({kiln.get_num_threads()} thread(s))")

    if args.check:
        with torch.no_grad():
            ref = model(torch.from_numpy(x)).numpy()[0]
        rel = float(np.abs(logits - ref).max() / np.abs(ref).max())
        print(f"max|kiln - torch| / max|torch| = {rel:.3g} (tolerance 1e-4)")
        if rel > 1e-4:
            return 1
    return 0


if __name__ == "__main__":
    sys.exit(main())
