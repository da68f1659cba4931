#!/usr/bin/python3
"""Held-out model sweep: exports networks Kiln is never tuned on, compiles and runs them, compares with PyTorch.

Usage:
  /usr/bin/python3 scripts/heldout-sweep.py [--out /tmp/heldout] [--kiln build/bin/kiln] [--only NAME ...]
      [-O 3] [--disable-pass PASS ...] [--target 'llvm -vector-width=512'] [--lock /tmp/kiln-bench.lock] [--reexport] [--list] [--big]
      [--set heldout|wild|all]
      [--time N [--ort [--peers DIR]]] [--threads T] [--export-only]

Models (--list): torchvision classifiers (ResNet-18/50 (batch 2), ResNeXt-50, Wide-ResNet-50 (--big),
DenseNet-121, GoogLeNet, Inception-v3, SqueezeNet 1.1, ShuffleNetV2, MNASNet, EfficientNet-B0,
MobileNetV3 small/large, RegNet X/Y 400MF, ConvNeXt-T, AlexNet, Swin-T, ViT-B/16 (--big) and a
2-layer 64x64 ViT), segmentation (FCN-ResNet50 (--big), DeepLabV3 and LR-ASPP MobileNetV3),
several CNNs at the odd size 97x131 (ResNet-18 with batch 3; ShuffleNetV2 x0.5, RegNetY-400MF and
SqueezeNet 1.0 with batch 2), transformer blocks (nn.TransformerEncoder
post-/pre-norm with ReLU/GELU, nn.MultiheadAttention with a key-padding mask, a GPT block with a
causal mask and tanh-GELU, a LLaMA-style block with RMSNorm/rotary/SiLU, a BERT encoder with a
run-time attention_mask input) and LayerNorm at opsets 13 and 17.
--set wild runs instead the models of scripts/sweep_models/*.py (one file per model class: recurrent
networks, the conv family in 1-D/3-D and transposed, exports at old opsets, ...); --set all runs both.

For every model (random weights with fixed seeds, `weights=None`, eval mode, fixed shapes) it
  1. exports OUT/NAME.onnx with torch.onnx.export, its inputs OUT/NAME.<input>.npy (names listed in
     OUT/NAME.inputs.txt) and PyTorch's output OUT/NAME.ref.npy (skipped when they exist, unless
     --reexport);
  2. runs `kiln compile OUT/NAME.onnx -o OUT/NAME.O<level>.so -O <level> [--disable-pass ...]` (timed);
  3. runs `kiln run ... --input NAME=... --output ...` and prints max|kiln - torch| / max|torch|.
Export also runs the model in float64 (OUT/NAME.ref64.npy) to tell Kiln's rounding from PyTorch's own:
deep randomly initialized networks (FCN, Inception) are ill-conditioned enough that PyTorch's f32
output is 1e-4 away from the f64 one. The table lists model / opset / input shape / rel error vs torch
f32 / rel error vs f64 / torch f32's rel error vs f64 / compile s / status. A model passes when its
error vs f64 is <= max(--tol (default 1e-4), 4 x torch f32's) and the compile takes <= --max-compile-s
(default 30 s). --time N adds the median latency of N runs (kiln run --repeat); with --ort also
ONNX Runtime's (../shared/peers/ort_bench.js, run right after Kiln on the same inputs) and the ratio. Winograd F(4x4, 3x3) at -O3 roughly doubles or triples the f32 rounding error of
the 3x3 convolutions; the factor 4 leaves room for that.
Batch norms get running statistics re-estimated on random batches so activations stay in a sane range.
With --lock FILE, every heavy step (export, compile, run) holds an exclusive flock on FILE so that
timings taken by others under the same lock stay clean. Exits 0 with a note when torchvision is absent.
This is a tool, not a test: it needs torch/torchvision and takes minutes.
"""
import argparse
import contextlib
import copy
import fcntl
import glob
import importlib.util
import math
import os
import re
import subprocess
import sys
import time

try:
    import numpy as np
    import torch
    import torch.nn as nn
    import torchvision
