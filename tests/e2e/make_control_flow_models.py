#!/usr/bin/env python3
"""Builds ONNX models with control flow (If, Loop, Scan) and their expected outputs.

Usage: make_control_flow_models.py OUT_DIR

OUT_DIR/cases/<name>/ holds model.onnx and test_data_set_N/{input,output}_K.pb (the layout of
ONNX's node tests). Expected outputs come from PyTorch (torch.jit.script modules exported with
torch.onnx.export: an If on a shape check, a for loop carrying a hidden state, a run-time If) or
numpy (onnx.helper models). OUT_DIR/bad/<name>.onnx are models Kiln must refuse with a clear
error. Run by CTest as a fixture (tests/e2e/tests.cmake); the test is
tests/e2e/control_flow_e2e.cc.
"""
import os
import sys

import numpy as np
import onnx
from onnx import TensorProto, helper, numpy_helper

OUT = sys.argv[1]
CASES = os.path.join(OUT, "cases")
BAD = os.path.join(OUT, "bad")
rng = np.random.default_rng(7)

NP_TO_ONNX = {np.float32: TensorProto.FLOAT, np.int64: TensorProto.INT64, np.bool_: TensorProto.BOOL}


def randf(*shape):
    return rng.standard_normal(shape).astype(np.float32)


def vi(name, a):
    return helper.make_tensor_value_info(name, NP_TO_ONNX[a.dtype.type], list(a.shape))


def scalar_vi(name, elem):
    return helper.make_tensor_value_info(name, elem, [])


def const(name, a):
    return helper.make_node("Constant", [], [name], value=numpy_helper.from_array(np.asarray(a), name + "_value"))


def write_sets(d, input_names, output_names, sets):
    for s, (ins, outs) in enumerate(sets):
        sd = os.path.join(d, f"test_data_set_{s}")
        os.makedirs(sd, exist_ok=True)
        for i, (n, a) in enumerate(zip(input_names, ins)):
            with open(os.path.join(sd, f"input_{i}.pb"), "wb") as f:
                f.write(numpy_helper.from_array(np.asarray(a), n).SerializeToString())
        for i, (n, a) in enumerate(zip(output_names, outs)):
            with open(os.path.join(sd, f"output_{i}.pb"), "wb") as f:
                f.write(numpy_helper.from_array(np.asarray(a), n).SerializeToString())


def save_helper_case(name, nodes, inputs, outputs, sets, opset=13, bad=False):
    """inputs/outputs: ValueInfoProtos; sets: [(input arrays, output arrays)]."""
    graph = helper.make_graph(nodes, name, inputs, outputs)
    model = helper.make_model(graph, opset_imports=[helper.make_opsetid("", opset)])
    model.ir_version = 8
    if bad:
        onnx.save_model(model, os.path.join(BAD, name + ".onnx"))
        return
    onnx.checker.check_model(model)
    d = os.path.join(CASES, name)
    os.makedirs(d, exist_ok=True)
    onnx.save_model(model, os.path.join(d, "model.onnx"))
    write_sets(d, [i.name for i in inputs], [o.name for o in outputs], sets)


# ---------------------------------------------------------------- onnx.helper models (numpy reference)

def if_runtime_condition():
    """If on sum(x) > 0 (a run-time condition); the branches read outer values x and b."""
    b = randf(3, 4)
    then_g = helper.make_graph([helper.make_node("Mul", ["x", "two"], ["t0"]), helper.make_node("Add", ["t0", "b"], ["t_out"])],
                               "then", [], [helper.make_tensor_value_info("t_out", TensorProto.FLOAT, [3, 4])])
    else_g = helper.make_graph([helper.make_node("Sub", ["x", "b"], ["e_out"])], "else", [],
                               [helper.make_tensor_value_info("e_out", TensorProto.FLOAT, [3, 4])])
    nodes = [const("b", b), const("two", np.float32(2)), const("zero", np.float32(0)),
             helper.make_node("ReduceSum", ["x"], ["s"], keepdims=0),
             helper.make_node("Relu", ["s"], ["s_pos"]),  # c = s > 0 as Cast<bool>(Relu(s))
             helper.make_node("Cast", ["s_pos"], ["c"], to=TensorProto.BOOL),
             helper.make_node("If", ["c"], ["y"], then_branch=then_g, else_branch=else_g)]
    x_pos = np.abs(randf(3, 4))
    x_neg = -np.abs(randf(3, 4))
    sets = [([x], [x * 2 + b if x.sum() > 0 else x - b]) for x in (x_pos, x_neg)]
    save_helper_case("if_runtime_condition", nodes, [vi("x", x_pos)], [vi("y", x_pos)], sets)


