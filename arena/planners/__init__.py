"""Memory planners: where each non-persistent buffer goes in the head of the arena."""
from .base import ONLINE, BufferRequest, MemoryPlanner, PlannerError, memory_plan_chart, overlapping_pairs
from .greedy import GREEDY_SCRATCH_BYTES_PER_BUFFER, GreedyMemoryPlanner
from .linear import LinearMemoryPlanner

__all__ = ["ONLINE", "BufferRequest", "MemoryPlanner", "PlannerError", "GreedyMemoryPlanner",
           "LinearMemoryPlanner", "GREEDY_SCRATCH_BYTES_PER_BUFFER", "memory_plan_chart",
           "overlapping_pairs"]
