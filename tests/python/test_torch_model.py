"""A small CNN exported from PyTorch (torch.onnx.export), compiled from Python and compared with
PyTorch's output: max|kiln - torch| / max|torch| <= 1e-4, as the C++ model tests check. ResNet-50
itself: examples/python/classify.py --model resnet50 --check (minutes to compile here)."""
import io

import numpy as np
import pytest

import kiln

torch = pytest.importorskip("torch", reason="torch is not installed: no PyTorch-exported model to test")


class SmallNet(torch.nn.Module):
    def __init__(self):
        super().__init__()
        self.conv1 = torch.nn.Conv2d(3, 8, 3, padding=1)
        self.bn1 = torch.nn.BatchNorm2d(8)
        self.conv2 = torch.nn.Conv2d(8, 8, 3, padding=1, groups=2)
        self.fc = torch.nn.Linear(8, 10)

    def forward(self, x):
        y = torch.relu(self.bn1(self.conv1(x)))
        y = torch.relu(self.conv2(y)) + y
        y = torch.nn.functional.adaptive_avg_pool2d(y, 1).flatten(1)
        return torch.softmax(self.fc(y), dim=1)


def test_small_cnn_matches_pytorch():
    torch.manual_seed(0)
    net = SmallNet().eval()
    with torch.no_grad():
        net.bn1.running_mean.uniform_(-0.5, 0.5)
        net.bn1.running_var.uniform_(0.5, 1.5)
    x = torch.randn(2, 3, 16, 16)
    buf = io.BytesIO()
    torch.onnx.export(net, x, buf, input_names=["image"], output_names=["probs"], opset_version=13)
    module = kiln.compile(buf.getvalue()).load()
    with torch.no_grad():
        ref = net(x).numpy()
    got = module.run({"image": x})["probs"]  # a torch tensor in, through DLPack
    assert got.shape == (2, 10)
    assert np.abs(got - ref).max() / np.abs(ref).max() <= 1e-4