def if_constant_condition():
    """If on a shape check (Shape -> Gather -> Equal): folded at import; the untaken branch would
    not even import (a Reshape to an impossible shape)."""
    then_g = helper.make_graph([helper.make_node("Relu", ["x"], ["t_out"])], "then", [],
                               [helper.make_tensor_value_info("t_out", TensorProto.FLOAT, None)])
    else_g = helper.make_graph([const("bad_shape", np.array([7, 7], np.int64)),
                                helper.make_node("Reshape", ["x", "bad_shape"], ["e_out"])], "else", [],
                               [helper.make_tensor_value_info("e_out", TensorProto.FLOAT, None)])
    nodes = [helper.make_node("Shape", ["x"], ["shape"]), const("i0", np.int64(0)), const("two", np.int64(2)),
             helper.make_node("Gather", ["shape", "i0"], ["d0"]), helper.make_node("Equal", ["d0", "two"], ["c"]),
             helper.make_node("If", ["c"], ["y"], then_branch=then_g, else_branch=else_g)]
    x = randf(2, 5)
    save_helper_case("if_constant_condition", nodes, [vi("x", x)], [vi("y", x)], [([x], [np.maximum(x, 0)])])


def loop_body_scan(name, with_scan=True):
    """Loop with M = 5: carried y += slice(table, i) * w (w from the outer scope), scan output y * i."""
    table = randf(5, 3)
    w = randf(3)
    body_nodes = [
        helper.make_node("Identity", ["cond_in"], ["cond_out"]),
        const("one", np.int64(1)),
        helper.make_node("Add", ["i", "one"], ["i1"]),
        helper.make_node("Unsqueeze", ["i", "ax0"], ["start"]),
        helper.make_node("Unsqueeze", ["i1", "ax0"], ["end"]),
        helper.make_node("Slice", ["table", "start", "end"], ["row"]),  # [1, 3]
        helper.make_node("Reshape", ["row", "shape3"], ["row3"]),
        helper.make_node("Mul", ["row3", "w"], ["upd"]),
        helper.make_node("Add", ["y_in", "upd"], ["y_out"]),
        helper.make_node("Cast", ["i"], ["i_f"], to=TensorProto.FLOAT),
        helper.make_node("Mul", ["y_out", "i_f"], ["scan_out"]),
    ]
    outs = [helper.make_tensor_value_info("cond_out", TensorProto.BOOL, []),
            helper.make_tensor_value_info("y_out", TensorProto.FLOAT, [3])]
    if with_scan:
        outs.append(helper.make_tensor_value_info("scan_out", TensorProto.FLOAT, [3]))
    body = helper.make_graph(body_nodes, "body",
                             [scalar_vi("i", TensorProto.INT64), scalar_vi("cond_in", TensorProto.BOOL),
                              helper.make_tensor_value_info("y_in", TensorProto.FLOAT, [3])], outs)
    nodes = [const("table", table), const("w", w), const("ax0", np.array([0], np.int64)),
             const("shape3", np.array([3], np.int64)), const("M", np.int64(5)), const("c0", np.bool_(True)),
             helper.make_node("Loop", ["M", "c0", "y0"], ["y_final"] + (["ys"] if with_scan else []), body=body)]
    y0 = randf(3)
    y, ys = y0.copy(), []
    for i in range(5):
        y = y + table[i] * w
        ys.append(y * np.float32(i))
    outputs = [vi("y_final", y)] + ([vi("ys", np.stack(ys))] if with_scan else [])
    save_helper_case(name, nodes, [vi("y0", y0)], outputs, [([y0], [y] + ([np.stack(ys)] if with_scan else []))])


