#!/usr/bin/python3
"""Random-mutation run over ONNX models (issue 14, docs/reliability.md).

Usage: scripts/mutate-onnx.py KILN [--mutants N] [--seed S] [--timeout SEC] [--models DIR...]

Takes ONNX node-test models (../shared/onnx-node-tests/node/<test>/model.onnx with their
test_data_set_0 inputs; a varied default set: conv, gemm, LSTM, If, Loop, Scan, resize, einsum,
...), and makes N mutants, each one random damage: byte-level (bit flips, truncation, a run of
zeros, a splice, inserted bytes) or structural through the onnx protobuf classes (a dimension or
an attribute set to a huge, negative or zero value, a node dropped, duplicated or wired to its own
output (a cycle), an input renamed, a tensor's data type changed, its raw data cut, external data
pointing at /etc/passwd or ../). Each mutant runs as `KILN run MODEL --executor reference
--input NAME=FILE.npy ...` in its own process with a timeout (and a 4 GiB address-space limit, so
a giant allocation shows as a refusal or an abort, not as the machine swapping) and is classified:
  ran        exit 0                                             (good)
  refused    exit 1 with an "error" message                     (good)
  internal   refused with an internal error (KILN_ICHECK)       (reported; a bug, not a crash)
  signal     killed by a signal (SIGSEGV, SIGABRT, ...)         (bad)
  hang       ran past the timeout                               (bad)
Exit status 0 when no mutant died by a signal or hung. Bad mutants are kept in
/tmp/kiln-mutants-onnx/ for regression tests.
"""
import argparse
import collections
import os
import random
import resource
import shutil
import signal
import subprocess
import sys
import tempfile

import numpy as np
import onnx
from onnx import numpy_helper

DEFAULT_TESTS = [
    "test_conv_with_strides_padding", "test_gemm_all_attributes", "test_lstm_defaults", "test_if", "test_loop11",
    "test_scan9_sum", "test_resize_upsample_scales_linear", "test_averagepool_2d_pads", "test_batchnorm_epsilon",
    "test_gather_0", "test_reshape_reordered_all_dims", "test_slice", "test_softmax_axis_1_expanded",
    "test_matmul_4d", "test_einsum_batch_matmul", "test_cumsum_1d", "test_split_equal_parts_2d",
    "test_where_example", "test_range_float_type_positive_delta_expanded", "test_nonzero_example",
]
HUGE = [0, -1, -2**31, 2**31 - 1, 2**40, -2**63, 2**63 - 1, 65536, 1 << 30]


def byte_mutation(b, rng):
    kind = rng.choice(["flip", "truncate", "zeros", "splice", "insert"])
    m = bytearray(b)
    p = rng.randrange(len(m))
    if kind == "flip":
        for _ in range(rng.randint(1, 4)):
            m[rng.randrange(len(m))] ^= 1 << rng.randrange(8)
    elif kind == "truncate":
        del m[p:]
    elif kind == "zeros":
        n = rng.choice([1, 4, 16])
        m[p:p + n] = bytes(len(m[p:p + n]))
    elif kind == "splice":
        q, n = rng.randrange(len(m)), rng.choice([1, 4, 16, 64])
        m[p:p] = bytes(b[q:q + n])
    else:
        m[p:p] = bytes(rng.randrange(256) for _ in range(rng.choice([1, 2, 5])))
    return "bytes-" + kind, bytes(m)


def all_graphs(g):
    yield g
    for n in g.node:
        for a in n.attribute:
            if a.HasField("g"):
                yield from all_graphs(a.g)
            for sg in a.graphs:
                yield from all_graphs(sg)


def structural_mutation(model_bytes, rng):
    m = onnx.ModelProto()
    m.ParseFromString(model_bytes)
    graphs = list(all_graphs(m.graph))
    g = rng.choice(graphs)
    kind = rng.choice(["dim", "attr", "drop", "dup", "cycle", "rename", "dtype", "rawcut", "external", "opset"])
    if kind == "dim":
        vis = [vi for vi in list(g.input) + list(g.output) + list(g.value_info) if vi.type.tensor_type.shape.dim]
        tensors = [t for t in g.initializer if t.dims]
        if vis and (not tensors or rng.random() < 0.5):
            d = rng.choice(rng.choice(vis).type.tensor_type.shape.dim)
            d.dim_value = rng.choice([v for v in HUGE if v >= 0] + [-5])
        elif tensors:
            t = rng.choice(tensors)
            t.dims[rng.randrange(len(t.dims))] = rng.choice([v for v in HUGE if -2**63 <= v < 2**63])
    elif kind == "attr" and g.node:
        n = rng.choice(g.node)
        if n.attribute:
            a = rng.choice(n.attribute)
            if a.ints:
                a.ints[rng.randrange(len(a.ints))] = rng.choice(HUGE)
            elif a.HasField("i"):
                a.i = rng.choice(HUGE)
            elif a.HasField("f"):
                a.f = rng.choice([float("nan"), float("inf"), -1e30, 0.0])
            else:
                a.type = rng.randrange(1, 15)
        else:
            n.attribute.add().CopyFrom(onnx.helper.make_attribute("axis", rng.choice(HUGE)))
    elif kind == "drop" and g.node:
        del g.node[rng.randrange(len(g.node))]
    elif kind == "dup" and g.node:
        g.node.append(g.node[rng.randrange(len(g.node))])
    elif kind == "cycle" and g.node:
        n = rng.choice(g.node)
        if n.input and n.output:
            n.input[rng.randrange(len(n.input))] = n.output[0]
    elif kind == "rename" and g.node:
        n = rng.choice(g.node)
        if n.input:
            n.input[rng.randrange(len(n.input))] = rng.choice(["", "nope", n.input[0] + "_x"])
    elif kind == "dtype":
        vis = list(g.input) + list(g.output)
        if g.initializer and rng.random() < 0.5:
            rng.choice(g.initializer).data_type = rng.randrange(0, 25)
        elif vis:
            rng.choice(vis).type.tensor_type.elem_type = rng.randrange(0, 25)
    elif kind == "rawcut" and g.initializer:
        t = rng.choice(g.initializer)
        if t.raw_data:
            t.raw_data = t.raw_data[:rng.randrange(len(t.raw_data))]
        else:
            del t.float_data[:]
            del t.int64_data[:]
    elif kind == "external" and g.initializer:
        t = rng.choice(g.initializer)
        t.ClearField("raw_data")
        t.data_location = onnx.TensorProto.EXTERNAL
        e = t.external_data.add()
        e.key, e.value = "location", rng.choice(["/etc/passwd", "../../etc/passwd", "model.onnx", "/dev/zero",
                                                  "/proc/self/mem", "x" * 5000])
        if rng.random() < 0.5:
            o = t.external_data.add()
            o.key, o.value = "offset", str(rng.choice(HUGE))
    elif kind == "opset":
        m.opset_import[0].version = rng.choice([0, 1, 6, 99, 2**40])
    return "proto-" + kind, m.SerializeToString()