except ImportError as e:  # pragma: no cover - depends on the host
    print(f"heldout-sweep: skipped ({e}); run with a python that has torch and torchvision")
    sys.exit(0)

import torchvision.models as tvm


# ----------------------------------------------------------------------------------------------
# Models


def recalibrate_batch_norms(model, shape, batches=1):
    """Re-estimates every BatchNorm's running statistics on random inputs of `shape` (batch >= 2)."""
    bns = [m for m in model.modules() if isinstance(m, nn.modules.batchnorm._BatchNorm)]
    if not bns:
        return
    for m in bns:
        m.reset_running_stats()
        m.momentum = None
    model.train()
    with torch.no_grad():
        for _ in range(batches):
            model(torch.randn(max(2, shape[0]), *shape[1:]))
    model.eval()


def randomize_zero_linears(model):
    """Re-initializes Linear layers that torchvision zero-initializes (ViT heads) so outputs are not all zero."""
    for m in model.modules():
        if isinstance(m, nn.Linear) and not torch.any(m.weight):
            nn.init.normal_(m.weight, std=0.05)
            if m.bias is not None:
                nn.init.uniform_(m.bias, -0.1, 0.1)


class DictOutput(nn.Module):
    """Segmentation models return {"out": ..., "aux": ...}: keep "out"."""

    def __init__(self, model):
        super().__init__()
        self.model = model

    def forward(self, x):
        return self.model(x)["out"]


def vision(ctor, shape, **kwargs):
    def make():
        model = ctor(weights=None, **kwargs)
        randomize_zero_linears(model)
        recalibrate_batch_norms(model, shape)
        return model, torch.randn(*shape)
    return make


def segmentation(ctor, shape, **kwargs):
    def make():
        model = ctor(weights=None, weights_backbone=None, **kwargs)
        recalibrate_batch_norms(model, shape)
        return DictOutput(model), torch.randn(*shape)
    return make


class AttentionWithPaddingMask(nn.Module):
    """nn.MultiheadAttention (batch 2, batch_first) with a constant key-padding mask, then a residual LayerNorm."""

    def __init__(self):
        super().__init__()
        self.mha = nn.MultiheadAttention(96, 6, batch_first=True)
        self.ln = nn.LayerNorm(96)
        pad = torch.zeros(2, 24, dtype=torch.bool)
        pad[1, 17:] = True
        self.register_buffer("pad", pad)

    def forward(self, x):
        y, _ = self.mha(x, x, x, key_padding_mask=self.pad, need_weights=False)
        return self.ln(x + y)


class BertWithMask(nn.Module):
    """BERT-style encoder with two run-time inputs: input_ids and attention_mask (i64 [1, 64]).

    HF-style extended mask ((1 - mask) * -10000 added to the scores), erf-GELU, post-LayerNorm, 2 layers."""

    def __init__(self, vocab=500, hidden=128, heads=4, layers=2, seq=64):
        super().__init__()
        self.hidden, self.heads, self.seq = hidden, heads, seq
        self.word, self.pos = nn.Embedding(vocab, hidden), nn.Embedding(seq, hidden)
        self.ln_emb = nn.LayerNorm(hidden, eps=1e-12)
        self.layers = nn.ModuleList(nn.ModuleDict({
            "q": nn.Linear(hidden, hidden), "k": nn.Linear(hidden, hidden), "v": nn.Linear(hidden, hidden),
            "o": nn.Linear(hidden, hidden), "ln1": nn.LayerNorm(hidden, eps=1e-12),
            "fc": nn.Linear(hidden, 4 * hidden), "out": nn.Linear(4 * hidden, hidden),
            "ln2": nn.LayerNorm(hidden, eps=1e-12)}) for _ in range(layers))
        self.register_buffer("positions", torch.arange(seq).unsqueeze(0))

    def forward(self, input_ids, attention_mask):
        b, t, c, h = 1, self.seq, self.hidden, self.heads
        d = c // h
        x = self.ln_emb(self.word(input_ids) + self.pos(self.positions))
        bias = (1.0 - attention_mask[:, None, None, :].to(torch.float32)) * -10000.0
        for L in self.layers:
            q = L["q"](x).view(b, t, h, d).permute(0, 2, 1, 3)
            k = L["k"](x).view(b, t, h, d).permute(0, 2, 3, 1)
            v = L["v"](x).view(b, t, h, d).permute(0, 2, 1, 3)
            p = torch.softmax(q @ k / math.sqrt(d) + bias, dim=-1)
            y = (p @ v).permute(0, 2, 1, 3).reshape(b, t, c)
            x = L["ln1"](x + L["o"](y))
            x = L["ln2"](x + L["out"](nn.functional.gelu(L["fc"](x))))
        return x


