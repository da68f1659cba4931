"""kiln.load / kiln.Module: running an artifact through libkiln_runtime.

Inputs: numpy arrays, or anything with __dlpack__ (torch.Tensor, ...: viewed through
numpy.from_dlpack, no copy), or anything numpy.asarray accepts. The dtype and shape must be the
input's exactly (no silent cast); bfloat16 tensors, which numpy lacks, are exchanged as uint16
arrays of their bit patterns (TensorInfo.dtype says "bfloat16"). Copy rule: a C-contiguous array whose data is 64-byte aligned
is read in place (zero-copy; kiln.empty and PyTorch allocate so); a non-contiguous one is made
contiguous first (numpy.ascontiguousarray, a copy) and any other is copied into the run's own
buffer. Module.zero_copy_inputs tells what the last run did.

Outputs: numpy arrays viewing the run's output buffers (zero-copy; torch.from_dlpack(out) shares
them too). They stay valid as long as you hold them: a later run uses other buffers."""
import collections
import json
import os

import numpy as np

from . import errors
from ._native import load as _load_native

_kiln = _load_native()

TensorInfo = collections.namedtuple("TensorInfo", ["name", "dtype", "shape"])


def _dtype(name):
    return np.dtype(name) if name != "bfloat16" else name


def _as_array(value, name):
    """A numpy array of input `name`'s `value` (the binding makes it C-contiguous when it is not)."""
    if isinstance(value, np.ndarray):
        return value
    what = f"input '{name}'"
    if hasattr(value, "__dlpack__"):
        try:
            array = np.from_dlpack(value)
        except (BufferError, RuntimeError, TypeError, ValueError) as e:
            raise errors.user_error(errors.InvalidArgumentError, what, f"cannot be read through DLPack: {e}",
                                    "pass a CPU tensor without grad (e.g. t.detach().cpu()) or a numpy array") from e
    else:
        try:
            array = np.asarray(value)
        except Exception as e:
            raise errors.user_error(errors.InvalidArgumentError, what,
                                    f"a {type(value).__name__} is not an array", "pass a numpy array") from e
    return array


class Module:
    """A loaded artifact. inputs/outputs: TensorInfo(name, dtype, shape) lists in order."""

    def __init__(self, path):
        path = os.fspath(path)
        self._m = _kiln._Module(path)
        self.path = path
        self.inputs = [TensorInfo(n, _dtype(d), s) for n, d, s in self._m.input_infos()]
        self.outputs = [TensorInfo(n, _dtype(d), s) for n, d, s in self._m.output_infos()]
        self._input_index = {t.name: i for i, t in enumerate(self.inputs)}

    def _arrays(self, inputs, kwargs):
        if not kwargs and type(inputs) is dict and len(inputs) == len(self.inputs):  # the common case, fast
            try:
                return [_as_array(inputs[t.name], t.name) for t in self.inputs]
            except KeyError:
                pass  # an unknown name: the general path below names it
        if kwargs:
            if inputs is not None:
                raise errors.user_error(errors.InvalidArgumentError, "Module.run",
                                        "inputs given both positionally and as keywords", "use one or the other")
            inputs = kwargs
        if isinstance(inputs, dict):
            slots = [None] * len(self.inputs)
            for name, value in inputs.items():
                i = self._input_index.get(name)
                if i is None:
                    raise errors.user_error(errors.NotFoundError, f"input '{name}'", "the model has no such input",
                                            "its inputs: " + ", ".join(t.name for t in self.inputs), kind="not found")
                slots[i] = _as_array(value, name)
            missing = [t.name for t, a in zip(self.inputs, slots) if a is None]
            if missing:
                raise errors.user_error(errors.InvalidArgumentError, "Module.run",
                                        "missing input(s) " + ", ".join(f"'{n}'" for n in missing),
                                        "pass every input: " + ", ".join(t.name for t in self.inputs))
            return slots
        if isinstance(inputs, (list, tuple)):
            values = inputs
        elif inputs is None:
            values = []
        else:
            values = [inputs]
        if len(values) != len(self.inputs):
            raise errors.user_error(errors.InvalidArgumentError, "Module.run",
                                    f"got {len(values)} input(s), the model has {len(self.inputs)} ("
                                    + ", ".join(t.name for t in self.inputs) + ")",
                                    "pass a dict {name: array} with every input")
        return [_as_array(v, t.name) for v, t in zip(values, self.inputs)]

    def run(self, inputs=None, **kwargs):
        """Runs once. inputs: {name: array}, a list in input order, or one array for a
        single-input model (or keywords name=array). Returns {output name: numpy array}."""
        outs = self._m.run(self._arrays(inputs, kwargs))
        return {t.name: a for t, a in zip(self.outputs, outs)}

    def __call__(self, *args, **kwargs):
        """module(x) / module(x, y): the output array, or a tuple of them for several outputs."""
        outs = self._m.run(self._arrays(list(args) if args else None, kwargs))
        return outs[0] if len(outs) == 1 else tuple(outs)

    @property
    def zero_copy_inputs(self):
        """{input name: True when the last run read it in place, False when it was copied}."""
        return {t.name: bool(z) for t, z in zip(self.inputs, self._m.last_zero_copy())}

    def set_num_threads(self, n):
        """Threads of the runtime's pool (process-wide, as KILN_NUM_THREADS; 0 = one per core)."""
        _kiln.set_num_threads(int(n))

    def profile(self, inputs=None, repeat=10, report=False):
        """Runs `repeat` times timing every kernel. Returns rows {symbol, fused_ops, calls,
        seconds} per kernel (per run), slowest first; with report=True also the runtime's table."""
        rows, text = self._m.profile(self._arrays(inputs, {}), int(repeat))
        rows.sort(key=lambda r: r["seconds"], reverse=True)
        return (rows, text) if report else rows

    def trace(self, inputs=None, repeat=1, path=None):
        """Runs `repeat` times recording every kernel launch. Returns the trace as a dict in
        Chrome's trace-event format (Perfetto, chrome://tracing); with `path`, also writes it."""
        text = self._m.trace(self._arrays(inputs, {}), int(repeat))
        if path is not None:
            with open(path, "w", encoding="utf-8") as f:
                f.write(text)
        return json.loads(text)

    def __repr__(self):
        return f"<kiln.Module {self.path}: inputs {[tuple(t) for t in self.inputs]}>"


def load(path):
    """Loads an artifact (.so written by kiln.compile / `kiln compile`) for running."""
    return Module(path)


def empty(shape, dtype=np.float32):
    """A zero-filled, C-contiguous, 64-byte aligned numpy array: inputs in it are read in place."""
    return _kiln.aligned_empty([int(d) for d in shape], np.dtype(dtype))
