"""`kiln compile` / `kiln run` defaults, --print-top, --output-npz and --trace, through the built
CLI. References: numpy (the model's function on inputs regenerated here from --fill's documented
generator), numpy.load and zipfile's CRC check for the .npz, json for the trace-event file.
Tolerance: rtol 1e-5, atol 1e-6."""
import json
import os
import re
import subprocess
import zipfile

import numpy as np
import onnx
import pytest
from onnx import TensorProto, helper

import kiln
import models
from conftest import _build_dir

TOL = dict(rtol=1e-5, atol=1e-6)


def _kiln_cli():
    path = os.path.join(_build_dir(), "bin", "kiln")
    if not os.path.exists(path):
        pytest.skip(f"no kiln CLI at {path} (build the target kiln_cli)")
    return path


def _kiln(*args, cwd=None, ok=True):
    r = subprocess.run([_kiln_cli(), *map(str, args)], capture_output=True, text=True, cwd=cwd)
    if ok:
        assert r.returncode == 0, r.stdout + r.stderr
    return r


def _splitmix_floats(seed, index, n):
    """--fill random's floats for input `index` (tools/kiln/run_io.h): splitmix64, top 53 bits."""
    mask = (1 << 64) - 1
    state = (seed * 0xD1B54A32D192ED03 + index) & mask
    out = []
    for _ in range(n):
        state = (state + 0x9E3779B97F4A7C15) & mask
        z = state
        z = ((z ^ (z >> 30)) * 0xBF58476D1CE4E5B9) & mask
        z = ((z ^ (z >> 27)) * 0x94D049BB133111EB) & mask
        z ^= z >> 31
        out.append(2.0 * ((z >> 11) * 2.0 ** -53) - 1.0)
    return np.array(out)


@pytest.fixture(scope="module")
def mlp_files(tmp_path_factory):
    d = tmp_path_factory.mktemp("cli_run")
    proto, ref = models.mlp(batch=2, features=4, hidden=3)
    onnx.save(proto, d / "mlp.onnx")
    r = _kiln("compile", d / "mlp.onnx")
    assert f"no -o given: writing {d / 'mlp.so'}" in r.stdout
    assert (d / "mlp.so").exists()
    return d, ref


def test_compile_without_output_writes_beside_the_model(mlp_files):
    d, _ = mlp_files
    assert f"wrote {d / 'mlp.so'}" in _kiln("compile", d / "mlp.onnx").stdout


def test_compile_example_without_output_writes_into_the_current_directory(tmp_path):
    r = _kiln("compile", "--example", "tiny-cnn", cwd=tmp_path)
    assert "no -o given: writing tiny-cnn.so" in r.stdout
    assert (tmp_path / "tiny-cnn.so").exists()


def test_compile_refuses_a_default_path_equal_to_the_model(tmp_path, mlp_files):
    d, _ = mlp_files
    (tmp_path / "model.so").write_bytes((d / "mlp.onnx").read_bytes())
    r = _kiln("compile", tmp_path / "model.so", ok=False)
    assert r.returncode != 0 and "is the model itself" in r.stderr and "-o OUT.so" in r.stderr


@pytest.mark.parametrize("model_file", ["mlp.so", "mlp.onnx"])
def test_run_without_inputs_fills_them_and_matches_numpy(mlp_files, model_file, tmp_path):
    d, ref = mlp_files
    npz = tmp_path / "out.npz"
    r = _kiln("run", d / model_file, "--seed", 7, "--output-npz", npz)
    assert "filled input 'x' f32[2, 4] with random values uniform in [-1, 1), seed 7" in r.stdout
    with zipfile.ZipFile(npz) as z:
        assert z.testzip() is None  # every member's CRC-32 checks
        assert z.namelist() == ["y.npy"]
    x = _splitmix_floats(7, 0, 8).astype(np.float32).reshape(2, 4)
    np.testing.assert_allclose(np.load(npz)["y"], ref(x), **TOL)


def test_fill_modes_and_seeds(mlp_files, tmp_path):
    d, ref = mlp_files
    outs = {}
    for name, args in {"ones": ["--fill", "ones"], "zeros": ["--fill", "zeros"], "s1": ["--seed", 1],
                       "s1b": ["--seed", 1], "s2": ["--seed", 2]}.items():
        _kiln("run", d / "mlp.so", *args, "--output-npz", tmp_path / f"{name}.npz")
        outs[name] = np.load(tmp_path / f"{name}.npz")["y"]
    np.testing.assert_allclose(outs["ones"], ref(np.ones((2, 4), np.float32)), **TOL)
    np.testing.assert_allclose(outs["zeros"], ref(np.zeros((2, 4), np.float32)), **TOL)
    assert np.array_equal(outs["s1"], outs["s1b"]) and not np.array_equal(outs["s1"], outs["s2"])


