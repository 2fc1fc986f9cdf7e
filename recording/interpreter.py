"""RecordingMicroInterpreter: TFLM's class of the same name, over MicroInterpreter.

As in TFLM, it is a MicroInterpreter whose allocator is a RecordingMicroAllocator: the
same constructor, the same run-time behaviour, plus the recorded figures. After the first
``allocate_tensors()`` or ``invoke()`` (which allocates), the figures are available per
:class:`~arena.recording.RecordedAllocationType` and as TFLM's printed report.
Only numbers are added: what runs and where tensors live are MicroInterpreter's.
"""
from __future__ import annotations

import os
from typing import Optional, Union

from micro_runtime.interpreter import ErrorReporter, MicroInterpreter
from micro_runtime.model import Model
from micro_runtime.op_resolver import OpResolver
from micro_runtime.targets import DEFAULT_TARGET, Target
from micro_runtime.tflm_names import add_tflm_aliases

from arena.recording import RecordedAllocation, RecordingMicroAllocator


@add_tflm_aliases
class RecordingMicroInterpreter(MicroInterpreter):
    """A :class:`MicroInterpreter` that records its arena allocations (TFLM's
    ``RecordingMicroInterpreter``). Arguments are MicroInterpreter's (without
    ``recording``, which is always on)."""

    def __init__(self, model: Union[Model, str, os.PathLike, bytes], op_resolver: Optional[OpResolver] = None,
                 arena_size: Optional[int] = None, *, target: Union[str, Target] = DEFAULT_TARGET,
                 planner: str = "greedy", num_resource_variables: int = 0,
                 error_reporter: Optional[ErrorReporter] = None,
                 alt_decompression_memory_size: int = 0,
                 max_loop_iterations: Optional[int] = None, npu_stub: bool = False):
        super().__init__(model, op_resolver, arena_size, target=target, planner=planner,
                         recording=True, num_resource_variables=num_resource_variables,
                         error_reporter=error_reporter,
                         alt_decompression_memory_size=alt_decompression_memory_size,
                         max_loop_iterations=max_loop_iterations, npu_stub=npu_stub)

    def get_micro_allocator(self) -> RecordingMicroAllocator:
        """The RecordingMicroAllocator (TFLM's ``GetMicroAllocator()``): its
        ``get_recorded_allocation``, ``print_allocations`` and arena figures."""
        return self.allocator

    def get_recorded_allocation(self, allocation_type) -> RecordedAllocation:
        """``requested_bytes``, ``used_bytes`` and ``count`` of one
        :class:`~arena.recording.RecordedAllocationType` (a copy)."""
        return self.allocator.get_recorded_allocation(allocation_type)

    @property
    def arena_total_bytes(self) -> int:
        """TFLM's "Arena allocation total" (bytes): every allocation, alignment included."""
        return self.allocator.total_bytes

    #: TFLM's "Arena allocation head" and "Arena allocation tail" (bytes)
    arena_head_bytes = MicroInterpreter.head_bytes
    arena_tail_bytes = MicroInterpreter.tail_bytes
