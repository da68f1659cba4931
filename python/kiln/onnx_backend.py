"""kiln.onnx_backend: ONNX's backend interface (onnx.backend.base.Backend) over Kiln, so ONNX's own
test runner (onnx.backend.test.BackendTest) and other ONNX tooling can drive Kiln:

    import kiln.onnx_backend as backend
    rep = backend.prepare(model)            # compiles (kiln.compile, -O3, this machine)
    outputs = rep.run([x, y])               # a tuple of numpy arrays in graph-output order

Kiln compiles static graphs: a graph input that Kiln needs at compile time (a Reshape's shape,
Pad's pads, TopK's k fed as graph inputs, as ONNX's node tests do) cannot stay an input. prepare()
then defers compiling to the first run(), which binds those inputs to the values it is given (as
`kiln compile --bind` does; the inputs are found from the compiler's error, which names them) and
compiles; a later run with other values for a bound input compiles again. Devices: "CPU" only.
bfloat16 inputs and outputs are exchanged as float32 (as onnx.numpy_helper reads them; inputs
rounded to nearest even), since numpy has no bfloat16."""
import re

import numpy as np
import onnx
from onnx.backend.base import Backend, BackendRep, Device, DeviceType, namedtupledict

from .compiler import compile as _compile
from .errors import InvalidArgumentError, KilnError, user_error

_RUN_TIME_VALUE = re.compile(r"'([^']*)'\) is computed at run time")
_FROM_INPUTS = re.compile(r"^ \(from graph inputs? ((?:'[^']*'(?:, )?)+)\)")


def runtime_value_inputs(error):
    """The graph inputs a KilnError says must be known at compile time ([] when it says none)."""
    reason = error.reason or str(error)
    names = []
    for m in _RUN_TIME_VALUE.finditer(reason):
        names.append(m.group(1))
        more = _FROM_INPUTS.match(reason[m.end():])
        if more:
            names += re.findall(r"'([^']*)'", more.group(1))
    return names


def _tensor_type(dtype):
    """ONNX's TensorProto element type of a numpy dtype (onnx >= 1.13 names the helper differently)."""
    helper = getattr(onnx.helper, "np_dtype_to_tensor_dtype", None)
    return helper(dtype) if helper else onnx.mapping.NP_TYPE_TO_TENSOR_TYPE[np.dtype(dtype)]


def float_to_bfloat16_bits(a):
    """float32 -> bfloat16 bit patterns (uint16), rounded to nearest even; NaN stays NaN."""
    bits = np.ascontiguousarray(a, dtype=np.float32).view(np.uint32)
    rounded = ((bits + 0x7FFF + ((bits >> 16) & 1)) >> 16).astype(np.uint16)
    return np.where(np.isnan(a), np.uint16(0x7FC0), rounded)


def bfloat16_bits_to_float(bits):
    return (np.asarray(bits, dtype=np.uint16).astype(np.uint32) << 16).view(np.float32)


class KilnBackendRep(BackendRep):
    """A prepared model: compiled now, or at the first run when inputs must be bound."""

    def __init__(self, model, **options):
        self._data = model.SerializeToString()
        self._options = options
        initializers = {t.name for t in model.graph.initializer}
        self.input_names = [i.name for i in model.graph.input if i.name not in initializers]
        self.output_names = [o.name for o in model.graph.output]
        self._bound = {}
        self._module = None
        try:
            self._module = _compile(self._data, **options).load()
        except KilnError as e:
            if not any(n in self.input_names for n in runtime_value_inputs(e)):
                raise

    def _compile_binding(self, feed):
        bound = {}
        for _ in range(len(self.input_names) + 1):
            try:
                module = _compile(self._data, bind=bound, **self._options).load()
                self._module, self._bound = module, bound
                return
            except KilnError as e:
                new = [n for n in runtime_value_inputs(e) if n in feed and n not in bound]
                if not new:
                    raise
                bound.update({n: np.asarray(feed[n]) for n in new})
        raise user_error(InvalidArgumentError, "kiln.onnx_backend", "inputs kept needing binding")

    def run(self, inputs, **kwargs):
        if isinstance(inputs, dict):
            feed = dict(inputs)
        else:
            values = list(inputs) if isinstance(inputs, (list, tuple)) else [inputs]
            if len(values) > len(self.input_names):
                raise user_error(InvalidArgumentError, "KilnBackendRep.run",
                                 f"got {len(values)} inputs, the model has {len(self.input_names)}",
                                 "pass one value per graph input (initializers excluded)")
            feed = dict(zip(self.input_names, values))
        if self._module is None or any(n not in feed or not np.array_equal(v, feed[n]) for n, v in self._bound.items()):
            self._compile_binding(feed)
        feed = {n: v for n, v in feed.items() if n not in self._bound}
        for t in self._module.inputs:
            if t.dtype == "bfloat16" and t.name in feed and np.asarray(feed[t.name]).dtype == np.float32:
                feed[t.name] = float_to_bfloat16_bits(feed[t.name])
        outputs = self._module.run(feed)
        for t in self._module.outputs:
            if t.dtype == "bfloat16":
                outputs[t.name] = bfloat16_bits_to_float(outputs[t.name])
        return namedtupledict("Outputs", self.output_names, rename=True)(*[outputs[n] for n in self.output_names])


class KilnBackend(Backend):
    @classmethod
    def is_compatible(cls, model, device="CPU", **kwargs):
        return cls.supports_device(device)

    @classmethod
    def prepare(cls, model, device="CPU", **kwargs):
        """Compiles `model` (a ModelProto, bytes or path). kwargs: opt_level, target, input_shapes."""
        if not cls.supports_device(device):
            raise user_error(InvalidArgumentError, f"device {device!r}", "Kiln runs on the CPU only",
                             "use device='CPU'")
        if isinstance(model, (bytes, bytearray)):
            model = onnx.load_model_from_string(bytes(model))
        elif not isinstance(model, onnx.ModelProto):
            model = onnx.load(model)
        return KilnBackendRep(model, **kwargs)

    @classmethod
    def run_model(cls, model, inputs, device="CPU", **kwargs):
        return cls.prepare(model, device, **kwargs).run(inputs)

    @classmethod
    def run_node(cls, node, inputs, device="CPU", outputs_info=None, opset_version=None, **kwargs):
        """Runs one node on `inputs` (numpy arrays, one per node input) by compiling a one-node model."""
        arrays = [np.asarray(x) for x in inputs]
        names = [n for n in node.input]
        value_infos = [onnx.helper.make_tensor_value_info(n, _tensor_type(a.dtype), a.shape)
                       for n, a in zip(names, arrays) if n]
        outputs = [onnx.helper.make_empty_tensor_value_info(n) for n in node.output if n]
        graph = onnx.helper.make_graph([node], "run_node", value_infos, outputs)
        opset = opset_version or onnx.defs.onnx_opset_version()
        model = onnx.helper.make_model(graph, opset_imports=[onnx.helper.make_opsetid(node.domain or "", opset)])
        return cls.prepare(model, device, **kwargs).run([a for n, a in zip(names, arrays) if n])

    @classmethod
    def supports_device(cls, device):
        return Device(device).type == DeviceType.CPU


prepare = KilnBackend.prepare
run_model = KilnBackend.run_model
run_node = KilnBackend.run_node
supports_device = KilnBackend.supports_device
is_compatible = KilnBackend.is_compatible
