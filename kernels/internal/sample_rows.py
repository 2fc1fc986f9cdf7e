"""Running a kernel once on a block of samples (batched evaluation, micro_runtime.batched).

In a block of N samples every sample-dependent tensor (the model inputs, variable
tensors holding state, and every result computed from them) carries a leading *sample
axis*:

* a tensor of shape ``(1, d1, ...)`` -- a unit batch axis -- becomes ``(N, d1, ...)``:
  the sample axis replaces the batch axis ("merged");
* any other shape ``s`` (a scalar, ``(40,)``, ``(2, 10)`` ...) becomes ``(N, *s)``
  ("prepended").

Either way the block holds the N samples one after the other in memory, so both forms are
a reshape of the same bytes. Constants, and results computed from constants alone, keep
their shape (their operators run once per block as in a normal interpreter).

A kernel says whether it can run once on such a block through
:meth:`kernels.base.Kernel.sample_rows`, which gets a :class:`SampleBlock` describing
the node with its *single-sample* tensors. It answers True only when, prepared and
invoked on the block shapes, it computes every sample exactly as N separate invokes
would (with each sample's state starting from the reset state: a kernel that keeps
state must keep one state row per sample). It may ask for its options or constant
inputs to be rewritten for the block (an axis moved by the prepended sample axis, a
slice that must cover the sample axis ...). Any other node runs sample by sample on its
single-sample kernel: the default answer (False) is always correct.

During the block's prepare and invoke ``ctx.block_samples`` is N (0 in a normal
interpreter), for kernels whose prepare checks per-sample shapes or whose state needs
one row per sample.
"""
from __future__ import annotations

from typing import Dict, Iterable, List, Optional, Sequence, Set, Tuple

import numpy as np


def block_shape(shape: Sequence[int], samples: int) -> Tuple[int, ...]:
    """The shape of a sample-dependent tensor in a block of ``samples``: a unit batch
    axis becomes the sample axis, any other shape gets the sample axis in front."""
    shape = tuple(int(d) for d in shape)
    if shape and shape[0] == 1:
        return (samples,) + shape[1:]
    return (samples,) + shape


class SampleBlock:
    """A node of the model as the batched-evaluation planner shows it to its kernel.

    ``inputs`` / ``outputs``: the single-sample tensor specs (``None`` for an omitted
    optional input); ``params``: the builtin options; ``custom_options``: raw bytes."""

    def __init__(self, op, tensors: Sequence, varying: Optional[Set[int]] = None,
                 batch: Optional[int] = None):
        self.op = op
        #: samples per block when the block is being built (None when only asked)
        self.batch = batch
        #: indices of the sample-dependent tensors (default: every non-constant tensor)
        self.varying = varying if varying is not None else {
            t.index for t in tensors if t.data is None}
        self.params = op.params
        self.custom_options = op.custom_options
        self.inputs: List = [tensors[t] if t >= 0 else None for t in op.inputs]
        self.outputs: List = [tensors[t] if t >= 0 else None for t in op.outputs]
        #: options to change in the block's copy of the operator
        self.new_params: Dict[str, object] = {}
        #: input position -> constant data replacing that input in the block
        self.new_constants: Dict[int, np.ndarray] = {}
        # a sample count no dimension of the node equals, for shape checks
        dims = [int(d) for t in self.inputs + self.outputs if t is not None for d in t.shape]
        self.samples = max(dims + [1]) + 2

    # -------------------------------------------------------------- questions
    def input(self, i: int):
        return self.inputs[i] if 0 <= i < len(self.inputs) else None

    def output(self, i: int):
        return self.outputs[i] if 0 <= i < len(self.outputs) else None

    def varies(self, spec) -> bool:
        """True for a sample-dependent tensor."""
        return spec is not None and spec.index in self.varying

    def merged(self, spec) -> bool:
        """True when the sample axis replaces the tensor's unit batch axis (a
        sample-dependent tensor of rank >= 1 whose first dimension is 1)."""
        return self.varies(spec) and len(spec.shape) >= 1 and spec.shape[0] == 1

    def block_axis(self, spec, axis: int) -> Optional[int]:
        """The block axis of single-sample axis ``axis`` (negative counts from the end)
        of ``spec``; None when it is the batch axis the sample axis replaced."""
        rank = len(spec.shape)
        a = axis + rank if axis < 0 else axis
        if self.merged(spec):
            return None if a == 0 else a
        return a + 1

    def shape(self, spec) -> Tuple[int, ...]:
        """``spec``'s shape in a block of :attr:`samples` (a sample count equal to no
        dimension of the node, so shapes that agree here agree for any block)."""
        if not self.varies(spec):
            return tuple(spec.shape)
        return block_shape(spec.shape, self.samples)

    def constant(self, i: int) -> Optional[np.ndarray]:
        spec = self.input(i)
        return None if spec is None or spec.data is None else np.asarray(spec.data)

    def only_vary(self, inputs: Iterable[int]) -> bool:
        """The inputs at ``inputs`` vary with the sample; no other input does (absent,
        constant or computed from constants); every output varies."""
        wanted = set(inputs)
        for i, spec in enumerate(self.inputs):
            if (i in wanted) != self.varies(spec):
                return False
        return all(self.varies(o) for o in self.outputs)

    # ---------------------------------------------------------------- requests
    def rewrite_params(self, **values) -> None:
        """Run the block with these builtin options changed."""
        self.new_params.update(values)

    def rewrite_constant(self, i: int, data: np.ndarray) -> None:
        """Run the block with constant input ``i`` replaced by ``data`` (same dtype)."""
        self.new_constants[i] = np.ascontiguousarray(data)


