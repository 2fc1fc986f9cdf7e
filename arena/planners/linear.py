"""LinearMemoryPlanner: every buffer after the previous one, nothing shared.

TFLM uses it when all tensors must stay readable after invoke (the tflite_micro
package's kPreserveAllTensors mode). Its capacity is fixed at 1024 buffers.
"""
from __future__ import annotations

from typing import List

from .base import MemoryPlanner


class LinearMemoryPlanner(MemoryPlanner):
    max_buffer_count = 1024
    preserves_all_tensors = True

    def _plan(self) -> List[int]:
        offsets = []
        next_free = 0
        for b in self.buffers:
            offsets.append(next_free)
            next_free += b.size
        return offsets
