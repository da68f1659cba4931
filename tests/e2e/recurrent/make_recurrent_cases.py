#!/usr/bin/env python3
"""Builds ONNX LSTM/GRU/RNN cases with expected outputs from an independent oracle.

Usage: make_recurrent_cases.py OUT_DIR

OUT_DIR/<name>/ holds model.onnx and test_data_set_0/{input,output}_N.pb (ONNX node-test layout).
Two kinds of cases:
  - op_*: one LSTM/GRU/RNN node per attribute combination (directions, layouts, sequence_lens,
    initial states, peepholes, clip, input_forget, linear_before_reset, every activation), expected
    outputs from the plain numpy implementation of the ONNX equations below (written from the ONNX
    operator documentation, independent of Kiln's decomposition);
  - torch_*: PyTorch modules (nn.LSTM/GRU/RNN stacks, an Embedding -> LSTM -> Linear text
    classifier, a DeepSpeech-style model, a Conv1d -> GRU speech model) exported with torch.onnx at several opsets; expected
    outputs are PyTorch's (float32).
Run by CTest as a fixture (tests/e2e/tests.cmake); recurrent_e2e.cc runs each case on the reference
executor and compiled.
"""
import os
import sys

import numpy as np
import onnx
from onnx import TensorProto, helper, numpy_helper

OUT = sys.argv[1]
rng = np.random.default_rng(7)


def save(name, model, inputs, outputs):
    d = os.path.join(OUT, name)
    os.makedirs(os.path.join(d, "test_data_set_0"), exist_ok=True)
    onnx.save_model(model, os.path.join(d, "model.onnx"))
    for prefix, arrays in (("input", inputs), ("output", outputs)):
        for i, (n, a) in enumerate(arrays):
            with open(os.path.join(d, "test_data_set_0", f"{prefix}_{i}.pb"), "wb") as f:
                f.write(numpy_helper.from_array(np.asarray(a), n).SerializeToString())


# ---- the numpy oracle (ONNX equations) ----
def act(name, x, alpha=None, beta=None):
    n = name.lower()
    if n == "sigmoid":
        return 1 / (1 + np.exp(-x))
    if n == "tanh":
        return np.tanh(x)
    if n == "relu":
        return np.maximum(x, 0)
    if n == "affine":
        return (1.0 if alpha is None else alpha) * x + (0.0 if beta is None else beta)
    if n == "leakyrelu":
        a = 0.01 if alpha is None else alpha
        return np.where(x >= 0, x, a * x)
    if n == "thresholdedrelu":
        a = 1.0 if alpha is None else alpha
        return np.where(x > a, x, 0)
    if n == "scaledtanh":
        return (1.0 if alpha is None else alpha) * np.tanh((1.0 if beta is None else beta) * x)
    if n == "hardsigmoid":
        a = 0.2 if alpha is None else alpha
        b = 0.5 if beta is None else beta
        return np.clip(a * x + b, 0, 1)
    if n == "elu":
        a = 1.0 if alpha is None else alpha
        return np.where(x >= 0, x, a * (np.exp(x) - 1))
    if n == "softsign":
        return x / (1 + np.abs(x))
    if n == "softplus":
        return np.log1p(np.exp(x))
    raise ValueError(name)


ALPHA_USERS = {"affine", "leakyrelu", "thresholdedrelu", "scaledtanh", "hardsigmoid", "elu"}
BETA_USERS = {"affine", "scaledtanh", "hardsigmoid"}


def resolve_acts(names, alphas, betas):
    """activation_alpha/beta consumed in order by the functions that take them."""
    out, ai, bi = [], 0, 0
    for n in names:
        a = b = None
        if n.lower() in ALPHA_USERS and ai < len(alphas):
            a = alphas[ai]
            ai += 1
        if n.lower() in BETA_USERS and bi < len(betas):
            b = betas[bi]
            bi += 1
        out.append((n, a, b))
    return out


