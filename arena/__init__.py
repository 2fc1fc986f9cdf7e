"""The tensor arena (head / temporaries / tail), TFLM's MicroAllocator and memory planners."""
from .arena import BUFFER_ALIGNMENT, Arena, align_down, align_up, min_arena_bytes, replay
from .allocator import MicroAllocator

__all__ = ["Arena", "BUFFER_ALIGNMENT", "align_up", "align_down", "min_arena_bytes", "replay",
           "MicroAllocator"]