def loop_runtime_condition():
    """Loop with M = 6 whose condition (sum(h) < limit) is computed from the data: unrolled with
    masking (no scan outputs). A carried counter k slices a table (the slice needs k constant: the
    body is fed the unmasked chain) and comes out as the number of iterations run. Three data sets
    stop after different numbers of iterations."""
    table = randf(6, 4)
    body_nodes = [
        helper.make_node("Mul", ["h_in", "gain"], ["h_scaled"]),
        const("one", np.int64(1)),
        helper.make_node("Add", ["k_in", "one"], ["k_out"]),
        helper.make_node("Unsqueeze", ["k_in", "ax0"], ["start"]),
        helper.make_node("Unsqueeze", ["k_out", "ax0"], ["end"]),
        helper.make_node("Slice", ["table", "start", "end"], ["row"]),  # [1, 4]
        helper.make_node("Reshape", ["row", "shape4"], ["row4"]),
        helper.make_node("Add", ["h_scaled", "row4"], ["h_out"]),
        helper.make_node("ReduceSum", ["h_out"], ["s"], keepdims=0),
        helper.make_node("Sub", ["limit", "s"], ["room"]),  # cond = s < limit as Cast<bool>(Relu(limit - s))
        helper.make_node("Relu", ["room"], ["room_pos"]),
        helper.make_node("Cast", ["room_pos"], ["cond_out"], to=TensorProto.BOOL),
    ]
    body = helper.make_graph(body_nodes, "body",
                             [scalar_vi("i", TensorProto.INT64), scalar_vi("cond_in", TensorProto.BOOL),
                              helper.make_tensor_value_info("h_in", TensorProto.FLOAT, [4]),
                              scalar_vi("k_in", TensorProto.INT64)],
                             [helper.make_tensor_value_info("cond_out", TensorProto.BOOL, []),
                              helper.make_tensor_value_info("h_out", TensorProto.FLOAT, [4]),
                              scalar_vi("k_out", TensorProto.INT64)])
    nodes = [const("gain", np.float32(1.5)), const("limit", np.float32(20)), const("M", np.int64(6)),
             const("table", table), const("ax0", np.array([0], np.int64)), const("shape4", np.array([4], np.int64)),
             const("k0", np.int64(0)),
             helper.make_node("ReduceSum", ["h0"], ["s0"], keepdims=0),
             helper.make_node("Sub", ["limit", "s0"], ["room0"]),
             helper.make_node("Relu", ["room0"], ["room0_pos"]),
             helper.make_node("Cast", ["room0_pos"], ["c0"], to=TensorProto.BOOL),
             helper.make_node("Loop", ["M", "c0", "h0", "k0"], ["h", "k"], body=body)]

    def reference(h0):
        h, k, cond = h0.copy(), 0, h0.sum() < 20
        for _ in range(6):
            if not cond:
                break
            h = h * np.float32(1.5) + table[k]
            k += 1
            cond = h.sum() < 20
        return [h, np.int64(k)]

    inputs = (np.full(4, 0.5, np.float32), np.full(4, 2.0, np.float32), np.full(4, 9.0, np.float32))
    sets = [([h], reference(h)) for h in inputs]
    print("loop_runtime_condition: iterations run per data set:", [int(s[1][1]) for s in sets])
    save_helper_case("loop_runtime_condition", nodes, [vi("h0", inputs[0])],
                     [vi("h", inputs[0]), scalar_vi("k", TensorProto.INT64)], sets)