def bert_masked():
    ids = torch.randint(0, 500, (1, 64), dtype=torch.int64)
    mask = torch.ones(1, 64, dtype=torch.int64)
    mask[0, 50:] = 0
    return BertWithMask(), {"input_ids": ids, "attention_mask": mask}


class LlamaBlock(nn.Module):
    """LLaMA-style decoder: RMSNorm, rotary position embedding (cos/sin buffers), causal mask, SiLU-gated MLP."""

    def __init__(self, hidden=128, heads=4, seq=32, layers=2):
        super().__init__()
        self.hidden, self.heads, self.seq = hidden, heads, seq
        d = hidden // heads
        self.layers = nn.ModuleList(nn.ModuleDict({
            "qkv": nn.Linear(hidden, 3 * hidden, bias=False), "o": nn.Linear(hidden, hidden, bias=False),
            "gate": nn.Linear(hidden, 344, bias=False), "up": nn.Linear(hidden, 344, bias=False),
            "down": nn.Linear(344, hidden, bias=False)}) for _ in range(layers))
        self.norm_w = nn.ParameterList(nn.Parameter(1 + 0.1 * torch.randn(hidden)) for _ in range(2 * layers + 1))
        inv = 1.0 / (10000 ** (torch.arange(0, d, 2).float() / d))
        ang = torch.outer(torch.arange(seq).float(), inv)
        emb = torch.cat([ang, ang], dim=-1)
        self.register_buffer("cos", emb.cos())
        self.register_buffer("sin", emb.sin())
        self.register_buffer("mask", torch.triu(torch.full((seq, seq), -1e9), diagonal=1))

    def rms(self, x, w):
        return x * torch.rsqrt(x.pow(2).mean(-1, keepdim=True) + 1e-6) * w

    def rope(self, x):
        half = x.shape[-1] // 2
        rot = torch.cat([-x[..., half:], x[..., :half]], dim=-1)
        return x * self.cos + rot * self.sin

    def forward(self, x):
        b, t, c, h = 1, self.seq, self.hidden, self.heads
        d = c // h
        for i, L in enumerate(self.layers):
            y = self.rms(x, self.norm_w[2 * i])
            q, k, v = L["qkv"](y).split(c, dim=-1)
            q = self.rope(q.reshape(b, t, h, d).transpose(1, 2))
            k = self.rope(k.reshape(b, t, h, d).transpose(1, 2))
            v = v.reshape(b, t, h, d).transpose(1, 2)
            att = torch.softmax(q @ k.transpose(-2, -1) / math.sqrt(d) + self.mask, dim=-1)
            x = x + L["o"]((att @ v).transpose(1, 2).reshape(b, t, c))
            y = self.rms(x, self.norm_w[2 * i + 1])
            x = x + L["down"](nn.functional.silu(L["gate"](y)) * L["up"](y))
        return self.rms(x, self.norm_w[-1])


def llama():
    return LlamaBlock(), torch.randn(1, 32, 128)


def mha_padding():
    return AttentionWithPaddingMask(), torch.randn(2, 24, 96)


