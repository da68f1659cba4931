#!/usr/bin/python3
"""numpy side of npy_test.cc.

  npy_check.py write DIR   writes numpy files in every variant Kiln must read
  npy_check.py check DIR   checks the files Kiln wrote (kiln_<dtype>.npy) with numpy.load
  npy_check.py npz DIR     checks DIR/kiln.npz (npz_test.cc): zipfile's CRC check, then every
                           member in order ("<dtype>" for each numpy dtype, "empty", "scalar")

Element i of every test array is pattern(dtype, i) below, which npy_test.cc computes too.
"""
import os
import sys

import numpy as np

DTYPES = {"f32": "<f4", "f64": "<f8", "f16": "<f2", "i8": "|i1", "u8": "|u1", "i16": "<i2", "i32": "<i4",
          "i64": "<i8", "bool": "|b1", "u16": "<u2", "u32": "<u4", "u64": "<u8"}
SHAPE = (2, 3, 4)


def pattern(name, n):
    i = np.arange(n)
    if name == "bool":
        return i % 3 == 0
    if name == "u8":
        return (i * 7) % 200
    if name in ("u16", "u32", "u64"):
        return (i * 7) % 200 + {"u16": 60000, "u32": 4000000000, "u64": 2**52}[name]
    if name in ("f32", "f64", "f16", "bf16"):
        return (i - 5) * 0.25
    return (i % 7) - 3 + (i * 1000 if name == "i64" else 0)


def expected(name, shape=SHAPE):
    n = int(np.prod(shape))
    return pattern(name, n).astype(DTYPES[name]).reshape(shape)


def write(d):
    os.makedirs(d, exist_ok=True)
    for name in DTYPES:
        a = expected(name)
        np.save(os.path.join(d, f"np_{name}.npy"), a)
        if DTYPES[name][0] == "<":
            np.save(os.path.join(d, f"np_{name}_be.npy"), a.astype(">" + DTYPES[name][1:]))
        np.save(os.path.join(d, f"np_{name}_fortran.npy"), np.asfortranarray(a))
    f32 = expected("f32")
    for version in [(2, 0), (3, 0)]:
        with open(os.path.join(d, f"np_f32_v{version[0]}.npy"), "wb") as f:
            np.lib.format.write_array(f, f32, version=version)
    np.save(os.path.join(d, "np_scalar.npy"), np.array(2.5, np.float64))
    np.save(os.path.join(d, "np_empty.npy"), np.zeros((3, 0, 2), np.int32))
    np.save(os.path.join(d, "np_complex.npy"), np.zeros(3, np.complex64))
    np.save(os.path.join(d, "np_c16.npy"), np.zeros(3, np.complex128))
    np.save(os.path.join(d, "np_structured.npy"), np.zeros(3, dtype=[("a", "<f4"), ("b", "<i4")]))


def check(d):
    errors = []
    for name in list(DTYPES) + ["bf16"]:
        path = os.path.join(d, f"kiln_{name}.npy")
        a = np.load(path)
        if name == "bf16":
            if a.dtype != np.dtype("V2") or a.shape != SHAPE:
                errors.append(f"{path}: dtype {a.dtype} shape {a.shape}")
                continue
            bits = np.frombuffer(a.tobytes(), "<u2").astype(np.uint32) << 16
            got = bits.view(np.float32).reshape(SHAPE)
            want = expected("f32")
        else:
            got, want = a, expected(name)
            if a.dtype != want.dtype or a.shape != want.shape:
                errors.append(f"{path}: dtype {a.dtype} shape {a.shape}, expected {want.dtype} {want.shape}")
                continue
        if not np.array_equal(got, want):
            errors.append(f"{path}: values differ: {got.ravel()[:8]} vs {want.ravel()[:8]}")
    s = np.load(os.path.join(d, "kiln_scalar.npy"))
    if s.shape != () or s.dtype != np.float64 or s != -1.5:
        errors.append(f"kiln_scalar.npy: {s!r}")
    v = np.load(os.path.join(d, "kiln_vector.npy"))
    if v.shape != (5,) or v.dtype != np.int64 or list(v) != [0, 1, 2, 3, 4]:
        errors.append(f"kiln_vector.npy: {v!r}")
    e = np.load(os.path.join(d, "kiln_empty.npy"))
    if e.shape != (0, 4) or e.dtype != np.float32:
        errors.append(f"kiln_empty.npy: {e!r}")
    for err in errors:
        print("error:", err)
    return 1 if errors else 0


def check_npz(d):
    import zipfile
    path = os.path.join(d, "kiln.npz")
    with zipfile.ZipFile(path) as z:
        bad = z.testzip()
        if bad is not None:
            print("error: CRC mismatch in", bad)
            return 1
    want = {name: expected(name) for name in DTYPES}
    want["empty"] = np.zeros((0, 4), np.float32)
    want["scalar"] = np.array(-1.5, np.float64)
    got = np.load(path)
    errors = []
    if list(got.keys()) != list(want):
        errors.append(f"keys {list(got.keys())}, expected {list(want)}")
    for k, w in want.items():
        if k in got and (got[k].dtype != w.dtype or got[k].shape != w.shape or not np.array_equal(got[k], w)):
            errors.append(f"{k}: {got[k].dtype}{got[k].shape} vs {w.dtype}{w.shape}")
    for err in errors:
        print("error:", err)
    return 1 if errors else 0


if __name__ == "__main__":
    mode, d = sys.argv[1], sys.argv[2]
    sys.exit({"write": write, "check": check, "npz": check_npz}[mode](d))