def loop_trip_count_from_input():
    """Loop whose trip count is computed from a graph input (M = ReduceSum(n)): Kiln needs it at
    compile time, and its error names the graph input the count depends on, which the case runner
    binds to the data set's value (as the node-test runner does for test_range_*_expanded)."""
    body = helper.make_graph([helper.make_node("Identity", ["c_in"], ["c_out"]),
                              helper.make_node("Mul", ["v_in", "x"], ["v_out"])],
                             "body", [scalar_vi("i", TensorProto.INT64), scalar_vi("c_in", TensorProto.BOOL),
                                      helper.make_tensor_value_info("v_in", TensorProto.FLOAT, [3])],
                             [helper.make_tensor_value_info("c_out", TensorProto.BOOL, []),
                              helper.make_tensor_value_info("v_out", TensorProto.FLOAT, [3])])
    nodes = [helper.make_node("ReduceSum", ["n"], ["M"], keepdims=0),
             helper.make_node("Loop", ["M", "", "x"], ["y"], body=body)]
    n, x = np.array([1, 2], np.int64), randf(3)
    save_helper_case("loop_trip_count_from_input", nodes, [vi("n", n), vi("x", x)], [vi("y", x)],
                     [([n, x], [x ** 4])])


def loop_while_condition_folds():
    """A while loop (no trip count) whose condition i < 3 folds at import; a nested If on the
    iteration number reads a value two scopes out."""
    inner_then = helper.make_graph([helper.make_node("Add", ["acc_in", "x"], ["t_out"])], "inner_then", [],
                                   [helper.make_tensor_value_info("t_out", TensorProto.FLOAT, None)])
    inner_else = helper.make_graph([helper.make_node("Sub", ["acc_in", "x"], ["e_out"])], "inner_else", [],
                                   [helper.make_tensor_value_info("e_out", TensorProto.FLOAT, None)])
    body_nodes = [
        const("zero", np.int64(0)), const("two", np.int64(2)), const("three", np.int64(3)),
        helper.make_node("Mod", ["i", "two"], ["parity"]),
        helper.make_node("Equal", ["parity", "zero"], ["even"]),
        helper.make_node("If", ["even"], ["acc_out"], then_branch=inner_then, else_branch=inner_else),
        const("one", np.int64(1)),
        helper.make_node("Add", ["i", "one"], ["next_i"]),
        helper.make_node("Equal", ["next_i", "three"], ["done"]),
        helper.make_node("Not", ["done"], ["cond_out"]),
    ]
    body = helper.make_graph(body_nodes, "body",
                             [scalar_vi("i", TensorProto.INT64), scalar_vi("cond_in", TensorProto.BOOL),
                              helper.make_tensor_value_info("acc_in", TensorProto.FLOAT, [2, 3])],
                             [helper.make_tensor_value_info("cond_out", TensorProto.BOOL, []),
                              helper.make_tensor_value_info("acc_out", TensorProto.FLOAT, [2, 3])])
    nodes = [const("c0", np.bool_(True)), helper.make_node("Loop", ["", "c0", "x"], ["acc"], body=body)]
    x = randf(2, 3)
    acc = x.copy()
    for i in range(3):
        acc = acc + x if i % 2 == 0 else acc - x
    save_helper_case("loop_while_condition_folds", nodes, [vi("x", x)], [vi("acc", acc)], [([x], [acc])])


