#!/usr/bin/python3
"""Int8 matmul benchmark (issue 13, docs/int8.md "Int8 matmul"): the BERT-style encoder of
scripts/gen_test_models.py quantized by `kiln quantize` (static minmax with 20 calibration inputs,
and --dynamic; each also with --reduce-range: 7-bit weights, the narrow dot-product form), run side by side, interleaved, by Kiln int8, Kiln f32 and ONNX Runtime 1.30 int8
(the same QDQ models) and ORT f32; also Kiln int8 with the fast matmul kernels switched off
(`--disable-pass AlterInt8Matmul`: the generic i32 kernels). Prints each engine's median over
--rounds rounds (each round: every engine's median of --iters runs after 3 warm-ups), the ratios,
and the cosine of each int8 output to f32 on a test input that is not a calibration input.

Usage: /usr/bin/python3 scripts/bench-int8-matmul.py [--build build] [--work /tmp/kiln-int8-matmul]
         [--threads 1 2] [--rounds 5] [--iters 10]
Needs ONNX Runtime for node (bash ../shared/peers/setup.sh) and the built `kiln`.
"""
import argparse
import importlib.util
import os
import re
import statistics
import sys

import numpy as np

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
PEERS = os.path.join(ROOT, "..", "shared", "peers")


def _int8_check():
    """scripts/int8-check.py as a module (its run() and cosine() helpers)."""
    spec = importlib.util.spec_from_file_location("int8_check", os.path.join(ROOT, "scripts", "int8-check.py"))
    mod = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(mod)
    return mod


_CHECK = _int8_check()
run, cosine = _CHECK.run, _CHECK.cosine


def kiln_median(text):
    m = re.search(r"^latency: median ([0-9.]+) ms", text, re.M)
    if not m:
        raise RuntimeError("no latency line in:\n" + text)
    return float(m.group(1))


def ort_median(text):
    m = re.search(r"median_ms=([0-9.]+)", text)
    if not m:
        raise RuntimeError("no median_ms in:\n" + text)
    return float(m.group(1))


