"""Model-sweep entries for control flow (issue 12, item 4): torch.jit.script modules whose ONNX
exports keep If/Loop nodes because their conditions depend on the data (exports with static shapes
fold shape checks and unroll constant loops themselves). Loaded by `scripts/heldout-sweep.py --set
wild`; MODELS = {name: (factory, opset, big)}, factory() -> (scripted module in eval mode, input).
Random weights, fixed seeds."""
import torch
import torchvision


class EarlyExitGRU(torch.nn.Module):
    """A GRU cell stepped over 12 frames whose per-sample state freezes once it has settled (a Loop
    with loop-carried state and mask; the trip count folds at import), followed by a classifier.
    (A `break` in the loop would export as M = INT64_MAX with cond = And(t + 1 < 12, data test):
    Kiln supports that only when And(false, x) folds to false at import.)"""

    def __init__(self, features=40, hidden=64, classes=10, steps=12):
        super().__init__()
        # The GRU cell written out (torch 1.13 cannot export aten::gru_cell inside a scripted loop).
        self.x_gates = torch.nn.Linear(features, 3 * hidden)
        self.h_gates = torch.nn.Linear(hidden, 3 * hidden)
        self.head = torch.nn.Linear(hidden, classes)
        self.hidden = hidden
        self.steps = steps

    def cell(self, x, h):
        xr, xz, xn = self.x_gates(x).chunk(3, 1)
        hr, hz, hn = self.h_gates(h).chunk(3, 1)
        r = torch.sigmoid(xr + hr)
        z = torch.sigmoid(xz + hz)
        n = torch.tanh(xn + r * hn)
        return (1 - z) * n + z * h

    def forward(self, x):  # x: [batch, steps, features]
        h = x.new_zeros(x.shape[0], self.hidden)
        running = x.new_ones(x.shape[0], 1) > 0
        steps = int(x.shape[0]) * 0 + self.steps  # keeps the loop a Loop in the export
        for t in range(steps):
            h_next = self.cell(x[:, t], h)
            running = running & ((h_next - h).abs().amax(1, keepdim=True) > 0.05)
            h = torch.where(running, h_next, h)
        return self.head(h)


class RoutedResNet(torch.nn.Module):
    """ResNet-18 features with two heads chosen by a data-dependent test (dynamic routing -> If with a
    run-time condition: both heads compiled, the output selected with where)."""

    def __init__(self):
        super().__init__()
        net = torchvision.models.resnet18(weights=None)
        net.fc = torch.nn.Identity()
        self.features = net
        self.bright = torch.nn.Linear(512, 100)
        self.dark = torch.nn.Sequential(torch.nn.Linear(512, 256), torch.nn.ReLU(), torch.nn.Linear(256, 100))

    def forward(self, x):
        f = self.features(x)
        if bool(x.mean() > 0.0):
            y = self.bright(f)
        else:
            y = self.dark(f)
        return y


class RefinementLoop(torch.nn.Module):
    """A small conv net that refines its estimate for a fixed number of steps, each step conditioned
    on the step index (a Loop whose body reads outer-scope weights; trip count constant)."""

    def __init__(self, channels=16, steps=4):
        super().__init__()
        self.stem = torch.nn.Conv2d(3, channels, 3, padding=1)
        self.step = torch.nn.Sequential(torch.nn.Conv2d(channels, channels, 3, padding=1), torch.nn.ReLU(),
                                        torch.nn.Conv2d(channels, channels, 3, padding=1))
        self.out = torch.nn.Conv2d(channels, 3, 1)
        self.steps = steps

    def forward(self, x):
        h = torch.relu(self.stem(x))
        n = int(x.shape[0]) * 0 + self.steps  # keeps the loop a Loop in the export
        for i in range(n):
            h = h + self.step(h) * (1.0 / (i + 1))
        return self.out(h)


def _early_exit_gru():
    torch.manual_seed(0)
    return torch.jit.script(EarlyExitGRU().eval()), torch.randn(2, 12, 40)


def _routed_resnet():
    torch.manual_seed(0)
    return torch.jit.script(RoutedResNet().eval()), torch.randn(1, 3, 96, 96)


def _refinement_loop():
    torch.manual_seed(0)
    return torch.jit.script(RefinementLoop().eval()), torch.randn(1, 3, 32, 32)


MODELS = {
    "ctrl_early_exit_gru": (_early_exit_gru, 13, False),
    "ctrl_routed_resnet18": (_routed_resnet, 13, False),
    "ctrl_refinement_loop": (_refinement_loop, 13, False),
}
