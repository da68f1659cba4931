"""Transformer-era models for the model sweep (`scripts/heldout-sweep.py --set wild` loads every
scripts/sweep_models/*.py): MODELS = {name: (factory, opset, big)}, factory() -> (module in eval
mode, input tensor or dict name -> tensor), the module returning one tensor. Random weights, fixed
seeds. What they exercise in Kiln: FuseRmsNorm (the exported pow/mean/add/sqrt/reciprocal chain of
LLaMA/T5 RMSNorm), grouped-query attention written with repeat_interleave, rotary embeddings
(rotate-half and interleaved pairs), additive relative-position biases, cross-attention
(nn.TransformerDecoder) and SiLU/ReLU-gated MLPs, at opsets 13, 14 and 17.
"""
import math

import torch
from torch import nn


class RmsNorm(nn.Module):
    def __init__(self, hidden, eps=1e-6):
        super().__init__()
        self.weight = nn.Parameter(1 + 0.1 * torch.randn(hidden))
        self.eps = eps

    def forward(self, x):
        return self.weight * (x * torch.rsqrt(x.pow(2).mean(-1, keepdim=True) + self.eps))


class LlamaGqa(nn.Module):
    """LLaMA-2/3-style decoder: RMSNorm, grouped-query attention (kv heads < q heads, K/V repeated
    with repeat_interleave as HF does), rotary embeddings, causal mask, SiLU-gated MLP."""

    def __init__(self, hidden=256, heads=8, kv_heads=2, ffn=688, seq=64, layers=2, interleaved=False):
        super().__init__()
        self.hidden, self.heads, self.kv_heads, self.seq, self.interleaved = hidden, heads, kv_heads, seq, interleaved
        d = hidden // heads
        self.layers = nn.ModuleList(nn.ModuleDict({
            "n1": RmsNorm(hidden), "q": nn.Linear(hidden, heads * d, bias=False),
            "k": nn.Linear(hidden, kv_heads * d, bias=False), "v": nn.Linear(hidden, kv_heads * d, bias=False),
            "o": nn.Linear(heads * d, hidden, bias=False), "n2": RmsNorm(hidden),
            "gate": nn.Linear(hidden, ffn, bias=False), "up": nn.Linear(hidden, ffn, bias=False),
            "down": nn.Linear(ffn, hidden, bias=False)}) for _ in range(layers))
        self.norm = RmsNorm(hidden)
        inv = 1.0 / (10000 ** (torch.arange(0, d, 2).float() / d))
        ang = torch.outer(torch.arange(seq).float(), inv)
        emb = ang.repeat_interleave(2, dim=-1) if interleaved else torch.cat([ang, ang], dim=-1)
        self.register_buffer("cos", emb.cos())
        self.register_buffer("sin", emb.sin())
        self.register_buffer("mask", torch.triu(torch.full((seq, seq), float("-inf")), diagonal=1))

    def rope(self, x):
        if self.interleaved:
            x1, x2 = x[..., 0::2], x[..., 1::2]
            rot = torch.stack([-x2, x1], dim=-1).flatten(-2)
        else:
            half = x.shape[-1] // 2
            rot = torch.cat([-x[..., half:], x[..., :half]], dim=-1)
        return x * self.cos + rot * self.sin

    def forward(self, x):
        b, t = x.shape[0], self.seq
        h, hk, d = self.heads, self.kv_heads, self.hidden // self.heads
        for L in self.layers:
            y = L["n1"](x)
            q = self.rope(L["q"](y).reshape(b, t, h, d).transpose(1, 2))
            k = self.rope(L["k"](y).reshape(b, t, hk, d).transpose(1, 2))
            v = L["v"](y).reshape(b, t, hk, d).transpose(1, 2)
            k = k.repeat_interleave(h // hk, dim=1)
            v = v.repeat_interleave(h // hk, dim=1)
            att = torch.softmax(q @ k.transpose(-2, -1) / math.sqrt(d) + self.mask, dim=-1)
            x = x + L["o"]((att @ v).transpose(1, 2).reshape(b, t, h * d))
            y = L["n2"](x)
            x = x + L["down"](nn.functional.silu(L["gate"](y)) * L["up"](y))
        return self.norm(x)


class T5Encoder(nn.Module):
    """T5-style encoder: RMSNorm (no mean, no bias), unscaled attention with a learned additive
    relative-position bias per head, ReLU MLP, bias-free linears."""

    def __init__(self, hidden=192, heads=6, ffn=512, seq=48, layers=2):
        super().__init__()
        self.hidden, self.heads, self.seq = hidden, heads, seq
        self.pos_bias = nn.Parameter(0.5 * torch.randn(1, heads, seq, seq))
        self.layers = nn.ModuleList(nn.ModuleDict({
            "n1": RmsNorm(hidden), "qkv": nn.Linear(hidden, 3 * hidden, bias=False), "o": nn.Linear(hidden, hidden, bias=False),
            "n2": RmsNorm(hidden), "wi": nn.Linear(hidden, ffn, bias=False), "wo": nn.Linear(ffn, hidden, bias=False)})
            for _ in range(layers))
        self.norm = RmsNorm(hidden)

    def forward(self, x):
        b, t, c, h = x.shape[0], self.seq, self.hidden, self.heads
        d = c // h
        for L in self.layers:
            q, k, v = L["qkv"](L["n1"](x)).split(c, dim=-1)
            q, k, v = (z.reshape(b, t, h, d).transpose(1, 2) for z in (q, k, v))
            att = torch.softmax(q @ k.transpose(-2, -1) + self.pos_bias, dim=-1)
            x = x + L["o"]((att @ v).transpose(1, 2).reshape(b, t, c))
            x = x + L["wo"](torch.relu(L["wi"](L["n2"](x))))
        return self.norm(x)


class Decoder(nn.Module):
    """nn.TransformerDecoder (self-attention with a causal mask, cross-attention to memory)."""

    def __init__(self, hidden=128, heads=4, ffn=256, tgt=24, layers=2):
        super().__init__()
        layer = nn.TransformerDecoderLayer(d_model=hidden, nhead=heads, dim_feedforward=ffn, dropout=0.0, batch_first=True)
        self.dec = nn.TransformerDecoder(layer, num_layers=layers)
        self.register_buffer("mask", torch.triu(torch.full((tgt, tgt), float("-inf")), diagonal=1))

    def forward(self, tgt, memory):
        return self.dec(tgt, memory, tgt_mask=self.mask)


def _seeded(make):
    def factory():
        torch.manual_seed(0)
        model, inputs = make()
        return model.eval(), inputs
    return factory


def llama_gqa():
    return LlamaGqa(), torch.randn(1, 64, 256)


def llama_gqa_interleaved():
    return LlamaGqa(interleaved=True), torch.randn(1, 64, 256)


def t5_encoder():
    return T5Encoder(), torch.randn(1, 48, 192)


def decoder():
    return Decoder(), {"tgt": torch.randn(1, 24, 128), "memory": torch.randn(1, 40, 128)}


# name -> (factory, opset, big)
MODELS = {
    "llama_gqa_rope_op17": (_seeded(llama_gqa), 17, False),
    "llama_gqa_rope_op13": (_seeded(llama_gqa), 13, False),
    "llama_gqa_rope_interleaved_op14": (_seeded(llama_gqa_interleaved), 14, False),
    "t5_encoder_op14": (_seeded(t5_encoder), 14, False),
    "transformer_decoder_op13": (_seeded(decoder), 13, False),
}
