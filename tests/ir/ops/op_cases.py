#!/usr/bin/python3
"""Writes operator test cases with numpy/PyTorch-computed expected outputs for op_numpy_test.cc.

Usage: /usr/bin/python3 op_cases.py --out DIR

DIR/cases.txt has one case per line, tab-separated:
    name  op  attrs  n_inputs  n_outputs  rtol  atol
attrs is `key=kind:value;...` with kind int, float, str, ints, floats (comma-separated) or dtype.
Inputs and expected outputs are DIR/<name>.in<i>.npy and DIR/<name>.out<i>.npy. The expectations
come from numpy, PyTorch (float64) or ONNX's own Resize reference, never from Kiln.
The directory is written atomically (temp dir + rename) and reused while DIR/stamp matches this
script's hash, so parallel test processes share one generation.
"""
import argparse
import hashlib
import os
import shutil
import sys
import tempfile

CASES = []


def case(name, op, inputs, outputs, attrs=None, rtol=1e-6, atol=1e-6):
    CASES.append((name, op, attrs or {}, inputs, outputs, rtol, atol))


def fmt_attrs(attrs):
    parts = []
    for k, v in attrs.items():
        if isinstance(v, tuple) and v and v[0] == "dtype":
            parts.append(f"{k}=dtype:{v[1]}")
        elif isinstance(v, str):
            parts.append(f"{k}=str:{v}")
        elif isinstance(v, bool) or isinstance(v, int):
            parts.append(f"{k}=int:{int(v)}")
        elif isinstance(v, float):
            parts.append(f"{k}=float:{v!r}")
        elif isinstance(v, list) and all(isinstance(e, int) for e in v):
            parts.append(f"{k}=ints:" + ",".join(str(e) for e in v))
        elif isinstance(v, list):
            parts.append(f"{k}=floats:" + ",".join(repr(float(e)) for e in v))
        else:
            raise ValueError(f"attribute {k}={v!r}")
    return ";".join(parts)