# ------------------------------------------------------------- shared declarations
def elementwise_rows(block: SampleBlock) -> bool:
    """Element-wise ops with numpy broadcasting (ADD, MUL, comparisons, activations ...):
    every sample-dependent input has the first output's rank and first dimension, so the
    sample axes line up; constants broadcast from the right and never reach it. All
    outputs share one shape."""
    out = block.output(0)
    if out is None or not block.varies(out) or not block.outputs:
        return False
    if any(o is None or tuple(o.shape) != tuple(out.shape) for o in block.outputs):
        return False
    rank = len(out.shape)
    varying = [s for s in block.inputs if block.varies(s)]
    if not varying:
        return False
    for spec in varying:
        if len(spec.shape) != rank or (rank and spec.shape[0] != out.shape[0]):
            return False
    return True


def same_shape_rows(block: SampleBlock, varying: Sequence[int] = (0,)) -> bool:
    """Ops that work along the last axis with every other axis treated as rows (SOFTMAX,
    L2_NORMALIZATION ...): the listed inputs (the others constant or absent) and every
    output have one single-sample shape whose last axis is not the sample axis (rank
    >= 2, or a rank-1 shape other than (1,))."""
    if not block.only_vary(varying):
        return False
    shapes = {tuple(block.inputs[i].shape) for i in varying} | {tuple(o.shape) for o in block.outputs}
    if len(shapes) != 1:
        return False
    shape = next(iter(shapes))
    return len(shape) >= 2 or (len(shape) == 1 and shape[0] != 1)


def flat_elementwise_rows(block: SampleBlock) -> bool:
    """Ops mapping the flattened input element by element onto the flattened output
    (QUANTIZE, DEQUANTIZE, CAST ...): input 0 varies, the others are constant or
    absent, one output with as many elements as the input."""
    if not block.only_vary((0,)) or len(block.outputs) != 1:
        return False
    return int(np.prod(block.inputs[0].shape, dtype=np.int64)) == int(
        np.prod(block.outputs[0].shape, dtype=np.int64))


def batch_axis_rows(block: SampleBlock, varying: Sequence[int] = (0,)) -> bool:
    """Ops with a batch axis whose rows they compute independently (CONV_2D, pooling,
    SVDF, batch-major LSTM ...): the listed inputs (the others constant or absent) and
    every output have a unit batch axis, which the sample axis replaces."""
    if not block.only_vary(varying):
        return False
    tensors = [block.inputs[i] for i in varying] + list(block.outputs)
    return all(block.merged(t) and len(t.shape) >= 2 for t in tensors)


def flat_copy_rows(block: SampleBlock) -> bool:
    """Ops that copy their input's bytes unchanged (RESHAPE, SQUEEZE, EXPAND_DIMS): input
    0 varies, every output varies; the other inputs (shape tensors) are not read."""
    return block.varies(block.input(0)) and bool(block.outputs) and all(
        block.varies(o) for o in block.outputs)


def block_axes(block: SampleBlock, spec, axes: Iterable[int]) -> Optional[List[int]]:
    """The block axes of single-sample ``axes`` of ``spec`` (None when one of them is
    the batch axis the sample axis replaced: the op would then mix samples)."""
    out = []
    for a in axes:
        b = block.block_axis(spec, int(a))
        if b is None:
            return None
        out.append(b)
    return out


def rewrite_axis_constant(block: SampleBlock, position: int, spec) -> bool:
    """Rewrite constant input ``position`` (axes of ``spec``) for the block; False when
    it is absent, not constant or names the replaced batch axis."""
    data = block.constant(position)
    if data is None:
        return False
    axes = block_axes(block, spec, np.asarray(data).reshape(-1).tolist())
    if axes is None:
        return False
    block.rewrite_constant(position, np.asarray(axes, dtype=data.dtype).reshape(data.shape))
    return True


def outputs_match(block: SampleBlock, shapes: Sequence[Sequence[int]]) -> bool:
    """True when the op, run on the block, produces exactly the block shapes of its
    outputs (``shapes``: what it produces, computed from the block's input shapes)."""
    if len(shapes) != len(block.outputs):
        return False
    return all(tuple(int(d) for d in s) == block.shape(o) for s, o in zip(shapes, block.outputs))


__all__ = ["SampleBlock", "block_shape", "elementwise_rows", "same_shape_rows",
           "flat_elementwise_rows", "batch_axis_rows", "flat_copy_rows", "block_axes",
           "rewrite_axis_constant", "outputs_match"]
