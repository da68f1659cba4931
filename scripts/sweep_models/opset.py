"""Sweep models exported at old opsets (7, 9, 10): the forms older PyTorch/Caffe2-era exporters and
today's torch.onnx at opset_version < 11 write (Upsample-7/9 and Resize-10, Slice-1 in shape
subgraphs, Clip-6 with attribute bounds, Pad-2, BatchNormalization-7, Dropout-7/10, MaxPool
ceil_mode at 10).

MODELS = {name: (factory, opset, big)}, the convention of scripts/heldout-sweep.py: factory()
returns (module in eval mode, input tensor); the module returns one tensor. Random weights, fixed
seeds (the sweep seeds torch before calling the factory); batch-norm statistics re-estimated on
random inputs so outputs are neither tiny nor huge. Upsampling is nearest: at opsets < 11 ONNX's
linear Upsample uses asymmetric coordinates, which is not what PyTorch's bilinear computes, so a
bilinear model exported there does not match PyTorch in any runtime.
"""
import torch
import torch.nn as nn
import torchvision.models as tvm
from torchvision.models.detection.backbone_utils import resnet_fpn_backbone


def _recalibrate(model, shape):
    bns = [m for m in model.modules() if isinstance(m, nn.modules.batchnorm._BatchNorm)]
    for m in bns:
        m.reset_running_stats()
        m.momentum = None
    if bns:
        model.train()
        with torch.no_grad():
            model(torch.randn(max(2, shape[0]), *shape[1:]))
    return model.eval()


def _vision(ctor, shape, **kwargs):
    def make():
        return _recalibrate(ctor(weights=None, **kwargs), shape), torch.randn(*shape)
    return make


class FpnLevels(nn.Module):
    """torchvision's ResNet-FPN detector backbone (FeaturePyramidNetwork: lateral 1x1 convs,
    top-down nearest interpolation to each lateral's size, 3x3 output convs, LastLevelMaxPool);
    the five levels are returned as one tensor: each level averaged, plus the finest pooled 8x8."""

    def __init__(self, backbone):
        super().__init__()
        self.backbone = backbone

    def forward(self, x):
        levels = self.backbone(x)
        pooled = [nn.functional.adaptive_avg_pool2d(v, 1).flatten(1) for v in levels.values()]
        return torch.cat(pooled + [nn.functional.avg_pool2d(levels["0"], 8).flatten(1)], 1)


def _fpn(arch, shape):
    def make():
        backbone = resnet_fpn_backbone(backbone_name=arch, weights=None, trainable_layers=5)
        return _recalibrate(FpnLevels(backbone), shape), torch.randn(*shape)
    return make


class UpsampleSegmenter(nn.Module):
    """A small encoder-decoder segmentation net (U-Net style skips) with nn.Upsample(nearest) and
    dropout before the classifier."""

    def __init__(self, classes=5):
        super().__init__()

        def block(i, o):
            return nn.Sequential(nn.Conv2d(i, o, 3, padding=1), nn.BatchNorm2d(o), nn.ReLU(inplace=True))

        self.e1, self.e2, self.e3 = block(3, 16), block(16, 32), block(32, 64)
        self.pool = nn.MaxPool2d(2)
        self.up = nn.Upsample(scale_factor=2, mode="nearest")
        self.d2, self.d1 = block(64 + 32, 32), block(32 + 16, 16)
        self.drop = nn.Dropout(0.1)
        self.head = nn.Conv2d(16, classes, 1)

    def forward(self, x):
        e1 = self.e1(x)
        e2 = self.e2(self.pool(e1))
        e3 = self.e3(self.pool(e2))
        d2 = self.d2(torch.cat([self.up(e3), e2], 1))
        d1 = self.d1(torch.cat([self.up(d2), e1], 1))
        return self.head(self.drop(d1))


def _segmenter(shape):
    def make():
        return _recalibrate(UpsampleSegmenter(), shape), torch.randn(*shape)
    return make


MODELS = {
    "resnet18_opset7": (_vision(tvm.resnet18, (1, 3, 224, 224)), 7, False),
    "resnet18_opset9": (_vision(tvm.resnet18, (1, 3, 224, 224)), 9, False),
    "mobilenet_v2_opset9": (_vision(tvm.mobilenet_v2, (1, 3, 224, 224)), 9, False),
    "mobilenet_v3_small_opset9": (_vision(tvm.mobilenet_v3_small, (1, 3, 224, 224)), 9, False),
    "densenet121_opset7": (_vision(tvm.densenet121, (1, 3, 224, 224)), 7, False),
    "squeezenet1_1_opset10": (_vision(tvm.squeezenet1_1, (1, 3, 224, 224)), 10, False),
    "googlenet_opset10": (_vision(tvm.googlenet, (1, 3, 224, 224), aux_logits=False, init_weights=True), 10, False),
    "resnet18_fpn_opset9": (_fpn("resnet18", (1, 3, 256, 256)), 9, False),
    "resnet18_fpn_opset10": (_fpn("resnet18", (1, 3, 256, 256)), 10, False),
    "unet_upsample_opset9": (_segmenter((1, 3, 128, 128)), 9, False),
    "unet_upsample_opset10": (_segmenter((1, 3, 128, 128)), 10, False),
}
