#!/usr/bin/env python3
"""Builds float16/bfloat16 ONNX models with float32 PyTorch reference outputs.

Usage: make_half_models.py OUT_DIR

Each model is exported from PyTorch in float32, then stored in half precision the way fp16 model
converters do (every float initializer, Constant, graph input/output and value_info becomes
FLOAT16 or BFLOAT16; Cast-to-float becomes Cast-to-half; no Cast nodes are added). The reference is
the float32 PyTorch output of the same module with its weights and input rounded to the half type,
so it is the exact function of the stored model computed in float32. OUT_DIR/<name>/ holds
model.onnx and test_data_set_0/{input_0,output_0}.pb (output_0 in float32).
Models: torchvision ResNet-18 (fp16), an nn.TransformerEncoderLayer block (fp16 and bf16),
torchvision MobileNetV2 (fp16).
"""
import os
import sys

import numpy as np
import onnx
import torch
import torch.nn as nn
import torchvision
from onnx import TensorProto, numpy_helper

OUT = sys.argv[1]


def half_tensor(array, name, dtype):
    if dtype == TensorProto.FLOAT16:
        return numpy_helper.from_array(np.asarray(array, dtype=np.float32).astype(np.float16), name)
    t = onnx.TensorProto()  # bfloat16: the upper 16 bits of the float32 after rounding (torch does it)
    t.name, t.data_type = name, TensorProto.BFLOAT16
    t.dims.extend(np.shape(array))
    bits = torch.from_numpy(np.ascontiguousarray(array, dtype=np.float32)).bfloat16().view(torch.int16).numpy()
    t.raw_data = bits.astype("<i2").tobytes()
    return t


def to_half(model, dtype):
    g = model.graph
    for i, init in enumerate(g.initializer):
        if init.data_type == TensorProto.FLOAT:
            g.initializer[i].CopyFrom(half_tensor(numpy_helper.to_array(init), init.name, dtype))
    for vi in list(g.input) + list(g.output) + list(g.value_info):
        if vi.type.tensor_type.elem_type == TensorProto.FLOAT:
            vi.type.tensor_type.elem_type = dtype
    for n in g.node:
        for a in n.attribute:
            if n.op_type == "Constant" and a.name == "value" and a.t.data_type == TensorProto.FLOAT:
                a.t.CopyFrom(half_tensor(numpy_helper.to_array(a.t), a.t.name, dtype))
            if n.op_type == "Cast" and a.name == "to" and a.i == TensorProto.FLOAT:
                a.i = dtype
    return model


def recalibrate(module, shape):
    """Running batch-norm statistics re-estimated on random batches, so that a randomly initialized
    network's activations stay in a range half precision represents (else they shrink to 1e-9)."""
    for m in module.modules():
        if isinstance(m, nn.modules.batchnorm._BatchNorm):
            m.reset_running_stats()
            m.momentum = None
    module.train()
    with torch.no_grad():
        for _ in range(2):
            module(torch.randn(4, *shape[1:]))
    return module.eval()


def save(name, module, x, dtype):
    tdtype = torch.float16 if dtype == TensorProto.FLOAT16 else torch.bfloat16
    module.eval()
    with torch.no_grad():
        for p in list(module.parameters()) + list(module.buffers()):
            if p.is_floating_point():
                p.copy_(p.to(tdtype).float())
        x = x.to(tdtype).float()
        ref = module(x).numpy()
    d = os.path.join(OUT, name)
    os.makedirs(os.path.join(d, "test_data_set_0"), exist_ok=True)
    path = os.path.join(d, "model.onnx")
    torch.onnx.export(module, (x,), path, opset_version=13, input_names=["x"], output_names=["y"])
    onnx.save(to_half(onnx.load(path), dtype), path)
    with open(os.path.join(d, "test_data_set_0", "input_0.pb"), "wb") as f:
        f.write(half_tensor(x.numpy(), "x", dtype).SerializeToString())
    with open(os.path.join(d, "test_data_set_0", "output_0.pb"), "wb") as f:
        f.write(numpy_helper.from_array(ref, "y").SerializeToString())


def main():
    torch.manual_seed(0)
    save("resnet18_fp16", recalibrate(torchvision.models.resnet18(weights=None), (1, 3, 224, 224)), torch.randn(1, 3, 224, 224), TensorProto.FLOAT16)
    block = nn.TransformerEncoderLayer(64, 4, 128, dropout=0.0, batch_first=True)
    save("transformer_block_fp16", block, torch.randn(1, 16, 64), TensorProto.FLOAT16)
    save("transformer_block_bf16", block, torch.randn(1, 16, 64), TensorProto.BFLOAT16)
    save("mobilenet_v2_fp16", recalibrate(torchvision.models.mobilenet_v2(weights=None), (1, 3, 224, 224)),
         torch.randn(1, 3, 224, 224), TensorProto.FLOAT16)
    print(f"wrote {len(os.listdir(OUT))} half-precision models to {OUT}")


if __name__ == "__main__":
    main()
