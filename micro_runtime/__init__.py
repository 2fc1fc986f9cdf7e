"""micro-runtime: a Python emulator of TensorFlow Lite for Microcontrollers.

Exact tensor-arena sizing, TFLM's allocation audit, and bit-exact int8 inference on the
host. Main entry points:

* :class:`Interpreter` — drop-in for ``tflite_micro.runtime.Interpreter`` (``import
  micro_runtime as runtime`` replaces ``from tflite_micro import runtime``);
* :class:`MicroInterpreter` — TFLM's interpreter loop over an emulated arena;
  :class:`RecordingMicroInterpreter` — the same, recording TFLM's allocation audit;
* :func:`evaluate` / :class:`Evaluator` — a data set through the model, bit-identical to
  one invoke() per sample, many samples per pass;
* :func:`load_model`, :class:`OpResolver`, the target profiles (``host64``, ``mcu32``,
  ``cortex-m0`` ... ``cortex-m55`` and their ``+cmsis-nn`` builds);
* the exception family rooted at :class:`MicroRuntimeError`.
"""
import os as _os
import sys as _sys

# Kernels multiply many small matrices; OpenBLAS's threads cost more than they give there
# (see micro_runtime/_blas.py, which also handles a numpy loaded before us).
if "numpy" not in _sys.modules and _os.environ.get("MICRO_RUNTIME_BLAS_THREADS", "1") != "0":
    _os.environ.setdefault("OPENBLAS_NUM_THREADS", _os.environ.get("MICRO_RUNTIME_BLAS_THREADS", "1"))

from .errors import (ArenaTooSmallError, InputError, InterpreterStateError, KernelError,
                     LimitError, MicroRuntimeError, ModelError, TensorIndexError,
                     UnsupportedOpError)
from .targets import DEFAULT_TARGET, TARGETS, Target, get_target

# The interpreter pulls in the arena and kernel packages, which themselves use
# micro_runtime.errors: load those names on first use to keep imports acyclic.
_LAZY = {
    "Model": ".model", "load_model": ".model", "OpResolver": ".op_resolver",
    "default_op_resolver": ".op_resolver", "MicroInterpreter": ".interpreter",
    "Interpreter": ".api", "InterpreterConfig": ".api",
    "evaluate": ".batched", "Evaluator": ".batched",
    # the recording layer (top-level package ``recording``), exported here too
    "RecordingMicroInterpreter": "recording", "RecordedAllocationType": "recording",
    "RecordedAllocation": "recording",
}


def __getattr__(name):
    if name in _LAZY:
        import importlib
        module = _LAZY[name]
        value = getattr(importlib.import_module(module, __name__ if module.startswith(".") else None), name)
        globals()[name] = value
        return value
    raise AttributeError(f"module 'micro_runtime' has no attribute {name!r}")


# Modules that moved into micro_runtime.tools / micro_runtime.delegates stay importable by
# their old names (``micro_runtime.model_writer``, ``micro_runtime.float_delegate``, ...).
from ._moved import alias_moved_modules as _alias_moved_modules  # noqa: E402

_alias_moved_modules({
    **{f"{__name__}.{name}": f"{__name__}.tools.{name}"
       for name in ("cli", "sizing", "plan_view", "bench", "drift", "optimizer", "model_writer")},
    **{f"{__name__}.{name}": f"{__name__}.delegates.{name}" for name in ("delegate", "float_delegate")},
})

__version__ = "0.1.0"

__all__ = [
    "Interpreter", "InterpreterConfig", "MicroInterpreter", "RecordingMicroInterpreter",
    "RecordedAllocationType", "RecordedAllocation", "Model", "load_model", "OpResolver",
    "default_op_resolver", "evaluate", "Evaluator", "Target", "TARGETS", "DEFAULT_TARGET",
    "get_target",
    "MicroRuntimeError", "ModelError", "UnsupportedOpError", "ArenaTooSmallError", "InputError",
    "TensorIndexError", "InterpreterStateError", "KernelError", "LimitError",
]
