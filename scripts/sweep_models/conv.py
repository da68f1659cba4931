"""Model sweep, convolution family: ConvTranspose decoders/GANs/U-Nets, 1-D conv audio nets (Wav2Letter,
wav2vec2 feature encoder, QuartzNet, MelGAN), 3-D conv
video nets, an FCN-style segmentation head (issue 12, item 2).

Convention of scripts/heldout-sweep.py: MODELS = {name: (factory, opset, big)}; factory() returns
(torch.nn.Module in eval mode, input tensor); each module returns ONE tensor. Random weights, fixed
seeds (the sweep seeds torch before calling a factory), batch norms re-estimated on random batches.

The same architectures at small sizes (SMALL_MODELS, same convention) are the ctest whole-model
cases: scripts/gen_conv_models.py exports them, tests/e2e/conv_models_e2e.cc compiles and runs them.
"""
import torch
import torch.nn as nn
import torch.nn.functional as F


def recalibrate_batch_norms(model, x, batches=2):
    """Running statistics re-estimated on random inputs shaped like x (so activations stay O(1))."""
    bns = [m for m in model.modules() if isinstance(m, nn.modules.batchnorm._BatchNorm)]
    for m in bns:
        m.reset_running_stats()
        m.momentum = None
    if bns:
        model.train()
        with torch.no_grad():
            for _ in range(batches):
                model(torch.randn(max(2, x.shape[0]), *x.shape[1:]))
    model.eval()
    return model


# ---- ConvTranspose: DCGAN generator, U-Net, FCN head, MelGAN-style vocoder ----

class DCGANGenerator(nn.Module):
    """The DCGAN generator (Radford et al.; PyTorch's dcgan example): z [N, nz, 1, 1] -> image [N, nc, 4*2^k]."""

    def __init__(self, nz=100, ngf=64, nc=3, ups=4):
        super().__init__()
        layers = [nn.ConvTranspose2d(nz, ngf * 2 ** (ups - 1), 4, 1, 0, bias=False),
                  nn.BatchNorm2d(ngf * 2 ** (ups - 1)), nn.ReLU(True)]
        for i in range(ups - 1, 0, -1):
            layers += [nn.ConvTranspose2d(ngf * 2 ** i, ngf * 2 ** (i - 1), 4, 2, 1, bias=False),
                       nn.BatchNorm2d(ngf * 2 ** (i - 1)), nn.ReLU(True)]
        layers += [nn.ConvTranspose2d(ngf, nc, 4, 2, 1, bias=False), nn.Tanh()]
        self.main = nn.Sequential(*layers)

    def forward(self, z):
        return self.main(z)


class UNet(nn.Module):
    """U-Net (Ronneberger et al.): double 3x3 conv blocks, max-pool down, 2x2 stride-2 ConvTranspose up,
    skip concatenation, 1x1 head."""

    def __init__(self, in_ch=3, classes=2, base=16, depth=3):
        super().__init__()

        def block(i, o):
            return nn.Sequential(nn.Conv2d(i, o, 3, padding=1, bias=False), nn.BatchNorm2d(o), nn.ReLU(True),
                                 nn.Conv2d(o, o, 3, padding=1, bias=False), nn.BatchNorm2d(o), nn.ReLU(True))
        chans = [base * 2 ** i for i in range(depth + 1)]
        self.downs = nn.ModuleList([block(in_ch if i == 0 else chans[i - 1], chans[i]) for i in range(depth)])
        self.bottom = block(chans[depth - 1], chans[depth])
        self.ups = nn.ModuleList([nn.ConvTranspose2d(chans[i + 1], chans[i], 2, stride=2) for i in reversed(range(depth))])
        self.up_blocks = nn.ModuleList([block(2 * chans[i], chans[i]) for i in reversed(range(depth))])
        self.head = nn.Conv2d(chans[0], classes, 1)

    def forward(self, x):
        skips = []
        for d in self.downs:
            x = d(x)
            skips.append(x)
            x = F.max_pool2d(x, 2)
        x = self.bottom(x)
        for up, blk, skip in zip(self.ups, self.up_blocks, reversed(skips)):
            x = blk(torch.cat([up(x), skip], 1))
        return self.head(x)


