"""Model-sweep entries for the math / activation / normalization ops (issue 12, item 6).

MODELS = {name: (factory, opset, big)} in scripts/heldout-sweep.py's convention: factory() returns
(torch.nn.Module in eval mode, input tensor); every module returns one tensor. Random weights,
fixed seeds (the sweep seeds torch before calling the factory).

- style_transfer*: the fast-neural-style TransformerNet (Johnson et al. 2016, as in
  pytorch/examples/fast_neural_style): reflection-padded convs, InstanceNorm2d(affine), five
  residual blocks, nearest x2 upsampling + conv decoder. Exported at opsets 11, 13 and 17.
- prelu_sr: ESPCN/SRResNet-style super-resolution trunk with PReLU and PixelShuffle-free upsampling.
- groupnorm_unet_block: conv + GroupNorm + SiLU/Mish blocks as in diffusion U-Nets (GroupNorm is
  exported by torch 1.13 as reshape + InstanceNormalization + reshape + mul/add).
- act_zoo_mlp: an MLP through ELU, SELU, CELU, Softplus, Softsign, Mish, Hardshrink, LogSigmoid.

tests/e2e/style_transfer/ uses TransformerNet from here for its ctest (small input).
"""
import torch
import torch.nn as nn
import torch.nn.functional as F


