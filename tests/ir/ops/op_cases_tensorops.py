"""Cases of the indexing / scan / selection / sampling operators (gather_elements, gather_nd,
scatter_elements, reverse_sequence, cumsum, cumprod, topk, grid_sample) for op_cases.py.
Expected outputs from numpy (take_along_axis, ufunc.at, cumsum/cumprod, stable argsort) and
PyTorch in float64 (grid_sample), never from Kiln."""


def add_cases(case, rng):
    import numpy as np
    import torch
    import torch.nn.functional as F

    def rand(*shape, dtype=np.float32, lo=-3.0, hi=3.0):
        return rng.uniform(lo, hi, size=shape).astype(dtype)

    # gather_elements: negative indices count from the end.
    d = rand(3, 4, 5)
    idx = rng.integers(-4, 4, size=(3, 2, 5)).astype(np.int64)
    case("gather_elements_axis1", "gather_elements", [d, idx], [np.take_along_axis(d, idx % 4, axis=1)], {"axis": 1})
    idx0 = rng.integers(0, 3, size=(2, 4, 3)).astype(np.int32)
    case("gather_elements_axis0_i32_smaller", "gather_elements", [d, idx0],
         [np.take_along_axis(d[:, :4, :3], idx0.astype(np.int64), axis=0)], {"axis": 0})

    # gather_nd, with and without batch dims.
    d = rand(2, 3, 4)
    ind = rng.integers(0, 2, size=(5, 2)).astype(np.int64)
    ind[:, 1] = rng.integers(-3, 3, size=5)
    case("gather_nd_k2", "gather_nd", [d, ind], [np.stack([d[i, j] for i, j in ind])], {})
    indb = rng.integers(0, 4, size=(2, 3, 1)).astype(np.int64)
    db = rand(2, 4, 3)
    expected = np.stack([np.stack([db[b, indb[b, r, 0]] for r in range(3)]) for b in range(2)])
    case("gather_nd_batch1", "gather_nd", [db, indb], [expected], {"batch_dims": 1})

    # scatter_elements: none (unique targets), add/mul/max/min with duplicates.
    data = rand(3, 5)
    upd = rand(3, 2)
    tgt = np.stack([rng.permutation(5)[:2] for _ in range(3)]).astype(np.int64)
    out = data.copy()
    np.put_along_axis(out, tgt, upd, axis=1)
    case("scatter_elements_none_axis1", "scatter_elements", [data, tgt - 5 * (tgt % 2), upd], [out], {"axis": 1})
    dup = rng.integers(0, 3, size=(4, 5)).astype(np.int64)
    upd4 = rand(4, 5)
    data6 = rand(3, 5)
    cols = np.broadcast_to(np.arange(5), dup.shape)
    for red, fn in (("add", np.add), ("mul", np.multiply), ("max", np.maximum), ("min", np.minimum)):
        out = data6.astype(np.float64).copy()
        fn.at(out, (dup, cols), upd4.astype(np.float64))
        case(f"scatter_elements_{red}_dup", "scatter_elements", [data6, dup, upd4], [out.astype(np.float32)],
             {"axis": 0, "reduction": red}, rtol=1e-5, atol=1e-5)
    di = rng.integers(-5, 5, size=(2, 6)).astype(np.int32)
    ui = rng.integers(-5, 5, size=(2, 3)).astype(np.int32)
    ti = rng.integers(0, 6, size=(2, 3)).astype(np.int64)
    out = di.copy()
    np.add.at(out, (np.broadcast_to(np.arange(2)[:, None], ti.shape), ti), ui)
    case("scatter_elements_add_i32", "scatter_elements", [di, ti, ui], [out], {"axis": 1, "reduction": "add"})

    # reverse_sequence.
    x = rand(5, 3, 2)
    lens = np.array([5, 2, 0], np.int64)
    out = x.copy()
    for b, n in enumerate(lens):
        out[:n, b] = x[:n, b][::-1]
    case("reverse_sequence_time0", "reverse_sequence", [x, lens], [out], {"batch_axis": 1, "time_axis": 0})
    x2 = rand(3, 4, 2)
    lens2 = np.array([1, 4, 3], np.int32)
    out2 = x2.copy()
    for b, n in enumerate(lens2):
        out2[b, :n] = x2[b, :n][::-1]
    case("reverse_sequence_batch0", "reverse_sequence", [x2, lens2], [out2], {"batch_axis": 0, "time_axis": 1})

    # cumsum / cumprod: exclusive and reverse.
    def scan(a, axis, exclusive, reverse, fn, identity):
        a = np.flip(a, axis) if reverse else a
        r = fn(a, axis=axis)
        if exclusive:
            r = np.concatenate([np.full_like(np.take(r, [0], axis=axis), identity), np.delete(r, -1, axis=axis)], axis=axis)
        return np.flip(r, axis) if reverse else r

    xs = rand(3, 37, 2, lo=-1.5, hi=1.5)
    for ex in (0, 1):
        for rv in (0, 1):
            case(f"cumsum_ex{ex}_rev{rv}", "cumsum", [xs], [scan(xs.astype(np.float64), 1, ex, rv, np.cumsum, 0).astype(np.float32)],
                 {"axis": 1, "exclusive": ex, "reverse": rv}, rtol=1e-5, atol=1e-5)
            xp = rand(2, 9, lo=0.5, hi=1.5)
            case(f"cumprod_ex{ex}_rev{rv}", "cumprod", [xp], [scan(xp.astype(np.float64), 1, ex, rv, np.cumprod, 1).astype(np.float32)],
                 {"axis": 1, "exclusive": ex, "reverse": rv}, rtol=1e-5, atol=1e-6)
    xi = rng.integers(-9, 9, size=(4, 6)).astype(np.int32)
    case("cumsum_i32_axis0", "cumsum", [xi], [np.cumsum(xi, axis=0).astype(np.int32)], {"axis": 0})
    xl = rng.integers(-3, 4, size=(5,)).astype(np.int64)
    case("cumprod_i64", "cumprod", [xl], [np.cumprod(xl)], {"axis": 0})

    # topk: ties keep index order (stable sort).
    def topk(a, k, axis, largest):
        key = -a if largest else a
        order = np.argsort(key, axis=axis, kind="stable")
        order = np.take(order, np.arange(k), axis=axis)
        return np.take_along_axis(a, order, axis=axis), order.astype(np.int64)

    xt = rand(4, 10)
    v, i = topk(xt, 3, 1, True)
    case("topk_largest_axis1", "topk", [xt], [v, i], {"axis": 1, "k": 3})
    xt2 = rng.integers(0, 4, size=(6, 3)).astype(np.float32)  # many ties
    v, i = topk(xt2, 4, 0, False)
    case("topk_smallest_ties_axis0", "topk", [xt2], [v, i], {"axis": 0, "k": 4, "largest": 0})
    xt3 = rng.integers(-50, 50, size=(2, 3, 20)).astype(np.int64)
    v, i = topk(xt3, 20, 2, True)
    case("topk_i64_full", "topk", [xt3], [v, i], {"axis": 2, "k": 20})

    # grid_sample against PyTorch (float64).
    def t64(a):
        return torch.from_numpy(np.asarray(a, np.float64))

    xg = rand(2, 3, 5, 6)
    for mode, torch_mode, lim in (("linear", "bilinear", 1.3), ("nearest", "nearest", 1.3), ("cubic", "bicubic", 0.9)):
        for pad in ("zeros", "border", "reflection"):
            for ac in (0, 1):
                grid = rand(2, 4, 7, 2, lo=-lim, hi=lim)
                y = F.grid_sample(t64(xg), t64(grid), mode=torch_mode, padding_mode=pad, align_corners=bool(ac)).numpy()
                case(f"grid_sample_{mode}_{pad}_ac{ac}", "grid_sample", [xg, grid], [y.astype(np.float32)],
                     {"mode": mode, "padding_mode": pad, "align_corners": ac}, rtol=1e-4, atol=1e-5)
    xv = rand(1, 2, 3, 4, 5)
    gv = rand(1, 2, 3, 4, 3, lo=-1.1, hi=1.1)
    y = F.grid_sample(t64(xv), t64(gv), mode="bilinear", padding_mode="zeros", align_corners=False).numpy()
    case("grid_sample_3d_linear", "grid_sample", [xv, gv], [y.astype(np.float32)], {"mode": "linear"}, rtol=1e-4, atol=1e-5)

    # resize with antialias (downscaling widens the filter) against PyTorch's antialiased
    # bilinear / bicubic interpolation (half_pixel; PyTorch drops the taps outside the image and
    # renormalizes, i.e. exclude_outside=1, and its bicubic uses a = -0.5).
    xr = rand(1, 2, 23, 17)
    for mode, torch_mode, extra in (("linear", "bilinear", {}), ("cubic", "bicubic", {"cubic_coeff_a": -0.5})):
        for size in ((9, 7), (5, 17), (11, 4)):
            y = F.interpolate(t64(xr), size=size, mode=torch_mode, antialias=True, align_corners=False).numpy()
            case(f"resize_antialias_{mode}_{size[0]}x{size[1]}", "resize", [xr], [y.astype(np.float32)],
                 dict({"sizes": [1, 2, size[0], size[1]], "mode": mode, "antialias": 1, "exclude_outside": 1}, **extra), rtol=1e-4, atol=1e-5)

    # col2im against PyTorch's fold (2-D), with strides, dilations and pads.
    for name, (img, blk, dil, pad, st) in {"col2im_basic": ((5, 6), (2, 3), (1, 1), (0, 0), (1, 1)),
                                            "col2im_strided_dilated_padded": ((7, 8), (3, 2), (2, 1), (1, 2), (2, 3))}.items():
        cnt = [(img[k] + 2 * pad[k] - dil[k] * (blk[k] - 1) - 1) // st[k] + 1 for k in range(2)]
        cols = rand(2, 3 * blk[0] * blk[1], cnt[0] * cnt[1])
        y = F.fold(t64(cols), img, blk, dilation=dil, padding=pad, stride=st).numpy()
        case(name, "col2im", [cols], [y.astype(np.float32)],
             {"image_shape": list(img), "block_shape": list(blk), "dilations": list(dil), "pads": [pad[0], pad[1], pad[0], pad[1]],
              "strides": list(st)}, rtol=1e-5, atol=1e-5)
