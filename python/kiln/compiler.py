"""kiln.compile (ONNX model -> Artifact) and kiln.quantize. Thin: the work is libkiln's driver
(driver::compile_graph, the same path as `kiln compile`), called with the GIL released."""
import os
import shutil
import tempfile
import weakref

import numpy as np

from . import errors
from ._native import load as _load_native

_kiln = _load_native()

_TARGET_ALIASES = {"native": "llvm", "host": "llvm"}


class Artifact:
    """A compiled model: one shared library (in a private temporary directory until saved).

    report: the compile report as data (what `kiln compile` prints): target, passes (name,
    seconds, changed, calls_before, calls_after, stats), kernels (symbol, fused_ops, split),
    distinct_kernels, codegen_threads, codegen_modules, cached_modules (of them, from the kernel
    cache), split_groups, memory (weights/planned/naive bytes), phases ({phase:
    seconds}) and summary (the CLI's text)."""

    def __init__(self, path, report, tmpdir):
        self.path = path
        self.report = report
        self._finalizer = weakref.finalize(self, shutil.rmtree, tmpdir, True)

    def save(self, path):
        """Copies the artifact to `path` (a .so that `kiln run`, kiln.load or C programs load)."""
        path = os.fspath(path)
        try:
            shutil.copyfile(self.path, path)
        except OSError as e:
            raise errors.user_error(errors.KilnIOError, path, f"cannot write the artifact: {e.strerror}",
                                    "check that the directory exists and is writable", kind="I/O error") from e
        return path

    def load(self):
        """The artifact loaded for running (kiln.Module)."""
        from .module import Module
        return Module(self.path)

    def __repr__(self):
        return f"<kiln.Artifact {self.path} ({len(self.report['kernels'])} kernel calls)>"


def _model_source(model):
    """(path, data, display name) of a model given as a path, bytes or an onnx.ModelProto."""
    if isinstance(model, (str, os.PathLike)):
        path = os.fspath(model)
        return path, None, os.path.basename(path)
    if isinstance(model, (bytes, bytearray, memoryview)):
        return None, bytes(model), "<bytes>"
    if hasattr(model, "SerializeToString") and hasattr(model, "graph"):
        name = getattr(model.graph, "name", "") or "model"
        return None, model.SerializeToString(), f"<onnx.ModelProto {name}>"
    raise errors.user_error(errors.InvalidArgumentError, "kiln.compile",
                            f"model is a {type(model).__name__}, not a path, bytes or onnx.ModelProto",
                            "pass the .onnx file's path, its bytes, or onnx.load(path)")


def compile(model, *, target="native", opt_level=3, input_shapes=None, quantize=None, calibration=None,
            bind=None, records=None):
    """Compiles an ONNX model into a kiln.Artifact.

    model: path, bytes or onnx.ModelProto. target: "native" (this machine) or a Kiln target
    string ("llvm -mcpu=znver4", docs/codegen.md). opt_level: 0..3. input_shapes: {input name:
    shape} fixing symbolic dimensions. bind: {input name: array} making inputs compile-time
    constants (as `kiln compile --bind`). quantize="int8" with calibration (as for kiln.quantize):
    quantizes first, then compiles the QDQ model (as `kiln compile --quantize int8`).
    records: a tuning-records database made by `kiln tune` (as `kiln compile --records`): each
    kernel and graph-level layer choice with a record for this machine is built as tuned;
    report["tuned"] says how many (kernels, layer_choices of layer_choice_points)."""
    if quantize is not None or calibration is not None:
        if quantize != "int8":
            raise errors.user_error(errors.InvalidArgumentError, "quantize", f"{quantize!r} is not a quantization",
                                    "use quantize=\"int8\" with calibration=...")
        qdir = tempfile.mkdtemp(prefix="kiln-quantize-")
        try:
            qdq = quantize_model(model, calibration, os.path.join(qdir, "model.int8.onnx"),
                                 input_shapes=input_shapes)["path"]
            return compile(qdq, target=target, opt_level=opt_level, input_shapes=input_shapes, bind=bind,
                           records=records)
        finally:
            shutil.rmtree(qdir, True)
    if not isinstance(opt_level, int) or isinstance(opt_level, bool) or not 0 <= opt_level <= 3:
        raise errors.user_error(errors.InvalidArgumentError, "opt_level", f"{opt_level!r} is not an integer 0..3",
                                "use 0 (no passes) .. 3 (all passes, the default)")
    if not isinstance(target, str):
        raise errors.user_error(errors.InvalidArgumentError, "target", f"{target!r} is not a string",
                                "use \"native\" or a target string such as \"llvm -mcpu=znver4\"")
    if records is not None and not isinstance(records, (str, os.PathLike)):
        raise errors.user_error(errors.InvalidArgumentError, "records", f"{records!r} is not a path",
                                "pass the .db file `kiln tune MODEL --records FILE.db` wrote")
    path, data, name = _model_source(model)
    shapes = {}
    for input_name, shape in (input_shapes or {}).items():
        try:
            shapes[str(input_name)] = [int(d) for d in shape]
        except (TypeError, ValueError):
            raise errors.user_error(errors.InvalidArgumentError, f"input_shapes['{input_name}']",
                                    f"{shape!r} is not a sequence of integers", "e.g. {'x': [1, 3, 224, 224]}") from None
    bound = {str(k): np.require(v, requirements="C") for k, v in (bind or {}).items()}  # keeps 0-d arrays 0-d
    tmpdir = tempfile.mkdtemp(prefix="kiln-artifact-")
    try:
        out = os.path.join(tmpdir, "model.so")
        report = _kiln._compile(out, path=path, data=data, name=name,
                                target=_TARGET_ALIASES.get(target, target), opt_level=opt_level,
                                input_shapes=shapes, bind=bound,
                                records=os.fspath(records) if records is not None else "")
    except BaseException:
        shutil.rmtree(tmpdir, True)
        raise
    return Artifact(out, report, tmpdir)


