"""Recording: TFLM's allocation audit (RecordingMicroAllocator, RecordingMicroInterpreter)
over micro-runtime's arena and interpreter."""
from .allocator import (CATEGORIES, RecordedAllocation, RecordedAllocationType, RecordingArena,
                        RecordingMicroAllocator)
from .interpreter import RecordingMicroInterpreter
from .report import allocation_report, write_allocation_report

__all__ = ["CATEGORIES", "RecordedAllocation", "RecordedAllocationType", "RecordingArena",
           "RecordingMicroAllocator", "RecordingMicroInterpreter", "allocation_report",
           "write_allocation_report"]
