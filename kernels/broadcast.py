"""Broadcasting as TFLM's BroadcastBinaryOpSimple does it (numpy rules, up to 6-D)."""
from __future__ import annotations

from typing import Optional, Sequence, Tuple

import numpy as np

MAX_BROADCAST_DIMS = 6


def broadcast_shape(shape1: Sequence[int], shape2: Sequence[int]) -> Optional[Tuple[int, ...]]:
    """The broadcast shape of two shapes, or None if they do not broadcast."""
    try:
        return tuple(np.broadcast_shapes(tuple(shape1), tuple(shape2)))
    except ValueError:
        return None


def check_binary_shapes(ctx, shape1, shape2, out_shape) -> bool:
    """Validate a broadcasting binary op in prepare; returns True when the inputs
    differ in shape (TFLM's requires_broadcast)."""
    result = broadcast_shape(shape1, shape2)
    if result is None:
        raise ctx.error(f"input shapes {tuple(shape1)} and {tuple(shape2)} do not broadcast")
    if len(result) > MAX_BROADCAST_DIMS:
        raise ctx.error(f"broadcasting supports at most {MAX_BROADCAST_DIMS} dimensions, got {len(result)}")
    if int(np.prod(result, dtype=np.int64)) != int(np.prod(out_shape, dtype=np.int64)):
        raise ctx.error(f"inputs broadcast to {result} but the output has shape {tuple(out_shape)}")
    return tuple(shape1) != tuple(shape2)


def as_output_shape(x: np.ndarray, broadcast_to: Tuple[int, ...]) -> np.ndarray:
    return np.broadcast_to(x, broadcast_to)