def oracle(kind, X, W, R, B=None, seq_lens=None, init_h=None, init_c=None, P=None, direction="forward",
           layout=0, acts=None, clip=None, input_forget=0, linear_before_reset=0):
    X = X.astype(np.float64)
    if layout == 1:
        X = X.transpose(1, 0, 2)
        init_h = None if init_h is None else init_h.transpose(1, 0, 2)
        init_c = None if init_c is None else init_c.transpose(1, 0, 2)
    T, Bn, _ = X.shape
    D = 2 if direction == "bidirectional" else 1
    G = {"LSTM": 4, "GRU": 3, "RNN": 1}[kind]
    H = R.shape[2]
    per = len(acts) // D
    Y = np.zeros((T, D, Bn, H))
    Yh = np.zeros((D, Bn, H))
    Yc = np.zeros((D, Bn, H))
    lens = np.full(Bn, T) if seq_lens is None else seq_lens
    cl = (lambda v: np.clip(v, -clip, clip)) if clip else (lambda v: v)
    for d in range(D):
        f = lambda k, v: act(*(acts[d * per + k][:1]), v, *acts[d * per + k][1:])
        w, r = W[d].astype(np.float64), R[d].astype(np.float64)
        wb = np.zeros(G * H) if B is None else B[d, :G * H].astype(np.float64)
        rb = np.zeros(G * H) if B is None else B[d, G * H:].astype(np.float64)
        reverse = direction == "reverse" or d == 1
        for b in range(Bn):
            h = np.zeros(H) if init_h is None else init_h[d, b].astype(np.float64)
            c = np.zeros(H) if init_c is None else init_c[d, b].astype(np.float64)
            L = int(lens[b])
            steps = range(L - 1, -1, -1) if reverse else range(L)
            for t in steps:
                x = X[t, b]
                gx = w @ x + wb
                gh = r @ h + rb
                if kind == "RNN":
                    h = f(0, cl(gx + gh))
                elif kind == "GRU":
                    z = f(0, cl(gx[:H] + gh[:H]))
                    rr = f(0, cl(gx[H:2 * H] + gh[H:2 * H]))
                    if linear_before_reset:
                        hh = f(1, cl(gx[2 * H:] + rr * (r[2 * H:] @ h + rb[2 * H:])))
                    else:
                        hh = f(1, cl(gx[2 * H:] + r[2 * H:] @ (rr * h) + rb[2 * H:]))
                    h = (1 - z) * hh + z * h
                else:
                    p = np.zeros(3 * H) if P is None else P[d].astype(np.float64)
                    g = gx + gh
                    i = f(0, cl(g[:H] + p[:H] * c))
                    if input_forget:
                        fg = 1 - i
                    else:
                        fg = f(0, cl(g[2 * H:3 * H] + p[2 * H:] * c))
                    cc = f(1, cl(g[3 * H:]))
                    c = fg * c + i * cc
                    o = f(0, cl(g[H:2 * H] + p[H:2 * H] * c))
                    h = o * f(2, c)
                Y[t, d, b] = h
            Yh[d, b] = h
            Yc[d, b] = c
    if layout == 1:
        return Y.transpose(2, 0, 1, 3), Yh.transpose(1, 0, 2), Yc.transpose(1, 0, 2)
    return Y, Yh, Yc


DEFAULT_ACTS = {"LSTM": ["Sigmoid", "Tanh", "Tanh"], "GRU": ["Sigmoid", "Tanh"], "RNN": ["Tanh"]}


