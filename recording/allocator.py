"""RecordingMicroAllocator: TFLM's allocation audit as a thin layer over the allocator.

:class:`RecordingArena` counts what TFLM's RecordingSingleArenaBufferAllocator counts
(bytes requested, bytes used with alignment, number of tail allocations).
:class:`RecordingMicroAllocator` snapshots those counters around the same allocator
calls TFLM's RecordingMicroAllocator overrides and files the differences under TFLM's
categories. Behaviour is unchanged: only numbers are kept.
"""
from __future__ import annotations

from dataclasses import dataclass
from typing import Dict

from arena.allocator import MicroAllocator
from arena.arena import Arena

#: (category key, TFLM's name, word for the count) in TFLM's print order.
CATEGORIES = (
    ("eval_tensor_data", "TfLiteEvalTensor data", "allocations"),
    ("persistent_tensor_data", "Persistent TfLiteTensor data", "tensors"),
    ("persistent_tensor_quantization_data", "Persistent TfLiteTensor quantization data", "allocations"),
    ("persistent_buffer_data", "Persistent buffer data", "allocations"),
    ("variable_buffer_data", "TfLiteTensor variable buffer data", "allocations"),
    ("node_and_registration", "NodeAndRegistration struct", "NodeAndRegistration structs"),
    ("op_data", "Operator runtime data", "OpData structs"),
    ("compression_data", "Persistent compression data", "allocations"),
)


@dataclass
class RecordedAllocation:
    requested_bytes: int = 0   #: bytes asked for
    used_bytes: int = 0        #: bytes consumed, alignment included
    count: int = 0             #: allocations


class RecordingArena(Arena):
    """An :class:`Arena` that also counts requested / used bytes and allocations."""

    def __init__(self, size: int, materialize: bool = True):
        super().__init__(size, materialize)
        self.requested_head_bytes = 0
        self.requested_tail_bytes = 0
        self.recorded_used_bytes = 0
        self.alloc_count = 0

    @property
    def requested_bytes(self) -> int:
        return self.requested_head_bytes + self.requested_tail_bytes

    def allocate_persistent(self, size: int, alignment: int) -> int:
        before = self.tail
        address = super().allocate_persistent(size, alignment)
        self.recorded_used_bytes += before - self.tail
        self.requested_tail_bytes += size
        self.alloc_count += 1
        return address

    def resize_head(self, size: int, alignment: int) -> int:
        before = self.head
        address = super().resize_head(size, alignment)
        self.recorded_used_bytes += self.head - before
        self.requested_head_bytes = size
        return address

    def snapshot(self) -> RecordedAllocation:
        return RecordedAllocation(self.requested_bytes, self.recorded_used_bytes, self.alloc_count)


class RecordingMicroAllocator(MicroAllocator):
    """A :class:`MicroAllocator` over a :class:`RecordingArena` that files each
    allocation under TFLM's categories."""

    arena_struct = "RecordingSingleArenaBufferAllocator"
    allocator_struct = "RecordingMicroAllocator"

    def __init__(self, arena: RecordingArena, target, planner: str = "greedy"):
        self.recorded: Dict[str, RecordedAllocation] = {k: RecordedAllocation() for k, _, _ in CATEGORIES}
        super().__init__(arena, target, planner)

    def _record(self, key: str, before: RecordedAllocation) -> None:
        after = self.arena.snapshot()
        rec = self.recorded[key]
        rec.requested_bytes += after.requested_bytes - before.requested_bytes
        rec.used_bytes += after.used_bytes - before.used_bytes
        rec.count += after.count - before.count

    def allocate_eval_tensors(self, model):
        before = self.arena.snapshot()
        result = super().allocate_eval_tensors(model)
        self._record("eval_tensor_data", before)
        # one allocation per subgraph, counted per tensor as TFLM does
        self.recorded["eval_tensor_data"].count += sum(len(sg.tensors) - 1 for sg in model.subgraphs)
        return result

    def allocate_node_and_registrations(self, model):
        before = self.arena.snapshot()
        result = super().allocate_node_and_registrations(model)
        self._record("node_and_registration", before)
        self.recorded["node_and_registration"].count += sum(len(sg.operators) - 1 for sg in model.subgraphs)
        return result

    def allocate_variables(self, subgraph, offline_offsets, base):
        before = self.arena.snapshot()
        super().allocate_variables(subgraph, offline_offsets, base)
        self._record("variable_buffer_data", before)

    def allocate_persistent_tensor_struct(self):
        before = self.arena.snapshot()
        address = super().allocate_persistent_tensor_struct()
        self._record("persistent_tensor_data", before)
        return address

    def populate_tensor_quantization(self, spec, temp):
        before = self.arena.snapshot()
        result = super().populate_tensor_quantization(spec, temp)
        self._record("persistent_tensor_quantization_data", before)
        return result

    def allocate_persistent_buffer(self, nbytes):
        before = self.arena.snapshot()
        address = super().allocate_persistent_buffer(nbytes)
        self._record("persistent_buffer_data", before)
        return address
