"""RecordingMicroAllocator: TFLM's allocation audit as a thin layer over the allocator,
and the report it prints.

:class:`RecordingArena` counts what TFLM's RecordingSingleArenaBufferAllocator counts
(bytes requested, bytes used with alignment, number of tail allocations).
:class:`RecordingMicroAllocator` snapshots those counters around the same allocator
calls TFLM's RecordingMicroAllocator overrides and files the differences under TFLM's
categories. Behaviour is unchanged: only numbers are kept. :func:`allocation_report`
gives TFLM's ``PrintAllocations()`` lines. The interpreter makes these when built with
``recording=True``; the ``recording`` package (RecordingMicroInterpreter) sits on top.
"""
from __future__ import annotations

import enum
import sys
from dataclasses import dataclass, replace
from typing import Dict, List

from arena.allocator import MicroAllocator
from arena.arena import Arena
from micro_runtime.errors import InputError
from micro_runtime.tflm_names import add_tflm_aliases

#: TFLM's MicroPrintf ends every line with CR LF (the tflite-micro package's stderr shows it).
TFLM_LINE_END = "\r\n"


class RecordedAllocationType(enum.IntEnum):
    """TFLM's ``RecordedAllocationType`` (recording_micro_allocator.h), same names and
    values; ``kCompressionData`` exists because the tflite-micro package is built with
    USE_TFLM_COMPRESSION. ``kNumAllocationTypes`` is TFLM's end marker, not a category."""

    kTfLiteEvalTensorData = 0
    kPersistentTfLiteTensorData = 1
    kPersistentTfLiteTensorQuantizationData = 2
    kPersistentBufferData = 3
    kTfLiteTensorVariableBufferData = 4
    kNodeAndRegistrationArray = 5
    kOpData = 6
    kCompressionData = 7
    kNumAllocationTypes = 8


_T = RecordedAllocationType
#: (category key, TFLM's name, word for the count, RecordedAllocationType) in TFLM's
#: print order.
CATEGORIES = (
    ("eval_tensor_data", "TfLiteEvalTensor data", "allocations", _T.kTfLiteEvalTensorData),
    ("persistent_tensor_data", "Persistent TfLiteTensor data", "tensors", _T.kPersistentTfLiteTensorData),
    ("persistent_tensor_quantization_data", "Persistent TfLiteTensor quantization data", "allocations",
     _T.kPersistentTfLiteTensorQuantizationData),
    ("persistent_buffer_data", "Persistent buffer data", "allocations", _T.kPersistentBufferData),
    ("variable_buffer_data", "TfLiteTensor variable buffer data", "allocations",
     _T.kTfLiteTensorVariableBufferData),
    ("node_and_registration", "NodeAndRegistration struct", "NodeAndRegistration structs",
     _T.kNodeAndRegistrationArray),
    ("op_data", "Operator runtime data", "OpData structs", _T.kOpData),
    ("compression_data", "Persistent compression data", "allocations", _T.kCompressionData),
)
_KEY_OF_TYPE = {kind: key for key, _, _, kind in CATEGORIES}


@dataclass
class RecordedAllocation:
    """TFLM's ``RecordedAllocation``: one category's figures."""

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

    def allocate_persistent(self, size: int, alignment: int, written=()) -> int:
        before = self.tail
        address = super().allocate_persistent(size, alignment, written)
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


@add_tflm_aliases
class RecordingMicroAllocator(MicroAllocator):
    """A :class:`MicroAllocator` over a :class:`RecordingArena` that files each
    allocation under TFLM's categories."""

    arena_struct = "RecordingSingleArenaBufferAllocator"
    allocator_struct = "RecordingMicroAllocator"

    def __init__(self, arena: RecordingArena, target, planner: str = "greedy"):
        self.recorded: Dict[str, RecordedAllocation] = {k: RecordedAllocation() for k, *_ in CATEGORIES}
        super().__init__(arena, target, planner)

    # ------------------------------------------------ TFLM's public interface
    def get_recorded_allocation(self, allocation_type) -> RecordedAllocation:
        """A copy of the figures recorded for ``allocation_type`` (a
        :class:`RecordedAllocationType` or its int value), as TFLM's
        ``GetRecordedAllocation``."""
        try:
            if isinstance(allocation_type, bool):
                raise ValueError
            kind = RecordedAllocationType(allocation_type)
            key = _KEY_OF_TYPE[kind]
        except (ValueError, TypeError, KeyError):
            raise InputError(f"Invalid allocation type supplied: {allocation_type!r} (one of "
                             + ", ".join(f"RecordedAllocationType.{k.name}" for k in _KEY_OF_TYPE)
                             + ")") from None
        return replace(self.recorded[key])

    def get_simple_memory_allocator(self) -> RecordingArena:
        """The recording arena (TFLM's ``GetSimpleMemoryAllocator``)."""
        return self.arena

    @property
    def total_bytes(self) -> int:
        """TFLM's "Arena allocation total": bytes used, alignment included."""
        return self.arena.recorded_used_bytes

    @property
    def head_bytes(self) -> int:
        """TFLM's "Arena allocation head": the non-persistent section (bytes)."""
        return self.arena.non_persistent_used_bytes

    @property
    def tail_bytes(self) -> int:
        """TFLM's "Arena allocation tail": the persistent section (bytes)."""
        return self.arena.persistent_used_bytes

    def print_allocations(self, file=None) -> None:
        """TFLM's ``PrintAllocations``: the report lines, CR LF-ended, to ``file``
        (default stderr)."""
        write_allocation_report(self, file)

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

    def allocate_compressed_tensors_list(self, model):
        before = self.arena.snapshot()
        try:
            return super().allocate_compressed_tensors_list(model)
        finally:
            self._record("compression_data", before)

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

    def allocate_persistent_buffer(self, nbytes, written=()):
        before = self.arena.snapshot()
        address = super().allocate_persistent_buffer(nbytes, written)
        self._record("persistent_buffer_data", before)
        return address


# ------------------------------------------------------------------- report
PREFIX = "[RecordingMicroAllocator]"


def allocation_report(allocator) -> List[str]:
    """TFLM's PrintAllocations() lines for a RecordingMicroAllocator."""
    arena = allocator.arena
    lines = [
        f"{PREFIX} Arena allocation total {arena.recorded_used_bytes} bytes",
        f"{PREFIX} Arena allocation head {arena.non_persistent_used_bytes} bytes",
        f"{PREFIX} Arena allocation tail {arena.persistent_used_bytes} bytes",
    ]
    for key, name, word, _ in CATEGORIES:
        rec = allocator.recorded[key]
        if rec.used_bytes > 0 or rec.requested_bytes > 0:
            lines.append(f"{PREFIX} '{name}' used {rec.used_bytes} bytes with alignment overhead "
                         f"(requested {rec.requested_bytes} bytes for {rec.count} {word})")
    return lines


def write_allocation_report(allocator, file=None) -> None:
    """Write the report to ``file`` (default stderr) byte for byte as the tflite-micro
    package does: each line ended by TFLM's CR LF."""
    out = file if file is not None else sys.stderr
    out.write("".join(line + TFLM_LINE_END for line in allocation_report(allocator)))
    out.flush()