def op_case(name, kind, T=4, Bn=3, I=5, H=6, direction="forward", layout=0, bias=True, seq_lens=None,
            init=False, peep=False, acts=None, alphas=(), betas=(), clip=None, input_forget=0,
            linear_before_reset=0, outputs=("Y", "Y_h", "Y_c"), opset=14, scale=0.5):
    G = {"LSTM": 4, "GRU": 3, "RNN": 1}[kind]
    D = 2 if direction == "bidirectional" else 1
    xs = (Bn, T, I) if layout == 1 else (T, Bn, I)
    X = rng.standard_normal(xs).astype(np.float32)
    W = (scale * rng.standard_normal((D, G * H, I))).astype(np.float32)
    R = (scale * rng.standard_normal((D, G * H, H))).astype(np.float32)
    Bv = (0.3 * rng.standard_normal((D, 2 * G * H))).astype(np.float32) if bias else None
    hs = (Bn, D, H) if layout == 1 else (D, Bn, H)
    ih = rng.standard_normal(hs).astype(np.float32) if init else None
    ic = rng.standard_normal(hs).astype(np.float32) if init and kind == "LSTM" else None
    Pv = (0.5 * rng.standard_normal((D, 3 * H))).astype(np.float32) if peep else None
    sl = None if seq_lens is None else np.array(seq_lens, dtype=np.int32)
    names = acts if acts else DEFAULT_ACTS[kind] * D
    Y, Yh, Yc = oracle(kind, X, W, R, Bv, sl, ih, ic, Pv, direction, layout,
                       resolve_acts(names, list(alphas), list(betas)), clip, input_forget, linear_before_reset)
    ins = [("X", X), ("W", W), ("R", R), ("B", Bv), ("sequence_lens", sl), ("initial_h", ih)]
    if kind == "LSTM":
        ins += [("initial_c", ic), ("P", Pv)]
    while ins and ins[-1][1] is None:
        ins.pop()
    node_inputs = [n if a is not None else "" for n, a in ins]
    graph_inputs = [(n, a) for n, a in ins if a is not None]
    all_outs = {"Y": Y, "Y_h": Yh, "Y_c": Yc}
    valid = ["Y", "Y_h", "Y_c"] if kind == "LSTM" else ["Y", "Y_h"]
    node_outputs = [n if n in outputs else "" for n in valid]
    while node_outputs and node_outputs[-1] == "":
        node_outputs.pop()
    attrs = dict(hidden_size=H, direction=direction)
    if opset >= 14:
        attrs["layout"] = layout
    if acts:
        attrs["activations"] = acts
    if alphas:
        attrs["activation_alpha"] = list(alphas)
    if betas:
        attrs["activation_beta"] = list(betas)
    if clip:
        attrs["clip"] = clip
    if input_forget:
        attrs["input_forget"] = input_forget
    if linear_before_reset:
        attrs["linear_before_reset"] = linear_before_reset
    node = helper.make_node(kind, node_inputs, node_outputs, **attrs)
    ttype = {np.float32: TensorProto.FLOAT, np.int32: TensorProto.INT32}
    g_in = [helper.make_tensor_value_info(n, ttype[a.dtype.type], list(a.shape)) for n, a in graph_inputs]
    outs = [(n, all_outs[n].astype(np.float32)) for n in node_outputs if n]
    g_out = [helper.make_tensor_value_info(n, TensorProto.FLOAT, list(a.shape)) for n, a in outs]
    model = helper.make_model(helper.make_graph([node], name, g_in, g_out),
                              opset_imports=[helper.make_opsetid("", opset)])
    model.ir_version = 8
    save("op_" + name, model, graph_inputs, outs)