class ConvLayer(nn.Module):
    def __init__(self, cin, cout, kernel, stride):
        super().__init__()
        self.pad = nn.ReflectionPad2d(kernel // 2)
        self.conv = nn.Conv2d(cin, cout, kernel, stride)

    def forward(self, x):
        return self.conv(self.pad(x))


class ResidualBlock(nn.Module):
    def __init__(self, channels):
        super().__init__()
        self.conv1 = ConvLayer(channels, channels, 3, 1)
        self.in1 = nn.InstanceNorm2d(channels, affine=True)
        self.conv2 = ConvLayer(channels, channels, 3, 1)
        self.in2 = nn.InstanceNorm2d(channels, affine=True)

    def forward(self, x):
        y = F.relu(self.in1(self.conv1(x)))
        return self.in2(self.conv2(y)) + x


class UpsampleConvLayer(nn.Module):
    def __init__(self, cin, cout, kernel, stride, upsample=None):
        super().__init__()
        self.upsample = upsample
        self.conv = ConvLayer(cin, cout, kernel, stride)

    def forward(self, x):
        if self.upsample:
            x = F.interpolate(x, mode="nearest", scale_factor=self.upsample)
        return self.conv(x)


class TransformerNet(nn.Module):
    """fast_neural_style's TransformerNet; `width` scales the channel counts (32 in the original)."""

    def __init__(self, width=32, residual_blocks=5):
        super().__init__()
        w = width
        self.conv1, self.in1 = ConvLayer(3, w, 9, 1), nn.InstanceNorm2d(w, affine=True)
        self.conv2, self.in2 = ConvLayer(w, 2 * w, 3, 2), nn.InstanceNorm2d(2 * w, affine=True)
        self.conv3, self.in3 = ConvLayer(2 * w, 4 * w, 3, 2), nn.InstanceNorm2d(4 * w, affine=True)
        self.res = nn.Sequential(*[ResidualBlock(4 * w) for _ in range(residual_blocks)])
        self.deconv1, self.in4 = UpsampleConvLayer(4 * w, 2 * w, 3, 1, 2), nn.InstanceNorm2d(2 * w, affine=True)
        self.deconv2, self.in5 = UpsampleConvLayer(2 * w, w, 3, 1, 2), nn.InstanceNorm2d(w, affine=True)
        self.deconv3 = ConvLayer(w, 3, 9, 1)
        # Non-trivial affine parameters (the defaults are 1 and 0).
        with torch.no_grad():
            for m in self.modules():
                if isinstance(m, nn.InstanceNorm2d):
                    m.weight.uniform_(0.5, 1.5)
                    m.bias.uniform_(-0.2, 0.2)

    def forward(self, x):
        y = F.relu(self.in1(self.conv1(x)))
        y = F.relu(self.in2(self.conv2(y)))
        y = F.relu(self.in3(self.conv3(y)))
        y = self.res(y)
        y = F.relu(self.in4(self.deconv1(y)))
        y = F.relu(self.in5(self.deconv2(y)))
        return self.deconv3(y)


def style_transfer(shape, width=32):
    def make():
        return TransformerNet(width).eval(), torch.rand(*shape) * 255.0
    return make


class PReluSR(nn.Module):
    """SRResNet-like: conv + PReLU trunk, residual blocks with per-channel PReLU, nearest x2 upsampling."""

    def __init__(self, width=32, blocks=4):
        super().__init__()
        self.head = nn.Sequential(nn.Conv2d(3, width, 9, padding=4), nn.PReLU(width))
        self.blocks = nn.ModuleList(
            nn.Sequential(nn.Conv2d(width, width, 3, padding=1), nn.PReLU(width), nn.Conv2d(width, width, 3, padding=1))
            for _ in range(blocks))
        self.up = nn.Sequential(nn.Upsample(scale_factor=2, mode="nearest"), nn.Conv2d(width, width, 3, padding=1),
                                nn.PReLU())
        self.tail = nn.Conv2d(width, 3, 9, padding=4)

    def forward(self, x):
        y = self.head(x)
        for b in self.blocks:
            y = y + b(y)
        return torch.tanh(self.tail(self.up(y)))


class GroupNormBlock(nn.Module):
    def __init__(self, cin, cout, groups, act):
        super().__init__()
        self.norm1, self.conv1 = nn.GroupNorm(groups, cin), nn.Conv2d(cin, cout, 3, padding=1)
        self.norm2, self.conv2 = nn.GroupNorm(groups, cout), nn.Conv2d(cout, cout, 3, padding=1)
        self.skip = nn.Conv2d(cin, cout, 1) if cin != cout else nn.Identity()
        self.act = act
        with torch.no_grad():
            for m in (self.norm1, self.norm2):
                m.weight.uniform_(0.5, 1.5)
                m.bias.uniform_(-0.2, 0.2)

    def forward(self, x):
        h = self.conv1(self.act(self.norm1(x)))
        h = self.conv2(self.act(self.norm2(h)))
        return h + self.skip(x)


class GroupNormUNetBlock(nn.Module):
    def __init__(self):
        super().__init__()
        self.inp = nn.Conv2d(3, 32, 3, padding=1)
        self.b1 = GroupNormBlock(32, 64, 8, F.silu)
        self.down = nn.Conv2d(64, 64, 3, stride=2, padding=1)
        self.b2 = GroupNormBlock(64, 64, 16, F.mish)
        self.out = nn.Sequential(nn.GroupNorm(8, 64), nn.SiLU(), nn.Conv2d(64, 3, 3, padding=1))

    def forward(self, x):
        return self.out(self.b2(self.down(self.b1(self.inp(x)))))


class ActZooMLP(nn.Module):
    def __init__(self):
        super().__init__()
        self.lins = nn.ModuleList(nn.Linear(64, 64) for _ in range(8))
        self.acts = [nn.ELU(0.8), nn.SELU(), nn.CELU(1.3), nn.Softplus(), nn.Softsign(), nn.Mish(), nn.Hardshrink(0.3),
                     nn.LogSigmoid()]

    def forward(self, x):
        for lin, act in zip(self.lins, self.acts):
            x = act(lin(x)) * 2.0
        return x


MODELS = {
    "style_transfer_op11": (style_transfer((1, 3, 224, 224)), 11, False),
    "style_transfer_op13": (style_transfer((1, 3, 256, 256)), 13, True),
    "style_transfer_op17_97x131": (style_transfer((1, 3, 97, 131)), 17, False),
    "prelu_sr_op13": (lambda: (PReluSR().eval(), torch.rand(1, 3, 96, 96)), 13, False),
    "groupnorm_unet_block_op17": (lambda: (GroupNormUNetBlock().eval(), torch.randn(1, 3, 64, 64)), 17, False),
    "act_zoo_mlp_op13": (lambda: (ActZooMLP().eval(), torch.randn(16, 64)), 13, False),
}
