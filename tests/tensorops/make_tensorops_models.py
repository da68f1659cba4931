#!/usr/bin/python3
"""Writes small whole-model cases of the indexing / scan / selection / einsum operators, in the
layout of ONNX's node tests (DIR/<case>/model.onnx, DIR/<case>/test_data_set_0/{input,output}_K.pb),
for tensorops_models_e2e.cc:

- einsum_* and matmul_bcast_*: one Einsum or MatMul node (onnx.helper) per equation / broadcast
  form, expected output from numpy (einsum, matmul) in float64, stored as float32;
- detr_postprocess, gpt_step, pixel_shuffle_sr, spatial_transformer: PyTorch modules with random
  weights (fixed seeds) exported by torch.onnx, expected output from PyTorch.

Usage: make_tensorops_models.py OUT_DIR. Exits non-zero (and writes nothing) without onnx/torch.
"""
import os
import shutil
import sys
import tempfile


def save_case(out_dir, name, model_bytes, inputs, outputs):
    from onnx import numpy_helper

    case = os.path.join(out_dir, name)
    os.makedirs(os.path.join(case, "test_data_set_0"))
    with open(os.path.join(case, "model.onnx"), "wb") as f:
        f.write(model_bytes)
    for kind, arrays in (("input", inputs), ("output", outputs)):
        for k, a in enumerate(arrays):
            with open(os.path.join(case, "test_data_set_0", f"{kind}_{k}.pb"), "wb") as f:
                f.write(numpy_helper.from_array(a).SerializeToString())


def single_node_cases(out_dir, rng):
    import numpy as np
    from onnx import TensorProto, helper

    def node_model(op, shapes, attrs, opset):
        names = [f"in{i}" for i in range(len(shapes))]
        node = helper.make_node(op, names, ["out"], **attrs)
        graph = helper.make_graph([node], op.lower(),
                                  [helper.make_tensor_value_info(n, TensorProto.FLOAT, s) for n, s in zip(names, shapes)],
                                  [helper.make_tensor_value_info("out", TensorProto.FLOAT, None)])
        model = helper.make_model(graph, opset_imports=[helper.make_opsetid("", opset)])
        return model.SerializeToString()

    einsums = {
        "einsum_batch_matmul": ("bij,bjk->bik", [(2, 3, 4), (2, 4, 5)]),
        "einsum_attention_scores": ("bhid,bhjd->bhij", [(2, 3, 5, 8), (2, 3, 6, 8)]),
        "einsum_attention_values": ("bhij,bhjd->bihd", [(2, 3, 5, 6), (2, 3, 6, 8)]),
        "einsum_trace": ("ii", [(5, 5)]),
        "einsum_diagonal": ("ii->i", [(4, 4)]),
        "einsum_batch_diagonal": ("bii->bi", [(3, 4, 4)]),
        "einsum_transpose_sum": ("ijk->kj", [(2, 3, 4)]),
        "einsum_outer": ("i,j->ij", [(3,), (4,)]),
        "einsum_inner": ("i,i", [(7,), (7,)]),
        "einsum_chain": ("ij,jk,kl->il", [(3, 4), (4, 5), (5, 2)]),
        "einsum_ellipsis_broadcast": ("...ij,...jk->...ik", [(2, 1, 3, 4), (5, 4, 2)]),
        "einsum_bilinear": ("bn,anm,bm->ba", [(2, 3), (4, 3, 5), (2, 5)]),
        "einsum_implicit": ("ij,jk", [(3, 4), (4, 2)]),
    }
    for name, (eq, shapes) in einsums.items():
        xs = [rng.uniform(-1, 1, size=s).astype(np.float32) for s in shapes]
        want = np.einsum(eq, *[x.astype(np.float64) for x in xs]).astype(np.float32)
        save_case(out_dir, name, node_model("Einsum", shapes, {"equation": eq}, 13), xs, [np.asarray(want)])

    matmuls = {
        "matmul_bcast_4d_3d": [(2, 1, 3, 4), (5, 4, 6)],
        "matmul_bcast_2d_3d": [(3, 4), (2, 4, 5)],
        "matmul_bcast_1d_3d": [(4,), (2, 4, 3)],
        "matmul_bcast_3d_1d": [(2, 3, 4), (4,)],
        "matmul_bcast_both": [(3, 1, 2, 5), (1, 4, 5, 3)],
    }
    for name, shapes in matmuls.items():
        xs = [rng.uniform(-1, 1, size=s).astype(np.float32) for s in shapes]
        want = np.matmul(xs[0].astype(np.float64), xs[1].astype(np.float64)).astype(np.float32)
        save_case(out_dir, name, node_model("MatMul", shapes, {}, 13), xs, [np.asarray(want)])