def op_cases():
    for kind in ("LSTM", "GRU", "RNN"):
        k = kind.lower()
        op_case(f"{k}_forward", kind)
        op_case(f"{k}_reverse", kind, direction="reverse", init=True)
        op_case(f"{k}_bidirectional", kind, direction="bidirectional", init=True)
        op_case(f"{k}_batch_first", kind, direction="bidirectional", layout=1, init=True)
        op_case(f"{k}_seq_lens", kind, direction="bidirectional", seq_lens=[4, 2, 1], init=True)
        op_case(f"{k}_seq_lens_zero", kind, seq_lens=[3, 0, 4], init=True, direction="reverse")
        op_case(f"{k}_only_yh", kind, outputs=("Y_h",), bias=False)
        op_case(f"{k}_clip", kind, clip=0.7, scale=2.0)
        op_case(f"{k}_opset7", kind, opset=7, direction="bidirectional")
        op_case(f"{k}_batch1_long", kind, T=20, Bn=1, direction="bidirectional")
    op_case("lstm_peepholes", "LSTM", peep=True, init=True, direction="bidirectional")
    op_case("lstm_input_forget", "LSTM", input_forget=1, peep=True)
    op_case("lstm_only_yc", "LSTM", outputs=("Y_c",))
    op_case("gru_linear_before_reset", "GRU", linear_before_reset=1, direction="bidirectional", init=True)
    op_case("gru_lbr_no_bias", "GRU", linear_before_reset=1, bias=False)
    # Every listed activation, with alpha/beta where they apply.
    op_case("rnn_act_relu_affine", "RNN", direction="bidirectional", acts=["Relu", "Affine"],
            alphas=[0.7], betas=[0.2], scale=0.3)
    op_case("rnn_act_leaky_thresholded", "RNN", direction="bidirectional", acts=["LeakyRelu", "ThresholdedRelu"],
            alphas=[0.1, 0.3], scale=0.3)
    op_case("rnn_act_scaledtanh_hardsigmoid", "RNN", direction="bidirectional", acts=["ScaledTanh", "HardSigmoid"],
            alphas=[1.5, 0.3], betas=[0.5, 0.4])
    op_case("rnn_act_elu_softsign", "RNN", direction="bidirectional", acts=["Elu", "Softsign"], alphas=[0.8],
            scale=0.3)
    op_case("rnn_act_softplus_default_alpha", "RNN", acts=["Softplus"], scale=0.2)
    op_case("gru_act_hardsigmoid_softsign", "GRU", acts=["HardSigmoid", "Softsign"], alphas=[0.25], betas=[0.45])
    op_case("lstm_act_mixed", "LSTM", acts=["HardSigmoid", "Elu", "Softsign"], alphas=[0.2, 1.1], betas=[0.5])
    op_case("lstm_act_defaults_when_missing", "LSTM", acts=["LeakyRelu", "ScaledTanh", "Tanh"])


# ---- PyTorch exports ----
def torch_cases():
    import torch
    import torch.nn as nn
    torch.manual_seed(0)

    class Stack(nn.Module):
        def __init__(self, rnn):
            super().__init__()
            self.rnn = rnn

        def forward(self, x):
            y, h = self.rnn(x)
            h = h[0] if isinstance(h, tuple) else h
            return y, h

    class TextClassifier(nn.Module):
        def __init__(self, vocab=100, emb=16, hidden=24, classes=5):
            super().__init__()
            self.emb = nn.Embedding(vocab, emb)
            self.lstm = nn.LSTM(emb, hidden, batch_first=True)
            self.fc = nn.Linear(hidden, classes)

        def forward(self, tokens):
            _, (h, _) = self.lstm(self.emb(tokens))
            return self.fc(h[-1])

    class Speech(nn.Module):
        def __init__(self, feats=20, hidden=24, classes=12):
            super().__init__()
            self.conv = nn.Sequential(nn.Conv1d(feats, 32, 5, stride=2, padding=2), nn.ReLU())
            self.gru = nn.GRU(32, hidden, num_layers=2, bidirectional=True)
            self.fc = nn.Linear(2 * hidden, classes)

        def forward(self, x):  # x [N, feats, frames]
            y = self.conv(x).permute(2, 0, 1)  # [T, N, C]
            y, _ = self.gru(y)
            return self.fc(y).log_softmax(-1)

    class DeepSpeechLike(nn.Module):
        """DeepSpeech (Hannun et al. 2014; torchaudio.models.DeepSpeech's layout): three clipped-ReLU
        dense layers per frame, a bidirectional ReLU RNN whose directions are summed, a dense layer
        and the per-frame class log-probabilities."""

        def __init__(self, feats=26, hidden=32, classes=29):
            super().__init__()
            self.fc = nn.Sequential(nn.Linear(feats, hidden), nn.Hardtanh(0, 20), nn.Linear(hidden, hidden),
                                    nn.Hardtanh(0, 20), nn.Linear(hidden, hidden), nn.Hardtanh(0, 20))
            self.rnn = nn.RNN(hidden, hidden, nonlinearity="relu", bidirectional=True)
            self.fc4 = nn.Sequential(nn.Linear(hidden, hidden), nn.Hardtanh(0, 20))
            self.out = nn.Linear(hidden, classes)
            self.hidden = hidden

        def forward(self, x):  # x [N, T, feats]
            y = self.fc(x).transpose(0, 1)  # [T, N, H]
            y, _ = self.rnn(y)
            y = y[:, :, :self.hidden] + y[:, :, self.hidden:]
            return self.out(self.fc4(y)).log_softmax(-1).transpose(0, 1)

    def export(name, module, inputs, opsets, names=None):
        module.eval()
        with torch.no_grad():
            outs = module(*inputs)
        outs = outs if isinstance(outs, tuple) else (outs,)
        in_names = names or [f"in{i}" for i in range(len(inputs))]
        out_names = [f"out{i}" for i in range(len(outs))]
        for opset in opsets:
            path = os.path.join(OUT, f"torch_{name}_op{opset}")
            os.makedirs(path, exist_ok=True)
            torch.onnx.export(module, tuple(inputs), os.path.join(path, "model.onnx"), opset_version=opset,
                              input_names=in_names, output_names=out_names)
            model = onnx.load(os.path.join(path, "model.onnx"))
            save(f"torch_{name}_op{opset}", model, [(n, t.numpy()) for n, t in zip(in_names, inputs)],
                 [(n, o.numpy()) for n, o in zip(out_names, outs)])

    x = torch.randn(2, 7, 10)
    export("lstm_stack", Stack(nn.LSTM(10, 16, num_layers=2, bidirectional=True, batch_first=True)), [x], [9, 11, 13, 17])
    export("gru_stack", Stack(nn.GRU(10, 12, num_layers=2, bidirectional=True)), [x.transpose(0, 1).contiguous()], [11, 13])
    export("rnn_relu", Stack(nn.RNN(10, 8, num_layers=2, nonlinearity="relu", batch_first=True)), [x], [13])
    export("text_classifier", TextClassifier(), [torch.randint(0, 100, (2, 12))], [11, 13, 17])
    export("deepspeech", DeepSpeechLike(), [torch.randn(1, 25, 26)], [11, 13, 17])
    export("speech_conv_gru", Speech(), [torch.randn(1, 20, 30)], [11, 13, 17])


