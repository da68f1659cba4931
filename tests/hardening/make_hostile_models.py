"""Hostile and damaged ONNX models for tests/hardening/hostile_models.cc (issue 14).

Usage: make_hostile_models.py OUT_DIR. Writes OUT_DIR/model/*.onnx (the model directory), its
weights file OUT_DIR/model/weights.bin, a file OUTSIDE the model directory (OUT_DIR/secret.txt,
standing in for /etc/passwd), a symlink inside the model directory that points at it, and models
that each ask for something the importer must refuse:
  ext_absolute       external data location = absolute path of secret.txt
  ext_etc_passwd     y = w, w a uint8[64] at location /etc/passwd (the reproduction from the issue)
  ext_dotdot         location ../secret.txt
  ext_dotdot_inner   location sub/../../secret.txt
  ext_symlink        location link.bin -> ../secret.txt
  ext_offset_past    offset past the end of weights.bin
  ext_offset_huge    offset 2^63 - 1 (offset + length overflows)
  ext_length_wrong   length differs from what the shape needs
  ext_negative       offset -8
  ext_missing        location nope.bin (does not exist)
  ext_directory      location sub (a directory)
  ext_good           a correct external-data model (must import; y = x + w)
  shape_overflow     initializer dims [2^40, 2^40, 2^40] with 4 bytes of raw_data
  shape_huge         initializer dims [2^20, 2^20, 2^10] f32 (4 PiB)
  input_huge         graph input [65536, 65536, 65536]
  sparse_huge        Constant sparse_value of dims [2^31, 2^31] with 1 value
  deep_subgraphs     If nested 200 deep (protobuf's recursion limit refuses it)
  long_chain         50,000 chained Add nodes (no stack overflow; imports)
  many_attrs         one node with 100,000 attributes (refused or handled, never a crash)
  input_unnamed      a graph input with an empty name (mutation-run crasher: was an internal error)
  output_twice       the same graph output listed twice
"""
import os
import sys

import numpy as np
import onnx
from onnx import TensorProto, helper, numpy_helper

out = sys.argv[1]
model_dir = os.path.join(out, "model")
os.makedirs(os.path.join(model_dir, "sub"), exist_ok=True)
secret = os.path.join(out, "secret.txt")
with open(secret, "wb") as f:
    f.write(b"root:x:0:0:SECRET-OUTSIDE-THE-MODEL:/root:/bin/bash\n" * 4)
w = np.arange(16, dtype=np.float32)
with open(os.path.join(model_dir, "weights.bin"), "wb") as f:
    f.write(w.tobytes())
link = os.path.join(model_dir, "link.bin")
if os.path.lexists(link):
    os.remove(link)
os.symlink(os.path.join("..", "secret.txt"), link)


def save(name, graph, opset=13):
    m = helper.make_model(graph, opset_imports=[helper.make_opsetid("", opset)])
    with open(os.path.join(model_dir, name + ".onnx"), "wb") as f:
        f.write(m.SerializeToString())


def add_model(name, init):
    if init.data_type == TensorProto.UINT8:  # y = w: the bytes read come back out as the output
        g = helper.make_graph([helper.make_node("Identity", ["w"], ["y"])], name, [],
                              [helper.make_tensor_value_info("y", TensorProto.UINT8, list(init.dims))], [init])
        return save(name, g)
    g = helper.make_graph([helper.make_node("Add", ["x", "w"], ["y"])], name,
                          [helper.make_tensor_value_info("x", TensorProto.FLOAT, [16])],
                          [helper.make_tensor_value_info("y", TensorProto.FLOAT, [16])], [init])
    save(name, g)


def external(name, location, offset=None, length=None, dims=(16,), dtype=TensorProto.FLOAT):
    t = TensorProto()
    t.name = "w"
    t.data_type = dtype
    t.dims.extend(dims)
    t.data_location = TensorProto.EXTERNAL
    for k, v in (("location", location), ("offset", offset), ("length", length)):
        if v is not None:
            e = t.external_data.add()
            e.key, e.value = k, str(v)
    add_model(name, t)


