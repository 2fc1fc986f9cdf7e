"""micro-runtime: a Python emulator of TensorFlow Lite for Microcontrollers.

Exact tensor-arena sizing, TFLM's allocation audit, and bit-exact int8 inference on the
host. Main entry points:

* :class:`Interpreter` — drop-in for ``tflite_micro.runtime.Interpreter``;
* :class:`MicroInterpreter` — TFLM's interpreter loop over an emulated arena;
* :func:`load_model`, :class:`OpResolver`, the target profiles (``host64``, ``mcu32``);
* the exception family rooted at :class:`MicroRuntimeError`.
"""
from .errors import (ArenaTooSmallError, InputError, InterpreterStateError, KernelError,
                     MicroRuntimeError, ModelError, UnsupportedOpError)
from .model import Model, load_model
from .op_resolver import OpResolver, default_op_resolver
from .targets import DEFAULT_TARGET, TARGETS, Target, get_target
from .interpreter import MicroInterpreter
from .api import Interpreter, InterpreterConfig

__version__ = "0.1.0"

__all__ = [
    "Interpreter", "InterpreterConfig", "MicroInterpreter", "Model", "load_model", "OpResolver",
    "default_op_resolver", "Target", "TARGETS", "DEFAULT_TARGET", "get_target",
    "MicroRuntimeError", "ModelError", "UnsupportedOpError", "ArenaTooSmallError", "InputError",
    "InterpreterStateError", "KernelError",
]