def scan_directions_axes():
    """Scan (opset 16): two scan inputs, one along axis 1 in reverse; a state variable; one scan
    output stacked along axis 1, one in reverse along axis 0."""
    body_nodes = [
        helper.make_node("Add", ["a", "b"], ["ab"]),
        helper.make_node("Add", ["s_in", "ab"], ["s_out"]),
        helper.make_node("Mul", ["s_out", "a"], ["y1"]),
        helper.make_node("Identity", ["s_out"], ["y2"]),
    ]
    body = helper.make_graph(body_nodes, "body",
                             [helper.make_tensor_value_info(n, TensorProto.FLOAT, [3]) for n in ("s_in", "a", "b")],
                             [helper.make_tensor_value_info(n, TensorProto.FLOAT, [3]) for n in ("s_out", "y1", "y2")])
    nodes = [helper.make_node("Scan", ["s0", "xa", "xb"], ["s", "ya", "yb"], body=body, num_scan_inputs=2,
                              scan_input_axes=[0, 1], scan_input_directions=[0, 1],
                              scan_output_axes=[1, 0], scan_output_directions=[0, 1])]
    s0, xa, xb = randf(3), randf(4, 3), randf(3, 4)
    s, y1, y2 = s0.copy(), [], []
    for t in range(4):
        a, b = xa[t], xb[:, 3 - t]
        s = s + a + b
        y1.append(s * a)
        y2.append(s.copy())
    ya = np.stack(y1, axis=1)
    yb = np.stack(y2[::-1], axis=0)
    save_helper_case("scan_directions_axes", nodes, [vi("s0", s0), vi("xa", xa), vi("xb", xb)],
                     [vi("s", s), vi("ya", ya), vi("yb", yb)], [([s0, xa, xb], [s, ya, yb])], opset=16)


# ---------------------------------------------------------------- models Kiln refuses

def bad_models():
    # Run-time condition, branches of different shapes.
    then_g = helper.make_graph([helper.make_node("Identity", ["x"], ["t_out"])], "then", [],
                               [helper.make_tensor_value_info("t_out", TensorProto.FLOAT, None)])
    else_g = helper.make_graph([helper.make_node("ReduceSum", ["x"], ["e_out"], keepdims=0)], "else", [],
                               [helper.make_tensor_value_info("e_out", TensorProto.FLOAT, None)])
    x = randf(3)
    save_helper_case("if_runtime_shapes_differ",
                     [helper.make_node("If", ["c"], ["y"], name="my_if", then_branch=then_g, else_branch=else_g)],
                     [scalar_vi("c", TensorProto.BOOL), vi("x", x)], [vi("y", x)], [], bad=True)
    body = helper.make_graph([helper.make_node("Identity", ["c_in"], ["c_out"]), helper.make_node("Neg", ["v_in"], ["v_out"])],
                             "body", [scalar_vi("i", TensorProto.INT64), scalar_vi("c_in", TensorProto.BOOL),
                                      helper.make_tensor_value_info("v_in", TensorProto.FLOAT, [3])],
                             [helper.make_tensor_value_info("c_out", TensorProto.BOOL, []),
                              helper.make_tensor_value_info("v_out", TensorProto.FLOAT, [3])])
    # Trip count from the data.
    save_helper_case("loop_runtime_trip_count",
                     [helper.make_node("Loop", ["M", "", "x"], ["y"], name="my_loop", body=body)],
                     [scalar_vi("M", TensorProto.INT64), vi("x", x)], [vi("y", x)], [], bad=True)
    # A trip count far beyond the unrolling budget.
    save_helper_case("loop_too_long",
                     [const("M", np.int64(10**9)), helper.make_node("Loop", ["M", "", "x"], ["y"], name="long_loop", body=body)],
                     [vi("x", x)], [vi("y", x)], [], bad=True)
    # A loop body returning a sequence.
    seq_body = helper.make_graph(
        [helper.make_node("Identity", ["c_in"], ["c_out"]), helper.make_node("SequenceInsert", ["s_in", "x"], ["s_out"])],
        "seq_body", [scalar_vi("i", TensorProto.INT64), scalar_vi("c_in", TensorProto.BOOL),
                     helper.make_tensor_sequence_value_info("s_in", TensorProto.FLOAT, None)],
        [helper.make_tensor_value_info("c_out", TensorProto.BOOL, []),
         helper.make_tensor_sequence_value_info("s_out", TensorProto.FLOAT, None)])
    save_helper_case("loop_sequence_body",
                     [const("M", np.int64(2)),
                      helper.make_node("Loop", ["M", "", "x"], ["s"], name="seq_loop", body=seq_body),
                      helper.make_node("ConcatFromSequence", ["s"], ["y"], axis=0)],
                     [vi("x", x)], [vi("y", x)], [], bad=True)