def bad_models():
    """Models the importer must refuse with a UserError naming the problem (OUT/bad/<name>.onnx)."""
    os.makedirs(os.path.join(OUT, "bad"), exist_ok=True)
    def write(name, node, x_shape=(3, 2, 4), w_shape=(1, 12, 4), r_shape=(1, 12, 3)):
        ins = [helper.make_tensor_value_info(n, TensorProto.FLOAT, list(s))
               for n, s in (("X", x_shape), ("W", w_shape), ("R", r_shape))]
        outs = [helper.make_tensor_value_info("Y_h", TensorProto.FLOAT, None)]
        model = helper.make_model(helper.make_graph([node], name, ins, outs), opset_imports=[helper.make_opsetid("", 14)])
        onnx.save_model(model, os.path.join(OUT, "bad", name + ".onnx"))
    write("unknown_activation", helper.make_node("RNN", ["X", "W", "R"], ["", "Y_h"], hidden_size=3,
                                                 activations=["Swish"]), w_shape=(1, 3, 4), r_shape=(1, 3, 3))
    write("wrong_weight_shape", helper.make_node("LSTM", ["X", "W", "R"], ["", "Y_h"], hidden_size=3),
          w_shape=(1, 12, 5))
    write("activation_count", helper.make_node("GRU", ["X", "W", "R"], ["", "Y_h"], hidden_size=4,
                                               activations=["Sigmoid", "Tanh", "Tanh"]), w_shape=(1, 12, 4),
          r_shape=(1, 12, 4))


def main():
    os.makedirs(OUT, exist_ok=True)
    bad_models()
    op_cases()
    try:
        import torch  # noqa: F401
    except ImportError:
        print("torch is not available: the torch_* recurrent cases are not made")
        return
    torch_cases()
    print(f"wrote {len(os.listdir(OUT))} recurrent cases to {OUT}")


if __name__ == "__main__":
    main()
