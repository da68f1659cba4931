#!/usr/bin/env python3
"""Python's call overhead: kiln.Module.run on a tiny model vs the same run through the C API
(build/bin/kiln_c_api_run_loop: bind/set inputs, kiln_executor_run, output views), measured
interleaved, several rounds, medians of wall-clock and of CPU time (the fair figure on a loaded
machine: time spent waiting for a core is not the binding's cost). A benchmark, not a test: the figure
goes in docs/python.md. The model: y = relu(x + 1) on float32[1, 64] (the kernel itself is ~0.1 us).

Usage: /usr/bin/python3 scripts/bench-python-overhead.py [--rounds 7] [--iterations 20000] [--build-dir build]"""
import argparse
import os
import statistics
import subprocess
import sys
import tempfile
import time

import numpy as np
import onnx.numpy_helper
from onnx import TensorProto, helper

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--rounds", type=int, default=7)
    ap.add_argument("--iterations", type=int, default=20000)
    ap.add_argument("--build-dir", default=os.environ.get("KILN_BUILD_DIR", os.path.join(ROOT, "build")))
    args = ap.parse_args()
    sys.path.insert(0, os.path.join(args.build_dir, "python"))
    import kiln

    one = onnx.numpy_helper.from_array(np.array(1, np.float32), "one")
    model = helper.make_model(helper.make_graph(
        [helper.make_node("Add", ["x", "one"], ["a"]), helper.make_node("Relu", ["a"], ["y"])], "tiny",
        [helper.make_tensor_value_info("x", TensorProto.FLOAT, [1, 64])],
        [helper.make_tensor_value_info("y", TensorProto.FLOAT, [1, 64])], [one]),
        opset_imports=[helper.make_opsetid("", 13)])
    kiln.set_num_threads(1)
    with tempfile.TemporaryDirectory() as tmp:
        path = kiln.compile(model).save(os.path.join(tmp, "tiny.so"))
        module = kiln.load(path)
        aligned = kiln.empty((1, 64), np.float32)
        aligned[...] = 0.5
        unaligned = np.full((1, 64), 0.5, np.float32)
        if unaligned.ctypes.data % 64 == 0:
            unaligned = np.full(65, 0.5, np.float32)[1:].reshape(1, 64)
        loop = os.path.join(args.build_dir, "bin", "kiln_c_api_run_loop")
        env = dict(os.environ, KILN_NUM_THREADS="1")
        rows = {k: [] for k in ("c bind", "py run bind", "py call bind", "c copy", "py run copy")}

        def py(fn):  # (wall, CPU) ns per run
            for _ in range(args.iterations // 10):
                fn()
            t, c = time.perf_counter_ns(), time.process_time_ns()
            for _ in range(args.iterations):
                fn()
            return ((time.perf_counter_ns() - t) / args.iterations, (time.process_time_ns() - c) / args.iterations)

        def c(mode):
            out = subprocess.run([loop, path, str(args.iterations), mode], capture_output=True, text=True,
                                 env=env, check=True).stdout.split()
            return float(out[1]), float(out[3])

        for _ in range(args.rounds):
            rows["c bind"].append(c("bind"))
            rows["py run bind"].append(py(lambda: module.run({"x": aligned})))
            rows["py call bind"].append(py(lambda: module(aligned)))
            rows["c copy"].append(c("copy"))
            rows["py run copy"].append(py(lambda: module.run({"x": unaligned})))
        for j, clock in enumerate(("wall-clock", "CPU time")):
            med = {k: statistics.median(r[j] for r in v) / 1000 for k, v in rows.items()}
            print(f"{clock} (median of {args.rounds} rounds x {args.iterations} runs): " +
                  ", ".join(f"{k} {v:.2f} us" for k, v in med.items()))
            print(f"  overhead: Module.run {med['py run bind'] - med['c bind']:.2f} us, module(x) "
                  f"{med['py call bind'] - med['c bind']:.2f} us (zero-copy input); Module.run "
                  f"{med['py run copy'] - med['c copy']:.2f} us (copied input)")


if __name__ == "__main__":
    main()
