"""Model-sweep entries of the indexing / scan / selection / einsum / sampling operators (issue 12,
item 6): realistic architectures with random weights (fixed seeds by the sweep), in the
convention of MODELS in scripts/heldout-sweep.py: name -> (factory, opset, big), factory() ->
(torch.nn.Module in eval mode, input tensor or dict input name -> tensor), one output tensor.

- detr_r18_postprocess: a DETR-style detector on a torchvision ResNet-18 trunk; class scores of
  every (query, class) pair, TopK over them, boxes picked by GatherElements.
- gpt_generate_step: a 4-layer GPT-style decoder step with an attention mask: position ids by
  CumSum, causal mask by Trilu, einsum attention, top-k next-token logits (TopK).
- espcn_x3: ESPCN super-resolution (PixelShuffle -> DepthToSpace).
- stn_classifier: a spatial-transformer classifier (the affine grid as base @ theta^T, GridSample
  bilinear) on a small CNN.
- swin_style_window_attention: window partition / merge (reshape/transpose), relative position
  bias gathered by index, einsum attention, torch.roll (Slice/Concat).
"""
import torch
import torch.nn as nn
import torch.nn.functional as F
import torchvision.models as tvm


class DetrR18(nn.Module):
    def __init__(self, d=128, classes=91, k=100):
        super().__init__()
        trunk = tvm.resnet18()
        self.backbone = nn.Sequential(*list(trunk.children())[:-2])
        self.proj = nn.Conv2d(512, d, 1)
        layer = nn.TransformerEncoderLayer(d, 4, 256, dropout=0.0, batch_first=True)
        self.encoder = nn.TransformerEncoder(layer, 2, enable_nested_tensor=False)
        self.cls = nn.Linear(d, classes)
        self.box = nn.Sequential(nn.Linear(d, d), nn.ReLU(), nn.Linear(d, 4))
        self.classes, self.k = classes, k

    def forward(self, x):
        f = self.proj(self.backbone(x)).flatten(2).transpose(1, 2)      # [B, HW, d]
        hs = self.encoder(f)
        scores = self.cls(hs).sigmoid().flatten(1)
        top, idx = torch.topk(scores, self.k, dim=1)
        query = torch.div(idx, self.classes, rounding_mode="trunc")
        boxes = self.box(hs).sigmoid()
        picked = torch.gather(boxes, 1, query.unsqueeze(-1).expand(-1, -1, 4))
        return torch.cat([top.unsqueeze(-1), picked], -1)


class GptStep(nn.Module):
    def __init__(self, vocab=1000, d=128, heads=4, layers=4, ctx=64):
        super().__init__()
        self.tok = nn.Embedding(vocab, d)
        self.pos = nn.Embedding(ctx, d)
        self.ln = nn.ModuleList(nn.LayerNorm(d) for _ in range(2 * layers + 1))
        self.qkv = nn.ModuleList(nn.Linear(d, 3 * d) for _ in range(layers))
        self.proj = nn.ModuleList(nn.Linear(d, d) for _ in range(layers))
        self.mlp = nn.ModuleList(nn.Sequential(nn.Linear(d, 4 * d), nn.GELU(), nn.Linear(4 * d, d)) for _ in range(layers))
        self.head = nn.Linear(d, vocab, bias=False)
        self.heads, self.layers = heads, layers

    def forward(self, ids, mask):
        pos = (torch.cumsum(mask, dim=1) - 1).clamp(min=0)
        x = self.tok(ids) + self.pos(pos)
        b, t, d = x.shape
        hd = d // self.heads
        for i in range(self.layers):
            q, k, v = self.qkv[i](self.ln[2 * i](x)).split(d, dim=-1)
            q, k, v = (z.view(b, t, self.heads, hd).transpose(1, 2) for z in (q, k, v))
            s = torch.einsum("bhid,bhjd->bhij", q, k) / hd ** 0.5
            s = s - 1e4 * torch.triu(torch.ones_like(s), diagonal=1) - 1e4 * (1 - mask[:, None, None, :].float())
            a = torch.einsum("bhij,bhjd->bihd", s.softmax(-1), v).reshape(b, t, d)
            x = x + self.proj[i](a)
            x = x + self.mlp[i](self.ln[2 * i + 1](x))
        logits = self.head(self.ln[-1](x))[:, -1]
        return torch.topk(logits, 10, dim=-1)[0]


class Espcn(nn.Module):
    def __init__(self, r=3):
        super().__init__()
        self.body = nn.Sequential(nn.Conv2d(1, 64, 5, padding=2), nn.Tanh(), nn.Conv2d(64, 32, 3, padding=1), nn.Tanh(),
                                  nn.Conv2d(32, r * r, 3, padding=1), nn.PixelShuffle(r))

    def forward(self, x):
        return self.body(x)