class FCNHead(nn.Module):
    """FCN-style segmentation: a small strided backbone, a conv head, and the learned upsampling of
    FCN-8s/32s: a grouped (per-class) ConvTranspose2d with kernel 2s, stride s, padding s/2."""

    def __init__(self, classes=8, width=32):
        super().__init__()
        self.backbone = nn.Sequential(
            nn.Conv2d(3, width, 3, 2, 1), nn.BatchNorm2d(width), nn.ReLU(True),
            nn.Conv2d(width, 2 * width, 3, 2, 1), nn.BatchNorm2d(2 * width), nn.ReLU(True),
            nn.Conv2d(2 * width, 4 * width, 3, 2, 1), nn.BatchNorm2d(4 * width), nn.ReLU(True))
        self.head = nn.Sequential(nn.Conv2d(4 * width, width, 3, padding=1, bias=False), nn.BatchNorm2d(width),
                                  nn.ReLU(True), nn.Dropout(0.1), nn.Conv2d(width, classes, 1))
        self.up = nn.ConvTranspose2d(classes, classes, 16, stride=8, padding=4, groups=classes, bias=False)

    def forward(self, x):
        return self.up(self.head(self.backbone(x)))


class MelGANGenerator(nn.Module):
    """MelGAN-style vocoder: mel [N, 80, T] -> waveform [N, 1, T * prod(ratios)]: reflection-padded
    convs, ConvTranspose1d upsampling (kernel 2r, stride r), dilated residual stacks."""

    def __init__(self, mels=80, ngf=32, ratios=(8, 8, 2, 2)):
        super().__init__()
        mult = 2 ** len(ratios)
        layers = [nn.ReflectionPad1d(3), nn.Conv1d(mels, mult * ngf, 7)]
        for r in ratios:
            layers += [nn.LeakyReLU(0.2),
                       nn.ConvTranspose1d(mult * ngf, mult * ngf // 2, 2 * r, stride=r, padding=r // 2 + r % 2,
                                          output_padding=r % 2)]
            mult //= 2
            for d in (1, 3, 9):
                layers.append(MelGANResidual(mult * ngf, d))
        layers += [nn.LeakyReLU(0.2), nn.ReflectionPad1d(3), nn.Conv1d(ngf, 1, 7), nn.Tanh()]
        self.model = nn.Sequential(*layers)

    def forward(self, x):
        return self.model(x)


class MelGANResidual(nn.Module):
    def __init__(self, ch, dilation):
        super().__init__()
        self.block = nn.Sequential(nn.LeakyReLU(0.2), nn.ReflectionPad1d(dilation), nn.Conv1d(ch, ch, 3, dilation=dilation),
                                   nn.LeakyReLU(0.2), nn.Conv1d(ch, ch, 1))
        self.shortcut = nn.Conv1d(ch, ch, 1)

    def forward(self, x):
        return self.shortcut(x) + self.block(x)


# ---- 1-D convolutions: Wav2Letter, wav2vec2's feature extractor, a pooled Conv1d stack ----

class Wav2Letter(nn.Module):
    """torchaudio.models.Wav2Letter (waveform input), written out (torchaudio is not installed here)."""

    def __init__(self, num_classes=40, width=250, wide=2000):
        super().__init__()
        layers = [nn.Conv1d(1, width, 250, stride=160, padding=45), nn.ReLU(True),
                  nn.Conv1d(width, width, 48, stride=2, padding=23), nn.ReLU(True)]
        for _ in range(7):
            layers += [nn.Conv1d(width, width, 7, padding=3), nn.ReLU(True)]
        layers += [nn.Conv1d(width, wide, 32, padding=16), nn.ReLU(True),
                   nn.Conv1d(wide, wide, 1), nn.ReLU(True), nn.Conv1d(wide, num_classes, 1)]
        self.acoustic_model = nn.Sequential(*layers)

    def forward(self, x):
        return F.log_softmax(self.acoustic_model(x), dim=1)


