"""Fixture of the quantization tests (tests/driver/quantize_test.cc, scripts/int8-check.py).

Writes into OUT_DIR:
  digits.onnx             a small CNN (conv/relu, residual add, max-pool, gemm) TRAINED here on
                          scikit-learn's digits (8x8 images, 10 classes), opset 13, symbolic batch
  digits_calib.npy        f32 [500, 1, 8, 8]: training images (the calibration set)
  digits_test_x.npy       f32 [N, 1, 8, 8]: held-out test images;  digits_test_y.npy: int64 labels
  digits_f32_accuracy.txt PyTorch's f32 test accuracy (percent)
  mlp.onnx                a 2-layer MLP on [1, 4, 16] (MatMul + Add, Gemm-free), for --dynamic
  mlp_calib.npy           f32 [16, 4, 16]
  invres_relu.onnx        a MobileNetV2-like net (stem, two inverted-residual blocks with a depthwise
  invres_relu6.onnx       conv, 1x1 head, pooling, linear) on [1, 3, 32, 32], ReLU resp. ReLU6 (Clip),
                          random weights with batch norms of widely spread per-channel scales (folded
                          into the convs on export, as in trained models): the cross-layer
                          equalization and bias correction cases
  invres_calib.npy        f32 [32, 3, 32, 32] calibration inputs; invres_test.npy f32 [8, 3, 32, 32]
Seeds are fixed; training takes a few seconds on one core.
"""
import os
import sys

import numpy as np
import torch
from sklearn.datasets import load_digits


class DigitsNet(torch.nn.Module):
    def __init__(self):
        super().__init__()
        self.conv1 = torch.nn.Conv2d(1, 16, 3, padding=1)
        self.conv2 = torch.nn.Conv2d(16, 16, 3, padding=1)
        self.conv3 = torch.nn.Conv2d(16, 32, 3, padding=1)
        self.fc1 = torch.nn.Linear(32 * 4 * 4, 64)
        self.fc2 = torch.nn.Linear(64, 10)

    def forward(self, x):
        a = torch.relu(self.conv1(x))
        b = torch.relu(self.conv2(a) + a)
        b = torch.nn.functional.max_pool2d(b, 2)
        c = torch.relu(self.conv3(b))
        return self.fc2(torch.relu(self.fc1(torch.flatten(c, 1))))


class Mlp(torch.nn.Module):
    def __init__(self):
        super().__init__()
        self.l1 = torch.nn.Linear(16, 32)
        self.l2 = torch.nn.Linear(32, 8)

    def forward(self, x):
        return self.l2(torch.nn.functional.gelu(self.l1(x)))


class InvertedResidualNet(torch.nn.Module):
    def __init__(self, act):
        super().__init__()
        nn = torch.nn

        def cba(cin, cout, k, stride=1, groups=1, with_act=True):
            layers = [nn.Conv2d(cin, cout, k, stride, k // 2, groups=groups, bias=False), nn.BatchNorm2d(cout)]
            return nn.Sequential(*(layers + ([act()] if with_act else [])))

        self.stem = cba(3, 16, 3, 2)
        self.blocks = nn.ModuleList([
            nn.Sequential(cba(16, 64, 1), cba(64, 64, 3, groups=64), cba(64, 16, 1, with_act=False)) for _ in range(2)])
        self.head = cba(16, 32, 1)
        self.fc = nn.Linear(32, 10)
        g = torch.Generator().manual_seed(3)
        for m in self.modules():
            if isinstance(m, nn.BatchNorm2d):  # per-channel scales spread over ~2 decades, as after training
                c = m.num_features
                m.weight.data = torch.exp(torch.randn(c, generator=g))
                m.bias.data = 0.5 * torch.randn(c, generator=g)
                m.running_mean.data = 0.2 * torch.randn(c, generator=g)
                m.running_var.data = torch.exp(torch.randn(c, generator=g))

    def forward(self, x):
        x = self.stem(x)
        for b in self.blocks:
            x = x + b(x)
        x = self.head(x).mean(dim=(2, 3))
        return self.fc(x)


def main(out):
    os.makedirs(out, exist_ok=True)
    torch.manual_seed(0)
    np.random.seed(0)
    torch.set_num_threads(1)
    digits = load_digits()
    x = (digits.images / 16.0).astype(np.float32)[:, None]
    y = digits.target.astype(np.int64)
    perm = np.random.RandomState(0).permutation(len(x))
    x, y = x[perm], y[perm]
    n_train = 1400
    xtr, ytr, xte, yte = x[:n_train], y[:n_train], x[n_train:], y[n_train:]
    model = DigitsNet()
    opt = torch.optim.Adam(model.parameters(), lr=2e-3)
    xt, yt = torch.from_numpy(xtr), torch.from_numpy(ytr)
    for epoch in range(25):
        order = torch.randperm(n_train)
        for i in range(0, n_train, 64):
            idx = order[i:i + 64]
            opt.zero_grad()
            loss = torch.nn.functional.cross_entropy(model(xt[idx]), yt[idx])
            loss.backward()
            opt.step()
    model.eval()
    with torch.no_grad():
        acc = float((model(torch.from_numpy(xte)).argmax(1).numpy() == yte).mean() * 100)
    torch.onnx.export(model, torch.zeros(1, 1, 8, 8), os.path.join(out, "digits.onnx"), input_names=["image"],
                      output_names=["logits"], opset_version=13, do_constant_folding=True,
                      dynamic_axes={"image": {0: "batch"}, "logits": {0: "batch"}})
    np.save(os.path.join(out, "digits_calib.npy"), xtr[:500])
    np.save(os.path.join(out, "digits_test_x.npy"), xte)
    np.save(os.path.join(out, "digits_test_y.npy"), yte)
    with open(os.path.join(out, "digits_f32_accuracy.txt"), "w") as f:
        f.write("%.4f\n" % acc)
    mlp = Mlp().eval()
    torch.onnx.export(mlp, torch.zeros(1, 4, 16), os.path.join(out, "mlp.onnx"), input_names=["x"], output_names=["y"],
                      opset_version=13, do_constant_folding=True)
    np.save(os.path.join(out, "mlp_calib.npy"), np.random.RandomState(1).randn(16, 4, 16).astype(np.float32))
    for name, act in (("invres_relu", torch.nn.ReLU), ("invres_relu6", torch.nn.ReLU6)):
        torch.manual_seed(4)
        net = InvertedResidualNet(act).eval()
        torch.onnx.export(net, torch.zeros(1, 3, 32, 32), os.path.join(out, name + ".onnx"), input_names=["input"],
                          output_names=["output"], opset_version=13, do_constant_folding=True)
    rng = np.random.RandomState(5)
    np.save(os.path.join(out, "invres_calib.npy"), rng.randn(32, 3, 32, 32).astype(np.float32))
    np.save(os.path.join(out, "invres_test.npy"), rng.randn(8, 3, 32, 32).astype(np.float32))
    print("digits: f32 test accuracy %.2f%% on %d images" % (acc, len(xte)))


if __name__ == "__main__":
    main(sys.argv[1])