class GptBlock(nn.Module):
    """Pre-LayerNorm decoder block: causal self-attention (explicit matmuls, additive mask) and tanh-GELU MLP."""

    def __init__(self, hidden=128, heads=4, seq=32, layers=2):
        super().__init__()
        self.hidden, self.heads, self.seq = hidden, heads, seq
        self.blocks = nn.ModuleList()
        for _ in range(layers):
            self.blocks.append(nn.ModuleDict({
                "ln1": nn.LayerNorm(hidden), "qkv": nn.Linear(hidden, 3 * hidden), "proj": nn.Linear(hidden, hidden),
                "ln2": nn.LayerNorm(hidden), "fc": nn.Linear(hidden, 4 * hidden), "out": nn.Linear(4 * hidden, hidden)}))
        self.ln_f = nn.LayerNorm(hidden)
        mask = torch.triu(torch.full((seq, seq), float("-inf")), diagonal=1)
        self.register_buffer("mask", mask)

    def forward(self, x):
        b, t, c = 1, self.seq, self.hidden
        h, d = self.heads, self.hidden // self.heads
        for blk in self.blocks:
            y = blk["ln1"](x)
            q, k, v = blk["qkv"](y).split(c, dim=-1)
            q = q.reshape(b, t, h, d).transpose(1, 2)
            k = k.reshape(b, t, h, d).transpose(1, 2)
            v = v.reshape(b, t, h, d).transpose(1, 2)
            att = (q @ k.transpose(-2, -1)) * (1.0 / math.sqrt(d)) + self.mask
            att = torch.softmax(att, dim=-1)
            y = (att @ v).transpose(1, 2).reshape(b, t, c)
            x = x + blk["proj"](y)
            x = x + blk["out"](nn.functional.gelu(blk["fc"](blk["ln2"](x)), approximate="tanh"))
        return self.ln_f(x)


class LayerNormMlp(nn.Module):
    """Linear -> LayerNorm -> ReLU -> Linear -> LayerNorm on [1, 16, 96] (the second with a non-trivial affine)."""

    def __init__(self):
        super().__init__()
        self.fc1, self.ln1 = nn.Linear(96, 96), nn.LayerNorm(96)
        # torch 1.13 exports an affine-free LayerNorm at opset 17 with an empty scale input (invalid ONNX).
        self.fc2, self.ln2 = nn.Linear(96, 64), nn.LayerNorm(64)
        with torch.no_grad():
            self.ln2.weight.uniform_(0.5, 1.5)
            self.ln2.bias.uniform_(-0.5, 0.5)

    def forward(self, x):
        return self.ln2(self.fc2(torch.relu(self.ln1(self.fc1(x)))))


def encoder(norm_first, activation):
    def make():
        layer = nn.TransformerEncoderLayer(d_model=128, nhead=4, dim_feedforward=256, dropout=0.0,
                                           activation=activation, batch_first=True, norm_first=norm_first)
        return nn.TransformerEncoder(layer, num_layers=2, enable_nested_tensor=False), torch.randn(1, 32, 128)
    return make


def small_vit():
    model = tvm.vision_transformer.VisionTransformer(image_size=64, patch_size=16, num_layers=2, num_heads=4,
                                                     hidden_dim=128, mlp_dim=256, num_classes=100)
    randomize_zero_linears(model)
    return model, torch.randn(1, 3, 64, 64)


def gpt():
    return GptBlock(), torch.randn(1, 32, 128)


def layer_norm_mlp():
    return LayerNormMlp(), torch.randn(1, 16, 96)