def test_given_inputs_are_used_and_a_partial_set_needs_fill(tmp_path):
    proto = models.model([helper.make_node("Sub", ["a", "b"], ["c"])],
                         [helper.make_tensor_value_info("a", TensorProto.FLOAT, [3]),
                          helper.make_tensor_value_info("b", TensorProto.FLOAT, [3])],
                         [helper.make_tensor_value_info("c", TensorProto.FLOAT, [3])])
    onnx.save(proto, tmp_path / "sub.onnx")
    _kiln("compile", tmp_path / "sub.onnx", "-o", tmp_path / "sub.so")
    a = np.array([5, -1, 2], np.float32)
    np.save(tmp_path / "a.npy", a)
    r = _kiln("run", tmp_path / "sub.so", "--input", f"a={tmp_path / 'a.npy'}", ok=False)
    assert r.returncode != 0 and "no --input for 'b'" in r.stderr and "--fill" in r.stderr
    r = _kiln("run", tmp_path / "sub.so", "--input", f"a={tmp_path / 'a.npy'}", "--fill", "ones",
              "--output-npz", tmp_path / "c.npz")
    assert "filled input 'b'" in r.stdout and "filled input 'a'" not in r.stdout
    np.testing.assert_allclose(np.load(tmp_path / "c.npz")["c"], a - 1, **TOL)


def test_fill_refuses_a_symbolic_input_on_the_reference_executor(tmp_path):
    proto = models.model([helper.make_node("Relu", ["x"], ["y"])],
                         [helper.make_tensor_value_info("x", TensorProto.FLOAT, ["batch", 3])],
                         [helper.make_tensor_value_info("y", TensorProto.FLOAT, ["batch", 3])])
    onnx.save(proto, tmp_path / "relu.onnx")
    r = _kiln("run", tmp_path / "relu.onnx", "--print-top", 1, ok=False)
    assert r.returncode != 0 and "symbolic" in r.stderr and "--input-shape x:" in r.stderr
    r = _kiln("run", tmp_path / "relu.onnx", "--input-shape", "x:2,3", "--fill", "ones", "--print-top", 1)
    assert "top 1 of 'y' f32[2, 3]:" in r.stdout


def test_print_top_lists_the_largest_entries_with_their_indices(tmp_path):
    logits = np.array([[0.5, 3.0, -1.0, 3.0, 2.5, 0.0]], np.float32)
    proto = models.model([helper.make_node("Add", ["x", "l"], ["y"])],
                         [helper.make_tensor_value_info("x", TensorProto.FLOAT, [1, 6])],
                         [helper.make_tensor_value_info("y", TensorProto.FLOAT, [1, 6])],
                         [onnx.numpy_helper.from_array(logits, "l")])
    onnx.save(proto, tmp_path / "top.onnx")
    _kiln("compile", tmp_path / "top.onnx")
    for model_file in ["top.so", "top.onnx"]:
        out = _kiln("run", tmp_path / model_file, "--fill", "zeros", "--print-top", 3).stdout
        block = out[out.index("top 3 of 'y' f32[1, 6]:"):].splitlines()[1:4]
        rows = [re.match(r"\s+(\d+)\s+\[(\d+), (\d+)\]\s+(\S+)", line).groups() for line in block]
        # Ties in index order: 3.0 at 1, then 3.0 at 3, then 2.5 at 4 (numpy's stable sort agrees).
        expected = np.argsort(-logits[0], kind="stable")[:3]
        assert [int(r[2]) for r in rows] == list(expected) == [1, 3, 4]
        assert [float(r[3]) for r in rows] == [3.0, 3.0, 2.5]


def _check_trace(trace, runs, kernels):
    """The trace-event format's required fields, one event per kernel launch per run, kernels
    nested in their run and in order."""
    events = trace["traceEvents"]
    for e in events:
        assert {"name", "ph", "pid"} <= set(e) and e["ph"] in ("X", "M")
        if e["ph"] == "X":
            assert isinstance(e["ts"], (int, float)) and e["dur"] >= 0 and isinstance(e["tid"], int)
    run_events = [e for e in events if e.get("cat") == "run"]
    kernel_events = [e for e in events if e.get("cat") == "kernel"]
    assert len(run_events) == runs and len(kernel_events) == runs * kernels
    for run in run_events:
        inside = [e for e in kernel_events if e["args"]["run"] == run["args"]["run"]]
        assert [e["args"]["step"] for e in inside] == list(range(1, kernels + 1))
        for e in inside:
            assert run["ts"] - 1e-3 <= e["ts"] and e["ts"] + e["dur"] <= run["ts"] + run["dur"] + 1e-3
            assert e["args"]["symbol"].startswith("kiln_") and e["args"]["bytes"] > 0
            assert all(re.match(r".+: \w+\[[\d, ]*\]$", t) for t in e["args"]["tensors"])
    assert any(e["name"] == "process_name" for e in events)