def limit_memory():
    resource.setrlimit(resource.RLIMIT_AS, (4 << 30, 4 << 30))


def run(cmd, timeout):
    try:
        p = subprocess.run(cmd, capture_output=True, timeout=timeout, preexec_fn=limit_memory)
    except subprocess.TimeoutExpired:
        return "hang", ""
    text = (p.stdout + p.stderr).decode(errors="replace")
    if p.returncode < 0:
        return "signal:" + signal.Signals(-p.returncode).name, text
    return p.returncode, text


def main():
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("kiln")
    ap.add_argument("--mutants", type=int, default=1000)
    ap.add_argument("--seed", type=int, default=14)
    ap.add_argument("--timeout", type=float, default=60.0)
    ap.add_argument("--node-tests", default=os.path.join(os.path.dirname(__file__), "..", "..", "shared",
                                                          "onnx-node-tests", "node"))
    args = ap.parse_args()
    work = tempfile.mkdtemp(prefix="kiln-mutate-onnx-")
    seeds = []
    for t in DEFAULT_TESTS:
        d = os.path.join(args.node_tests, t)
        if not os.path.exists(os.path.join(d, "model.onnx")):
            continue
        model = onnx.load(os.path.join(d, "model.onnx"))
        init = {i.name for i in model.graph.initializer}
        names = [i.name for i in model.graph.input if i.name not in init]
        flags = []
        for k, name in enumerate(names):
            pb = os.path.join(d, "test_data_set_0", "input_%d.pb" % k)
            if not os.path.exists(pb):
                break
            t_ = onnx.TensorProto()
            t_.ParseFromString(open(pb, "rb").read())
            npy = os.path.join(work, "%s_in%d.npy" % (t, k))
            np.save(npy, numpy_helper.to_array(t_))
            flags += ["--input", "%s=%s" % (name, npy)]
        seeds.append((t, open(os.path.join(d, "model.onnx"), "rb").read(), flags))
    if not seeds:
        sys.exit("no seed models under " + args.node_tests)
    rng = random.Random(args.seed)
    counts, by_kind, messages = collections.Counter(), collections.Counter(), collections.Counter()
    bad, keep = [], "/tmp/kiln-mutants-onnx"
    mdir = os.path.join(work, "m")
    os.makedirs(mdir)
    try:
        for i in range(args.mutants):
            name, data, flags = rng.choice(seeds)
            try:
                kind, mutant = byte_mutation(data, rng) if rng.random() < 0.4 else structural_mutation(data, rng)
            except Exception:  # the onnx classes refused to build it: a byte mutation instead
                kind, mutant = byte_mutation(data, rng)
            path = os.path.join(mdir, "model.onnx")
            with open(path, "wb") as f:
                f.write(mutant)
            rc, text = run([args.kiln, "run", path, "--executor", "reference", "--output-dir", mdir] + flags,
                           args.timeout)
            if rc == 0:
                cls = "ran"
            elif isinstance(rc, int):
                low = text.lower()
                cls = "internal" if "internal error" in low else ("refused" if "error" in low else "silent-failure")
                last = [l for l in text.splitlines() if "error" in l.lower()][:1]
                messages[(last[0] if last else text[:60]).replace(path, "M")[:90]] += 1
            else:
                cls = "hang" if rc == "hang" else "signal"
            counts[cls] += 1
            by_kind[(kind, cls)] += 1
            if cls in ("signal", "hang", "internal", "silent-failure"):
                os.makedirs(keep, exist_ok=True)
                out = os.path.join(keep, "mutant-%d-%s-%s.onnx" % (i, name, kind))
                shutil.copy(path, out)
                bad.append((i, name, kind, rc, text.strip().splitlines()[-1:] if text.strip() else ""))
    finally:
        shutil.rmtree(work, ignore_errors=True)
    print("%d ONNX mutants of %d node-test models, seed %d" % (args.mutants, len(seeds), args.seed))
    for cls in ("ran", "refused", "internal", "silent-failure", "signal", "hang"):
        print("  %-16s %d" % (cls, counts[cls]))
    print("by mutation:", ", ".join("%s/%s %d" % (k, c, n) for (k, c), n in sorted(by_kind.items())))
    print("most common refusals:")
    for m, n in messages.most_common(15):
        print("  %5d  %s" % (n, m))
    for b in bad[:30]:
        print("KEPT", b)
    sys.exit(1 if counts["signal"] or counts["hang"] else 0)


if __name__ == "__main__":
    main()
