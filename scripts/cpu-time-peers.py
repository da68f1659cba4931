#!/usr/bin/python3
"""Kiln artifacts against each other and ONNX Runtime by on-CPU time, for a loaded host.

Usage:
  /usr/bin/python3 scripts/cpu-time-peers.py MODEL.onnx --input NAME=FILE.npy [--input ...]
      A.so [B.so ...] [--ort] [--rounds 5] [--runs 40] [--threads 1] [--kiln build/bin/kiln]
      [--peers ../shared/peers]

When other processes share the cores, wall-clock latency mostly measures the scheduler (a run is
descheduled for whole time slices). This driver measures instead the CPU time each engine spends
per run: `perf stat -e task-clock` over `--runs + 5` runs minus that over 5 runs (load, compile,
warm-up cancel), divided by `--runs`. Engines are interleaved round by round; it prints every
round and the median of the rounds, and each artifact's ratio to ONNX Runtime (`--ort`). Cache
pollution by the other processes still inflates both engines a little, so ratios are the figure
to quote. Only meaningful at one thread: ONNX Runtime's pool threads spin while waiting, which
task-clock counts as work. Needs `perf` (Debian: linux-perf) and node with onnxruntime-node
(../shared/peers/setup.sh). A tool, not a test.
"""
import argparse
import os
import statistics
import subprocess
import sys

root = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))


def task_clock_ms(cmd):
    r = subprocess.run(['perf', 'stat', '-x,', '-e', 'task-clock'] + cmd, capture_output=True, text=True)
    if r.returncode != 0:
        sys.exit(f'cpu-time-peers: {" ".join(cmd)} failed:\n{r.stdout[-2000:]}{r.stderr[-2000:]}')
    for line in r.stderr.splitlines():
        if 'task-clock' in line:
            return float(line.split(',')[0])
    sys.exit(f'cpu-time-peers: no task-clock in perf output (is perf allowed here?):\n{r.stderr[-2000:]}')


def main():
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument('model')
    ap.add_argument('artifacts', nargs='*')
    ap.add_argument('--input', action='append', default=[], help='NAME=FILE.npy (repeatable)')
    ap.add_argument('--ort', action='store_true')
    ap.add_argument('--rounds', type=int, default=5)
    ap.add_argument('--runs', type=int, default=40)
    ap.add_argument('--threads', type=int, default=1)
    ap.add_argument('--kiln', default=os.path.join(root, 'build', 'bin', 'kiln'))
    ap.add_argument('--peers', default=os.path.join(root, '..', 'shared', 'peers'))
    a = ap.parse_intermixed_args()
    inputs = [x for i in a.input for x in ('--input', i)]

    def kiln(so):
        return lambda k: [a.kiln, 'run', so, '--repeat', str(k), '--threads', str(a.threads)] + inputs

    def ort(k):
        return (['node', os.path.join(a.peers, 'ort_bench.js'), a.model, '--threads', str(a.threads),
                 '--iters', str(k), '--warmup', '1'] + inputs)

    engines = [(os.path.basename(so), kiln(so)) for so in a.artifacts]
    if a.ort:
        engines.append(('ort', ort))
    if not engines:
        sys.exit('cpu-time-peers: nothing to measure (give artifacts and/or --ort)')
    times = {name: [] for name, _ in engines}
    for r in range(a.rounds):
        for name, cmd in engines:
            times[name].append((task_clock_ms(cmd(a.runs + 5)) - task_clock_ms(cmd(5))) / a.runs)
        print(f'round {r + 1}: ' + '  '.join(f'{n} {v[-1]:.3f} ms' for n, v in times.items()), flush=True)
    med = {n: statistics.median(v) for n, v in times.items()}
    print('median: ' + '  '.join(f'{n} {v:.3f} ms' for n, v in med.items()))
    if a.ort:
        for n, v in med.items():
            if n != 'ort':
                rounds = ' '.join(f'{x / y:.2f}' for x, y in zip(times[n], times['ort']))
                print(f'{n} / ort: median {v / med["ort"]:.3f} (per round: {rounds})')


if __name__ == '__main__':
    main()
