"""The exception family of micro-runtime.

Every error a public call raises on bad input is a :class:`MicroRuntimeError`.
Some subclasses also inherit the builtin exception that ``tflite_micro``'s Python
wrapper raises in the same situation (``ValueError`` for bad inputs,
``RuntimeError`` for a failed allocation), so code written for the wrapper keeps
working after switching the import.
"""
from __future__ import annotations

from typing import Optional, Sequence


class MicroRuntimeError(Exception):
    """Base class of every error raised by micro-runtime on bad input or misuse."""


class ModelError(MicroRuntimeError, ValueError):
    """The model file is malformed, inconsistent, or uses something TFLM rejects.

    The message names the subgraph / tensor / operator at fault where one is known.
    """


class UnsupportedOpError(ModelError):
    """The model uses operators the op resolver has no registration for.

    ``missing`` lists every missing operator name (builtin names such as
    ``"CONV_2D"`` or custom op names), all at once.
    """

    def __init__(self, missing: Sequence[str], message: Optional[str] = None):
        self.missing = list(missing)
        if message is None:
            message = ("model uses operator(s) with no registration in the op resolver: "
                       + ", ".join(self.missing))
        super().__init__(message)


class ArenaTooSmallError(MicroRuntimeError, RuntimeError):
    """An allocation did not fit in the tensor arena.

    ``requested``, ``available`` and ``missing`` are bytes, as in TFLM's message
    ("Requested: X, available Y, missing: Z"). ``min_arena_bytes`` is the smallest arena
    that would have worked, when it could be computed (else ``None``).
    """

    def __init__(self, message: str, requested: int, available: int, missing: int,
                 arena_bytes: Optional[int] = None, min_arena_bytes: Optional[int] = None):
        self.requested = int(requested)
        self.available = int(available)
        self.missing = int(missing)
        self.arena_bytes = arena_bytes
        self.min_arena_bytes = min_arena_bytes
        self.base_message = message
        super().__init__(self._compose())

    #: when ``min_arena_bytes`` could not be measured because the model needs more than
    #: the bytes micro-runtime sets aside for measuring: a size it needs at least (else None)
    lower_bound: Optional[int] = None

    def _compose(self) -> str:
        """TFLM's message, then the arena size and the size that works, each said once."""
        text = self.base_message
        if self.arena_bytes is not None:
            text += f"; the arena is {self.arena_bytes} bytes"
            if self.min_arena_bytes is not None:
                text += f", this model needs at least {self.min_arena_bytes} bytes"
            elif self.lower_bound is not None:
                text += (f", this model needs at least {self.lower_bound} bytes (models this "
                         "large are not measured further)")
        return text

    def with_context(self, arena_bytes: Optional[int], min_arena_bytes: Optional[int],
                     lower_bound: Optional[int] = None) -> "ArenaTooSmallError":
        self.arena_bytes = arena_bytes
        self.min_arena_bytes = min_arena_bytes
        self.lower_bound = lower_bound
        self.args = (self._compose(),)
        return self


class InputError(MicroRuntimeError, ValueError):
    """A value given by the caller is wrong: dtype, shape, index, name, option."""


class TensorIndexError(InputError, IndexError):
    """An input / output / tensor index out of range. Also an ``IndexError``, as the
    tflite_micro package raises, so ``except IndexError`` code keeps working."""


class InterpreterStateError(MicroRuntimeError, RuntimeError):
    """The interpreter is used in a way its state does not allow (e.g. tensors read
    before any allocation, ``invoke()`` after a failed allocation, or two threads at
    once)."""


class KernelError(MicroRuntimeError, RuntimeError):
    """An operator's kernel rejected its tensors or parameters (in prepare) or failed
    while running (in invoke). The message names the op, its index and the problem."""

    def __init__(self, message: str, op_name: Optional[str] = None, op_index: Optional[int] = None,
                 subgraph_index: int = 0):
        self.op_name = op_name
        self.op_index = op_index
        self.subgraph_index = subgraph_index
        self.detail = message
        if op_name is not None:
            where = f"{op_name} (operator #{op_index}"
            if subgraph_index:
                where += f" of subgraph {subgraph_index}"
            where += ")"
            message = f"{where}: {message}"
        super().__init__(message)


class LimitError(MicroRuntimeError, RuntimeError):
    """A bound on the work or memory of a call was reached: the loop iterations a sizing
    pass allows (a WHILE whose condition stays true), or host memory for the arena's
    bytes. ``limit`` names the bound; the message says how to change it, where it can be
    changed (see docs/errors.md)."""

    def __init__(self, message: str, limit: str = ""):
        self.limit = limit
        super().__init__(message)


__all__ = [
    "MicroRuntimeError", "ModelError", "UnsupportedOpError", "ArenaTooSmallError",
    "InputError", "TensorIndexError", "InterpreterStateError", "KernelError", "LimitError",
]