class StnClassifier(nn.Module):
    def __init__(self):
        super().__init__()
        self.loc = nn.Sequential(nn.Conv2d(1, 8, 7), nn.MaxPool2d(2), nn.ReLU(), nn.Conv2d(8, 10, 5), nn.MaxPool2d(2),
                                 nn.ReLU(), nn.Flatten(), nn.Linear(10 * 3 * 3, 32), nn.ReLU(), nn.Linear(32, 6))
        nn.init.normal_(self.loc[-1].weight, std=0.02)
        with torch.no_grad():
            self.loc[-1].bias.copy_(torch.tensor([1.0, 0.05, 0.0, -0.05, 1.0, 0.0]))
        self.net = nn.Sequential(nn.Conv2d(1, 10, 5), nn.MaxPool2d(2), nn.ReLU(), nn.Conv2d(10, 20, 5), nn.MaxPool2d(2),
                                 nn.ReLU(), nn.Flatten(), nn.Linear(320, 50), nn.ReLU(), nn.Linear(50, 10))

    def forward(self, x):
        theta = self.loc(x).view(-1, 2, 3)
        # F.affine_grid(theta, x.shape) written out (torch 1.13 cannot export affine_grid_generator):
        # normalized pixel centres [x, y, 1] @ theta^T.
        b, _, h, w = x.shape
        ys = (torch.arange(h, dtype=x.dtype) * 2 + 1) / h - 1
        xs = (torch.arange(w, dtype=x.dtype) * 2 + 1) / w - 1
        base = torch.stack([xs.expand(h, w), ys[:, None].expand(h, w), torch.ones(h, w, dtype=x.dtype)], -1)
        grid = (base.view(1, h * w, 3) @ theta.transpose(1, 2)).view(b, h, w, 2)
        return self.net(F.grid_sample(x, grid, mode="bilinear", padding_mode="zeros", align_corners=False))


class WindowAttention(nn.Module):
    """Swin-style shifted-window attention blocks with a gathered relative-position bias."""

    def __init__(self, d=96, heads=3, win=7, blocks=2):
        super().__init__()
        self.win, self.heads = win, heads
        self.ln = nn.ModuleList(nn.LayerNorm(d) for _ in range(blocks))
        self.qkv = nn.ModuleList(nn.Linear(d, 3 * d) for _ in range(blocks))
        self.proj = nn.ModuleList(nn.Linear(d, d) for _ in range(blocks))
        self.table = nn.Parameter(torch.randn(blocks, (2 * win - 1) ** 2, heads) * 0.02)
        coords = torch.stack(torch.meshgrid(torch.arange(win), torch.arange(win), indexing="ij")).flatten(1)
        rel = (coords[:, :, None] - coords[:, None, :]).permute(1, 2, 0) + (win - 1)
        self.register_buffer("index", rel[..., 0] * (2 * win - 1) + rel[..., 1])
        self.blocks = blocks

    def forward(self, x):                      # [B, H, W, C]
        b, h, w, c = x.shape
        n = self.win
        for i in range(self.blocks):
            shift = (i % 2) * (n // 2)
            y = torch.roll(self.ln[i](x), (-shift, -shift), (1, 2)) if shift else self.ln[i](x)
            y = y.view(b, h // n, n, w // n, n, c).permute(0, 1, 3, 2, 4, 5).reshape(-1, n * n, c)
            q, k, v = self.qkv[i](y).view(-1, n * n, 3, self.heads, c // self.heads).permute(2, 0, 3, 1, 4)
            bias = self.table[i][self.index.view(-1)].view(n * n, n * n, -1).permute(2, 0, 1)
            s = torch.einsum("bhid,bhjd->bhij", q, k) * (c // self.heads) ** -0.5 + bias
            a = torch.einsum("bhij,bhjd->bihd", s.softmax(-1), v).reshape(-1, n * n, c)
            a = self.proj[i](a).view(b, h // n, w // n, n, n, c).permute(0, 1, 3, 2, 4, 5).reshape(b, h, w, c)
            x = x + (torch.roll(a, (shift, shift), (1, 2)) if shift else a)
        return x


def detr():
    return DetrR18().eval(), torch.randn(1, 3, 224, 224)


def gpt_step():
    ids = torch.randint(0, 1000, (2, 48))
    mask = torch.ones(2, 48, dtype=torch.long)
    mask[1, :10] = 0  # left padding
    return GptStep().eval(), {"ids": ids, "mask": mask}


def espcn():
    return Espcn().eval(), torch.randn(1, 1, 96, 128)


def stn():
    return StnClassifier().eval(), torch.randn(4, 1, 28, 28)


def window_attention():
    return WindowAttention().eval(), torch.randn(1, 28, 28, 96)


# name -> (factory, opset, big)
MODELS = {
    "detr_r18_postprocess": (detr, 13, False),
    "gpt_generate_step": (gpt_step, 14, False),
    "espcn_x3": (espcn, 13, False),
    "stn_classifier": (stn, 16, False),
    "swin_window_attention": (window_attention, 13, False),
    # The same architectures at other opsets (TopK/CumSum/Einsum/Trilu/DepthToSpace/GridSample forms).
    "espcn_x3_op11": (espcn, 11, False),
    "detr_r18_postprocess_op11": (detr, 11, False),
    "gpt_generate_step_op17": (gpt_step, 17, False),
    "stn_classifier_op17": (stn, 17, False),
}