# ---------------------------------------------------------------- PyTorch exports (torch.jit.script)

def torch_models():
    import torch

    torch.manual_seed(0)

    class ShapeCheck(torch.nn.Module):
        """An If on a shape check of the (dynamic) batch: folded at import once --input-shape fixes
        it (only the taken branch remains)."""

        def __init__(self):
            super().__init__()
            self.conv = torch.nn.Conv2d(3, 8, 3, padding=1)

        def forward(self, x):
            if x.shape[0] == 1:
                y = torch.relu(self.conv(x))
            else:
                y = x * 2.0
            return y

    class HiddenStateLoop(torch.nn.Module):
        """A for loop over the (dynamic) sequence length carrying a hidden state (an RNN cell
        written out); the trip count folds once --input-shape fixes the length."""

        def __init__(self):
            super().__init__()
            self.inp = torch.nn.Linear(6, 8)
            self.rec = torch.nn.Linear(8, 8)

        def forward(self, x):
            h = torch.zeros(x.shape[0], 8)
            for t in range(x.shape[1]):
                h = torch.tanh(self.inp(x[:, t]) + self.rec(h))
            return h

    class DataDependentIf(torch.nn.Module):
        """An If on a condition computed from the input data (run-time selection)."""

        def __init__(self):
            super().__init__()
            self.a = torch.nn.Linear(4, 4)
            self.b = torch.nn.Linear(4, 4)

        def forward(self, x):
            if bool(torch.relu(x.mean()) != 0.0):  # mean > 0 (Relu/Equal/Not: ops Kiln has)
                y = torch.sigmoid(self.a(x))
            else:
                y = self.b(x) * 0.5
            return y

    def export(name, module, example, extra_inputs=(), opset=13, dynamic_axes=None):
        module.eval()
        scripted = torch.jit.script(module)
        d = os.path.join(CASES, name)
        os.makedirs(d, exist_ok=True)
        path = os.path.join(d, "model.onnx")
        torch.onnx.export(scripted, (example,), path, opset_version=opset, input_names=["x"], output_names=["y"],
                          dynamic_axes={"x": dynamic_axes} if dynamic_axes else None)
        if dynamic_axes:  # the shape Kiln compiles for (--input-shape), read by control_flow_e2e.cc
            with open(os.path.join(d, "input_shapes.txt"), "w") as f:
                f.write("x:" + ",".join(str(v) for v in example.shape) + "\n")
        model = onnx.load(path)
        ops = {n.op_type for n in model.graph.node}
        assert ops & {"If", "Loop"}, f"{name}: the export has no control flow ({sorted(ops)})"
        sets = []
        with torch.no_grad():
            for x in (example,) + tuple(extra_inputs):
                sets.append(([x.numpy()], [module(x).numpy()]))
        write_sets(d, ["x"], ["y"], sets)

    export("torch_if_shape_check", ShapeCheck(), torch.randn(1, 3, 8, 8), dynamic_axes={0: "batch"})
    export("torch_loop_hidden_state", HiddenStateLoop(), torch.randn(2, 5, 6), dynamic_axes={0: "batch", 1: "seq"})
    x = torch.randn(3, 4)
    export("torch_if_data_dependent", DataDependentIf(), x.abs(), [-x.abs()])


def main():
    os.makedirs(CASES, exist_ok=True)
    os.makedirs(BAD, exist_ok=True)
    if_runtime_condition()
    if_constant_condition()
    loop_body_scan("loop_scan_outputs")
    loop_runtime_condition()
    loop_trip_count_from_input()
    loop_while_condition_folds()
    scan_directions_axes()
    bad_models()
    try:
        import torch  # noqa: F401
    except ImportError:
        print("torch is not installed: the PyTorch control-flow models are skipped")
        return
    torch_models()


if __name__ == "__main__":
    main()