def build_cases():
    import math

    import numpy as np
    import torch
    import torch.nn.functional as F

    np.seterr(all="ignore")  # inf/nan edge cases are intended
    rng = np.random.default_rng(1234)

    def rand(*shape, dtype=np.float32, lo=-3.0, hi=3.0):
        return rng.uniform(lo, hi, size=shape).astype(dtype)

    def t64(a):
        return torch.from_numpy(np.asarray(a, dtype=np.float64))

    # ---- unary ---------------------------------------------------------------------------------
    x = rand(7, 13)
    x[0, :4] = [0.0, -0.0, 1e-8, -1e-8]
    xd = x.astype(np.float64)
    erf = np.vectorize(math.erf)
    unary = {
        "relu": np.maximum(xd, 0),
        "sigmoid": 1 / (1 + np.exp(-xd)),
        "tanh": np.tanh(xd),
        "erf": erf(xd),
        "exp": np.exp(xd),
        "neg": -xd,
        "abs": np.abs(xd),
        "reciprocal": 1 / xd,
        "hard_swish": xd * np.clip(xd / 6 + 0.5, 0, 1),
    }
    for op, y in unary.items():
        case(f"{op}_f32", op, [x], [y.astype(np.float32)])
    xp = rand(7, 13, lo=0.01, hi=5)
    case("log_f32", "log", [xp], [np.log(xp.astype(np.float64)).astype(np.float32)])
    case("sqrt_f32", "sqrt", [xp], [np.sqrt(xp.astype(np.float64)).astype(np.float32)])
    case("log_edges", "log", [np.array([0.0, -1.0, 1.0], np.float32)], [np.array([-np.inf, np.nan, 0.0], np.float32)])
    case("sigmoid_f64", "sigmoid", [xd], [1 / (1 + np.exp(-xd))], rtol=1e-14, atol=1e-15)
    case("relu_f16", "relu", [x.astype(np.float16)], [np.maximum(x.astype(np.float16), 0)])
    case("sigmoid_f16", "sigmoid", [x.astype(np.float16)],
         [(1 / (1 + np.exp(-x.astype(np.float16).astype(np.float64)))).astype(np.float16)], rtol=1e-3, atol=1e-3)
    xi8 = np.array([-128, -5, 0, 7, 127], np.int8)
    case("neg_i8", "neg", [xi8], [np.negative(xi8)])
    case("abs_i8", "abs", [xi8], [np.abs(xi8)])
    case("relu_i32", "relu", [np.array([-3, 0, 5], np.int32)], [np.array([0, 0, 5], np.int32)])
    case("leaky_relu", "leaky_relu", [x], [np.where(xd >= 0, xd, 0.1 * xd).astype(np.float32)], {"alpha": 0.1})
    case("hard_sigmoid", "hard_sigmoid", [x], [np.clip(0.3 * xd + 0.4, 0, 1).astype(np.float32)],
         {"alpha": 0.3, "beta": 0.4})
    case("clip", "clip", [x], [np.clip(xd, -1.5, 2.0).astype(np.float32)], {"min": -1.5, "max": 2.0})
    case("clip_min_gt_max", "clip", [x], [np.full_like(x, 1.0)], {"min": 2.0, "max": 1.0})
    case("clip_default", "clip", [x], [x])
    xi = np.array([-7, -2, 0, 3, 9], np.int32)
    case("clip_i32", "clip", [xi], [np.clip(xi, -2, 4)], {"min": -2.5, "max": 4.5})
    case("gelu", "gelu", [x], [F.gelu(t64(x)).numpy().astype(np.float32)])
    case("gelu_tanh", "gelu", [x], [F.gelu(t64(x), approximate="tanh").numpy().astype(np.float32)],
         {"approximate": "tanh"})

    # ---- broadcasting binary -------------------------------------------------------------------
    a, b = rand(7, 1, 13), rand(5, 1)
    ad, bd = a.astype(np.float64), b.astype(np.float64)
    for op, y in {"add": ad + bd, "sub": ad - bd, "mul": ad * bd, "div": ad / bd,
                  "min": np.minimum(ad, bd), "max": np.maximum(ad, bd)}.items():
        case(f"{op}_bcast", op, [a, b], [y.astype(np.float32)])
    na = np.array([1.0, np.nan, 3.0, -np.inf], np.float32)
    nb = np.array([np.nan, 2.0, 1.0, 0.0], np.float32)
    case("min_nan", "min", [na, nb], [np.minimum(na, nb)])
    case("max_nan", "max", [na, nb], [np.maximum(na, nb)])
    ia = np.array([[7, -7, 7, -7, 0, 9]], np.int32)
    ib = np.array([[2], [-2], [3]], np.int32)
    case("div_i32_trunc", "div", [ia, ib], [np.trunc(ia.astype(np.float64) / ib).astype(np.int32)])
    case("sub_i64_bcast", "sub", [ia.astype(np.int64), ib.astype(np.int64)], [(ia - ib).astype(np.int64)])
    i8a = np.array([100, -100, 127], np.int8)
    i8b = np.array([100, -100, 1], np.int8)
    case("add_i8_wraps", "add", [i8a, i8b], [(i8a.astype(np.int64) + i8b).astype(np.int8)])
    case("mul_u8_wraps", "mul", [np.array([16, 3], np.uint8), np.array([16, 5], np.uint8)],
         [np.array([0, 15], np.uint8)])
    base = rand(4, 7, lo=0.1, hi=3)
    e = rand(7, lo=-2, hi=2)
    case("pow_f32", "pow", [base, e], [np.power(base.astype(np.float64), e.astype(np.float64)).astype(np.float32)])
    xneg = np.array([-2.0, -1.5, 3.0], np.float32)
    case("pow_f32_int_exp", "pow", [xneg, np.array([3], np.int64)], [np.power(xneg.astype(np.float64), 3).astype(np.float32)])
    case("pow_i32", "pow", [np.array([2, -3, 5, 1, -1], np.int32), np.array([10, 3, 0, -2, -3], np.int32)],
         [np.array([1024, -27, 1, 1, -1], np.int32)])
    case("pow_i32_float_exp", "pow", [np.array([4, 9], np.int32), np.array([0.5], np.float32)],
         [np.array([2, 3], np.int32)])
    ma = np.array([[7, -7, 7, -7, 0, 9]], np.int64)
    mb = np.array([[3], [-3], [4]], np.int64)
    case("mod_i64_floored", "mod", [ma, mb], [np.mod(ma, mb)])
    case("fmod_i32_truncated", "fmod", [ma.astype(np.int32), mb.astype(np.int32)], [np.fmod(ma, mb).astype(np.int32)])
    mrng = np.random.default_rng(77)  # its own generator: the later cases keep their data
    fa = mrng.uniform(-9, 9, size=(4, 7)).astype(np.float32)
    fb = (mrng.uniform(0.5, 3, size=7) * np.where(np.arange(7) % 2, 1, -1)).astype(np.float32)
    case("fmod_f32", "fmod", [fa, fb], [np.fmod(fa.astype(np.float64), fb.astype(np.float64)).astype(np.float32)])
    case("mod_f32_floored", "mod", [fa, fb], [np.mod(fa.astype(np.float64), fb.astype(np.float64)).astype(np.float32)])
    ea, eb = rng.integers(-2, 3, size=(7, 13)).astype(np.int32), rng.integers(-2, 3, size=(13,)).astype(np.int32)
    case("equal_i32", "equal", [ea, eb], [np.equal(ea, eb)])
    case("equal_f32_nan", "equal", [na, np.array([1.0, np.nan, 3.0, -np.inf], np.float32)],
         [np.array([True, False, True, True])])
    cond = rng.integers(0, 2, size=(7, 1)).astype(bool)
    wx, wy = rand(1, 13), rand(7, 13)
    case("where_bcast", "where", [cond, wx, wy], [np.where(cond, wx, wy)])
    case("where_i64", "where", [np.array([True, False]), np.array([1, 2], np.int64), np.array([[5], [6]], np.int64)],
         [np.where(np.array([True, False]), np.array([1, 2]), np.array([[5], [6]])).astype(np.int64)])

    # ---- cast ----------------------------------------------------------------------------------
    cx = np.array([-2.7, -0.5, 0.0, 0.5, 2.7, 100.9], np.float32)
    case("cast_f32_i32", "cast", [cx], [cx.astype(np.int32)], {"dtype": ("dtype", "i32")})
    case("cast_f32_f16", "cast", [x], [x.astype(np.float16)], {"dtype": ("dtype", "f16")}, rtol=0, atol=0)
    case("cast_f32_bool", "cast", [cx], [cx.astype(bool)], {"dtype": ("dtype", "bool")})
    case("cast_bool_f32", "cast", [np.array([True, False])], [np.array([1.0, 0.0], np.float32)], {"dtype": ("dtype", "f32")})
    big = np.array([300, -129, 2**40 + 5], np.int64)
    case("cast_i64_i8_wraps", "cast", [big], [big.astype(np.int8)], {"dtype": ("dtype", "i8")})
    case("cast_i64_f32", "cast", [np.array([2**53 + 1, -(2**31)], np.int64)],
         [np.array([2**53 + 1, -(2**31)], np.int64).astype(np.float32)], {"dtype": ("dtype", "f32")}, rtol=0, atol=0)

    # ---- conv2d (PyTorch in float64) -----------------------------------------------------------
    def conv_case(name, xs, ws, groups=1, strides=(1, 1), pads=(0, 0, 0, 0), dil=(1, 1), bias=True):
        xx, ww = rand(*xs), rand(*ws)
        bb = rand(ws[0]) if bias else None
        xp_ = F.pad(t64(xx), (pads[1], pads[3], pads[0], pads[2]))
        y = F.conv2d(xp_, t64(ww), None if bb is None else t64(bb), stride=strides, dilation=dil, groups=groups)
        ins = [xx, ww] + ([bb] if bias else [])
        case(name, "conv2d", ins, [y.numpy().astype(np.float32)],
             {"strides": list(strides), "pads": list(pads), "dilations": list(dil), "groups": groups}, rtol=1e-5, atol=1e-5)

    conv_case("conv2d_basic", (1, 3, 7, 13), (5, 3, 3, 3), pads=(1, 1, 1, 1))
    conv_case("conv2d_groups_dil_stride", (2, 6, 13, 7), (4, 3, 3, 2), groups=2, strides=(2, 1), pads=(1, 0, 2, 1),
              dil=(1, 2))
    conv_case("conv2d_depthwise", (1, 4, 9, 9), (4, 1, 3, 3), groups=4, strides=(2, 2), pads=(1, 1, 1, 1), bias=False)
    conv_case("conv2d_1x1_stride2", (1, 8, 7, 7), (3, 8, 1, 1), strides=(2, 2))
    conv_case("conv2d_big_pad", (1, 2, 5, 4), (3, 2, 2, 3), strides=(3, 2), pads=(3, 2, 2, 3), dil=(2, 1))

    # ---- pooling -------------------------------------------------------------------------------
    def pool_case(name, op, xs, k, s, pads, dil=(1, 1), ceil=False, cip=False):
        xx = rand(*xs)
        if op == "max_pool2d":
            xp_ = F.pad(t64(xx), (pads[1], pads[3], pads[0], pads[2]), value=-math.inf)
            y = F.max_pool2d(xp_, k, s, 0, dil, ceil_mode=ceil)
            attrs = {"kernel": list(k), "strides": list(s), "pads": list(pads), "dilations": list(dil), "ceil_mode": int(ceil)}
        else:
            assert pads[0] == pads[2] and pads[1] == pads[3]
            y = F.avg_pool2d(t64(xx), k, s, (pads[0], pads[1]), ceil_mode=ceil, count_include_pad=cip)
            attrs = {"kernel": list(k), "strides": list(s), "pads": list(pads), "ceil_mode": int(ceil),
                     "count_include_pad": int(cip)}
        case(name, op, [xx], [y.numpy().astype(np.float32)], attrs)

    pool_case("max_pool_basic", "max_pool2d", (1, 2, 7, 13), (3, 3), (2, 2), (1, 1, 1, 1))
    pool_case("max_pool_ceil_dil", "max_pool2d", (2, 3, 13, 7), (3, 2), (2, 3), (0, 1, 1, 0), dil=(2, 1), ceil=True)
    pool_case("max_pool_ceil_drop", "max_pool2d", (1, 1, 6, 6), (2, 2), (2, 2), (1, 1, 1, 1), ceil=True)
    pool_case("avg_pool_excl", "avg_pool2d", (1, 2, 7, 13), (3, 3), (2, 2), (1, 1, 1, 1))
    pool_case("avg_pool_incl", "avg_pool2d", (1, 2, 7, 13), (3, 3), (2, 2), (1, 1, 1, 1), cip=True)
    pool_case("avg_pool_ceil_incl", "avg_pool2d", (1, 2, 8, 7), (3, 2), (2, 2), (1, 1, 1, 1), ceil=True, cip=True)
    pool_case("avg_pool_ceil_excl", "avg_pool2d", (1, 2, 8, 7), (3, 2), (2, 2), (1, 1, 1, 1), ceil=True)

    def avg_pool_loops(xx, k, s, pads, dil, ceil, cip):
        # Direct loops (PyTorch's avg_pool2d has no dilations): taps inside the input are summed;
        # the divisor counts taps inside the input, or inside the padded input with cip.
        n, c, h, w = xx.shape
        outs = []
        for dim, (size, kk, ss, dd, pb, pe) in enumerate([(h, k[0], s[0], dil[0], pads[0], pads[2]),
                                                          (w, k[1], s[1], dil[1], pads[1], pads[3])]):
            span = size + pb + pe - ((kk - 1) * dd + 1)
            o = (-(-span // ss) if ceil else span // ss) + 1
            if ceil and (o - 1) * ss >= size + pb:
                o -= 1
            outs.append(o)
        y = np.zeros((n, c, outs[0], outs[1]))
        for oy in range(outs[0]):
            for ox in range(outs[1]):
                total, count = np.zeros((n, c)), 0
                for ky in range(k[0]):
                    for kx in range(k[1]):
                        iy, ix = oy * s[0] - pads[0] + ky * dil[0], ox * s[1] - pads[1] + kx * dil[1]
                        if not (-pads[0] <= iy < h + pads[2] and -pads[1] <= ix < w + pads[3]):
                            continue
                        inside = 0 <= iy < h and 0 <= ix < w
                        if inside:
                            total += xx[:, :, iy, ix]
                        count += 1 if (inside or cip) else 0
                y[:, :, oy, ox] = total / count
        return y

    for cip in (0, 1):
        xx = rand(1, 2, 9, 8)
        attrs = {"kernel": [3, 2], "strides": [2, 1], "pads": [2, 1, 1, 0], "dilations": [2, 3], "ceil_mode": 1,
                 "count_include_pad": cip}
        y = avg_pool_loops(xx.astype(np.float64), [3, 2], [2, 1], [2, 1, 1, 0], [2, 3], True, cip)
        case(f"avg_pool_dilations_cip{cip}", "avg_pool2d", [xx], [y.astype(np.float32)], attrs)
    mi = rng.integers(-128, 127, size=(1, 2, 5, 5)).astype(np.int8)
    case("max_pool_i8", "max_pool2d", [mi],
         [F.max_pool2d(t64(mi), 2, 2).numpy().astype(np.int8)], {"kernel": [2, 2], "strides": [2, 2]})
    gx = rand(2, 3, 7, 13)
    case("global_avg", "global_avg_pool", [gx], [gx.astype(np.float64).mean(axis=(2, 3), keepdims=True).astype(np.float32)])
    case("global_max", "global_max_pool", [gx], [gx.max(axis=(2, 3), keepdims=True)])
    g3 = rand(2, 3, 5, 2, 3)
    case("global_avg_3d", "global_avg_pool", [g3], [g3.astype(np.float64).mean(axis=(2, 3, 4), keepdims=True).astype(np.float32)])

    # ---- matmul / gemm -------------------------------------------------------------------------
    def mm(name, sa, sb, dtype=np.float32):
        if np.issubdtype(dtype, np.integer):
            ma, mb = rng.integers(-9, 10, size=sa).astype(dtype), rng.integers(-9, 10, size=sb).astype(dtype)
            y = np.matmul(ma.astype(np.int64), mb.astype(np.int64)).astype(dtype)
        else:
            ma, mb = rand(*sa), rand(*sb)
            y = np.matmul(ma.astype(np.float64), mb.astype(np.float64)).astype(np.float32)
        case(name, "matmul", [ma, mb], [y], rtol=1e-5, atol=1e-5)

    mm("matmul_2d", (7, 13), (13, 5))
    mm("matmul_batch_bcast", (2, 1, 7, 13), (3, 13, 5))
    mm("matmul_1d_2d", (13,), (13, 5))
    mm("matmul_2d_1d", (7, 13), (13,))
    mm("matmul_1d_1d", (13,), (13,))
    mm("matmul_3d_1d", (2, 7, 13), (13,))
    mm("matmul_i32", (3, 7, 13), (13, 5), np.int32)

    def gemm(name, m, k, n, ta=0, tb=0, alpha=1.0, beta=1.0, cshape=None):
        ga = rand(*((k, m) if ta else (m, k)))
        gb = rand(*((n, k) if tb else (k, n)))
        A = ga.T if ta else ga
        B = gb.T if tb else gb
        y = alpha * (A.astype(np.float64) @ B.astype(np.float64))
        ins = [ga, gb]
        if cshape is not None:
            gc = rand(*cshape)
            y = y + beta * gc.astype(np.float64)
            ins.append(gc)
        case(name, "gemm", ins, [y.astype(np.float32)],
             {"trans_a": ta, "trans_b": tb, "alpha": alpha, "beta": beta}, rtol=1e-5, atol=1e-5)

    gemm("gemm_plain", 7, 13, 5, cshape=(7, 5))
    gemm("gemm_trans_row_bias", 7, 13, 5, ta=1, tb=1, alpha=0.5, beta=2.0, cshape=(5,))
    gemm("gemm_col_bias", 7, 13, 5, tb=1, cshape=(7, 1))
    gemm("gemm_scalar_bias", 3, 4, 2, ta=1, beta=-1.0, cshape=())
    gemm("gemm_no_c", 7, 13, 5)

    # ---- reductions ----------------------------------------------------------------------------
    r = rand(3, 7, 13)
    rd = r.astype(np.float64)
    for axes, keep in [([1], 1), ([0, 2], 0), ([], 1), ([], 0), ([2], 0)]:
        ax = tuple(axes) if axes else None
        tag = "_".join(map(str, axes)) or "all"
        for op, fn in [("reduce_sum", np.sum), ("reduce_mean", np.mean), ("reduce_max", np.max)]:
            case(f"{op}_{tag}_k{keep}", op, [r], [fn(rd, axis=ax, keepdims=bool(keep)).astype(np.float32)],
                 {"axes": axes, "keepdims": keep}, rtol=1e-5, atol=1e-5)
    ri = rng.integers(-50, 50, size=(4, 7)).astype(np.int32)
    case("reduce_sum_i32", "reduce_sum", [ri], [ri.sum(axis=1, keepdims=True).astype(np.int32)], {"axes": [1]})
    case("reduce_max_i32", "reduce_max", [ri], [ri.max(axis=0, keepdims=False)], {"axes": [0], "keepdims": 0})
    rn = np.array([[1.0, np.nan, 3.0], [4.0, 5.0, 6.0]], np.float32)
    case("reduce_max_nan", "reduce_max", [rn], [np.max(rn, axis=1)], {"axes": [1], "keepdims": 0})

    # ---- softmax / layer_norm / batch_norm -----------------------------------------------------
    for axis in range(3):
        m_ = rd.max(axis=axis, keepdims=True)
        ex = np.exp(rd - m_)
        s = ex.sum(axis=axis, keepdims=True)
        case(f"softmax_axis{axis}", "softmax", [r], [(ex / s).astype(np.float32)], {"axis": axis})
        case(f"log_softmax_axis{axis}", "log_softmax", [r], [(rd - m_ - np.log(s)).astype(np.float32)], {"axis": axis})
    for axis in (1, 2):
        norm = rd.shape[axis:]
        sc, bi = rand(*norm[-1:]), rand(*norm)
        mu = rd.mean(axis=tuple(range(axis, 3)), keepdims=True)
        var = ((rd - mu) ** 2).mean(axis=tuple(range(axis, 3)), keepdims=True)
        y = (rd - mu) / np.sqrt(var + 1e-3) * sc.astype(np.float64) + bi.astype(np.float64)
        case(f"layer_norm_axis{axis}", "layer_norm", [r, sc, bi], [y.astype(np.float32)], {"axis": axis, "epsilon": 1e-3},
             rtol=1e-5, atol=1e-5)
        y0 = (rd - mu) / np.sqrt(var + 1e-5) * sc.astype(np.float64)
        case(f"layer_norm_nobias_axis{axis}", "layer_norm", [r, sc], [y0.astype(np.float32)], {"axis": axis},
             rtol=1e-5, atol=1e-5)
    rms_rng = np.random.default_rng(91)  # its own generator: the later cases keep their data
    for axis in (1, 2):
        norm = rd.shape[axis:]
        sc = rms_rng.uniform(-3, 3, size=norm[-1:]).astype(np.float32)
        ms = (rd * rd).mean(axis=tuple(range(axis, 3)), keepdims=True)
        y = rd / np.sqrt(ms + 1e-6) * sc.astype(np.float64)
        case(f"rms_norm_axis{axis}", "rms_norm", [r, sc], [y.astype(np.float32)], {"axis": axis, "epsilon": 1e-6},
             rtol=1e-5, atol=1e-5)
    bx = rand(2, 3, 7, 5)
    bs, bb, bm, bv = rand(3), rand(3), rand(3), rand(3, lo=0.1, hi=2)
    c = lambda v: v.astype(np.float64).reshape(1, 3, 1, 1)
    y = (bx.astype(np.float64) - c(bm)) / np.sqrt(c(bv) + 1e-3) * c(bs) + c(bb)
    case("batch_norm", "batch_norm", [bx, bs, bb, bm, bv], [y.astype(np.float32)], {"epsilon": 1e-3}, rtol=1e-5, atol=1e-5)

    # ---- shape ops -----------------------------------------------------------------------------
    s3 = rand(2, 7, 13)
    case("reshape", "reshape", [s3], [s3.reshape(13, 2, 7)], {"shape": [13, 2, 7]})
    case("transpose", "transpose", [s3], [s3.transpose(2, 0, 1)], {"perm": [2, 0, 1]})
    t4 = rng.integers(0, 100, size=(2, 3, 5, 7)).astype(np.int64)
    case("transpose_i64", "transpose", [t4], [t4.transpose(3, 1, 0, 2)], {"perm": [3, 1, 0, 2]})
    ex1 = rand(7, 1)
    case("expand", "expand", [ex1], [np.broadcast_to(ex1 * 1, (2, 7, 13)).copy()], {"shape": [2, 1, 13]})
    e3 = rand(3, 1, 5)
    case("shape_of", "shape_of", [s3], [np.array([7, 13], np.int64)], {"start": 1, "end": 3})
    case("expand_lower_rank", "expand", [e3], [np.broadcast_to(e3, (3, 4, 5)).copy()], {"shape": [4, 1]})
    c1, c2, c3 = rand(2, 3, 5), rand(2, 1, 5), rand(2, 4, 5)
    case("concat_axis1", "concat", [c1, c2, c3], [np.concatenate([c1, c2, c3], axis=1)], {"axis": 1})
    b1, b2 = np.array([[True], [False]]), np.array([[False, True], [True, True]])
    case("concat_bool", "concat", [b1, b2], [np.concatenate([b1, b2], axis=1)], {"axis": 1})
    sp = rand(3, 13, 2)
    case("split", "split", [sp], np.split(sp, [4, 4, 11], axis=1), {"axis": 1, "sizes": [4, 0, 7, 2]})
    sl = rand(7, 13, 5)
    case("slice_basic", "strided_slice", [sl], [sl[1:6:2, -4:, :]], {"begins": [1, -4], "ends": [6, 1000], "axes": [0, 1],
                                                                     "steps": [2, 1]})
    case("slice_negative_step", "strided_slice", [sl], [sl[:, ::-3, 4:0:-2]],
         {"begins": [-1, 100], "ends": [-1000, 0], "axes": [1, 2], "steps": [-3, -2]})
    case("slice_empty", "strided_slice", [sl], [sl[5:2]], {"begins": [5], "ends": [2], "axes": [0], "steps": [1]})
    case("slice_default_axes_steps", "strided_slice", [sl], [sl[2:5, 1:3]], {"begins": [2, 1], "ends": [5, 3]})
    gd = rand(5, 7, 3)
    gi = np.array([[0, -1], [4, 2], [-7, 6]], np.int64)
    case("gather_axis1", "gather", [gd, gi], [np.take(gd, gi, axis=1)], {"axis": 1})
    gi32 = np.array([4, -5, 0], np.int32)
    case("gather_axis0_i32", "gather", [gd, gi32], [np.take(gd, gi32, axis=0)], {"axis": 0})
    emb = rand(10, 4)
    ids = np.array([[3, 3, 9], [0, 1, 2]], np.int64)
    case("gather_embedding", "gather", [emb, ids], [emb[ids]], {})
    case("gather_scalar_index", "gather", [gd, np.array(2, np.int64)], [gd[:, 2, :]], {"axis": 1})
    px = rand(3, 4, 5)
    pads = [1, 0, 2, 2, 3, 1]
    npp = [(1, 2), (0, 3), (2, 1)]
    case("pad_constant", "pad", [px], [np.pad(px, npp, constant_values=1.5)], {"pads": pads, "mode": "constant", "value": 1.5})
    case("pad_edge", "pad", [px], [np.pad(px, npp, mode="edge")], {"pads": pads, "mode": "edge"})
    case("pad_reflect", "pad", [px], [np.pad(px, npp, mode="reflect")], {"pads": pads, "mode": "reflect"})
    case("pad_wrap", "pad", [px], [np.pad(px, npp, mode="wrap")], {"pads": pads, "mode": "wrap"})
    case("pad_reflect_long", "pad", [np.arange(3, dtype=np.float32)], [np.pad(np.arange(3, dtype=np.float32), (5, 6), mode="reflect")],
         {"pads": [5, 6], "mode": "reflect"})
    case("pad_negative_crops", "pad", [px], [np.pad(px, [(0, 0), (1, 0), (0, 0)])[:, :, 1:4]],
         {"pads": [0, 1, -1, 0, 0, -1]})
    pi = np.arange(6, dtype=np.int32).reshape(2, 3)
    case("pad_i32", "pad", [pi], [np.pad(pi, [(1, 0), (0, 2)], constant_values=-7)], {"pads": [1, 0, 0, 2], "value": -7.0})

    # ---- resize (ONNX's own reference implementation) -----------------------------------------
    from onnx.backend.test.case.node import resize as R

    def resize_case(name, shape, sizes, mode, ctm="half_pixel", nearest="round_prefer_floor", a=-0.75, excl=0,
                    scales=None, roi=None, extrap=0.0):
        data = rand(*shape)
        if mode == "nearest":
            coeffs = lambda ratio: R.nearest_coeffs(ratio, mode=nearest)
        elif mode == "linear":
            coeffs = R.linear_coeffs
        else:
            coeffs = lambda ratio: R.cubic_coeffs(ratio, A=a)
        kw = dict(coordinate_transformation_mode=ctm, exclude_outside=bool(excl), extrapolation_value=extrap)
        if scales is not None:
            y = R.interpolate_nd(data, coeffs, scale_factors=np.array(scales), roi=roi, **kw)
        else:
            y = R.interpolate_nd(data, coeffs, output_size=np.array(sizes), roi=roi, **kw)
        attrs = {"sizes": list(y.shape), "mode": mode, "coordinate_transformation_mode": ctm, "nearest_mode": nearest,
                 "cubic_coeff_a": a, "exclude_outside": excl, "extrapolation_value": extrap}
        if scales is not None:
            attrs["scales"] = [float(s) for s in scales]
        if roi is not None:
            attrs["roi"] = [float(v) for v in roi]
        case(name, "resize", [data], [y.astype(np.float32)], attrs, rtol=1e-5, atol=1e-5)

    resize_case("resize_nearest_up", (1, 1, 3, 4), (1, 1, 7, 9), "nearest")
    resize_case("resize_nearest_asym_floor", (1, 2, 5, 4), (1, 2, 3, 7), "nearest", "asymmetric", "floor")
    resize_case("resize_nearest_ceil_align", (1, 1, 4, 4), (1, 1, 7, 3), "nearest", "align_corners", "ceil")
    resize_case("resize_nearest_prefer_ceil", (1, 1, 4, 6), (1, 1, 8, 3), "nearest", "half_pixel", "round_prefer_ceil")
    resize_case("resize_linear_half_pixel", (1, 2, 5, 7), (1, 2, 13, 4), "linear")
    resize_case("resize_linear_align", (1, 1, 4, 5), (1, 1, 7, 13), "linear", "align_corners")
    resize_case("resize_linear_pytorch", (1, 1, 4, 5), (1, 1, 1, 9), "linear", "pytorch_half_pixel")
    resize_case("resize_linear_asym", (2, 3, 4), (2, 3, 9), "linear", "asymmetric")
    resize_case("resize_cubic", (1, 1, 5, 6), (1, 1, 9, 4), "cubic")
    resize_case("resize_cubic_exclude", (1, 1, 5, 6), (1, 1, 9, 13), "cubic", "half_pixel", a=-0.5, excl=1)
    resize_case("resize_cubic_align", (1, 1, 4, 4), (1, 1, 7, 7), "cubic", "align_corners")
    resize_case("resize_linear_scales", (1, 1, 5, 4), None, "linear", "align_corners", scales=[1.0, 1.0, 1.5, 0.6])
    resize_case("resize_tf_crop", (1, 1, 5, 6), (1, 1, 4, 3), "linear", "tf_crop_and_resize",
                roi=[0, 0, 0.2, -0.1, 1, 1, 0.9, 1.25], extrap=7.5)

    # ---- blocked layouts (layout_transform, conv2d_nchwc) and fused calls: numpy reshapes ----
    def to_nchwc(a, b):  # [N, C, H, W] -> [N, C/b, H, W, b]
        n, c, h, w = a.shape
        return np.ascontiguousarray(a.reshape(n, c // b, b, h, w).transpose(0, 1, 3, 4, 2))

    def to_oihw_io(a, ib, ob):  # [O, I, kh, kw] -> [O/ob, I/ib, kh, kw, ib, ob]
        o, i, kh, kw = a.shape
        return np.ascontiguousarray(a.reshape(o // ob, ob, i // ib, ib, kh, kw).transpose(0, 2, 4, 5, 3, 1))

    xl = rand(2, 12, 3, 5)
    case("layout_nchw_to_nchw4c", "layout_transform", [xl], [to_nchwc(xl, 4)],
         {"src_layout": "NCHW", "dst_layout": "NCHW4c"}, rtol=0, atol=0)
    case("layout_nchw6c_to_nchw", "layout_transform", [to_nchwc(xl, 6)], [xl],
         {"src_layout": "NCHW6c", "dst_layout": "NCHW"}, rtol=0, atol=0)
    case("layout_nchw6c_to_nchw4c", "layout_transform", [to_nchwc(xl, 6)], [to_nchwc(xl, 4)],
         {"src_layout": "NCHW6c", "dst_layout": "NCHW4c"}, rtol=0, atol=0)
    wl = rand(8, 6, 3, 3)
    case("layout_oihw_to_oihw3i4o", "layout_transform", [wl], [to_oihw_io(wl, 3, 4)],
         {"src_layout": "OIHW", "dst_layout": "OIHW3i4o"}, rtol=0, atol=0)

    def conv_nchwc_case(name, xs, ws, xb, ib, ob, groups=1, strides=(1, 1), pads=(0, 0, 0, 0)):
        xx, ww, bb = rand(*xs), rand(*ws), rand(ws[0])
        xp_ = F.pad(t64(xx), (pads[1], pads[3], pads[0], pads[2]))
        y = F.conv2d(xp_, t64(ww), t64(bb), stride=strides, groups=groups).numpy()
        case(name, "conv2d_nchwc", [to_nchwc(xx, xb), to_oihw_io(ww, ib, ob), bb], [to_nchwc(y, ob).astype(np.float32)],
             {"strides": list(strides), "pads": list(pads), "groups": groups}, rtol=1e-5, atol=1e-5)

    conv_nchwc_case("conv2d_nchwc_basic", (1, 6, 7, 9), (8, 6, 3, 3), 3, 3, 4, pads=(1, 1, 1, 1))
    conv_nchwc_case("conv2d_nchwc_stride_mixed_blocks", (2, 8, 9, 6), (4, 8, 3, 1), 8, 2, 2, strides=(2, 1),
                    pads=(1, 0, 0, 0))
    conv_nchwc_case("conv2d_nchwc_depthwise", (1, 8, 6, 6), (8, 1, 3, 3), 4, 1, 4, groups=8, pads=(1, 1, 1, 1))

    # ---- pre-packed matrix products (PackMatmulWeights): panels [ceil(N/nb), K, nb], 0 past N ----
    def pack_b(b, nb):  # [K, N] -> [ceil(N/nb), K, nb]
        k, n = b.shape
        panels = -(-n // nb)
        padded = np.zeros((k, panels * nb), dtype=b.dtype)
        padded[:, :n] = b
        return np.ascontiguousarray(padded.reshape(k, panels, nb).transpose(1, 0, 2))

    bw = rand(13, 37)
    case("pack_matmul_b_padded", "pack_matmul_b", [bw], [pack_b(bw, 16)], {"n_block": 16}, rtol=0, atol=0)
    case("pack_matmul_b_trans", "pack_matmul_b", [np.ascontiguousarray(bw.T)], [pack_b(bw, 8)],
         {"n_block": 8, "trans_b": 1}, rtol=0, atol=0)
    for name, ashape in (("matmul_packed_2d", (7, 13)), ("matmul_packed_batch", (2, 3, 13))):
        ma = rand(*ashape)
        y = np.matmul(ma.astype(np.float64), bw.astype(np.float64)).astype(np.float32)
        case(name, "matmul_packed", [ma, pack_b(bw, 16)], [y], {"n": 37}, rtol=1e-5, atol=1e-5)
    def pool_nchwc_case(name, op, xs, b, k, s, pads, ceil=False, cip=False):  # the plain pool, blocked
        xx = rand(*xs)
        if op == "max_pool2d_nchwc":
            xp_ = F.pad(t64(xx), (pads[1], pads[3], pads[0], pads[2]), value=-math.inf)
            y = F.max_pool2d(xp_, k, s, 0, 1, ceil_mode=ceil)
            attrs = {"kernel": list(k), "strides": list(s), "pads": list(pads), "ceil_mode": int(ceil)}
        else:
            y = F.avg_pool2d(t64(xx), k, s, (pads[0], pads[1]), ceil_mode=ceil, count_include_pad=cip)
            attrs = {"kernel": list(k), "strides": list(s), "pads": list(pads), "ceil_mode": int(ceil),
                     "count_include_pad": int(cip)}
        case(name, op, [to_nchwc(xx, b)], [to_nchwc(y.numpy(), b).astype(np.float32)], attrs)

    pool_nchwc_case("max_pool2d_nchwc_basic", "max_pool2d_nchwc", (1, 12, 7, 9), 4, (3, 3), (2, 2), (1, 1, 1, 1))
    pool_nchwc_case("max_pool2d_nchwc_ceil", "max_pool2d_nchwc", (2, 6, 6, 6), 6, (2, 2), (2, 2), (1, 1, 1, 1), ceil=True)
    pool_nchwc_case("avg_pool2d_nchwc_excl", "avg_pool2d_nchwc", (1, 16, 7, 13), 8, (3, 3), (2, 2), (1, 1, 1, 1))
    pool_nchwc_case("avg_pool2d_nchwc_ceil_incl", "avg_pool2d_nchwc", (1, 6, 8, 7), 3, (3, 2), (2, 2), (1, 1, 1, 1),
                    ceil=True, cip=True)
    # ---- Winograd (ConvertConvToWinograd): the weight transform by numpy's G g G^T, the
    # convolution by PyTorch's direct conv2d on the original weights (so the transform is checked
    # too); U computed in float64 and stored as f32, hence the 1e-5 tolerance.
    wino_g = {2: np.array([[1, 0, 0], [0.5, 0.5, 0.5], [0.5, -0.5, 0.5], [0, 0, 1]]),
              4: np.array([[1 / 4, 0, 0], [-1 / 6, -1 / 6, -1 / 6], [-1 / 6, 1 / 6, -1 / 6],
                           [1 / 24, 1 / 12, 1 / 6], [1 / 24, -1 / 12, 1 / 6], [0, 0, 1]])}

    def wino_u(ww, tile, ob):  # OIHW -> [a, a, M/ob, C, ob]
        g = wino_g[tile]
        u = np.einsum("ek,mckl,nl->enmc", g, ww.astype(np.float64), g)  # [a, a, M, C]
        a, _, mm, cc = u.shape
        return np.ascontiguousarray(u.reshape(a, a, mm // ob, ob, cc).transpose(0, 1, 2, 4, 3)).astype(np.float32)

    ww6 = rand(8, 6, 3, 3)
    for tile in (2, 4):
        case(f"winograd_weight_transform_f{tile}", "winograd_weight_transform", [to_oihw_io(ww6, 3, 4)],
             [wino_u(ww6, tile, 4)], {"tile": tile}, rtol=1e-6, atol=1e-6)

    def wino_case(name, xs, m, xb, ob, tile, pads):
        xx, ww, bb = rand(*xs), rand(m, xs[1], 3, 3), rand(m)
        xp_ = F.pad(t64(xx), (pads[1], pads[3], pads[0], pads[2]))
        y = F.conv2d(xp_, t64(ww), t64(bb)).numpy()
        case(name, "conv2d_winograd_nchwc", [to_nchwc(xx, xb), wino_u(ww, tile, ob), bb],
             [to_nchwc(y, ob).astype(np.float32)], {"pads": list(pads), "tile": tile}, rtol=1e-5, atol=1e-5)

    wino_case("conv2d_winograd_f2_pad1", (2, 6, 7, 9), 8, 3, 4, 2, (1, 1, 1, 1))
    wino_case("conv2d_winograd_f4_pad0", (1, 8, 11, 7), 4, 8, 2, 4, (0, 0, 0, 0))
    wino_case("conv2d_winograd_f4_asym", (1, 4, 6, 10), 8, 4, 8, 4, (1, 0, 2, 1))

    # ---- math, activations, comparisons, logic, bits (numpy / PyTorch in float64) ---------------
    mx = rand(5, 11)
    mx[0, :4] = [0.0, -0.0, 0.5, -2.5]
    md = mx.astype(np.float64)
    unit = rand(5, 11, lo=-0.999, hi=0.999)
    ud = unit.astype(np.float64)
    ge1 = rand(5, 11, lo=1.0, hi=50.0)
    math_cases = {
        "sin": (mx, np.sin(md)), "cos": (mx, np.cos(md)), "tan": (mx, np.tan(md)),
        "asin": (unit, np.arcsin(ud)), "acos": (unit, np.arccos(ud)), "atan": (mx * 3, np.arctan(md * 3)),
        "sinh": (mx, np.sinh(md)), "cosh": (mx, np.cosh(md)), "asinh": (mx * 10, np.arcsinh(md * 10)),
        "acosh": (ge1, np.arccosh(ge1.astype(np.float64))), "atanh": (unit, np.arctanh(ud)),
        "floor": (mx, np.floor(md)), "ceil": (mx, np.ceil(md)), "round": (mx, np.round(md)),
        "sign": (mx, np.sign(md)),
        "softplus": (mx * 10, F.softplus(t64(mx * 10)).numpy()), "softsign": (mx, md / (1 + np.abs(md))),
        "mish": (mx, F.mish(t64(mx)).numpy()),
    }
    for op, (inp, y) in math_cases.items():
        case(f"{op}_f32", op, [inp], [y.astype(np.float32)], rtol=1e-6, atol=1e-6)
    case("round_halves", "round", [np.array([0.5, 1.5, 2.5, -0.5, -1.5, 2.4999], np.float32)],
         [np.array([0.0, 2.0, 2.0, -0.0, -2.0, 2.0], np.float32)])
    case("sign_i32", "sign", [np.array([-7, 0, 3], np.int32)], [np.array([-1, 0, 1], np.int32)])
    case("atanh_edges", "atanh", [np.array([1.0, -1.0, 2.0], np.float32)], [np.array([np.inf, -np.inf, np.nan], np.float32)])
    case("elu", "elu", [mx], [F.elu(t64(mx), alpha=0.7).numpy().astype(np.float32)], {"alpha": 0.7})
    case("selu", "selu", [mx], [F.selu(t64(mx)).numpy().astype(np.float32)], rtol=1e-5, atol=1e-6)
    case("celu", "celu", [mx], [F.celu(t64(mx), alpha=2.0).numpy().astype(np.float32)], {"alpha": 2.0})
    case("thresholded_relu", "thresholded_relu", [mx], [np.where(md > 0.5, md, 0).astype(np.float32)], {"alpha": 0.5})
    case("shrink", "shrink", [mx], [np.where(md < -1, md + 0.5, np.where(md > 1, md - 0.5, 0)).astype(np.float32)],
         {"lambd": 1.0, "bias": 0.5})
    case("swish", "swish", [mx], [(md / (1 + np.exp(-1.5 * md))).astype(np.float32)], {"alpha": 1.5})
    ca, cb = rand(3, 4), rand(4)
    ca[0, 0], cb[0] = np.nan, np.nan
    for op, fn in [("less", np.less), ("greater", np.greater), ("less_equal", np.less_equal),
                   ("greater_equal", np.greater_equal)]:
        case(f"{op}_f32_bcast", op, [ca, cb], [fn(ca, cb)])
    ia8 = np.array([[0, 200, 255], [7, 8, 9]], np.uint8)
    ib8 = np.array([255, 100, 9], np.uint8)
    case("less_u8", "less", [ia8, ib8], [np.less(ia8, ib8)])
    la, lb = rng.integers(0, 2, size=(3, 4)).astype(bool), rng.integers(0, 2, size=(4,)).astype(bool)
    for op, fn in [("logical_and", np.logical_and), ("logical_or", np.logical_or), ("logical_xor", np.logical_xor)]:
        case(op, op, [la, lb], [fn(la, lb)])
    xa, xb = rng.integers(-100, 100, size=(3, 4)).astype(np.int32), rng.integers(-100, 100, size=(4,)).astype(np.int32)
    for op, fn in [("bitwise_and", np.bitwise_and), ("bitwise_or", np.bitwise_or), ("bitwise_xor", np.bitwise_xor)]:
        case(f"{op}_i32", op, [xa, xb], [fn(xa, xb)])
    case("bitwise_and_u8", "bitwise_and", [ia8, ib8], [np.bitwise_and(ia8, ib8)])
    case("bitwise_not_i8", "bitwise_not", [np.array([0, -1, 5, 127], np.int8)], [np.array([-1, 0, -6, -128], np.int8)])
    case("bitwise_not_u8", "bitwise_not", [ia8], [np.invert(ia8)])
    sa, sn = np.array([16, 4, 1, 255], np.uint8), np.array([1, 2, 7, 8], np.uint8)
    case("bit_shift_left_u8", "bit_shift", [sa, sn], [np.array([32, 16, 128, 0], np.uint8)], {"direction": "left"})
    case("bit_shift_right_u8", "bit_shift", [sa, sn], [np.array([8, 1, 0, 0], np.uint8)], {"direction": "right"})
    case("bit_shift_right_i32", "bit_shift", [np.array([-16, 16, -1], np.int32), np.array([2, 40, 3], np.int32)],
         [np.array([-4, 0, -1], np.int32)], {"direction": "right"})
    px, ps = rand(2, 3, 4), rand(3, 1)
    case("prelu_channel", "prelu", [px, ps], [np.where(px < 0, px.astype(np.float64) * ps, px).astype(np.float32)])
    nx = np.array([1.0, np.nan, np.inf, -np.inf, 0.0], np.float32)
    case("is_nan", "is_nan", [nx], [np.isnan(nx)])
    case("is_inf", "is_inf", [nx], [np.isinf(nx)])
    case("is_inf_negative_only", "is_inf", [nx], [np.isneginf(nx)], {"detect_positive": 0})

    # ---- reductions beyond wave 1, argmax/argmin, spatial normalizations -----------------------
    rr = rand(3, 7, 5, lo=0.5, hi=1.5)
    rrd = rr.astype(np.float64)
    for axes, keep in [([1], 1), ([0, 2], 0), ([], 1)]:
        ax = tuple(axes) if axes else None
        tag = "_".join(map(str, axes)) or "all"
        case(f"reduce_min_{tag}_k{keep}", "reduce_min", [rr], [np.min(rrd, axis=ax, keepdims=bool(keep)).astype(np.float32)],
             {"axes": axes, "keepdims": keep})
        case(f"reduce_prod_{tag}_k{keep}", "reduce_prod", [rr], [np.prod(rrd, axis=ax, keepdims=bool(keep)).astype(np.float32)],
             {"axes": axes, "keepdims": keep}, rtol=1e-5)
    case("reduce_min_i32", "reduce_min", [ri], [ri.min(axis=1)], {"axes": [1], "keepdims": 0})
    pi64 = np.array([[2**40, 2**30, 3]], np.int64)
    case("reduce_prod_i64_wraps", "reduce_prod", [pi64], [np.prod(pi64, axis=1)], {"axes": [1], "keepdims": 0})
    case("reduce_min_empty", "reduce_min", [np.zeros((2, 0), np.float32)], [np.full((2,), np.inf, np.float32)],
         {"axes": [1], "keepdims": 0})
    ax_ = rand(3, 6, 4)
    ax_[0, 1, 0] = ax_[0, 4, 0] = 5.0  # a tie along axis 1
    for axis in range(3):
        for keep in (0, 1):
            case(f"argmax_a{axis}_k{keep}", "argmax", [ax_], [np.argmax(ax_, axis=axis, keepdims=bool(keep)).astype(np.int64)],
                 {"axis": axis, "keepdims": keep})
            case(f"argmin_a{axis}_k{keep}", "argmin", [ax_], [np.argmin(ax_, axis=axis, keepdims=bool(keep)).astype(np.int64)],
                 {"axis": axis, "keepdims": keep})
    last = ax_.shape[1] - 1 - np.argmax(ax_[:, ::-1, :], axis=1)
    case("argmax_last_index", "argmax", [ax_], [last.astype(np.int64)], {"axis": 1, "keepdims": 0, "select_last_index": 1})
    case("argmax_i32", "argmax", [xa], [np.argmax(xa, axis=1).astype(np.int64)], {"axis": 1, "keepdims": 0})
    case("argmax_nan_first", "argmax", [np.array([1.0, np.nan, 3.0, np.nan], np.float32)], [np.array(1, np.int64)],
         {"axis": 0, "keepdims": 0})
    for shape in [(2, 3, 13), (2, 4, 5, 9), (1, 2, 3, 4, 8)]:
        ix, isc, ib = rand(*shape), rand(shape[1]), rand(shape[1])
        name = "x".join(map(str, shape))
        yi = F.instance_norm(t64(ix), weight=t64(isc), bias=t64(ib), eps=1e-3).numpy().astype(np.float32)
        case(f"instance_norm_{name}", "instance_norm", [ix, isc, ib], [yi], {"epsilon": 1e-3}, rtol=1e-5, atol=1e-5)
    ix = rand(2, 3, 4, 5)
    case("instance_norm_no_affine", "instance_norm", [ix], [F.instance_norm(t64(ix)).numpy().astype(np.float32)],
         rtol=1e-5, atol=1e-5)
    lx = rand(2, 7, 3, 4)
    lxd = lx.astype(np.float64)
    for size in (1, 3, 4):  # ONNX's window: floor((size-1)/2) channels before, ceil((size-1)/2) after
        sq = np.zeros_like(lxd)
        for ch in range(7):
            lo, hi = max(0, ch - (size - 1) // 2), min(6, ch + size // 2)
            sq[:, ch] = (lxd[:, lo:hi + 1] ** 2).sum(axis=1)
        yl = (lxd / (1.5 + 2e-2 / size * sq) ** 0.6).astype(np.float32)
        case(f"lrn_size{size}", "lrn", [lx], [yl], {"size": size, "alpha": 2e-2, "beta": 0.6, "bias": 1.5},
             rtol=1e-5, atol=1e-6)

    xf = rand(2, 3)
    case("fused_relu_neg_add", "fused", [xf, rand(2, 3)], None, {
        "body": 'graph(%p0: f32[2, 3], %p1: f32[2, 3]) { %0 = relu(%p0) : f32[2, 3] %1 = neg(%0) : f32[2, 3] '
                '%2 = add(%1, %p1) : f32[2, 3] return %2 as "out0" }',
        "label": "relu_neg_add"})
    CASES[-1] = CASES[-1][:4] + ([-np.maximum(xf, 0) + CASES[-1][3][1]],) + CASES[-1][5:]

    sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
    import op_cases_tensorops
    op_cases_tensorops.add_cases(case, rng)
    import op_cases_quant
    op_cases_quant.add_cases(case, rng)
    op_cases_quant.add_int8_conv_cases(case, rng)
    import op_cases_int8_matmul
    op_cases_int8_matmul.add_cases(case, rng)
    op_cases_quant.add_int8_depthwise_cases(case, rng)
    op_cases_quant.add_int8_winograd_cases(case, rng)

    return CASES


def main():
    parser = argparse.ArgumentParser()
    parser.add_argument("--out", required=True)
    args = parser.parse_args()
    h = hashlib.sha256()
    here = os.path.dirname(os.path.abspath(__file__))
    for script in [os.path.abspath(__file__)] + sorted(
            os.path.join(here, n) for n in os.listdir(here) if n.startswith("op_cases_") and n.endswith(".py")):
        with open(script, "rb") as f:
            h.update(f.read())
    digest = h.hexdigest()
    stamp = os.path.join(args.out, "stamp")
    if os.path.exists(stamp) and open(stamp).read().strip() == digest:
        return
    import numpy as np
    cases = build_cases()
    parent = os.path.dirname(os.path.abspath(args.out))
    os.makedirs(parent, exist_ok=True)
    tmp = tempfile.mkdtemp(prefix=".op_cases.", dir=parent)
    names = set()
    with open(os.path.join(tmp, "cases.txt"), "w") as f:
        for name, op, attrs, inputs, outputs, rtol, atol in cases:
            assert name not in names, name
            names.add(name)
            for i, a in enumerate(inputs):
                np.save(os.path.join(tmp, f"{name}.in{i}.npy"), np.array(a, order="C"))
            for i, a in enumerate(outputs):
                np.save(os.path.join(tmp, f"{name}.out{i}.npy"), np.array(a, order="C"))
            f.write(f"{name}\t{op}\t{fmt_attrs(attrs)}\t{len(inputs)}\t{len(outputs)}\t{rtol!r}\t{atol!r}\n")
    with open(os.path.join(tmp, "stamp"), "w") as f:
        f.write(digest + "\n")
    if os.path.exists(args.out):
        if os.path.exists(stamp) and open(stamp).read().strip() == digest:
            shutil.rmtree(tmp, ignore_errors=True)  # another process finished first; its files are identical
            return
        stale = tempfile.mkdtemp(prefix=".op_cases.stale.", dir=parent)
        os.rename(args.out, os.path.join(stale, "old"))  # out of the way first, then delete
        shutil.rmtree(stale, ignore_errors=True)
    try:
        os.rename(tmp, args.out)
    except OSError:
        shutil.rmtree(tmp, ignore_errors=True)  # another process won the race; its files are identical
    print(f"op_cases: wrote {len(cases)} cases to {args.out}")


if __name__ == "__main__":
    sys.exit(main())
