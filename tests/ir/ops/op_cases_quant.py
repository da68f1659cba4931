"""Cases of the quantization operators (quantize_linear, dequantize_linear, requantize, qnn_conv2d,
qnn_matmul) for op_cases.py. Expected outputs from numpy (f32 arithmetic step by step, np.rint =
round half to even, the rule of docs/int8.md) and PyTorch float64 convolutions of the
zero-point-shifted integers (exact), never from Kiln. Tolerance 0: integer results are exact."""


def add_cases(case, rng):
    import numpy as np
    import torch
    import torch.nn.functional as F

    f32 = np.float32

    def exact(name, op, inputs, outputs, attrs):
        case(name, op, inputs, outputs, attrs, rtol=0, atol=0)

    # quantize_linear: per tensor to u8 (values past both ends saturate), per axis to i8.
    x = rng.uniform(-4, 4, size=(3, 4)).astype(f32)
    x[0, :3] = [1e3, -1e3, 0.25]
    scale, zp = f32(0.03), np.array(128, np.uint8)
    y = np.clip(np.rint(x / scale) + 128, 0, 255).astype(np.uint8)
    exact("quantize_linear_u8", "quantize_linear", [x, np.array(scale), zp], [y], {"axis": 1})
    sa = np.array([0.02, 0.05, 0.1, 0.5], f32)
    za = np.array([-3, 0, 7, 1], np.int8)
    ya = np.clip(np.rint(x / sa) + za.astype(np.int64), -128, 127).astype(np.int8)
    exact("quantize_linear_i8_axis1", "quantize_linear", [x, sa, za], [ya], {"axis": 1})

    # dequantize_linear: u8 per tensor, i8 per axis 0, i32 (a bias) per tensor.
    q = rng.integers(0, 256, size=(3, 5)).astype(np.uint8)
    exact("dequantize_linear_u8", "dequantize_linear", [q, np.array(f32(0.1)), np.array(3, np.uint8)],
          [(q.astype(np.int32) - 3).astype(f32) * f32(0.1)], {"axis": 1})
    qi = rng.integers(-128, 128, size=(3, 5)).astype(np.int8)
    s0, z0 = np.array([0.5, 0.25, 2.0], f32), np.array([1, -2, 0], np.int8)
    exact("dequantize_linear_i8_axis0", "dequantize_linear", [qi, s0, z0],
          [(qi.astype(np.int32) - z0.astype(np.int32)[:, None]).astype(f32) * s0[:, None]], {"axis": 0})

    # requantize: per-channel input scale and bias, u8 output with a fused ReLU clamp (at the zero point).
    acc = rng.integers(-20000, 20000, size=(2, 3, 4)).astype(np.int32)
    xs = np.array([1e-3, 2.5e-3, 4e-4], f32)
    ys, yzp = f32(0.05), 10
    bias = np.array([100, -250, 0], np.int32)
    r = np.rint((acc + bias[None, :, None]).astype(f32) * (xs / ys)[None, :, None]) + yzp
    exact("requantize_u8_relu", "requantize", [acc, xs, np.array(ys), np.array(yzp, np.uint8), bias],
          [np.clip(r, yzp, 255).astype(np.uint8)], {"axis": 1, "clamp_min": yzp, "clamp_max": 255})

    # qnn_conv2d: u8 data with a zero point, i8 weights with per-channel zero points; pads hold the
    # data's zero point (contribute 0).
    def qconv(name, xs_, ws_, groups=1, strides=(1, 1), pads=(0, 0, 0, 0), dil=(1, 1)):
        xq = rng.integers(0, 256, size=xs_).astype(np.uint8)
        wq = rng.integers(-128, 128, size=ws_).astype(np.int8)
        xzp = np.array(120, np.uint8)
        wzp = rng.integers(-3, 4, size=(ws_[0],)).astype(np.int8)
        xd = torch.from_numpy(xq.astype(np.float64) - 120.0)
        wd = torch.from_numpy(wq.astype(np.float64) - wzp.astype(np.float64)[:, None, None, None])
        y = F.conv2d(F.pad(xd, (pads[1], pads[3], pads[0], pads[2])), wd, stride=strides, dilation=dil, groups=groups)
        exact(name, "qnn_conv2d", [xq, wq, xzp, wzp], [y.numpy().astype(np.int32)],
              {"strides": list(strides), "pads": list(pads), "dilations": list(dil), "groups": groups})

    qconv("qnn_conv2d_basic", (1, 3, 6, 7), (4, 3, 3, 3), pads=(1, 1, 1, 1))
    qconv("qnn_conv2d_groups_stride_dil", (1, 4, 9, 8), (6, 2, 3, 2), groups=2, strides=(2, 1), pads=(1, 0, 2, 1),
          dil=(1, 2))

    # qnn_matmul: batched u8 x i8 with a scalar and a per-column zero point.
    a = rng.integers(0, 256, size=(2, 3, 5)).astype(np.uint8)
    b = rng.integers(-128, 128, size=(5, 4)).astype(np.int8)
    bzp = np.array([0, 1, -1, 5], np.int8)
    y = (a.astype(np.int64) - 7) @ (b.astype(np.int64) - bzp.astype(np.int64))
    exact("qnn_matmul_batched", "qnn_matmul", [a, b, np.array(7, np.uint8), bzp], [y.astype(np.int32)], {})


