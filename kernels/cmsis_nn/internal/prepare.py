"""Running a reference kernel's Prepare under a CMSIS-NN kernel's allocation rules.

Several CMSIS-NN kernels check and compute exactly what the reference kernel's Prepare
does but allocate differently (no per-channel arrays for float32, no int4 unpacking
buffer, their own scratch buffers). :class:`AllocationFilter` wraps the kernel context so
that the reference Prepare runs unchanged while the allocations the CMSIS-NN build does
not make stay off the arena.
"""
from __future__ import annotations

import numpy as np


class AllocationFilter:
    """A kernel context whose ``persistent_array`` / ``request_scratch`` calls are
    dropped while the matching flag is set: a dropped persistent array becomes host
    memory (zeros of the asked size), a dropped scratch request returns -1. Every other
    attribute is the wrapped context's."""

    def __init__(self, ctx, drop_persistent_arrays: bool = False, drop_scratch: bool = False):
        self._ctx = ctx
        self._drop_persistent_arrays = drop_persistent_arrays
        self._drop_scratch = drop_scratch

    def persistent_array(self, dtype, count: int, nbytes=None, written=()):
        if self._drop_persistent_arrays:
            return np.zeros(int(count), dtype=dtype)
        return self._ctx.persistent_array(dtype, count, nbytes, written)

    def request_scratch(self, nbytes: int) -> int:
        if self._drop_scratch:
            return -1
        return self._ctx.request_scratch(nbytes)

    def __getattr__(self, name):
        return getattr(self._ctx, name)


class TensorInfo:
    """Type, shape, zero point and quantization of a node's tensor read from the model,
    without the temporary TfLiteTensor TFLM would allocate (TFLM reclaims temporaries
    only after the whole Prepare, so a kernel that looks at a tensor more often than
    TFLM's does would raise the arena's high-water mark)."""

    def __init__(self, spec):
        self.type = spec.type
        self.shape = tuple(spec.shape)
        self.quantization = spec.quantization
        self.zero_point = spec.quantization.zero_point if spec.quantization is not None else 0
        self.is_constant = spec.data is not None


def tensor_info(ctx, node, i: int, output: bool = False):
    """:class:`TensorInfo` of the node's input (or output) ``i``; None when absent."""
    indices = node.outputs if output else node.inputs
    if 0 <= i < len(indices) and indices[i] >= 0:
        return TensorInfo(ctx.eval_tensor(indices[i]).spec)
    return None