ODD = (1, 3, 97, 131)
# name -> (factory, opset, big)
MODELS = {
    "resnet18": (vision(tvm.resnet18, (1, 3, 224, 224)), 13, False),
    "resnet50_b2": (vision(tvm.resnet50, (2, 3, 224, 224)), 13, False),
    "resnext50_32x4d": (vision(tvm.resnext50_32x4d, (1, 3, 224, 224)), 13, False),
    "wide_resnet50_2": (vision(tvm.wide_resnet50_2, (1, 3, 224, 224)), 13, True),
    "densenet121": (vision(tvm.densenet121, (1, 3, 224, 224)), 13, False),
    "googlenet": (vision(tvm.googlenet, (1, 3, 224, 224), aux_logits=False, init_weights=True), 13, False),
    "inception_v3": (vision(tvm.inception_v3, (1, 3, 299, 299), aux_logits=False, init_weights=True), 13, False),
    "squeezenet1_1": (vision(tvm.squeezenet1_1, (1, 3, 224, 224)), 13, False),
    "shufflenet_v2_x1_0": (vision(tvm.shufflenet_v2_x1_0, (1, 3, 224, 224)), 13, False),
    "mnasnet1_0": (vision(tvm.mnasnet1_0, (1, 3, 224, 224)), 13, False),
    "efficientnet_b0": (vision(tvm.efficientnet_b0, (1, 3, 224, 224)), 13, False),
    "mobilenet_v3_small": (vision(tvm.mobilenet_v3_small, (1, 3, 224, 224)), 13, False),
    "regnet_y_400mf": (vision(tvm.regnet_y_400mf, (1, 3, 224, 224)), 13, False),
    "convnext_tiny": (vision(tvm.convnext_tiny, (1, 3, 224, 224)), 17, False),
    "vit_b_16": (vision(tvm.vit_b_16, (1, 3, 224, 224)), 17, True),
    "vit_tiny_64": (small_vit, 17, False),
    "encoder_postln_relu": (encoder(False, "relu"), 13, False),
    "encoder_preln_gelu": (encoder(True, "gelu"), 17, False),
    "gpt_block": (gpt, 13, False),
    "layernorm_mlp_op13": (layer_norm_mlp, 13, False),
    "layernorm_mlp_op17": (layer_norm_mlp, 17, False),
    "resnet18_97x131": (vision(tvm.resnet18, ODD), 13, False),
    "squeezenet1_1_97x131": (vision(tvm.squeezenet1_1, ODD), 13, False),
    "mobilenet_v3_small_97x131": (vision(tvm.mobilenet_v3_small, ODD), 13, False),
    "shufflenet_v2_97x131": (vision(tvm.shufflenet_v2_x1_0, ODD), 13, False),
    "efficientnet_b0_97x131": (vision(tvm.efficientnet_b0, ODD), 13, False),
    "googlenet_97x131": (vision(tvm.googlenet, ODD, aux_logits=False, init_weights=True), 13, False),
    "densenet121_97x131": (vision(tvm.densenet121, ODD), 13, False),
    "convnext_tiny_97x131": (vision(tvm.convnext_tiny, ODD), 13, False),
    "resnet18_b3_97x131": (vision(tvm.resnet18, (3, 3, 97, 131)), 13, False),
    # Batch 2 through channel padding (ShuffleNetV2 x0.5: 24/48/96/192 and 58-wide branches;
    # RegNetY: grouped convs + squeeze-excite), blocked concats (SqueezeNet 1.0) and pads.
    "shufflenet_v2_x0_5_b2_97x131": (vision(tvm.shufflenet_v2_x0_5, (2, 3, 97, 131)), 13, False),
    "regnet_y_400mf_b2_97x131": (vision(tvm.regnet_y_400mf, (2, 3, 97, 131)), 13, False),
    "squeezenet1_0_b2_97x131": (vision(tvm.squeezenet1_0, (2, 3, 97, 131)), 13, False),
    "alexnet": (vision(tvm.alexnet, (1, 3, 224, 224)), 13, False),
    "mobilenet_v3_large": (vision(tvm.mobilenet_v3_large, (1, 3, 224, 224)), 13, False),
    "regnet_x_400mf": (vision(tvm.regnet_x_400mf, (1, 3, 224, 224)), 13, False),
    "swin_t": (vision(tvm.swin_t, (1, 3, 224, 224)), 17, False),
    "fcn_resnet50": (segmentation(tvm.segmentation.fcn_resnet50, (1, 3, 160, 160), aux_loss=False), 13, True),
    "deeplabv3_mobilenet_v3_large": (segmentation(tvm.segmentation.deeplabv3_mobilenet_v3_large, (1, 3, 160, 160),
                                                  aux_loss=False), 13, False),
    "lraspp_mobilenet_v3_large": (segmentation(tvm.segmentation.lraspp_mobilenet_v3_large, (1, 3, 160, 160)),
                                  13, False),
    "mha_padding_mask_b2": (mha_padding, 14, False),
    "bert_masked_2inputs": (bert_masked, 14, False),
    "llama_block": (llama, 14, False),
}


