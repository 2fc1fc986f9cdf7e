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


def check_broadcast_output(ctx, shape1, shape2, out_shape, max_dims: int = MAX_BROADCAST_DIMS,
                           extended_equal: bool = False) -> bool:
    """Validate a broadcasting binary op whose broadcast loop walks the *output* shape
    (TFLM's BroadcastBinaryOpSimple): when the inputs differ, the output (left-padded
    with 1s) must be exactly their broadcast shape; when they are equal, only the element
    counts must agree. ``extended_equal``: inputs equal once left-padded with 1s count as
    equal (kernels that decide with ProcessBroadcastShapes, e.g. MUL and DIV). Returns
    True when the input shapes differ."""
    result = broadcast_shape(shape1, shape2)
    if result is None:
        raise ctx.error(f"input shapes {tuple(shape1)} and {tuple(shape2)} do not broadcast")
    rank = max(len(result), len(out_shape))
    if rank > max_dims:
        raise ctx.error(f"broadcasting supports at most {max_dims} dimensions, got {rank}")
    if extended_equal:
        n = max(len(shape1), len(shape2))
        differ = ((1,) * (n - len(shape1)) + tuple(shape1)) != ((1,) * (n - len(shape2)) + tuple(shape2))
    else:
        differ = tuple(shape1) != tuple(shape2)
    if differ:
        padded_out = (1,) * (rank - len(out_shape)) + tuple(out_shape)
        padded_res = (1,) * (rank - len(result)) + tuple(result)
        if padded_out != padded_res:
            raise ctx.error(f"inputs of shapes {tuple(shape1)} and {tuple(shape2)} broadcast to "
                            f"{tuple(result)} but the output has shape {tuple(out_shape)}")
    elif int(np.prod(result, dtype=np.int64)) != int(np.prod(out_shape, dtype=np.int64)):
        raise ctx.error(f"inputs have {int(np.prod(result, dtype=np.int64))} elements but the "
                        f"output of shape {tuple(out_shape)} has {int(np.prod(out_shape, dtype=np.int64))}")
    return differ