class Wav2Vec2FeatureExtractor(nn.Module):
    """wav2vec 2.0's convolutional feature encoder ("layer_norm" variant): 7 Conv1d layers
    (kernels 10,3,3,3,3,2,2; strides 5,2,2,2,2,2,2), LayerNorm over channels, GELU; then the
    feature projection."""

    def __init__(self, dim=512, kernels=(10, 3, 3, 3, 3, 2, 2), strides=(5, 2, 2, 2, 2, 2, 2), embed=768):
        super().__init__()
        self.convs = nn.ModuleList()
        self.norms = nn.ModuleList()
        for i, (k, s) in enumerate(zip(kernels, strides)):
            self.convs.append(nn.Conv1d(1 if i == 0 else dim, dim, k, stride=s, bias=True))
            self.norms.append(nn.LayerNorm(dim))
        self.proj = nn.Linear(dim, embed)

    def forward(self, x):
        for conv, norm in zip(self.convs, self.norms):
            x = F.gelu(norm(conv(x).transpose(1, 2)).transpose(1, 2))
        return self.proj(x.transpose(1, 2))


class Conv1dStack(nn.Module):
    """A keyword-spotting / speech-command style 1-D CNN: Conv1d+BN+ReLU blocks with max/avg pooling,
    a grouped and a dilated layer, global average pooling, linear classifier."""

    def __init__(self, in_ch=40, width=128, classes=12):
        super().__init__()
        self.features = nn.Sequential(
            nn.Conv1d(in_ch, width, 5, padding=2), nn.BatchNorm1d(width), nn.ReLU(True), nn.MaxPool1d(3, 2, 1),
            nn.Conv1d(width, width, 3, padding=2, dilation=2), nn.BatchNorm1d(width), nn.ReLU(True),
            nn.Conv1d(width, 2 * width, 3, padding=1, groups=4), nn.BatchNorm1d(2 * width), nn.ReLU(True),
            nn.AvgPool1d(3, 2, 1, count_include_pad=False),
            nn.Conv1d(2 * width, 2 * width, 9, stride=2, padding=4), nn.BatchNorm1d(2 * width), nn.ReLU(True))
        self.fc = nn.Linear(2 * width, classes)

    def forward(self, x):
        return self.fc(self.features(x).mean(-1))