external("ext_absolute", os.path.abspath(secret))
external("ext_etc_passwd", "/etc/passwd", dims=(64,), dtype=TensorProto.UINT8)
external("ext_dotdot", "../secret.txt")
external("ext_dotdot_inner", "sub/../../secret.txt")
external("ext_symlink", "link.bin")
external("ext_offset_past", "weights.bin", offset=64)
external("ext_offset_huge", "weights.bin", offset=2**63 - 1)
external("ext_length_wrong", "weights.bin", length=8)
external("ext_negative", "weights.bin", offset=-8)
external("ext_missing", "nope.bin")
external("ext_directory", "sub")
external("ext_good", "weights.bin", offset=0, length=64)


def raw_init(name, dims, raw):
    t = TensorProto()
    t.name, t.data_type = "w", TensorProto.FLOAT
    t.dims.extend(dims)
    t.raw_data = raw
    add_model(name, t)


raw_init("shape_overflow", [2**40, 2**40, 2**40], b"\0\0\0\0")
raw_init("shape_huge", [2**20, 2**20, 2**10], b"\0\0\0\0")

g = helper.make_graph([helper.make_node("Relu", ["x"], ["y"])], "input_huge",
                      [helper.make_tensor_value_info("x", TensorProto.FLOAT, [65536, 65536, 65536])],
                      [helper.make_tensor_value_info("y", TensorProto.FLOAT, [65536, 65536, 65536])])
save("input_huge", g)

sp = helper.make_sparse_tensor(numpy_helper.from_array(np.array([1.0], np.float32), "v"),
                               numpy_helper.from_array(np.array([0], np.int64), "i"), [2**31, 2**31])
g = helper.make_graph([helper.make_node("Constant", [], ["c"], sparse_value=sp),
                       helper.make_node("Add", ["x", "c"], ["y"])], "sparse_huge",
                      [helper.make_tensor_value_info("x", TensorProto.FLOAT, [1])],
                      [helper.make_tensor_value_info("y", TensorProto.FLOAT, None)])
save("sparse_huge", g)


def nested_if(depth):
    out_vi = helper.make_tensor_value_info("r", TensorProto.FLOAT, [1])
    leaf = helper.make_graph([helper.make_node("Identity", ["x"], ["r"])], "leaf", [], [out_vi])
    body = leaf
    for d in range(depth):  # the else branch is always the leaf: the size stays linear
        node = helper.make_node("If", ["c"], ["r"], then_branch=body, else_branch=leaf)
        body = helper.make_graph([node], "level%d" % d, [], [out_vi])
    return body.node[0]


g = helper.make_graph([nested_if(200)], "deep_subgraphs",
                      [helper.make_tensor_value_info("c", TensorProto.BOOL, []),
                       helper.make_tensor_value_info("x", TensorProto.FLOAT, [1])],
                      [helper.make_tensor_value_info("r", TensorProto.FLOAT, [1])])
save("deep_subgraphs", g)

n = 50000
nodes = [helper.make_node("Add", ["x" if i == 0 else "t%d" % (i - 1), "x"], ["t%d" % i if i < n - 1 else "y"])
         for i in range(n)]
g = helper.make_graph(nodes, "long_chain", [helper.make_tensor_value_info("x", TensorProto.FLOAT, [4])],
                      [helper.make_tensor_value_info("y", TensorProto.FLOAT, [4])])
save("long_chain", g)

relu = helper.make_node("Relu", ["x"], ["y"])
relu.attribute.extend([helper.make_attribute("a%d" % i, i) for i in range(100000)])
g = helper.make_graph([relu], "many_attrs", [helper.make_tensor_value_info("x", TensorProto.FLOAT, [4])],
                      [helper.make_tensor_value_info("y", TensorProto.FLOAT, [4])])
save("many_attrs", g)
# Found by scripts/mutate-onnx.py (a bit flip that emptied an input's name): an internal error
# (KILN_ICHECK in ir::Graph) before the importer checked names.
g = helper.make_graph([helper.make_node("Relu", [""], ["y"])], "input_unnamed",
                      [helper.make_tensor_value_info("", TensorProto.FLOAT, [4])],
                      [helper.make_tensor_value_info("y", TensorProto.FLOAT, [4])])
save("input_unnamed", g)
g = helper.make_graph([helper.make_node("Relu", ["x"], ["y"])], "output_twice",
                      [helper.make_tensor_value_info("x", TensorProto.FLOAT, [4])],
                      [helper.make_tensor_value_info("y", TensorProto.FLOAT, [4])] * 2)
save("output_twice", g)
print("wrote hostile models to", model_dir)
