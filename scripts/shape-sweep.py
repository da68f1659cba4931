#!/usr/bin/python3
"""Shape sweep: Kiln against ONNX Runtime on single-op models of random odd and aligned sizes (issue 18).

Usage:
  /usr/bin/python3 scripts/shape-sweep.py [--quick] [--filter matmul,conv,eltwise] [--threads "1 2"]
      [--count N] [--seed S] [--rounds R] [--json OUT.json] [--out DIR] [--kiln PATH] [--peers DIR]
      [--lock FILE | --no-lock] [--only SUBSTRING] [--list] [--confirm R [--confirm-above X]]

Builds single-op ONNX models with onnx.helper (fixed seed, so a run is reproducible), compiles each
with `kiln compile`, then times Kiln (`kiln run --repeat N --warmup W --threads T`) and ONNX Runtime
(`node ../shared/peers/ort_bench.js ... --iters N --warmup W --threads T`) one right after the other
on the same input .npy, --rounds times, taking the median of the per-round medians. The first round
also compares the two outputs (max |kiln - ort| / max(1, max |ort|) <= 1e-3; a mismatch is reported
and the case marked BAD). At the end, per thread count, it prints the distribution of Kiln/ORT: the
fraction of shapes <= 1.0, the median, p90 and the ten worst cases with their shapes.

Shape classes (--filter, comma separated):
  matmul   MatMul [.., M, K] x W[K, N] (W an initializer: a dense layer), Gemm transB with bias,
           batched MatMul of two inputs [b, M, K] x [b, K, N]; M in 1..512, K and N in 1..8192
           (log-uniform, half of them rounded to a multiple of 8 or 64), capped in work/weights.
  conv     Conv NCHW: channels 1..512, kernels 1/3/5/7, strides 1/2, groups 1, small groups and
           depthwise, spatial 7..224 (padding k//2), with bias.
  eltwise  Add with broadcast, Relu, Sigmoid, Gelu (erf form, 5 nodes), Softmax(-1), ReduceMean(-1),
           LayerNormalization(-1) on rank 2..4 tensors of 1e3..4e6 elements.
Default: --count 120 cases per class (--quick: 12 per class, 1 round, fewer iterations; a few
minutes). --only keeps the cases whose name contains the substring. --list prints the cases only.

--confirm R: after the pass, every case whose Kiln/ORT at a thread count is above --confirm-above
(default 1.0) is timed R more rounds there, interleaved as before, and its ratio becomes the median
over all its rounds (the pass's first ratio is printed beside it and kept in the JSON as
first_ratio). Single 1-10 ms timings on a shared VM swing by 1.5x now and then, so a case that
looks like a cliff once is re-timed before it counts; the re-timing only ever adds rounds.

Timing is only meaningful on a quiet machine: each round holds an exclusive flock on --lock
(default $KILN_BENCH_LOCK or /tmp/kiln-bench.lock, as scripts/bench-peers.sh does) so two people
never measure at once; the load average is printed with the results.
"""
import argparse
import fcntl
import json
import math
import os
import random
import re
import statistics
import subprocess
import sys
import time

import numpy as np
import onnx
from onnx import TensorProto, helper, numpy_helper

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))


# ---------------------------------------------------------------- cases
class Case:
    """One single-op model: name, class, description of the shape, the graph, input arrays, work."""

    def __init__(self, name, cls, shape, nodes, inputs, initializers, output_shape, flops, opset=17):
        self.name, self.cls, self.shape = name, cls, shape
        self.nodes, self.inputs, self.initializers = nodes, inputs, initializers
        self.output_shape, self.flops, self.opset = output_shape, flops, opset

    def model(self):
        ins = [helper.make_tensor_value_info(n, TensorProto.FLOAT, list(a.shape)) for n, a in self.inputs.items()]
        out = helper.make_tensor_value_info("y", TensorProto.FLOAT, list(self.output_shape))
        inits = [numpy_helper.from_array(a, n) for n, a in self.initializers.items()]
        g = helper.make_graph(self.nodes, self.name, ins, [out], inits)
        m = helper.make_model(g, opset_imports=[helper.make_opsetid("", self.opset)], producer_name="kiln-shape-sweep")
        m.ir_version = 8
        return m


def log_uniform(rng, lo, hi):
    return int(round(math.exp(rng.uniform(math.log(lo), math.log(hi)))))


