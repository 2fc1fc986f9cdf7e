"""micro-runtime: a Python emulator of TensorFlow Lite for Microcontrollers.

Exact tensor-arena sizing, TFLM's allocation audit, and bit-exact int8 inference on the
host. Main entry points:

* :class:`Interpreter` — drop-in for ``tflite_micro.runtime.Interpreter``;
* :class:`MicroInterpreter` — TFLM's interpreter loop over an emulated arena;
* :func:`load_model`, :class:`OpResolver`, the target profiles (``host64``, ``mcu32``);
* the exception family rooted at :class:`MicroRuntimeError`.
"""
import os as _os
import sys as _sys

# Kernels multiply many small matrices; OpenBLAS's threads cost more than they give there
# (see micro_runtime/_blas.py, which also handles a numpy loaded before us).
if "numpy" not in _sys.modules and _os.environ.get("MICRO_RUNTIME_BLAS_THREADS", "1") != "0":
    _os.environ.setdefault("OPENBLAS_NUM_THREADS", _os.environ.get("MICRO_RUNTIME_BLAS_THREADS", "1"))

from .errors import (ArenaTooSmallError, InputError, InterpreterStateError, KernelError,
                     MicroRuntimeError, ModelError, UnsupportedOpError)
from .targets import DEFAULT_TARGET, TARGETS, Target, get_target

# The interpreter pulls in the arena and kernel packages, which themselves use
# micro_runtime.errors: load those names on first use to keep imports acyclic.
_LAZY = {
    "Model": ".model", "load_model": ".model", "OpResolver": ".op_resolver",
    "default_op_resolver": ".op_resolver", "MicroInterpreter": ".interpreter",
    "Interpreter": ".api", "InterpreterConfig": ".api",
}


def __getattr__(name):
    if name in _LAZY:
        import importlib
        value = getattr(importlib.import_module(_LAZY[name], __name__), name)
        globals()[name] = value
        return value
    raise AttributeError(f"module 'micro_runtime' has no attribute {name!r}")

__version__ = "0.1.0"

__all__ = [
    "Interpreter", "InterpreterConfig", "MicroInterpreter", "Model", "load_model", "OpResolver",
    "default_op_resolver", "Target", "TARGETS", "DEFAULT_TARGET", "get_target",
    "MicroRuntimeError", "ModelError", "UnsupportedOpError", "ArenaTooSmallError", "InputError",
    "InterpreterStateError", "KernelError",
]