HELDOUT = list(MODELS)


def load_wild_models():
    """Models of the 'wild' set: every scripts/sweep_models/*.py defines MODELS in the same convention
    (name -> (factory, opset, big); factory() -> (eval-mode module returning one tensor, input tensor or
    dict name -> tensor)). One module per model class (recurrent, conv family, old opsets, ...)."""
    names = []
    here = os.path.join(os.path.dirname(os.path.abspath(__file__)), "sweep_models")
    for path in sorted(glob.glob(os.path.join(here, "*.py"))):
        if os.path.basename(path).startswith("_"):
            continue
        spec = importlib.util.spec_from_file_location("sweep_models_" + os.path.basename(path)[:-3], path)
        mod = importlib.util.module_from_spec(spec)
        spec.loader.exec_module(mod)
        for name, entry in mod.MODELS.items():
            if name in MODELS:
                raise RuntimeError(f"{path}: model name '{name}' is already defined")
            MODELS[name] = entry
            names.append(name)
    return names


WILD = load_wild_models()
SETS = {"heldout": HELDOUT, "wild": WILD, "all": HELDOUT + WILD}


# ----------------------------------------------------------------------------------------------
# Steps


@contextlib.contextmanager
def held(lock_path):
    if not lock_path:
        yield
        return
    with open(lock_path, "a") as f:
        fcntl.flock(f, fcntl.LOCK_EX)
        try:
            yield
        finally:
            fcntl.flock(f, fcntl.LOCK_UN)


def export(name, out_dir, lock):
    factory, opset, _ = MODELS[name]
    paths = {k: os.path.join(out_dir, f"{name}.{k}") for k in ("onnx", "inputs.txt", "ref.npy", "ref64.npy")}
    with held(lock):
        torch.manual_seed(0)
        np.random.seed(0)
        model, x = factory()
        inputs = x if isinstance(x, dict) else {"input": x}
        args = tuple(inputs.values())
        model.eval()
        with torch.no_grad():
            ref = model(*args)
        torch.onnx.export(model, args, paths["onnx"], input_names=list(inputs), output_names=["output"],
                          opset_version=opset, do_constant_folding=True)
        with torch.no_grad():
            ref64 = copy.deepcopy(model).double()(*(a.double() if a.is_floating_point() else a for a in args))
    for n, a in inputs.items():
        np.save(os.path.join(out_dir, f"{name}.{n}.npy"), a.numpy())
    with open(paths["inputs.txt"], "w") as f:
        f.write("\n".join(inputs) + "\n")
    np.save(paths["ref.npy"], ref.numpy())
    np.save(paths["ref64.npy"], ref64.numpy())
    if not np.all(np.isfinite(ref.numpy())) or float(np.max(np.abs(ref.numpy()))) < 1e-3:
        raise RuntimeError(f"degenerate reference output (max|out| = {float(np.max(np.abs(ref.numpy())))})")


