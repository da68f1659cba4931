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
    distinct_kernels, split_groups, memory (weights/planned/naive bytes), phases ({phase:
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


def _quantize_unavailable():
    return errors.user_error(errors.UnsupportedError, "kiln.quantize",
                             "int8 quantization is not available in this build",
                             "use a Kiln build that has include/kiln/driver/quantize.h (docs/python.md)",
                             kind="unsupported")


def compile(model, *, target="native", opt_level=3, input_shapes=None, quantize=None, calibration=None,
            bind=None):
    """Compiles an ONNX model into a kiln.Artifact.

    model: path, bytes or onnx.ModelProto. target: "native" (this machine) or a Kiln target
    string ("llvm -mcpu=znver4", docs/codegen.md). opt_level: 0..3. input_shapes: {input name:
    shape} fixing symbolic dimensions. bind: {input name: array} making inputs compile-time
    constants (as `kiln compile --bind`). quantize/calibration: int8 (kiln.quantize)."""
    if quantize is not None or calibration is not None:
        raise _quantize_unavailable()
    if not isinstance(opt_level, int) or isinstance(opt_level, bool) or not 0 <= opt_level <= 3:
        raise errors.user_error(errors.InvalidArgumentError, "opt_level", f"{opt_level!r} is not an integer 0..3",
                                "use 0 (no passes) .. 3 (all passes, the default)")
    if not isinstance(target, str):
        raise errors.user_error(errors.InvalidArgumentError, "target", f"{target!r} is not a string",
                                "use \"native\" or a target string such as \"llvm -mcpu=znver4\"")
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
                                input_shapes=shapes, bind=bound)
    except BaseException:
        shutil.rmtree(tmpdir, True)
        raise
    return Artifact(out, report, tmpdir)


def quantize(*args, **kwargs):
    """int8 quantization (libkiln's kiln::quantize_model). Not bound yet: raises UnsupportedError
    ("not available in this build"); _kiln._have_quantize tells whether libkiln has the API."""
    raise _quantize_unavailable()
