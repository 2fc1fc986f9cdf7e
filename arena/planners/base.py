"""The narrow interface every memory planner implements, and helpers shared by all."""
from __future__ import annotations

from abc import ABC, abstractmethod
from dataclasses import dataclass
from typing import List, Optional, Sequence

#: offline offset meaning "let the online planner place this buffer" (TFLM's -1).
ONLINE = -1


@dataclass(frozen=True)
class BufferRequest:
    """One buffer to place: ``size`` bytes alive from ``first_used`` to ``last_used``
    (inclusive, in allocation-scope steps), optionally at a fixed ``offline_offset``."""

    size: int
    first_used: int
    last_used: int
    offline_offset: int = ONLINE


class PlannerError(Exception):
    """A planner cannot take another buffer (capacity) or was asked for an unknown one."""


class MemoryPlanner(ABC):
    """Places buffers in the head of the arena.

    Usage: :meth:`add_buffer` for every buffer, then :meth:`offsets` /
    :meth:`maximum_size`. Offsets are bytes from the start of the head.
    """

    #: bytes of arena scratch the planner needs per buffer while it plans
    #: (TFLM hands its planner all free arena memory and fails past that capacity).
    per_buffer_scratch_bytes: int = 0
    #: a fixed capacity, or None when capacity comes from the scratch size.
    max_buffer_count: Optional[int] = None
    #: True when no two buffers ever share memory (all tensors stay readable).
    preserves_all_tensors: bool = False

    def __init__(self) -> None:
        self.buffers: List[BufferRequest] = []
        self._offsets: Optional[List[int]] = None

    def add_buffer(self, size: int, first_used: int, last_used: int,
                   offline_offset: int = ONLINE) -> int:
        """Add a buffer; returns its index (buffers are numbered in the order added)."""
        if self.max_buffer_count is not None and len(self.buffers) >= self.max_buffer_count:
            raise PlannerError(f"Too many buffers (max is {self.max_buffer_count})")
        self.buffers.append(BufferRequest(int(size), int(first_used), int(last_used),
                                          int(offline_offset)))
        self._offsets = None
        return len(self.buffers) - 1

    @property
    def buffer_count(self) -> int:
        return len(self.buffers)

    def offsets(self) -> List[int]:
        """Offset (bytes from the head start) of every buffer, in the order added."""
        if self._offsets is None:
            self._offsets = self._plan()
        return self._offsets

    def offset(self, index: int) -> int:
        if not 0 <= index < len(self.buffers):
            raise PlannerError(f"buffer index {index} is outside range 0 to {len(self.buffers)}")
        return self.offsets()[index]

    def maximum_size(self) -> int:
        """Bytes of head needed for the plan: the highest buffer end."""
        if not self.buffers:
            return 0
        return max(o + b.size for o, b in zip(self.offsets(), self.buffers))

    @abstractmethod
    def _plan(self) -> List[int]:
        """Compute the offsets of all buffers."""


def overlapping_pairs(buffers: Sequence[BufferRequest], offsets: Sequence[int]) -> List[tuple]:
    """Pairs (i, j) of buffers alive at the same time whose bytes overlap."""
    bad = []
    for i, a in enumerate(buffers):
        for j in range(i + 1, len(buffers)):
            b = buffers[j]
            if a.first_used > b.last_used or b.first_used > a.last_used:
                continue
            if offsets[i] >= offsets[j] + b.size or offsets[j] >= offsets[i] + a.size:
                continue
            if a.size == 0 or b.size == 0:
                continue
            bad.append((i, j))
    return bad


def _ordinal_char(i: int) -> str:
    i %= 62
    if i < 10:
        return chr(ord("0") + i)
    if i < 36:
        return chr(ord("a") + i - 10)
    return chr(ord("A") + i - 36)


def memory_plan_chart(buffers: Sequence[BufferRequest], offsets: Sequence[int],
                      width: int = 80) -> List[str]:
    """The plan as text, in the manner of TFLM's PrintMemoryPlan: one line per buffer,
    then one row per time step where each buffer is drawn with its ordinal character
    ('*' for one-step buffers such as scratch, '!' where two buffers collide), and the
    kilobytes alive at that step."""
    lines = []
    for i, b in enumerate(buffers):
        c = _ordinal_char(i) if b.first_used != b.last_used else "*"
        lines.append(f"{c} (id={i}): size={b.size}, offset={offsets[i]}, "
                     f"first_used={b.first_used} last_used={b.last_used}")
    max_size = width
    max_time = 0
    for i, b in enumerate(buffers):
        max_size = max(max_size, offsets[i] + b.size)
        max_time = max(max_time, b.last_used)
    for t in range(0, max_time + 1):
        row = ["."] * width
        used = 0
        for i, b in enumerate(buffers):
            if t < b.first_used or t > b.last_used or offsets[i] == -1:
                continue
            used += b.size
            start = (offsets[i] * width) // max_size
            end = ((offsets[i] + b.size) * width) // max_size
            for n in range(start, end):
                if row[n] == ".":
                    row[n] = "*" if b.first_used == b.last_used else _ordinal_char(i)
                else:
                    row[n] = "!"
        lines.append(f"{t:4d}: {''.join(row)} ({(used + 1023) // 1024}k)")
    return lines