def sweep_one(name, args):
    onnx_path = os.path.join(args.out, f"{name}.onnx")
    if args.reexport or not all(os.path.exists(os.path.join(args.out, f"{name}.{k}"))
                                for k in ("onnx", "inputs.txt", "ref.npy", "ref64.npy")):
        export(name, args.out, args.lock)
    with open(os.path.join(args.out, f"{name}.inputs.txt")) as f:
        input_names = f.read().split()
    x = np.load(os.path.join(args.out, f"{name}.{input_names[0]}.npy"))
    ref = np.load(os.path.join(args.out, f"{name}.ref.npy"))
    ref64 = np.load(os.path.join(args.out, f"{name}.ref64.npy"))
    tag = f"O{args.opt_level}" + "".join(f"-no{p}" for p in args.disable_pass)
    if args.target:
        tag += "-" + re.sub(r"[^A-Za-z0-9]+", "_", args.target).strip("_")
    so = os.path.join(args.out, f"{name}.{tag}.so")
    out = os.path.join(args.out, f"{name}.{tag}.out.npy")
    row = {"name": name, "opset": MODELS[name][1], "shape": "x".join(map(str, x.shape)), "err": None,
           "err64": None, "torch_err64": None, "compile_s": None, "status": ""}
    cmd = [args.kiln, "compile", onnx_path, "-o", so, "-O", str(args.opt_level)]
    if args.target:
        cmd += ["--target", args.target]
    for p in args.disable_pass:
        cmd += ["--disable-pass", p]
    with held(args.lock):
        t0 = time.time()
        r = subprocess.run(cmd, capture_output=True, text=True)
        row["compile_s"] = time.time() - t0
    if r.returncode != 0:
        row["status"] = "COMPILE FAIL: " + (r.stderr.strip().splitlines() or ["?"])[-1][:160]
        return row
    with held(args.lock):
        cmd = [args.kiln, "run", so, "--output", out, "--threads", str(args.threads)]
        for n in input_names:
            cmd += ["--input", f"{n}={os.path.join(args.out, f'{name}.{n}.npy')}"]
        r = subprocess.run(cmd, capture_output=True, text=True)
    if r.returncode != 0:
        row["status"] = "RUN FAIL: " + (r.stderr.strip().splitlines() or ["?"])[-1][:160]
        return row
    got = np.load(out)
    if got.shape != ref.shape:
        row["status"] = f"SHAPE {got.shape} != {ref.shape}"
        return row
    def rel(a, b):
        return float(np.max(np.abs(a.astype(np.float64) - b))) / max(float(np.max(np.abs(b))), 1e-30)

    row["err"], row["err64"], row["torch_err64"] = rel(got, ref), rel(got, ref64), rel(ref, ref64)
    bad = []
    if not np.isfinite(row["err64"]) or row["err64"] > max(args.tol, 4 * row["torch_err64"]):
        bad.append("WRONG")
    if row["compile_s"] > args.max_compile_s:
        bad.append("SLOW COMPILE")
    row["status"] = " ".join(bad) or "ok"
    if args.time:
        with held(args.lock):
            r = subprocess.run(cmd[:3] + cmd[5:] + ["--repeat", str(args.time), "--warmup", "2"],
                               capture_output=True, text=True)
        m = re.search(r"latency: median ([0-9.]+) ms", r.stdout + r.stderr)
        row["ms"] = float(m.group(1)) if m else None
        if args.ort:
            # ONNX Runtime right after Kiln on the same model and inputs (docs/performance.md).
            ort = ["node", os.path.join(args.peers, "ort_bench.js"), onnx_path, "--threads", str(args.threads),
                   "--iters", str(args.time), "--warmup", "2"]
            for n in input_names:
                ort += ["--input", f"{n}={os.path.join(args.out, f'{name}.{n}.npy')}"]
            with held(args.lock):
                r = subprocess.run(ort, capture_output=True, text=True)
            m = re.search(r"median_ms=([0-9.]+)", r.stdout + r.stderr)
            row["ort_ms"] = float(m.group(1)) if m else None
    return row