def error_cases(out_dir):
    """Models Kiln must refuse with a clear message: errors/<name>.onnx + errors/<name>.txt (a
    substring the error must contain)."""
    from onnx import TensorProto, helper

    os.makedirs(os.path.join(out_dir, "errors"))

    def save(name, nodes, inputs, outputs, needle, opset=13):
        graph = helper.make_graph(nodes, name, inputs, outputs)
        model = helper.make_model(graph, opset_imports=[helper.make_opsetid("", opset)])
        with open(os.path.join(out_dir, "errors", name + ".onnx"), "wb") as f:
            f.write(model.SerializeToString())
        with open(os.path.join(out_dir, "errors", name + ".txt"), "w") as f:
            f.write(needle)

    f32 = lambda n, s: helper.make_tensor_value_info(n, TensorProto.FLOAT, s)
    i64 = lambda n, s: helper.make_tensor_value_info(n, TensorProto.INT64, s)
    save("unique_runtime", [helper.make_node("Unique", ["x"], ["y"])], [f32("x", [6])], [f32("y", None)],
         "the output size depends on its values")
    save("nonzero_runtime", [helper.make_node("NonZero", ["x"], ["y"])], [f32("x", [2, 3])], [i64("y", None)],
         "input 0 (X; the output size depends on its values")
    save("topk_runtime_k", [helper.make_node("TopK", ["x", "k"], ["v", "i"])], [f32("x", [2, 5]), i64("k", [1])],
         [f32("v", None), i64("i", None)], "input 1 (K, 'k') is computed at run time")
    save("einsum_bad_label", [helper.make_node("Einsum", ["a", "b"], ["c"], equation="ij,j1->i")],
         [f32("a", [2, 3]), f32("b", [3, 4])], [f32("c", None)], "equation")
    save("einsum_rank_mismatch", [helper.make_node("Einsum", ["a", "b"], ["c"], equation="ij,jk->ik")],
         [f32("a", [2, 3, 1]), f32("b", [3, 4])], [f32("c", None)], "input 0 has rank 3, its equation term has 2 labels")
    # Tile's repeats as an initializer of the wrong length.
    with open(os.path.join(out_dir, "errors", "tile_bad_repeats.txt"), "w") as f:
        f.write("repeats has 1 values for an input of rank 2")
    graph = helper.make_graph([helper.make_node("Tile", ["x", "r"], ["y"])], "tile_bad_repeats", [f32("x", [2, 3])],
                              [f32("y", None)], [helper.make_tensor("r", TensorProto.INT64, [1], [2])])
    with open(os.path.join(out_dir, "errors", "tile_bad_repeats.onnx"), "wb") as f:
        f.write(helper.make_model(graph, opset_imports=[helper.make_opsetid("", 13)]).SerializeToString())
    save("gather_elements_rank", [helper.make_node("GatherElements", ["x", "i"], ["y"], axis=1)],
         [f32("x", [2, 3]), i64("i", [2])], [f32("y", None)], "indices has rank 1, data has rank 2")