class QuartzNet(nn.Module):
    """QuartzNet-style ASR encoder (Kriman et al.; NVIDIA NeMo's 5x5 layout, fewer repeats): time-channel
    separable Conv1d blocks (depthwise Conv1d with long kernels, pointwise Conv1d, BatchNorm, ReLU,
    residual pointwise+BN), a strided prologue, a dilated epilogue and a pointwise CTC head."""

    def __init__(self, mels=64, classes=29, blocks=((256, 33), (256, 39), (512, 51), (512, 63), (512, 75)), repeats=2):
        super().__init__()

        def sep(i, o, k, stride=1, dilation=1):
            return [nn.Conv1d(i, i, k, stride=stride, padding=dilation * (k // 2), dilation=dilation, groups=i, bias=False),
                    nn.Conv1d(i, o, 1, bias=False), nn.BatchNorm1d(o)]
        self.prologue = nn.Sequential(*sep(mels, 256, 33, stride=2), nn.ReLU(True))
        self.blocks = nn.ModuleList()
        self.residuals = nn.ModuleList()
        ch = 256
        for out, k in blocks:
            layers = []
            for r in range(repeats):
                layers += sep(ch if r == 0 else out, out, k)
                if r < repeats - 1:
                    layers.append(nn.ReLU(True))
            self.blocks.append(nn.Sequential(*layers))
            self.residuals.append(nn.Sequential(nn.Conv1d(ch, out, 1, bias=False), nn.BatchNorm1d(out)))
            ch = out
        self.epilogue = nn.Sequential(*sep(ch, 512, 87, dilation=2), nn.ReLU(True),
                                      nn.Conv1d(512, 1024, 1, bias=False), nn.BatchNorm1d(1024), nn.ReLU(True))
        self.head = nn.Conv1d(1024, classes, 1)

    def forward(self, x):
        x = self.prologue(x)
        for block, res in zip(self.blocks, self.residuals):
            x = F.relu(block(x) + res(x))
        return self.head(self.epilogue(x))


# ---- 3-D convolutions: torchvision's video ResNets, a small 3-D encoder-decoder ----

def video(name, shape):
    def make():
        import torchvision.models.video as tvv
        model = getattr(tvv, name)(weights=None)
        x = torch.randn(*shape)
        return recalibrate_batch_norms(model, x), x
    return make


class Tiny3d(nn.Module):
    """A small 3-D encoder-decoder: Conv3d stem (3x7x7, stride 1x2x2), BN3d, MaxPool3d, a residual
    3x3x3 block, a (2+1)-D factorized conv, AvgPool3d (ceil_mode), ConvTranspose3d up, 1x1x1 head."""

    def __init__(self, width=16, classes=4):
        super().__init__()
        w = width
        self.stem = nn.Sequential(nn.Conv3d(3, w, (3, 7, 7), (1, 2, 2), (1, 3, 3), bias=False), nn.BatchNorm3d(w), nn.ReLU(True),
                                  nn.MaxPool3d((1, 3, 3), (1, 2, 2), (0, 1, 1)))
        self.res = nn.Sequential(nn.Conv3d(w, w, 3, padding=1, bias=False), nn.BatchNorm3d(w), nn.ReLU(True),
                                 nn.Conv3d(w, w, 3, padding=1, bias=False), nn.BatchNorm3d(w))
        self.factor = nn.Sequential(nn.Conv3d(w, 2 * w, (1, 3, 3), (1, 2, 2), (0, 1, 1)), nn.ReLU(True),
                                    nn.Conv3d(2 * w, 2 * w, (3, 1, 1), (2, 1, 1), (1, 0, 0), dilation=(1, 1, 1)), nn.ReLU(True))
        self.pool = nn.AvgPool3d(2, 1, ceil_mode=True)
        self.up = nn.ConvTranspose3d(2 * w, w, (2, 4, 4), (2, 2, 2), (0, 1, 1))
        self.head = nn.Conv3d(w, classes, 1)

    def forward(self, x):
        x = self.stem(x)
        x = F.relu(x + self.res(x))
        x = self.pool(self.factor(x))
        return self.head(F.relu(self.up(x)))


def module(ctor, shape, **kwargs):
    def make():
        model = ctor(**kwargs)
        x = torch.randn(*shape)
        return recalibrate_batch_norms(model, x), x
    return make


# name -> (factory, opset, big)
MODELS = {
    "dcgan_generator_64": (module(DCGANGenerator, (1, 100, 1, 1)), 13, False),
    "unet_128": (module(UNet, (1, 3, 128, 128), base=32, depth=4), 13, False),
    "fcn_head_grouped_up_160": (module(FCNHead, (1, 3, 160, 160), classes=21, width=64), 11, False),
    "melgan_generator": (module(MelGANGenerator, (1, 80, 32)), 13, False),
    "wav2letter_1s": (module(Wav2Letter, (1, 1, 16000)), 13, False),
    "wav2vec2_feature_extractor": (module(Wav2Vec2FeatureExtractor, (1, 1, 16000)), 17, False),
    "conv1d_kws_stack": (module(Conv1dStack, (2, 40, 101)), 11, False),
    "quartznet_5x2_256": (module(QuartzNet, (1, 64, 256)), 13, False),
    "r3d_18_8x56": (video("r3d_18", (1, 3, 8, 56, 56)), 13, False),
    "mc3_18_8x56": (video("mc3_18", (1, 3, 8, 56, 56)), 13, False),
    "r2plus1d_18_8x56": (video("r2plus1d_18", (1, 3, 8, 56, 56)), 13, False),
    "r3d_18_16x112": (video("r3d_18", (1, 3, 16, 112, 112)), 13, True),
    "tiny3d_encoder_decoder": (module(Tiny3d, (1, 3, 8, 64, 64), width=24), 17, False),
}

# Small versions for ctest (seconds each): name -> (factory, opset, big=False).
SMALL_MODELS = {
    "dcgan_small": (module(DCGANGenerator, (2, 16, 1, 1), nz=16, ngf=8, ups=3), 13, False),
    "unet_small": (module(UNet, (1, 3, 32, 48), base=8, depth=2), 13, False),
    "fcn_head_small": (module(FCNHead, (1, 3, 64, 64), classes=5, width=8), 11, False),
    "melgan_small": (module(MelGANGenerator, (1, 16, 10), mels=16, ngf=4, ratios=(4, 3)), 13, False),
    "conv1d_stack_small": (module(Conv1dStack, (2, 8, 50), in_ch=8, width=16, classes=5), 11, False),
    "wav2vec2_fe_small": (module(Wav2Vec2FeatureExtractor, (1, 1, 1600), dim=32, embed=24), 17, False),
    "tiny3d_small": (module(Tiny3d, (1, 3, 4, 32, 32), width=8), 17, False),
}
