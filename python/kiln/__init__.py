"""Kiln: a deep-learning compiler and runtime, from Python.

    import kiln
    artifact = kiln.compile("resnet50.onnx")          # or bytes, or an onnx.ModelProto
    artifact.save("resnet50.so")
    module = kiln.load("resnet50.so")
    outputs = module.run({"input": x})                 # {output name: numpy array}

A thin layer over libkiln (the compiler) and libkiln_runtime (the runtime): see docs/python.md."""
from ._native import load as _load_native

_kiln = _load_native()

from .errors import (IncompatibleError, InternalError, InvalidArgumentError, KilnError,  # noqa: E402
                     KilnIOError, ModelParseError, NotFoundError, RunError, UnsupportedError)
from .compiler import Artifact, compile, quantize  # noqa: E402
from .module import Module, TensorInfo, empty, load  # noqa: E402

__version__ = _kiln.__version__


def set_num_threads(n):
    """Threads of the runtime's pool, for every module (0 = one per core)."""
    _kiln.set_num_threads(int(n))


def get_num_threads():
    return _kiln.get_num_threads()


def doctor(print_report=True):
    """What this installation is made of and whether it can compile and run (`kiln doctor`).
    Returns {ok, problems: [{what, fix}], text}; prints the text unless print_report=False."""
    result = _kiln.doctor(__version__)
    if print_report:
        print(result["text"], end="")
    return result


def versions():
    """{kiln, compiler, runtime, runtime_abi}: the package's and the loaded libraries' versions."""
    return {"kiln": __version__, "compiler": _kiln.compiler_version(), "runtime": _kiln.runtime_version(),
            "runtime_abi": _kiln.runtime_abi_version()}


__all__ = ["Artifact", "Module", "TensorInfo", "compile", "load", "empty", "quantize", "doctor", "versions",
           "set_num_threads", "get_num_threads", "KilnError", "InvalidArgumentError", "NotFoundError",
           "ModelParseError", "UnsupportedError", "IncompatibleError", "KilnIOError", "RunError", "InternalError"]
