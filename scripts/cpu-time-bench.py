#!/usr/bin/python3
"""Kiln against ONNX Runtime by CPU time, for a machine too loaded for wall-clock ratios (issue 18).

Usage:
  /usr/bin/python3 scripts/cpu-time-bench.py MODEL.onnx --input NAME=FILE.npy [--artifact A.so ...]
      [--kiln build/bin/kiln] [--peers ../shared/peers] [--rounds 5] [--runs 40] [--threads 1]

On one thread, wall-clock latency on a shared core measures the other processes as much as the
kernels; the CPU time a process is charged does not count the time it waits for the core. Each
engine runs twice per round, with --runs and with 2 timed runs (same warm-up), and the difference
of the two processes' CPU times (user + system, os.wait4), divided by (runs - 2), is the CPU time of
one inference without load, start-up or warm-up. Rounds interleave the engines (Kiln artifact(s),
then ONNX Runtime 1.30 via ort_bench.js) and the medians are printed with the Kiln/ORT ratios.
Cache pollution by the other processes still counts (both engines pay it). Only meaningful at
--threads 1 (idle worker threads are not charged, spinning ones are).
Without --artifact, MODEL.onnx is compiled once with `kiln compile` into a temporary directory.
"""
import argparse
import os
import statistics
import subprocess
import sys
import tempfile


def cpu_seconds(cmd):
    p = subprocess.Popen(cmd, stdout=subprocess.DEVNULL, stderr=subprocess.PIPE)
    _, status, ru = os.wait4(p.pid, 0)
    err = p.stderr.read().decode(errors="replace")
    p.stderr.close()
    if status != 0:
        sys.exit(f"cpu-time-bench: {' '.join(cmd)} failed:\n{err}")
    return ru.ru_utime + ru.ru_stime


def per_run(make_cmd, runs):
    return (cpu_seconds(make_cmd(runs)) - cpu_seconds(make_cmd(2))) / (runs - 2)


def main():
    root = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("model")
    ap.add_argument("--input", action="append", default=[], help="NAME=FILE.npy (repeatable)")
    ap.add_argument("--artifact", action="append", default=[], help="Kiln artifact(s) to time (default: compile)")
    ap.add_argument("--kiln", default=os.path.join(root, "build", "bin", "kiln"))
    ap.add_argument("--peers", default=os.path.join(root, "..", "shared", "peers"))
    ap.add_argument("--rounds", type=int, default=5)
    ap.add_argument("--runs", type=int, default=40)
    ap.add_argument("--threads", type=int, default=1)
    args = ap.parse_args()
    if args.runs < 4:
        sys.exit("cpu-time-bench: --runs must be at least 4")
    artifacts = args.artifact
    if not artifacts:
        so = os.path.join(tempfile.mkdtemp(prefix="kiln-cpu-bench-"), "model.so")
        subprocess.run([args.kiln, "compile", args.model, "-o", so], check=True, stdout=subprocess.DEVNULL)
        artifacts = [so]
    inputs = []
    for spec in args.input:
        inputs += ["--input", spec]
    t = str(args.threads)

    def kiln_cmd(so):
        return lambda n: [args.kiln, "run", so, *inputs, "--threads", t, "--repeat", str(n), "--warmup", "2"]

    def ort_cmd(n):
        return ["node", os.path.join(args.peers, "ort_bench.js"), args.model, *inputs, "--threads", t,
                "--iters", str(n), "--warmup", "2"]

    times = {a: [] for a in artifacts}
    times["ort"] = []
    for r in range(args.rounds):
        for a in artifacts:
            times[a].append(per_run(kiln_cmd(a), args.runs))
        times["ort"].append(per_run(ort_cmd, args.runs))
        print(f"round {r + 1}: " + "  ".join(f"{os.path.basename(k)} {v[-1] * 1e3:.2f} ms" for k, v in times.items()),
              flush=True)
    ort = statistics.median(times["ort"])
    print(f"ONNX Runtime: median {ort * 1e3:.2f} ms CPU per run ({args.threads} thread(s))")
    for a in artifacts:
        med = statistics.median(times[a])
        rounds = " ".join(f"{k / o:.2f}" for k, o in zip(times[a], times["ort"]))
        print(f"{a}: median {med * 1e3:.2f} ms CPU per run, Kiln/ORT {med / ort:.3f} (rounds: {rounds})")


if __name__ == "__main__":
    main()
