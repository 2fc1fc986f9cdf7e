"""TFLM's C++ method names on the Python classes that model TFLM's.

Code and guides written for TFLM call ``interpreter.AllocateTensors()``,
``interpreter.Invoke()``, ``interpreter.GetMicroAllocator().PrintAllocations()`` ...;
each such name is an alias of the snake_case method it stands for (one table,
:data:`TFLM_ALIASES`, applied by :func:`add_tflm_aliases`; docs/tflm_names.md lists it).
``inputs_size`` and ``outputs_size`` are numbers that may also be called, as in TFLM.
"""
from __future__ import annotations

from typing import Callable, Dict

#: class name -> {TFLM's name: our method's name}
TFLM_ALIASES: Dict[str, Dict[str, str]] = {
    "MicroInterpreter": {
        "AllocateTensors": "allocate_tensors",
        "Invoke": "invoke",
        "Reset": "reset",
        "input_tensor": "input",
        "output_tensor": "output",
        "GetTensor": "tensor",
        "PrintAllocations": "print_allocations",
    },
    "RecordingMicroInterpreter": {
        "GetMicroAllocator": "get_micro_allocator",
        "GetRecordedAllocation": "get_recorded_allocation",
    },
    "RecordingMicroAllocator": {
        "GetRecordedAllocation": "get_recorded_allocation",
        "PrintAllocations": "print_allocations",
        "GetSimpleMemoryAllocator": "get_simple_memory_allocator",
    },
}


def _alias(tflm: str, ours: str) -> Callable:
    def method(self, *args, **kwargs):
        return getattr(self, ours)(*args, **kwargs)
    method.__name__ = tflm
    method.__doc__ = f"TFLM's name for :meth:`{ours}`."
    return method


def add_tflm_aliases(cls: type) -> type:
    """Class decorator: the TFLM names of :data:`TFLM_ALIASES` for ``cls`` (by its
    ``__name__``) as methods calling the snake_case ones (so a subclass overriding the
    snake_case method is called under either name)."""
    for tflm, ours in TFLM_ALIASES.get(cls.__name__, {}).items():
        if not callable(getattr(cls, ours, None)):
            raise TypeError(f"{cls.__name__}.{ours} (TFLM's {tflm}) is not a method")
        setattr(cls, tflm, _alias(tflm, ours))
    return cls


class CallableCount(int):
    """A count that is also callable (``it.inputs_size`` and TFLM's ``it.inputs_size()``
    give the same number)."""

    def __call__(self) -> int:
        return int(self)


__all__ = ["TFLM_ALIASES", "add_tflm_aliases", "CallableCount"]
