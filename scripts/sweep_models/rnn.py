#!/usr/bin/python3
"""Recurrent models for the issue-12 model sweep (LSTM/GRU/RNN text and speech models).

MODELS = {name: (factory, opset, big)} in scripts/heldout-sweep.py's convention: factory() returns
(torch.nn.Module in eval mode, input tensor); the module returns one tensor. Random weights, fixed
seeds. Run alone (`/usr/bin/python3 scripts/sweep_models/rnn.py [--only NAME ...] [--big]`) it
exports each model, compiles it with `kiln compile`, runs it with `kiln run` and prints the
relative error against PyTorch (max |kiln - torch| / max |torch|) and the compile time.
"""
import os
import subprocess
import sys
import time

import torch
import torch.nn as nn


class LastStep(nn.Module):
    """Runs a recurrent stack and returns its full output sequence."""

    def __init__(self, rnn):
        super().__init__()
        self.rnn = rnn

    def forward(self, x):
        return self.rnn(x)[0]


class TextClassifier(nn.Module):
    """Embedding -> (bi)LSTM -> Linear on the last hidden states (sentiment/intent classifiers)."""

    def __init__(self, vocab, emb, hidden, layers, classes, bidirectional=False):
        super().__init__()
        self.emb = nn.Embedding(vocab, emb)
        self.lstm = nn.LSTM(emb, hidden, num_layers=layers, batch_first=True, bidirectional=bidirectional)
        self.fc = nn.Linear(hidden * (2 if bidirectional else 1), classes)

    def forward(self, tokens):
        y, _ = self.lstm(self.emb(tokens))
        return self.fc(y[:, -1])


class Tagger(nn.Module):
    """Embedding -> biGRU -> per-token Linear (NER / POS tagging)."""

    def __init__(self, vocab=5000, emb=100, hidden=128, tags=17):
        super().__init__()
        self.emb = nn.Embedding(vocab, emb)
        self.gru = nn.GRU(emb, hidden, num_layers=2, batch_first=True, bidirectional=True)
        self.fc = nn.Linear(2 * hidden, tags)

    def forward(self, tokens):
        return self.fc(self.gru(self.emb(tokens))[0])


class DeepSpeech(nn.Module):
    """DeepSpeech (Hannun et al. 2014), laid out as torchaudio.models.DeepSpeech: three clipped-ReLU
    dense layers per frame, a bidirectional ReLU RNN with the directions summed, a dense layer and
    per-frame log-probabilities. (torchaudio is not installed here, so the class is spelled out.)"""

    def __init__(self, feats=80, hidden=512, classes=29):
        super().__init__()
        self.hidden = hidden
        self.fc = nn.Sequential(nn.Linear(feats, hidden), nn.Hardtanh(0, 20), nn.Linear(hidden, hidden),
                                nn.Hardtanh(0, 20), nn.Linear(hidden, hidden), nn.Hardtanh(0, 20))
        self.rnn = nn.RNN(hidden, hidden, nonlinearity="relu", bidirectional=True)
        self.fc4 = nn.Sequential(nn.Linear(hidden, hidden), nn.Hardtanh(0, 20))
        self.out = nn.Linear(hidden, classes)

    def forward(self, x):  # [N, T, feats]
        y, _ = self.rnn(self.fc(x).transpose(0, 1))
        y = y[:, :, :self.hidden] + y[:, :, self.hidden:]
        return self.out(self.fc4(y)).log_softmax(-1).transpose(0, 1)


class ConvGruSpeech(nn.Module):
    """Conv1d front end -> GRU stack -> CTC head (small keyword-spotting / ASR models)."""

    def __init__(self, feats=40, channels=128, hidden=128, classes=30):
        super().__init__()
        self.conv = nn.Sequential(nn.Conv1d(feats, channels, 5, stride=2, padding=2), nn.BatchNorm1d(channels),
                                  nn.ReLU())
        self.gru = nn.GRU(channels, hidden, num_layers=2, bidirectional=True)
        self.fc = nn.Linear(2 * hidden, classes)

    def forward(self, x):  # [N, feats, frames]
        y, _ = self.gru(self.conv(x).permute(2, 0, 1))
        return self.fc(y).log_softmax(-1)