def main():
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    root = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
    parser.add_argument("--out", default="/tmp/heldout")
    parser.add_argument("--kiln", default=os.path.join(root, "build", "bin", "kiln"))
    parser.add_argument("--only", nargs="*", choices=sorted(MODELS))
    parser.add_argument("--big", action="store_true", help="include the big models (wide_resnet50_2, vit_b_16)")
    parser.add_argument("--set", choices=sorted(SETS), default="heldout",
                        help="which models: heldout (default), wild (scripts/sweep_models/*.py: recurrent, conv "
                             "family, old opsets, ...) or all")
    parser.add_argument("-O", "--opt-level", type=int, default=3)
    parser.add_argument("--disable-pass", nargs="*", default=[])
    parser.add_argument("--target", default="",
                        help="kiln compile --target, e.g. 'llvm -vector-width=512' (AVX-512 schedules on this host)")
    parser.add_argument("--threads", type=int, default=1)
    parser.add_argument("--tol", type=float, default=1e-4)
    parser.add_argument("--max-compile-s", type=float, default=30.0)
    parser.add_argument("--time", type=int, default=0, metavar="N",
                        help="also time N runs (after 2 warm-ups) and add a median ms column")
    parser.add_argument("--ort", action="store_true",
                        help="with --time: also time ONNX Runtime (PEERS/ort_bench.js) and add ORT ms and Kiln/ORT")
    parser.add_argument("--peers", default=os.path.realpath(os.path.join(root, "..", "shared", "peers")))
    parser.add_argument("--lock", default=None, help="flock this file around every heavy step")
    parser.add_argument("--reexport", action="store_true")
    parser.add_argument("--list", action="store_true")
    parser.add_argument("--export-only", action="store_true", help="only write the ONNX files, inputs and references")
    args = parser.parse_args()
    if args.list:
        print("\n".join(SETS[args.set]))
        return 0
    os.makedirs(args.out, exist_ok=True)
    torch.set_num_threads(1)
    names = args.only or [n for n in SETS[args.set] if args.big or not MODELS[n][2]]
    if args.ort and not args.time:
        parser.error("--ort needs --time N")
    if args.ort and not os.path.exists(os.path.join(args.peers, "ort_bench.js")):
        parser.error(f"--ort: {args.peers}/ort_bench.js not found (give --peers DIR)")
    print("| model | opset | input | rel err vs torch f32 | vs f64 | torch f32 vs f64 | compile s |"
          + (f" ms ({args.threads} thr, median of {args.time}) |" if args.time else "")
          + (" ORT ms | Kiln/ORT |" if args.ort else "") + " status |")
    print("|---|---|---|---|---|---|---|" + ("---|" if args.time else "") + ("---|---|" if args.ort else "") + "---|")
    failures = 0
    if args.export_only:
        for name in names:
            t0 = time.time()
            try:
                export(name, args.out, args.lock)
                print(f"exported {name} ({time.time() - t0:.1f} s)", flush=True)
            except Exception as e:
                failures += 1
                print(f"EXPORT FAIL {name}: {type(e).__name__}: {str(e)[:200]}", flush=True)
        return 1 if failures else 0
    for name in names:
        try:
            row = sweep_one(name, args)
        except Exception as e:  # export problems are reported, not fatal to the sweep
            row = {"name": name, "opset": MODELS[name][1], "shape": "?", "err": None, "err64": None,
                   "torch_err64": None, "compile_s": None,
                   "status": f"EXPORT FAIL: {type(e).__name__}: {str(e)[:120]}"}
        failures += row["status"] != "ok"
        errs = " | ".join("—" if row[k] is None else f"{row[k]:.2e}" for k in ("err", "err64", "torch_err64"))
        cs = "—" if row["compile_s"] is None else f"{row['compile_s']:.1f}"
        ms = ""
        if args.time:
            ms = " — |" if row.get("ms") is None else f" {row['ms']:.2f} |"
        if args.ort:
            k, o = row.get("ms"), row.get("ort_ms")
            ms += " — | — |" if k is None or o is None else f" {o:.2f} | {k / o:.2f} |"
        print(f"| {row['name']} | {row['opset']} | {row['shape']} | {errs} | {cs} |{ms} {row['status']} |", flush=True)
    print(f"heldout-sweep: {len(names) - failures}/{len(names)} ok (-O{args.opt_level}"
          + "".join(f" --disable-pass {p}" for p in args.disable_pass)
          + (f" --target '{args.target}'" if args.target else "") + ")")
    return 1 if failures else 0


if __name__ == "__main__":
    sys.exit(main())