def dim(rng, lo, hi, align_p=0.5):
    """A size in lo..hi, log-uniform; with probability align_p rounded to a multiple of 8 or 64."""
    v = log_uniform(rng, lo, hi)
    if rng.random() < align_p and v >= 8:
        a = 64 if v >= 256 and rng.random() < 0.5 else 8
        v = max(a, v // a * a)
    return max(lo, min(hi, v))


def randn(rng_np, shape, scale=1.0):
    return (rng_np.standard_normal(shape) * scale).astype(np.float32)


def matmul_cases(rng, rng_np, count):
    cases = []
    fixed = [  # the table, always first
        ("matmul", 1, 4096, 4096), ("matmul", 1, 4095, 4097), ("gemm", 3, 768, 1024),
        ("gemm", 3, 777, 1031), ("gemm", 8, 777, 1031), ("mlp", 3, 777, 1031)]
    specs = list(fixed)[:count]
    while len(specs) < count:
        kind = rng.choice(["matmul", "matmul", "gemm", "batched"])
        m = dim(rng, 1, 512) if rng.random() < 0.7 else rng.randint(1, 8)
        k, n = dim(rng, 1, 8192), dim(rng, 1, 8192)
        if kind == "batched":
            b = rng.randint(2, 16)
            if b * m * k * n > 2 ** 29 or b * (m * k + k * n) > 2 ** 24:
                continue
            specs.append((kind, (b, m), k, n))
            continue
        if m * k * n > 2 ** 31 or k * n > 2 ** 24:  # <= 4 GFLOP, weights <= 64 MB
            continue
        specs.append((kind, m, k, n))
    for i, (kind, m, k, n) in enumerate(specs):
        if kind == "matmul":
            w = randn(rng_np, (k, n), 1 / math.sqrt(k))
            x = randn(rng_np, (1, m, k) if m == 1 else (m, k))
            node = helper.make_node("MatMul", ["x", "w"], ["y"])
            cases.append(Case(f"mm{i:03d}_matmul_M{m}_K{k}_N{n}", "matmul", f"MatMul {list(x.shape)} x [{k},{n}]",
                              [node], {"x": x}, {"w": w}, x.shape[:-1] + (n,), 2 * m * k * n))
        elif kind == "gemm":
            w = randn(rng_np, (n, k), 1 / math.sqrt(k))
            bias = randn(rng_np, (n,))
            x = randn(rng_np, (m, k))
            node = helper.make_node("Gemm", ["x", "w", "b"], ["y"], transB=1)
            cases.append(Case(f"mm{i:03d}_gemm_M{m}_K{k}_N{n}", "matmul", f"Gemm transB M={m} K={k} N={n}",
                              [node], {"x": x}, {"w": w, "b": bias}, (m, n), 2 * m * k * n))
        elif kind == "mlp":  # three Gemm layers k -> n -> 4 * n - 27 -> n with Relu between
            sizes = [k, n, 4 * n - 27, n]
            x = randn(rng_np, (m, k))
            nodes, inits, src = [], {}, "x"
            for layer in range(3):
                inits[f"w{layer}"] = randn(rng_np, (sizes[layer + 1], sizes[layer]), 1 / math.sqrt(sizes[layer]))
                inits[f"b{layer}"] = randn(rng_np, (sizes[layer + 1],))
                dst = "y" if layer == 2 else f"h{layer}"
                nodes.append(helper.make_node("Gemm", [src, f"w{layer}", f"b{layer}"], [dst + ("" if layer == 2 else "g")],
                                              transB=1))
                if layer < 2:
                    nodes.append(helper.make_node("Relu", [dst + "g"], [dst]))
                src = dst
            flops = 2 * m * sum(a * b for a, b in zip(sizes, sizes[1:]))
            cases.append(Case(f"mm{i:03d}_mlp_M{m}_{'_'.join(map(str, sizes))}", "matmul",
                              f"MLP Gemm+Relu M={m} {'-'.join(map(str, sizes))}", nodes, {"x": x}, inits, (m, n), flops))
        else:
            b, mm = m
            x = randn(rng_np, (b, mm, k))
            y = randn(rng_np, (b, k, n), 1 / math.sqrt(k))
            node = helper.make_node("MatMul", ["x", "z"], ["y"])
            cases.append(Case(f"mm{i:03d}_bmm_B{b}_M{mm}_K{k}_N{n}", "matmul", f"MatMul [{b},{mm},{k}] x [{b},{k},{n}]",
                              [node], {"x": x, "z": y}, {}, (b, mm, n), 2 * b * mm * k * n))
    return cases


def conv_cases(rng, rng_np, count):
    cases = []
    i = 0
    while len(cases) < count:
        k = rng.choice([1, 1, 3, 3, 3, 5, 7])
        s = rng.choice([1, 1, 2])
        hw = dim(rng, 7, 224, 0.3)
        kind = rng.choice(["dense", "dense", "dense", "depthwise", "grouped"])
        c = dim(rng, 1, 512)
        if kind == "depthwise":
            oc = g = c
        elif kind == "grouped":
            g = rng.choice([2, 4, 8, 16, 32])
            c = max(g, c // g * g)
            oc = max(g, dim(rng, 1, 512) // g * g)
        else:
            g, oc = 1, dim(rng, 1, 512)
        oh = (hw + 2 * (k // 2) - k) // s + 1
        macs = oc * oh * oh * (c // g) * k * k
        if macs > 2 ** 30 or c * hw * hw > 2 ** 23 or oc * oh * oh > 2 ** 23:
            continue
        x = randn(rng_np, (1, c, hw, hw))
        w = randn(rng_np, (oc, c // g, k, k), 1 / math.sqrt(c // g * k * k))
        bias = randn(rng_np, (oc,))
        node = helper.make_node("Conv", ["x", "w", "b"], ["y"], kernel_shape=[k, k], strides=[s, s],
                                pads=[k // 2] * 4, group=g)
        cases.append(Case(f"cv{i:03d}_{kind}_C{c}_OC{oc}_k{k}_s{s}_g{g}_HW{hw}", "conv",
                          f"Conv C={c} OC={oc} k={k} s={s} g={g} HW={hw}", [node], {"x": x}, {"w": w, "b": bias},
                          (1, oc, oh, oh), 2 * macs))
        i += 1
    return cases


def eltwise_shape(rng):
    rank = rng.randint(2, 4)
    while True:
        shape = [dim(rng, 1, 512, 0.5) for _ in range(rank)]
        n = math.prod(shape)
        if 1000 <= n <= 4_000_000:
            return shape


def eltwise_cases(rng, rng_np, count):
    cases = []
    ops = ["add", "relu", "sigmoid", "gelu", "softmax", "reducemean", "layernorm"]
    for i in range(count):
        op = ops[i % len(ops)]
        shape = eltwise_shape(rng)
        n = math.prod(shape)
        x = randn(rng_np, shape)
        out_shape, inits, nodes = tuple(shape), {}, []
        if op == "add":
            bshape = [1] * len(shape)
            for d in rng.sample(range(len(shape)), rng.randint(1, len(shape) - 1)):
                bshape[d] = shape[d]
            inits["b"] = randn(rng_np, bshape)
            nodes = [helper.make_node("Add", ["x", "b"], ["y"])]
            desc = f"Add {shape} + {bshape}"
        elif op in ("relu", "sigmoid"):
            nodes = [helper.make_node(op.capitalize(), ["x"], ["y"])]
            desc = f"{op.capitalize()} {shape}"
        elif op == "gelu":  # the erf form of torch's export: x * 0.5 * (1 + erf(x / sqrt 2))
            inits.update({"c_sqrt2": np.array(math.sqrt(2), np.float32), "c_one": np.array(1, np.float32),
                          "c_half": np.array(0.5, np.float32)})
            nodes = [helper.make_node("Div", ["x", "c_sqrt2"], ["t0"]), helper.make_node("Erf", ["t0"], ["t1"]),
                     helper.make_node("Add", ["t1", "c_one"], ["t2"]), helper.make_node("Mul", ["x", "t2"], ["t3"]),
                     helper.make_node("Mul", ["t3", "c_half"], ["y"])]
            desc = f"Gelu(erf) {shape}"
        elif op == "softmax":
            nodes = [helper.make_node("Softmax", ["x"], ["y"], axis=-1)]
            desc = f"Softmax(-1) {shape}"
        elif op == "reducemean":
            nodes = [helper.make_node("ReduceMean", ["x"], ["y"], axes=[-1], keepdims=1)]  # opset 17: attribute
            out_shape = tuple(shape[:-1]) + (1,)
            desc = f"ReduceMean(-1) {shape}"
        else:
            inits["g"] = randn(rng_np, (shape[-1],))
            inits["b"] = randn(rng_np, (shape[-1],))
            nodes = [helper.make_node("LayerNormalization", ["x", "g", "b"], ["y"], axis=-1, epsilon=1e-5)]
            desc = f"LayerNormalization(-1) {shape}"
        cases.append(Case(f"ew{i:03d}_{op}_{'x'.join(map(str, shape))}", "eltwise", desc, nodes, {"x": x}, inits,
                          out_shape, n))
    return cases


# ---------------------------------------------------------------- running
class Lock:
    def __init__(self, path):
        self.path, self.fd = path, None

    def __enter__(self):
        if self.path:
            self.fd = os.open(self.path, os.O_CREAT | os.O_RDWR, 0o666)
            fcntl.flock(self.fd, fcntl.LOCK_EX)
        return self

    def __exit__(self, *exc):
        if self.fd is not None:
            fcntl.flock(self.fd, fcntl.LOCK_UN)
            os.close(self.fd)
            self.fd = None


def run(cmd, timeout=600):
    p = subprocess.run(cmd, capture_output=True, text=True, timeout=timeout)
    if p.returncode != 0:
        raise RuntimeError(f"{' '.join(cmd)} failed ({p.returncode}): {(p.stderr or p.stdout).strip()[-600:]}")
    return p.stdout


def iterations(case, quick):
    """Timed runs so that one engine spends roughly 0.15 s (quick: 0.05 s) per round."""
    est_ms = max(case.flops / 40e6, 4 * sum(a.size for a in case.initializers.values()) / 8e6, 0.01)
    target = 50.0 if quick else 150.0
    return int(min(200, max(3, target / est_ms)))


def case_files(case, work):
    """Writes the case's model and inputs; returns (onnx path, artifact path, input specs, base)."""
    base = os.path.join(work, case.name)
    onnx_path, so_path = base + ".onnx", base + ".so"
    onnx.save(case.model(), onnx_path)
    in_specs = []
    for n, a in case.inputs.items():
        np.save(f"{base}.{n}.npy", a)
        in_specs.append(f"{n}={base}.{n}.npy")
    return onnx_path, so_path, in_specs, base


def time_rounds(args, onnx_path, so_path, in_specs, base, threads, rounds, iters, warm, outputs=False):
    """`rounds` rounds of Kiln then ORT at `threads`; per-round medians (ms) of each engine."""
    ks, os_ = [], []
    ins = sum((["--input", s] for s in in_specs), [])
    for r in range(rounds):
        kout = ["--output", base + ".kiln.npy"] if outputs and r == 0 else []
        oout = ["--output", base + ".ort.npy"] if outputs and r == 0 else []
        with Lock(args.lock):
            out = run([args.kiln, "run", so_path, *ins, *kout, "--threads", str(threads), "--repeat", str(iters),
                       "--warmup", str(warm)])
            ks.append(float(re.search(r"latency: median ([0-9.]+) ms", out).group(1)))
            out = run(["node", args.ort_bench, onnx_path, *ins, *oout, "--threads", str(threads), "--iters",
                       str(iters), "--warmup", str(warm)])
            os_.append(float(re.search(r"median_ms=([0-9.]+)", out).group(1)))
    return ks, os_


def time_case(case, args, work):
    onnx_path, so_path, in_specs, base = case_files(case, work)
    t0 = time.time()
    run([args.kiln, "compile", onnx_path, "-o", so_path])
    result = {"name": case.name, "class": case.cls, "shape": case.shape, "flops": case.flops,
              "compile_s": round(time.time() - t0, 2), "threads": {}}
    iters = iterations(case, args.quick)
    warm = 2 if args.quick else 3
    for t in args.threads:
        first = "error" not in result
        ks, os_ = time_rounds(args, onnx_path, so_path, in_specs, base, t, args.rounds, iters, warm, outputs=first)
        if first:
            a, b = np.load(base + ".kiln.npy"), np.load(base + ".ort.npy")
            err = float(np.max(np.abs(a.astype(np.float64) - b)) / max(1.0, float(np.max(np.abs(b)))))
            result["error"] = err
            result["ok"] = bool(a.shape == b.shape and err <= 1e-3)
        km, om = statistics.median(ks), statistics.median(os_)
        result["threads"][str(t)] = {"kiln_ms": km, "ort_ms": om, "ratio": km / om, "iters": iters,
                                     "kiln_rounds": ks, "ort_rounds": os_}
    if os.path.exists(so_path) and not args.keep:
        os.remove(so_path)
    return result


def confirm_case(case, result, args, work):
    """Re-times the thread counts whose ratio is above --confirm-above with --confirm more rounds;
    the ratio becomes the median over all rounds (the first ones included), the first pass's is kept
    as first_ratio. Returns the thread counts re-timed."""
    todo = [t for t in args.threads if result["threads"][str(t)]["ratio"] > args.confirm_above]
    if not todo:
        return []
    onnx_path, so_path, in_specs, base = case_files(case, work)
    run([args.kiln, "compile", onnx_path, "-o", so_path])
    for t in todo:
        d = result["threads"][str(t)]
        ks, os_ = time_rounds(args, onnx_path, so_path, in_specs, base, t, args.confirm, d["iters"],
                              2 if args.quick else 3)
        d["first_ratio"] = d["ratio"]
        d["kiln_rounds"] += ks
        d["ort_rounds"] += os_
        d["kiln_ms"], d["ort_ms"] = statistics.median(d["kiln_rounds"]), statistics.median(d["ort_rounds"])
        d["ratio"] = d["kiln_ms"] / d["ort_ms"]
    if os.path.exists(so_path) and not args.keep:
        os.remove(so_path)
    return todo


def percentile(v, p):
    v = sorted(v)
    if not v:
        return float("nan")
    i = min(len(v) - 1, max(0, int(math.ceil(p / 100 * len(v))) - 1))
    return v[i]


def summarize(results, threads, title):
    print(f"\n== {title}")
    for t in threads:
        rows = [r for r in results if str(t) in r.get("threads", {})]
        if not rows:
            continue
        ratios = [r["threads"][str(t)]["ratio"] for r in rows]
        le1 = sum(1 for x in ratios if x <= 1.0) / len(ratios)
        print(f"threads={t}: {len(ratios)} shapes, Kiln/ORT <= 1.0 for {100 * le1:.0f}%, "
              f"median {statistics.median(ratios):.2f}, p90 {percentile(ratios, 90):.2f}, "
              f"worst {max(ratios):.2f}; <= 1.5 for {100 * sum(1 for x in ratios if x <= 1.5) / len(ratios):.0f}%")
        worst = sorted(rows, key=lambda r: -r["threads"][str(t)]["ratio"])[:10]
        for r in worst:
            d = r["threads"][str(t)]
            print(f"   {d['ratio']:6.2f}  kiln {d['kiln_ms']:9.3f} ms  ort {d['ort_ms']:9.3f} ms  {r['shape']}")


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--quick", action="store_true")
    ap.add_argument("--filter", default="matmul,conv,eltwise")
    ap.add_argument("--threads", default="1 2")
    ap.add_argument("--count", type=int, default=None, help="cases per class (default 120, --quick 12)")
    ap.add_argument("--seed", type=int, default=18)
    ap.add_argument("--rounds", type=int, default=None, help="rounds per case (default 3, --quick 1)")
    ap.add_argument("--json", default=None)
    ap.add_argument("--out", default=os.path.join(os.environ.get("TMPDIR", "/tmp"), f"kiln-shape-sweep-{os.getuid()}"))
    ap.add_argument("--kiln", default=None)
    ap.add_argument("--peers", default=os.environ.get("KILN_PEERS", os.path.join(ROOT, "..", "shared", "peers")))
    ap.add_argument("--lock", default=os.environ.get("KILN_BENCH_LOCK", "/tmp/kiln-bench.lock"))
    ap.add_argument("--no-lock", action="store_true")
    ap.add_argument("--confirm", type=int, default=0,
                    help="re-time every case above --confirm-above with this many more rounds (default 0: off)")
    ap.add_argument("--confirm-above", type=float, default=1.0)
    ap.add_argument("--only", default=None)
    ap.add_argument("--keep", action="store_true", help="keep the compiled artifacts")
    ap.add_argument("--list", action="store_true")
    args = ap.parse_args()
    args.threads = [int(t) for t in args.threads.replace(",", " ").split()]
    count = args.count if args.count is not None else (12 if args.quick else 120)
    args.rounds = args.rounds or (1 if args.quick else 3)
    if args.no_lock:
        args.lock = None
    classes = [c.strip() for c in args.filter.split(",") if c.strip()]
    makers = {"matmul": matmul_cases, "conv": conv_cases, "eltwise": eltwise_cases}
    for c in classes:
        if c not in makers:
            sys.exit(f"shape-sweep: unknown class '{c}' in --filter (expected some of {', '.join(makers)})")
    cases = []
    for c in classes:  # one generator per class, so adding a class does not change another's shapes
        rng = random.Random(f"{args.seed}-{c}")
        rng_np = np.random.default_rng([args.seed, sorted(makers).index(c)])
        cases += makers[c](rng, rng_np, count)
    if args.only:
        cases = [c for c in cases if args.only in c.name]
    if args.list:
        for c in cases:
            print(f"{c.name:50s} {c.shape}  {c.flops / 1e6:.1f} MFLOP")
        return 0
    if args.kiln is None:
        build = subprocess.run(["bash", os.path.join(ROOT, "scripts", "build-dir.sh")], capture_output=True,
                               text=True).stdout.strip()
        args.kiln = os.path.join(build, "bin", "kiln")
    if not os.access(args.kiln, os.X_OK):
        sys.exit(f"shape-sweep: {args.kiln} not found: build Kiln first (bash scripts/build.sh) or pass --kiln")
    args.ort_bench = os.path.join(args.peers, "ort_bench.js")
    if not os.path.exists(args.ort_bench):
        sys.exit(f"shape-sweep: {args.ort_bench} not found: pass --peers DIR (holding ort_bench.js)")
    os.makedirs(args.out, exist_ok=True)
    print(f"shape-sweep: {time.strftime('%Y-%m-%d %H:%M UTC', time.gmtime())}; {len(cases)} cases "
          f"({', '.join(classes)}), seed {args.seed}, threads {args.threads}, {args.rounds} round(s); "
          f"load {os.getloadavg()[0]:.2f}")
    results, bad = [], []
    for n, case in enumerate(cases):
        try:
            r = time_case(case, args, args.out)
        except Exception as e:  # reported, never silently dropped
            print(f"[{n + 1}/{len(cases)}] {case.name}: FAILED: {e}", flush=True)
            bad.append({"name": case.name, "shape": case.shape, "failure": str(e)})
            continue
        results.append(r)
        if not r.get("ok", True):
            bad.append({"name": case.name, "shape": case.shape, "failure": f"output differs from ORT: {r['error']:.2e}"})
        cols = "  ".join(f"t{t}: {d['kiln_ms']:.3f}/{d['ort_ms']:.3f} = {d['ratio']:.2f}" for t, d in r["threads"].items())
        print(f"[{n + 1}/{len(cases)}] {case.shape:48s} {cols}{'' if r.get('ok', True) else '  BAD'}", flush=True)
    if args.confirm > 0:
        by_name = {c.name: c for c in cases}
        print(f"\n== confirm: cases above {args.confirm_above} re-timed with {args.confirm} more rounds "
              f"(ratio = median over all {args.rounds + args.confirm} rounds)", flush=True)
        for r in results:
            try:
                todo = confirm_case(by_name[r["name"]], r, args, args.out)
            except Exception as e:  # reported, never silently dropped
                print(f"   {r['shape']}: confirm FAILED: {e}", flush=True)
                bad.append({"name": r["name"], "shape": r["shape"], "failure": f"confirm: {e}"})
                continue
            for t in todo:
                d = r["threads"][str(t)]
                print(f"   t{t} {r['shape']:48s} first {d['first_ratio']:.2f} -> {d['ratio']:.2f} "
                      f"(kiln {d['kiln_ms']:.3f} ms, ort {d['ort_ms']:.3f} ms)", flush=True)
    for c in classes:
        summarize([r for r in results if r["class"] == c], args.threads, f"class {c}")
    if len(classes) > 1:
        summarize(results, args.threads, "all classes")
    print(f"\nload after: {os.getloadavg()[0]:.2f}")
    if bad:
        print(f"{len(bad)} case(s) failed or differ from ORT:")
        for b in bad:
            print(f"   {b['shape']}: {b['failure']}")
    if args.json:
        with open(args.json, "w") as f:
            json.dump({"seed": args.seed, "threads": args.threads, "results": results, "bad": bad}, f, indent=1)
    return 1 if bad else 0


if __name__ == "__main__":
    sys.exit(main())
