"""Recording: TFLM's allocation audit (RecordingMicroAllocator) over micro-runtime's arena."""
from .allocator import CATEGORIES, RecordedAllocation, RecordingArena, RecordingMicroAllocator
from .report import allocation_report

__all__ = ["CATEGORIES", "RecordedAllocation", "RecordingArena", "RecordingMicroAllocator",
           "allocation_report"]
