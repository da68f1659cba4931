"""Cases of the int8 matmul graph operators (AlterInt8Matmul's ops, src/ir/ops/int8_matmul.cc) for
op_cases.py: the packing checked byte by byte with numpy, the products as int64 numpy matmuls of
the zero-point-shifted integers, the requantize epilogue as the f32 steps of docs/int8.md
(np.rint = round half to even). Never from Kiln. Tolerance 0: integer results are exact."""


def add_cases(case, rng):
    import numpy as np

    f32 = np.float32
    K, N, nb = 7, 5, 4
    w = rng.integers(-128, 128, size=(K, N)).astype(np.int8)
    wpad = np.zeros((8, 8), np.int8)  # K -> 2 words, N -> 2 panels of 4
    wpad[:K, :N] = w
    # word (p, k4, j) = bytes w[4*k4 + b, p*nb + j], b = 0 lowest (little endian)
    packed = np.ascontiguousarray(wpad.reshape(2, 4, 2, nb).transpose(2, 0, 3, 1)).view("<i4")[..., 0]
    case("int8_pack_matmul_weights_k7_n5_nb4", "int8_pack_matmul_weights", [w], [packed], {"nb": nb}, rtol=0, atol=0)
    sums = w.astype(np.int64).sum(axis=0).astype(np.int32)
    case("int8_matmul_weight_sums", "int8_matmul_weight_sums", [w], [sums], {}, rtol=0, atol=0)

    M, azp, yzp = 3, 131, 9
    a = rng.integers(0, 256, size=(M, K)).astype(np.uint8)
    acc = (a.astype(np.int64) - azp) @ w.astype(np.int64)
    bias = rng.integers(-500, 500, size=N).astype(np.int32)
    scale = rng.uniform(1e-3, 1e-2, size=N).astype(f32)
    y = np.rint((acc + bias[None, :]).astype(f32) * scale[None, :]) + yzp
    y = np.clip(y, yzp, 200).astype(np.uint8)  # a ReLU clamp at the zero point and a Clip's top
    case("int8_matmul_relu", "int8_matmul", [a, packed, sums, bias, scale], [y],
         {"n": N, "a_zero_point": azp, "y_zero_point": yzp, "clamp_min": yzp, "clamp_max": 200}, rtol=0, atol=0)
    case("int8_matmul_i32", "int8_matmul_i32", [a, packed, sums, np.array(azp, np.uint8)], [acc.astype(np.int32)],
         {"n": N}, rtol=0, atol=0)