def torch_cases(out_dir):
    import io

    import numpy as np
    import torch
    import torch.nn as nn
    import torch.nn.functional as F

    class DetrPostprocess(nn.Module):
        """DETR-style head + post-processing: class scores (sigmoid), the top-k (query, class) pairs
        over all queries and classes, their boxes (GatherElements) in xyxy."""

        def __init__(self, d=32, classes=11, k=10):
            super().__init__()
            self.cls = nn.Linear(d, classes)
            self.box = nn.Sequential(nn.Linear(d, d), nn.ReLU(), nn.Linear(d, 4))
            self.k = k
            self.classes = classes

        def forward(self, hs):
            scores = self.cls(hs).sigmoid().flatten(1)              # [B, Q * classes]
            top, idx = torch.topk(scores, self.k, dim=1)           # TopK
            query = torch.div(idx, self.classes, rounding_mode="trunc")  # idx >= 0
            boxes = self.box(hs).sigmoid()                          # [B, Q, 4] cx cy w h
            cx, cy, w, h = boxes.unbind(-1)
            xyxy = torch.stack([cx - w / 2, cy - h / 2, cx + w / 2, cy + h / 2], -1)
            picked = torch.gather(xyxy, 1, query.unsqueeze(-1).expand(-1, -1, 4))  # GatherElements
            return torch.cat([top.unsqueeze(-1), picked], -1)

    class GptStep(nn.Module):
        """One generation step of a GPT-style decoder: position ids from the attention mask
        (CumSum), a causal mask (Trilu), einsum attention, and the top-k next-token logits."""

        def __init__(self, vocab=50, d=32, heads=4, ctx=16):
            super().__init__()
            self.tok = nn.Embedding(vocab, d)
            self.pos = nn.Embedding(ctx, d)
            self.qkv = nn.Linear(d, 3 * d)
            self.proj = nn.Linear(d, d)
            self.ln = nn.LayerNorm(d)
            self.head = nn.Linear(d, vocab, bias=False)
            self.heads = heads

        def forward(self, ids, mask):
            pos = (torch.cumsum(mask, dim=1) - 1).clamp(min=0)     # CumSum
            x = self.tok(ids) + self.pos(pos)
            b, t, d = x.shape
            q, k, v = self.qkv(self.ln(x)).split(d, dim=-1)
            q, k, v = (z.view(b, t, self.heads, d // self.heads).transpose(1, 2) for z in (q, k, v))
            s = torch.einsum("bhid,bhjd->bhij", q, k) / (d // self.heads) ** 0.5
            causal = torch.triu(torch.ones_like(s), diagonal=1)    # Trilu
            s = s - 1e4 * causal - 1e4 * (1 - mask[:, None, None, :].float())
            a = torch.einsum("bhij,bhjd->bihd", s.softmax(-1), v).reshape(b, t, d)
            x = x + self.proj(a)
            logits = self.head(self.ln(x))[:, -1]
            top, _ = torch.topk(logits, 5, dim=-1)
            return top

    class PixelShuffleSR(nn.Module):
        """ESPCN-style super-resolution: convs then PixelShuffle (DepthToSpace) x3."""

        def __init__(self, r=3):
            super().__init__()
            self.body = nn.Sequential(nn.Conv2d(1, 16, 5, padding=2), nn.Tanh(), nn.Conv2d(16, 8, 3, padding=1), nn.Tanh(),
                                      nn.Conv2d(8, r * r, 3, padding=1))
            self.shuffle = nn.PixelShuffle(r)
            self.unshuffle = nn.PixelUnshuffle(r)

        def forward(self, x):
            y = self.shuffle(self.body(x))
            return y + self.shuffle(self.unshuffle(y)) * 0.5    # unshuffle exports as reshape/transpose

    class SpatialTransformer(nn.Module):
        """Spatial transformer: a localization net predicts theta, the image is resampled
        (GridSample, bilinear, zeros)."""

        def __init__(self):
            super().__init__()
            self.loc = nn.Sequential(nn.Conv2d(3, 8, 3, stride=2, padding=1), nn.ReLU(), nn.AdaptiveAvgPool2d(1),
                                     nn.Flatten(), nn.Linear(8, 6))
            nn.init.normal_(self.loc[-1].weight, std=0.05)
            with torch.no_grad():
                self.loc[-1].bias.copy_(torch.tensor([0.9, 0.1, 0.05, -0.1, 1.1, 0.0]))

        def forward(self, x, grid):
            theta = self.loc(x).view(-1, 2, 3)
            g = grid + theta[:, None, None, :, 2]    # translation applied to a fixed sampling grid
            return F.grid_sample(x, g, mode="bilinear", padding_mode="zeros", align_corners=False)

    torch.manual_seed(0)
    cases = {
        "detr_postprocess": (DetrPostprocess(), (torch.randn(2, 20, 32),), 13),
        "gpt_step": (GptStep(), (torch.randint(0, 50, (2, 12)), torch.cat([torch.zeros(2, 3, dtype=torch.long),
                                                                             torch.ones(2, 9, dtype=torch.long)], 1)), 14),
        "pixel_shuffle_sr": (PixelShuffleSR(), (torch.randn(1, 1, 12, 15),), 13),
        "spatial_transformer": (SpatialTransformer(), (torch.randn(2, 3, 16, 16),
                                                       F.affine_grid(torch.tensor([[[1.0, 0.2, 0.0], [-0.1, 0.9, 0.0]]]).repeat(2, 1, 1),
                                                                     (2, 3, 12, 14), align_corners=False)), 16),
    }
    for name, (module, args, opset) in cases.items():
        module.eval()
        with torch.no_grad():
            want = module(*args)
        buf = io.BytesIO()
        torch.onnx.export(module, args, buf, opset_version=opset, input_names=[f"in{i}" for i in range(len(args))],
                          output_names=["out"])
        save_case(out_dir, name, buf.getvalue(), [a.numpy() for a in args], [want.numpy()])


def main():
    out = sys.argv[1]
    import numpy as np

    parent = os.path.dirname(os.path.abspath(out))
    os.makedirs(parent, exist_ok=True)
    tmp = tempfile.mkdtemp(prefix=".tensorops_models.", dir=parent)
    try:
        single_node_cases(tmp, np.random.default_rng(7))
        error_cases(tmp)
        torch_cases(tmp)
    except Exception:
        shutil.rmtree(tmp, ignore_errors=True)
        raise
    shutil.rmtree(out, ignore_errors=True)
    os.rename(tmp, out)
    print(f"make_tensorops_models: wrote {len(os.listdir(out))} cases to {out}")


if __name__ == "__main__":
    sys.exit(main())
