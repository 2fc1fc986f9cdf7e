"""Recording: TFLM's allocation audit (RecordingMicroInterpreter) over micro-runtime's
interpreter. The counters and the printed report live with the allocator
(:mod:`arena.recording`), which the interpreter uses when built with ``recording=True``;
they are exported here too."""
from arena.recording import (CATEGORIES, RecordedAllocation, RecordedAllocationType, RecordingArena,
                             RecordingMicroAllocator, allocation_report, write_allocation_report)
from micro_runtime._moved import alias_moved_modules as _alias_moved_modules

from .interpreter import RecordingMicroInterpreter

# the modules that held the counters and the report before they moved to arena.recording
_alias_moved_modules({f"{__name__}.allocator": "arena.recording", f"{__name__}.report": "arena.recording"})

__all__ = ["CATEGORIES", "RecordedAllocation", "RecordedAllocationType", "RecordingArena",
           "RecordingMicroAllocator", "RecordingMicroInterpreter", "allocation_report",
           "write_allocation_report"]