def main():
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--build", default=os.path.join(ROOT, "build"))
    ap.add_argument("--work", default="/tmp/kiln-int8-matmul")
    ap.add_argument("--threads", nargs="*", type=int, default=[1])
    ap.add_argument("--rounds", type=int, default=5)
    ap.add_argument("--iters", type=int, default=10)
    args = ap.parse_args()
    os.makedirs(args.work, exist_ok=True)
    kiln = os.path.join(args.build, "bin", "kiln")
    w = lambda n: os.path.join(args.work, n)
    model = w("bert_encoder.onnx")
    if not os.path.exists(model):
        run(["/usr/bin/python3", os.path.join(ROOT, "scripts", "gen_test_models.py"), "--out", args.work,
             "--only", "bert_encoder"])
    calib = np.random.RandomState(10).randint(0, 1000, (20, 128)).astype(np.int64)
    test = np.random.RandomState(11).randint(0, 1000, (1, 128)).astype(np.int64)
    np.save(w("calib.npy"), calib)
    np.save(w("test.npy"), test)
    if not os.path.exists(w("static.onnx")):
        run([kiln, "quantize", model, "--calibration", "input_ids=" + w("calib.npy"), "--report-samples", "0", "-o", w("static.onnx")])
    if not os.path.exists(w("dynamic.onnx")):
        run([kiln, "quantize", model, "--dynamic", "-o", w("dynamic.onnx")])
    if not os.path.exists(w("static_rr.onnx")):
        run([kiln, "quantize", model, "--calibration", "input_ids=" + w("calib.npy"), "--report-samples", "0",
             "--reduce-range", "-o", w("static_rr.onnx")])
    if not os.path.exists(w("dynamic_rr.onnx")):
        run([kiln, "quantize", model, "--dynamic", "--reduce-range", "-o", w("dynamic_rr.onnx")])
    engines = {}  # name -> (command builder, output file)
    for name, onnx, extra in [("kiln f32", model, []), ("kiln int8 static", w("static.onnx"), []),
                              ("kiln int8 dynamic", w("dynamic.onnx"), []),
                              ("kiln int8 static rr", w("static_rr.onnx"), []),
                              ("kiln int8 dynamic rr", w("dynamic_rr.onnx"), []),
                              ("kiln int8 static generic", w("static.onnx"), ["--disable-pass", "AlterInt8Matmul"]),
                              ("kiln int8 dynamic generic", w("dynamic.onnx"), ["--disable-pass", "AlterInt8Matmul"])]:
        so = w(name.replace(" ", "_") + ".so")
        text = run([kiln, "compile", onnx, "-o", so] + extra)
        fast = sum(1 for line in text.splitlines() if "[int8_matmul" in line)
        out = w(name.replace(" ", "_") + ".npy")
        run([kiln, "run", so, "--input", "input_ids=" + w("test.npy"), "--output", out])
        engines[name] = (lambda t, so=so: [kiln, "run", so, "--input", "input_ids=" + w("test.npy"), "--threads", str(t),
                                           "--repeat", str(args.iters), "--warmup", "3"], out, "kiln", fast)
    for name, onnx in [("ort f32", model), ("ort int8 static", w("static.onnx")), ("ort int8 dynamic", w("dynamic.onnx")),
                       ("ort int8 static rr", w("static_rr.onnx")), ("ort int8 dynamic rr", w("dynamic_rr.onnx"))]:
        out = w(name.replace(" ", "_") + ".npy")
        node = ["node", os.path.join(PEERS, "ort_bench.js"), onnx, "--input", "input_ids=" + w("test.npy")]
        run(node + ["--iters", "1", "--output", out])
        engines[name] = (lambda t, node=node: node + ["--threads", str(t), "--iters", str(args.iters), "--warmup", "3"],
                         out, "ort", None)
    ref = np.load(engines["kiln f32"][1])
    print("cosine to Kiln f32 on a non-calibration input:")
    for name, (_, out, _, fast) in engines.items():
        print("  %-26s %.5f%s" % (name, cosine(ref, np.load(out)), "" if fast is None else "  (int8_matmul kernels listed: %d)" % fast))
    for v in ("static", "dynamic"):
        fast, generic = np.load(engines["kiln int8 " + v][1]), np.load(engines["kiln int8 %s generic" % v][1])
        print("  kiln int8 %s: fast kernels vs generic i32 kernels: max |diff| %g" % (v, float(np.abs(fast - generic).max())))
    print("load average before timing: %s" % open("/proc/loadavg").read().split()[:3])
    for t in args.threads:
        times = {name: [] for name in engines}
        for _ in range(args.rounds):
            for name, (cmd, _, kind, _) in engines.items():
                text = run(cmd(t))
                times[name].append(kiln_median(text) if kind == "kiln" else ort_median(text))
        med = {name: statistics.median(v) for name, v in times.items()}
        print("threads %d (median of %d rounds; load average after: %s)" % (t, args.rounds, open("/proc/loadavg").read().split()[:3]))
        for name in engines:
            print("  %-26s %8.2f ms" % (name, med[name]))
        for num, den in [("kiln int8 static", "kiln f32"), ("kiln int8 static", "ort int8 static"),
                         ("kiln int8 dynamic", "kiln f32"), ("kiln int8 dynamic", "ort int8 dynamic"),
                         ("kiln int8 static rr", "kiln f32"), ("kiln int8 static rr", "ort int8 static rr"),
                         ("kiln int8 dynamic rr", "kiln f32"), ("kiln int8 dynamic rr", "ort int8 dynamic rr"),
                         ("kiln int8 static", "kiln int8 static generic"), ("kiln int8 dynamic", "kiln int8 dynamic generic")]:
            print("  %-26s / %-26s %.2f" % (num, den, med[num] / med[den]))
    return 0


if __name__ == "__main__":
    sys.exit(main())