def add_int8_conv_cases(case, rng):
    """int8_pack_conv_weights, int8_conv_weight_sums and int8_conv2d (AlterInt8Layout's ops,
    src/ir/ops/int8_conv.cc): packing checked byte by byte with numpy, the convolution against a
    PyTorch float64 convolution of the zero-point-shifted integers followed by the f32 requantize
    steps of docs/int8.md."""
    import numpy as np
    import torch
    import torch.nn.functional as F

    f32 = np.float32
    M, C, KH, KW, ob = 8, 6, 3, 2, 4
    w = rng.integers(-128, 128, size=(M, C, KH, KW)).astype(np.int8)
    wpad = np.zeros((M, 8, KH, KW), np.int8)
    wpad[:, :C] = w
    packed = np.ascontiguousarray(
        wpad.reshape(M // ob, ob, 2, 4, KH, KW).transpose(0, 2, 4, 5, 1, 3)).view("<i4")[..., 0]
    case("int8_pack_conv_weights_c6_ob4", "int8_pack_conv_weights", [w], [packed], {"ob": ob}, rtol=0, atol=0)
    sums = w.astype(np.int64).sum(axis=(1, 2, 3)).astype(np.int32)
    case("int8_conv_weight_sums", "int8_conv_weight_sums", [w], [sums], {}, rtol=0, atol=0)

    x = rng.integers(0, 256, size=(1, C, 7, 6)).astype(np.uint8)
    xzp, yzp = 100, 7
    bias = rng.integers(-500, 500, size=M).astype(np.int32)
    scale = rng.uniform(1e-4, 1e-3, size=M).astype(f32)
    strides, pads, dil = (2, 1), (1, 0, 1, 1), (1, 2)
    acc = F.conv2d(F.pad(torch.from_numpy(x.astype(np.float64) - xzp), (pads[1], pads[3], pads[0], pads[2])),
                   torch.from_numpy(w.astype(np.float64)), stride=strides, dilation=dil).numpy().astype(np.int64)
    y = np.rint((acc + bias[None, :, None, None]).astype(f32) * scale[None, :, None, None]) + yzp
    y = np.clip(y, yzp, 255).astype(np.uint8)  # clamp_min at the zero point: a fused ReLU
    n, _, oh, ow = y.shape
    y = np.ascontiguousarray(y.reshape(n, M // ob, ob, oh, ow).transpose(0, 1, 3, 4, 2))
    case("int8_conv2d_nchw_in", "int8_conv2d", [x, packed, sums, bias, scale], [y],
         {"strides": list(strides), "pads": list(pads), "dilations": list(dil), "channels": C,
          "x_zero_point": xzp, "y_zero_point": yzp, "clamp_min": yzp, "clamp_max": 255}, rtol=0, atol=0)
    # dequantize = 1: the same u8 values dequantized in f32 (f32(q - zp) * scale), another zero point.
    dqs, dqzp = f32(0.0375), 3
    yd = (y.astype(np.int32) - dqzp).astype(f32) * dqs
    case("int8_conv2d_dequantized", "int8_conv2d", [x, packed, sums, bias, scale], [yd],
         {"strides": list(strides), "pads": list(pads), "dilations": list(dil), "channels": C,
          "x_zero_point": xzp, "y_zero_point": yzp, "clamp_min": yzp, "clamp_max": 255, "dequantize": 1,
          "dequantize_scale": float(dqs), "dequantize_zero_point": dqzp}, rtol=0, atol=0)


def add_int8_depthwise_cases(case, rng):
    """int8_pack_depthwise_weights and int8_depthwise_conv2d (AlterInt8Layout's depthwise ops,
    src/ir/ops/int8_conv.cc): the packing checked with numpy, the convolution against a PyTorch
    float64 depthwise convolution (groups = C) of the zero-point-shifted integers followed by the
    f32 requantize steps of docs/int8.md, on NCHW[b]c data."""
    import numpy as np
    import torch
    import torch.nn.functional as F

    f32 = np.float32
    C, KH, KW, b = 8, 3, 3, 4
    w = rng.integers(-128, 128, size=(C, 1, KH, KW)).astype(np.int8)
    packed = np.ascontiguousarray(w.reshape(C // b, b, KH, KW).transpose(0, 2, 3, 1))
    case("int8_pack_depthwise_weights_b4", "int8_pack_depthwise_weights", [w], [packed], {"b": b}, rtol=0, atol=0)
    sums = w.astype(np.int64).sum(axis=(1, 2, 3)).astype(np.int32)
    x = rng.integers(0, 256, size=(1, C, 7, 6)).astype(np.uint8)
    xzp, yzp, hi = 90, 5, 200
    bias = rng.integers(-500, 500, size=C).astype(np.int32)
    scale = rng.uniform(1e-3, 1e-2, size=C).astype(f32)
    strides, pads = (2, 1), (1, 0, 1, 2)
    acc = F.conv2d(F.pad(torch.from_numpy(x.astype(np.float64) - xzp), (pads[1], pads[3], pads[0], pads[2])),
                   torch.from_numpy(w.astype(np.float64)), stride=strides, groups=C).numpy().astype(np.int64)
    y = np.rint((acc + bias[None, :, None, None]).astype(f32) * scale[None, :, None, None]) + yzp
    y = np.clip(y, yzp, hi).astype(np.uint8)  # ReLU6-style clamps [zero point, hi]
    blocked = lambda t: np.ascontiguousarray(t.reshape(t.shape[0], C // b, b, t.shape[2], t.shape[3]).transpose(0, 1, 3, 4, 2))
    case("int8_depthwise_conv2d_nchw4c", "int8_depthwise_conv2d", [blocked(x), packed, sums, bias, scale], [blocked(y)],
         {"strides": list(strides), "pads": list(pads), "dilations": [1, 1], "x_zero_point": xzp, "y_zero_point": yzp,
          "clamp_min": yzp, "clamp_max": hi}, rtol=0, atol=0)


def add_int8_winograd_cases(case, rng):
    """int8_winograd_weight_transform and int8_conv2d_winograd (ConvertInt8ConvToWinograd's ops,
    src/ir/ops/int8_winograd.cc): the transform checked with numpy ((2G) w (2G)^T as s16 halves of
    channel pairs within blocks of ib), the convolution against a PyTorch float64 convolution of
    the zero-point-shifted integers (what F(2x2, 3x3) in exact integers equals) followed by the
    f32 requantize steps of docs/int8.md, on NCHW[ib]c input, an odd output (partial tiles)."""
    import numpy as np
    import torch
    import torch.nn.functional as F

    f32 = np.float32
    M, C, ib, ob = 8, 8, 4, 4
    w = rng.integers(-128, 128, size=(M, C, 3, 3)).astype(np.int8)
    w[0, 0] = -128  # the largest |U'|: 9 x 128
    g2 = np.array([[2, 0, 0], [1, 1, 1], [1, -1, 1], [0, 0, 2]], np.int64)
    u = np.einsum("ek,mckl,nl->enmc", g2, w.astype(np.int64), g2)  # [4, 4, M, C]
    # word q of block cb: channel cb*ib + j (low half) and cb*ib + ib/2 + j (high half), j < ib/2.
    ub = u.reshape(4, 4, M, C // ib, 2, ib // 2)  # [..., cb, half, j]
    lo, hi = ub[:, :, :, :, 0, :], ub[:, :, :, :, 1, :]
    words = ((lo & 0xFFFF) | ((hi & 0xFFFF) << 16)).astype(np.uint32).view(np.int32)  # [4, 4, M, C/ib, ib/2]
    words = words.reshape(4, 4, M // ob, ob, C // 2).transpose(0, 1, 2, 4, 3)
    packed = np.ascontiguousarray(words)
    case("int8_winograd_weight_transform_ib4_ob4", "int8_winograd_weight_transform", [w], [packed],
         {"ob": ob, "ib": ib}, rtol=0, atol=0)

    x = rng.integers(0, 256, size=(1, C, 7, 6)).astype(np.uint8)
    xzp, yzp = 77, 9
    bias = rng.integers(-500, 500, size=M).astype(np.int32)
    scale = rng.uniform(1e-4, 1e-3, size=M).astype(f32)
    pads = (1, 0, 1, 1)
    acc = F.conv2d(F.pad(torch.from_numpy(x.astype(np.float64) - xzp), (pads[1], pads[3], pads[0], pads[2])),
                   torch.from_numpy(w.astype(np.float64))).numpy().astype(np.int64)
    y = np.rint((acc + bias[None, :, None, None]).astype(f32) * scale[None, :, None, None]) + yzp
    y = np.clip(y, 0, 255).astype(np.uint8)
    blocked = lambda t, b: np.ascontiguousarray(t.reshape(t.shape[0], t.shape[1] // b, b, t.shape[2], t.shape[3]).transpose(0, 1, 3, 4, 2))
    case("int8_conv2d_winograd_odd", "int8_conv2d_winograd", [blocked(x, ib), packed, bias, scale], [blocked(y, ob)],
         {"pads": list(pads), "x_zero_point": xzp, "y_zero_point": yzp, "clamp_min": 0, "clamp_max": 255},
         rtol=0, atol=0)