def seeded(make):
    def factory():
        torch.manual_seed(0)
        model, x = make()
        return model.eval(), x
    return factory


MODELS = {
    "lstm_text_classifier": (seeded(lambda: (TextClassifier(20000, 128, 256, 2, 4),
                                             torch.randint(0, 20000, (1, 100)))), 13, False),
    "bilstm_text_classifier_op11": (seeded(lambda: (TextClassifier(10000, 64, 128, 1, 3, bidirectional=True),
                                                    torch.randint(0, 10000, (2, 50)))), 11, False),
    "lstm_text_classifier_op17": (seeded(lambda: (TextClassifier(5000, 64, 96, 2, 6),
                                                  torch.randint(0, 5000, (1, 40)))), 17, False),
    "gru_tagger": (seeded(lambda: (Tagger(), torch.randint(0, 5000, (1, 60)))), 13, False),
    "rnn_tanh_stack_op11": (seeded(lambda: (LastStep(nn.RNN(32, 64, num_layers=3)), torch.randn(40, 2, 32))), 11,
                            False),
    "deepspeech": (seeded(lambda: (DeepSpeech(), torch.randn(1, 100, 80))), 13, False),
    "deepspeech_op17": (seeded(lambda: (DeepSpeech(hidden=256), torch.randn(1, 60, 80))), 17, False),
    "conv_gru_speech": (seeded(lambda: (ConvGruSpeech(), torch.randn(1, 40, 101))), 13, False),
    "lstm_stack_op9": (seeded(lambda: (LastStep(nn.LSTM(40, 64, num_layers=2, bidirectional=True)),
                                       torch.randn(30, 1, 40))), 9, False),
    "lstm_long_500": (seeded(lambda: (TextClassifier(1000, 64, 128, 1, 4), torch.randint(0, 1000, (1, 500)))), 13,
                      True),
}


def main():
    import argparse

    import numpy as np
    p = argparse.ArgumentParser()
    p.add_argument("--out", default="/tmp/sweep_rnn")
    p.add_argument("--kiln", default=os.path.join(os.path.dirname(__file__), "../../build/bin/kiln"))
    p.add_argument("--only", nargs="*")
    p.add_argument("--big", action="store_true")
    args = p.parse_args()
    os.makedirs(args.out, exist_ok=True)
    for name, (factory, opset, big) in MODELS.items():
        if (args.only and name not in args.only) or (big and not args.big and not args.only):
            continue
        model, x = factory()
        onnx_path = os.path.join(args.out, name + ".onnx")
        with torch.no_grad():
            ref = model(x).numpy()
        torch.onnx.export(model, (x,), onnx_path, opset_version=opset, input_names=["x"], output_names=["y"])
        np.save(os.path.join(args.out, name + ".x.npy"), x.numpy())
        so, out = os.path.join(args.out, name + ".so"), os.path.join(args.out, name + ".out.npy")
        t0 = time.time()
        r = subprocess.run([args.kiln, "compile", onnx_path, "-o", so], capture_output=True, text=True)
        compile_s = time.time() - t0
        if r.returncode != 0:
            print(f"{name:32s} op{opset}  COMPILE FAIL: {(r.stderr.strip().splitlines() or ['?'])[-1][:150]}")
            continue
        r = subprocess.run([args.kiln, "run", so, "--input", f"x={os.path.join(args.out, name + '.x.npy')}",
                            "--output", out], capture_output=True, text=True)
        if r.returncode != 0:
            print(f"{name:32s} op{opset}  RUN FAIL: {(r.stderr.strip().splitlines() or ['?'])[-1][:150]}")
            continue
        got = np.load(out)
        err = float(np.max(np.abs(got.astype(np.float64) - ref))) / max(float(np.max(np.abs(ref))), 1e-30)
        print(f"{name:32s} op{opset}  rel err {err:.2e}  compile {compile_s:6.1f} s  "
              f"artifact {os.path.getsize(so) / 1e6:.1f} MB  {'ok' if err <= 1e-4 else 'WRONG'}", flush=True)


if __name__ == "__main__":
    sys.exit(main())
