#!/usr/bin/env python3
"""Random-mutation run over a compiled Kiln artifact (issue 14, docs/reliability.md).

Usage: scripts/mutate-artifact.py ARTIFACT.so RUNNER [--mutants N] [--seed S] [--timeout SEC]

RUNNER is a program that loads and runs an artifact given as its one argument and prints its
outputs (build/bin/kiln_example_run_model, which links only libkiln_runtime). The script runs the
intact artifact once for the expected output, then N mutants, each a copy with one random damage:
bit flips (1-8 bytes), truncation, a run of zeros, a splice (bytes copied from elsewhere in the
file, overwriting or inserted), random bytes inserted, or the trailer/headers targeted. Half of the
positions are drawn uniformly over the file, half inside a random ELF section or header (so small
sections are hit as often as the weights). Each mutant is run in its own process with a timeout
and classified:
  refused    exit status != 0 with an error message          (good)
  same       exit 0 and the same output as the intact file   (good: the damage was harmless)
  different  exit 0 with another output                      (bad: silent corruption)
  signal     killed by a signal (SIGSEGV, SIGILL, SIGBUS...) (bad)
  hang       ran past the timeout                            (bad)
Exit status 0 when there is no bad mutant. Mutants of the bad classes are kept in
/tmp/kiln-mutants-artifact/ for a regression test.
"""
import argparse
import collections
import os
import random
import shutil
import signal
import struct
import subprocess
import sys
import tempfile


def elf_ranges(b):
    """(name, begin, end) of the ELF header, program headers, section headers and sections."""
    out = [("elf header", 0, 64)]
    if len(b) < 64 or b[:4] != b"\x7fELF":
        return out
    phoff, shoff = struct.unpack_from("<QQ", b, 0x20)
    phentsize, phnum, shentsize, shnum, shstrndx = struct.unpack_from("<HHHHH", b, 0x36)
    out.append(("program headers", phoff, phoff + phentsize * phnum))
    out.append(("section headers", shoff, shoff + shentsize * shnum))
    secs = []
    for i in range(shnum):
        name, typ, _flags, _addr, off, size = struct.unpack_from("<IIQQQQ", b, shoff + i * shentsize)
        secs.append((name, typ, off, size))
    strtab = secs[shstrndx][2] if shstrndx < len(secs) else 0
    for name, typ, off, size in secs:
        if typ == 8 or size == 0:  # SHT_NOBITS
            continue
        end = b.index(b"\0", strtab + name) if strtab else strtab + name
        out.append(("section " + b[strtab + name:end].decode(errors="replace"), off, off + size))
    out.append(("checksum trailer", len(b) - 24, len(b)))
    return out


def mutate(b, rng, ranges):
    kinds = ["flip", "flip", "truncate", "zeros", "splice", "splice-insert", "insert", "trailer"]
    kind = rng.choice(kinds)

    def pos():
        if rng.random() < 0.5:
            return rng.randrange(len(b))
        _name, lo, hi = rng.choice(ranges)
        return rng.randrange(lo, max(lo + 1, min(hi, len(b))))

    m = bytearray(b)
    if kind == "flip":
        for _ in range(rng.randint(1, 8)):
            m[pos()] ^= 1 << rng.randrange(8) if rng.random() < 0.7 else rng.randint(1, 255)
    elif kind == "truncate":
        del m[pos():]
    elif kind == "zeros":
        p = pos()
        n = rng.choice([1, 4, 8, 64, 512, 4096])
        m[p:p + n] = bytes(len(m[p:p + n]))
    elif kind in ("splice", "splice-insert"):
        src, dst, n = pos(), pos(), rng.choice([1, 8, 64, 256, 4096])
        chunk = bytes(b[src:src + n])
        if kind == "splice":
            m[dst:dst + len(chunk)] = chunk
        else:
            m[dst:dst] = chunk
    elif kind == "insert":
        p = pos()
        m[p:p] = bytes(rng.randrange(256) for _ in range(rng.choice([1, 3, 16])))
    else:  # the trailer: its magic, covered size or hash
        p = len(b) - 24 + rng.randrange(24)
        m[p] ^= 1 << rng.randrange(8)
    return kind, bytes(m)


def run(runner, path, timeout):
    try:
        p = subprocess.run([runner, path], capture_output=True, timeout=timeout)
    except subprocess.TimeoutExpired:
        return "hang", b""
    if p.returncode < 0:
        return "signal:" + signal.Signals(-p.returncode).name, p.stderr
    return p.returncode, p.stdout if p.returncode == 0 else p.stderr


def main():
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("artifact")
    ap.add_argument("runner")
    ap.add_argument("--mutants", type=int, default=1000)
    ap.add_argument("--seed", type=int, default=14)
    ap.add_argument("--timeout", type=float, default=20.0)
    args = ap.parse_args()
    original = open(args.artifact, "rb").read()
    rc, expected = run(args.runner, args.artifact, args.timeout)
    if rc != 0:
        sys.exit("the intact artifact does not run: %s %s" % (rc, expected.decode(errors="replace")))
    ranges = elf_ranges(original)
    rng = random.Random(args.seed)
    work = tempfile.mkdtemp(prefix="kiln-mutate-")
    keep = "/tmp/kiln-mutants-artifact"
    counts, by_kind, messages = collections.Counter(), collections.Counter(), collections.Counter()
    bad = []
    try:
        for i in range(args.mutants):
            kind, data = mutate(original, rng, ranges)
            path = os.path.join(work, "mutant.so")
            with open(path, "wb") as f:
                f.write(data)
            rc, out = run(args.runner, path, args.timeout)
            if rc == 0:
                cls = "same" if out == expected else "different"
            elif isinstance(rc, int):
                text = out.decode(errors="replace")
                cls = "refused" if "error" in text.lower() else "refused-without-message"
                # the reason, without the file name: "...: checksum mismatch ..." -> "checksum mismatch"
                messages[text.split(path + ": ")[-1].split(";")[0].split("(")[0].strip()[:70]] += 1
            else:
                cls = rc if rc == "hang" else "signal"
            counts[cls] += 1
            by_kind[(kind, cls)] += 1
            if cls not in ("refused", "same"):
                os.makedirs(keep, exist_ok=True)
                shutil.copy(path, os.path.join(keep, "mutant-%d-%s.so" % (i, kind)))
                bad.append((i, kind, cls, rc))
    finally:
        shutil.rmtree(work, ignore_errors=True)
    print("artifact %s (%d bytes), %d mutants, seed %d" % (args.artifact, len(original), args.mutants, args.seed))
    for cls in ("refused", "same", "different", "refused-without-message", "signal", "hang"):
        print("  %-24s %d" % (cls, counts[cls]))
    print("by mutation:", ", ".join("%s/%s %d" % (k, c, n) for (k, c), n in sorted(by_kind.items())))
    print("refusal messages:")
    for m, n in messages.most_common(12):
        print("  %5d  %s" % (n, m))
    for b in bad[:20]:
        print("BAD mutant", b)
    sys.exit(1 if bad else 0)


if __name__ == "__main__":
    main()
