"""The bounds micro-runtime puts on work and memory, in one place (see docs/errors.md).

Each is a documented default; the parameter or option named beside it changes it.
"""
from __future__ import annotations

from typing import Optional

import numpy as np

from .errors import InputError

#: WHILE iterations a sizing pass allows in its one invoke, all loops of the model
#: together (nested ones included): ``measure_arena(max_loop_iterations=...)``,
#: ``MicroInterpreter.min_arena_bytes()`` (the interpreter's own ``max_loop_iterations``
#: when set), ``--max-loop-iterations`` of size / info / audit / plan / run (run sizes
#: its arena first unless ``--arena-size`` is given). TFLM has no bound: a loop whose
#: condition stays true runs forever there.
SIZING_LOOP_ITERATIONS = 10_000
#: WHILE iterations an invoke allows by default: none (TFLM's behaviour; a run stays
#: interruptible with Ctrl-C). ``MicroInterpreter(max_loop_iterations=N)`` or
#: ``--max-loop-iterations N`` of run / eval / bench / drift sets one.
INVOKE_LOOP_ITERATIONS: Optional[int] = None
#: the largest loop bound accepted
MAX_LOOP_ITERATIONS = 1 << 62


def check_loop_iterations(value, what: str = "max_loop_iterations") -> Optional[int]:
    """``value`` as a loop bound (None = unbounded); InputError unless it is None or an
    integer from 0 to :data:`MAX_LOOP_ITERATIONS`."""
    if value is None:
        return None
    if isinstance(value, bool) or not isinstance(value, (int, np.integer)) \
            or not 0 <= value <= MAX_LOOP_ITERATIONS:
        raise InputError(f"{what} must be None (no bound) or a number of iterations from 0 to "
                         f"{MAX_LOOP_ITERATIONS} (2^62), not {value!r}")
    return int(value)


def check_int_option(value, name: str, low: int, high: int) -> int:
    """``value`` as an integer option from ``low`` to ``high`` (inclusive), else an
    InputError naming ``name`` and the range."""
    if isinstance(value, bool) or not isinstance(value, (int, np.integer)) or not low <= value <= high:
        raise InputError(f"{name} must be an integer from {low} to {high}, not {value!r}")
    return int(value)


__all__ = ["SIZING_LOOP_ITERATIONS", "INVOKE_LOOP_ITERATIONS", "MAX_LOOP_ITERATIONS",
           "check_loop_iterations", "check_int_option"]