def _calibration_sources(calibration, tmpdir):
    """[(input name or "", .npy path or directory)] for _kiln._quantize. calibration: a path (file or
    directory), an array (the only input's samples stacked on axis 0), or {input name: path or array}."""
    if calibration is None:
        return []
    if isinstance(calibration, (str, os.PathLike, np.ndarray)):
        calibration = {"": calibration}
    if not isinstance(calibration, dict):
        raise errors.user_error(errors.InvalidArgumentError, "calibration",
                                f"{type(calibration).__name__} is not a path, an array or a dict",
                                "pass a .npy path, a directory of .npy files, an array of samples stacked on "
                                "axis 0, or {input name: path or array}")
    sources = []
    for i, (name, value) in enumerate(calibration.items()):
        if isinstance(value, (str, os.PathLike)):
            sources.append((str(name), os.fspath(value)))
            continue
        path = os.path.join(tmpdir, f"calibration{i}.npy")
        np.save(path, np.require(value, requirements="C"))
        sources.append((str(name), path))
    return sources


def quantize_model(model, calibration=None, output=None, *, method="minmax", percentile=99.99, skip=(),
                   dynamic=False, reduce_range=False, input_shapes=None, report_samples=4):
    """Post-training int8 quantization (as `kiln quantize`, docs/int8.md): runs the f32 model
    compiled by Kiln on the calibration samples, and writes a standard QDQ ONNX model to `output`
    (default: MODEL.int8.onnx next to a model given by path). Returns the report as a dict: path,
    samples, quantized_nodes, layers (per-layer error against f32, worst first), outputs, summary.

    model: path, bytes or onnx.ModelProto. calibration: a .npy path (samples stacked on axis 0), a
    directory of .npy files, an array, or {input name: path or array}. method: "minmax",
    "percentile" or "entropy". skip: node names kept in f32. dynamic: MatMul/Gemm quantized with
    run-time activation scales (no calibration needed). reduce_range: 7-bit weights."""
    tmpdir = tempfile.mkdtemp(prefix="kiln-quantize-")
    try:
        path, data, _ = _model_source(model)
        if path is None:
            path = os.path.join(tmpdir, "model.onnx")
            with open(path, "wb") as f:
                f.write(data)
        if output is None:
            if not isinstance(model, (str, os.PathLike)):
                raise errors.user_error(errors.InvalidArgumentError, "output", "no output path for a model given as data",
                                        "pass output=\"model.int8.onnx\"")
            output = os.path.splitext(path)[0] + ".int8.onnx"
        shapes = {str(k): [int(d) for d in v] for k, v in (input_shapes or {}).items()}
        return _kiln._quantize(path, os.fspath(output), calibration=_calibration_sources(calibration, tmpdir),
                               method=str(method), percentile=float(percentile), skip=[str(s) for s in skip],
                               dynamic=bool(dynamic), reduce_range=bool(reduce_range), input_shapes=shapes,
                               report_samples=int(report_samples))
    finally:
        shutil.rmtree(tmpdir, True)


quantize = quantize_model