def test_trace_has_one_event_per_kernel_launch_per_run(mlp_files, tmp_path):
    d, _ = mlp_files
    path = tmp_path / "trace.json"
    r = _kiln("run", d / "mlp.so", "--repeat", 3, "--trace", path)
    kernels = int(re.search(r"trace: 3 runs x (\d+) kernel launches", r.stdout).group(1))
    assert kernels >= 1
    with open(path, encoding="utf-8") as f:
        _check_trace(json.load(f), 3, kernels)


def test_trace_applies_to_artifacts_only(mlp_files, tmp_path):
    d, _ = mlp_files
    r = _kiln("run", d / "mlp.onnx", "--trace", tmp_path / "t.json", ok=False)
    assert r.returncode != 0 and "--trace apply to compiled artifacts only" in r.stderr


def test_python_module_trace(mlp_files, tmp_path):
    d, _ = mlp_files
    m = kiln.load(str(d / "mlp.so"))
    trace = m.trace({"x": np.ones((2, 4), np.float32)}, repeat=2, path=tmp_path / "t.json")
    kernels = len([e for e in trace["traceEvents"] if e.get("cat") == "kernel"]) // 2
    _check_trace(trace, 2, kernels)
    with open(tmp_path / "t.json", encoding="utf-8") as f:
        assert json.load(f) == trace


def _compile_under_terminal(args, env, command="compile"):
    """kiln COMMAND with stderr on a pseudo-terminal: what it drew there, and its stdout."""
    import pty
    import select
    master, slave = pty.openpty()
    p = subprocess.Popen([_kiln_cli(), command, *map(str, args)], stdout=subprocess.PIPE, stderr=slave, env=env)
    os.close(slave)
    drawn = b""
    while True:
        ready, _, _ = select.select([master], [], [], 0.2)
        if ready:
            try:
                chunk = os.read(master, 4096)
            except OSError:
                break
            if not chunk:
                break
            drawn += chunk
        elif p.poll() is not None:
            break
    out = p.communicate()[0].decode()
    os.close(master)
    assert p.returncode == 0, out + drawn.decode(errors="replace")
    return drawn.decode(errors="replace"), out


def test_compile_shows_progress_on_a_terminal_only(tmp_path):
    env = dict(os.environ, KILN_CACHE="off", TERM="xterm")
    drawn, out = _compile_under_terminal(["--example", "tiny-cnn", "-o", tmp_path / "t.so"], env)
    lines = [part.replace("\x1b[K", "") for part in drawn.split("\r") if part.replace("\x1b[K", "")]
    phases = [re.match(r"kiln compile: (.+?)(?: \d+/\d+ \w+)?  \d", line).group(1) for line in lines]
    assert phases[0] == "passes" and "codegen (LLVM)" in phases and phases[-1] == "write artifact (plan + link)"
    assert any(re.search(r"codegen \(LLVM\) \d+/\d+ modules", line) for line in lines)
    assert drawn.endswith("\r\x1b[K"), "the line is erased before the report"
    assert "wrote " in out and "kiln compile:" not in out
    quiet, _ = _compile_under_terminal(["--example", "tiny-cnn", "-o", tmp_path / "q.so", "--quiet"], env)
    assert "kiln compile:" not in quiet
    dumb, _ = _compile_under_terminal(["--example", "tiny-cnn", "-o", tmp_path / "d.so"], dict(env, TERM="dumb"))
    assert "kiln compile:" not in dumb
    piped = _kiln("compile", "--example", "tiny-cnn", "-o", tmp_path / "p.so")
    assert "kiln compile:" not in piped.stderr and "\r" not in piped.stderr


def test_quantize_shows_its_phases_on_a_terminal_only(tmp_path, mlp_files):
    d, _ = mlp_files
    np.save(tmp_path / "cal.npy", np.random.default_rng(0).standard_normal((16, 4)).astype(np.float32))
    args = [d / "mlp.onnx", "--calibration", tmp_path / "cal.npy", "-o", tmp_path / "q.onnx"]
    env = dict(os.environ, KILN_CACHE="off", TERM="xterm")
    drawn, out = _compile_under_terminal(args, env, command="quantize")
    lines = [part.replace("\x1b[K", "") for part in drawn.split("\r") if part.replace("\x1b[K", "")]
    assert any(re.match(r"kiln quantize: calibrating \d+/8 samples", line) for line in lines), lines
    assert any(line.startswith("kiln quantize: compiling the f32 model") for line in lines), lines
    assert drawn.endswith("\r\x1b[K") and "model output y" in out
    quiet, _ = _compile_under_terminal(args + ["--quiet"], env, command="quantize")
    assert "kiln quantize:" not in quiet
    piped = _kiln("quantize", *args)
    assert "kiln quantize:" not in piped.stderr and "calibrating" not in piped.stderr
