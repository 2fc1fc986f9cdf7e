"""MAXIMUM and MINIMUM as TFLM's CMSIS-NN build runs them
(``kernels/cmsis_nn/maximum_minimum.cc``): int8 by ``arm_maximum_s8`` /
``arm_minimum_s8``, float32 / int16 / int32 / int64 by the reference code; no init, no
prepare (the emulator keeps the reference's checks, which TFLM would otherwise hit as
undefined behaviour).

The int8 functions take both inputs as 4-D (n, h, w, c) and broadcast by walking
pointers with per-row and per-pixel corrections. For most shapes that is NumPy
broadcasting; where the corrections do not add up (an input of one value per row,
w x c == 1, broadcast against a wider one of the same height, for example) the values
read are the ones the walk reaches. The emulation computes, for every output element,
the offsets the walk reads, as arithmetic progressions per batch, row and pixel.
Inputs of more than 4 dimensions are refused for int8 (TFLM's ExtendedShape(4, ...)
does not hold them).
"""
from __future__ import annotations

from typing import Tuple

import numpy as np

from kernels.base import register_variant
from kernels.internal.sample_rows import block_shape, elementwise_rows
from kernels.internal.tensor_utils import INT8
from kernels.maximum_minimum import Maximum, Minimum


def _dims4(shape) -> Tuple[int, int, int, int]:
    shape = tuple(int(d) for d in shape)
    return (1,) * (4 - len(shape)) + shape


def broadcast_walk(shape1, shape2, out_shape):
    """The element offsets ``arm_maximum_s8`` / ``arm_minimum_s8`` read from each input
    for the output elements they write, in order: (offsets1, offsets2) int64 arrays of
    equal length (possibly shorter or longer than the output)."""
    n1, h1, w1, c1 = _dims4(shape1)
    n2, h2, w2, c2 = _dims4(shape2)
    on, oh, ow, oc = _dims4(out_shape)
    flat1, flat2 = n1 * h1 * w1 * c1, n2 * h2 * w2 * c2
    if (n1, h1, w1, c1) == (n2, h2, w2, c2):
        k = np.arange(flat1, dtype=np.int64)
        return k, k
    if flat1 == 1:
        return np.zeros(flat2, np.int64), np.arange(flat2, dtype=np.int64)
    if flat2 == 1:
        return np.arange(flat1, dtype=np.int64), np.zeros(flat1, np.int64)
    wd1 = 0 if w1 >= w2 else c1
    wd2 = 0 if w2 >= w1 else c2
    hd1 = wd1 if h1 >= h2 else -w1 * (c1 - wd1)
    hd2 = wd2 if h2 >= h1 else -w2 * (c2 - wd2)
    bd1 = c1 * w1 * h1 if n1 >= n2 else 0
    bd2 = c2 * w2 * h2 if n2 >= n1 else 0
    # every batch walks the same offsets from its own base (b x bd1, b x bd2)
    body1, body2 = _batch_walk(h1, w1, c1, h2, w2, c2, oh, ow, wd1, wd2, hd1, hd2)
    batches = np.arange(on, dtype=np.int64)[:, None]
    return ((batches * bd1 + body1[None, :]).reshape(-1),
            (batches * bd2 + body2[None, :]).reshape(-1))


def _batch_walk(h1, w1, c1, h2, w2, c2, oh, ow, wd1, wd2, hd1, hd2):
    """The offsets one batch of the walk reads from each input, from the batch's base."""
    if (h1, w1, c1) == (h2, w2, c2):
        k = np.arange(h1 * w1 * c1, dtype=np.int64)
        return k, k
    if h1 * w1 * c1 == 1:
        return (np.zeros(h2 * w2 * c2, np.int64),
                np.arange(h2 * w2 * c2, dtype=np.int64))
    if h2 * w2 * c2 == 1:
        return (np.arange(h1 * w1 * c1, dtype=np.int64),
                np.zeros(h1 * w1 * c1, np.int64))
    rows = np.arange(oh, dtype=np.int64)[:, None]
    if w1 == w2 and c1 == c2:
        k = np.arange(w1 * c1, dtype=np.int64)[None, :]
        step1, step2 = w1 * c1, w1 * c1
        r1, r2 = k, k
    elif w1 * c1 == 1:
        k = np.arange(w2 * c2, dtype=np.int64)[None, :]
        step1, step2 = 1, w2 * c2
        r1, r2 = np.zeros_like(k), k
    elif w2 * c2 == 1:
        k = np.arange(w1 * c1, dtype=np.int64)[None, :]
        step1, step2 = w1 * c1, 1
        r1, r2 = k, np.zeros_like(k)
    else:
        # per pixel: the elements read from each input and how far each pointer moves
        if c1 == c2:
            s1, s2 = c1, c1
            e1 = e2 = np.arange(c1, dtype=np.int64)
        elif c1 == 1:
            s1, s2 = 1, c2
            e1, e2 = np.zeros(c2, np.int64), np.arange(c2, dtype=np.int64)
        elif c2 == 1:
            s1, s2 = c1, 1
            e1, e2 = np.arange(c1, dtype=np.int64), np.zeros(c1, np.int64)
        else:
            s1, s2 = 0, 0                # no branch taken: nothing written
            e1 = e2 = np.zeros(0, np.int64)
        x = np.arange(ow, dtype=np.int64)[:, None]
        r1 = (x * (s1 - wd1) + e1[None, :]).reshape(1, -1)
        r2 = (x * (s2 - wd2) + e2[None, :]).reshape(1, -1)
        step1, step2 = ow * (s1 - wd1), ow * (s2 - wd2)
    return ((rows * (step1 + hd1) + r1).reshape(-1),
            (rows * (step2 + hd2) + r2).reshape(-1))


def walk_sample_rows(block) -> bool:
    """True when the int8 walk over the block's shapes reads for
    each sample exactly the offsets the walk over one sample's shapes reads (shifted by
    the sample's position in each varying input) and writes every output element: the
    walk is then the samples' walks one after the other. Checked on the walks
    themselves (blocks of 2, 3 and the block's own size), not assumed."""
    in1, in2, out = block.input(0), block.input(1), block.output(0)
    single1, single2 = broadcast_walk(in1.shape, in2.shape, out.shape)
    out_size = int(np.prod(out.shape, dtype=np.int64))
    if len(single1) != out_size:
        return False
    sizes = [int(np.prod(t.shape, dtype=np.int64)) for t in (in1, in2)]
    for n in sorted({2, 3, int(block.batch or block.samples)}):
        shapes = [block_shape(t.shape, n) if block.varies(t) else tuple(t.shape)
                  for t in (in1, in2, out)]
        if max(len(s) for s in shapes) > 4:
            return False
        walked = broadcast_walk(*shapes)
        samples = np.arange(n, dtype=np.int64)[:, None]
        for t, size, single, got in zip((in1, in2), sizes, (single1, single2), walked):
            step = size if block.varies(t) else 0
            if not np.array_equal(got, (samples * step + single[None, :]).reshape(-1)):
                return False
    return True


class _CmsisNnMaxMin:
    library = "cmsis-nn"
    def sample_rows(self, block):
        """Element-wise with broadcasting (samples stay apart when their axes line up);
        int8 runs ``arm_maximum_s8`` / ``arm_minimum_s8``, whose 4-D pointer walk must
        also read per sample what one sample's walk reads (:func:`walk_sample_rows`)."""
        if not elementwise_rows(block):
            return False
        if block.output(0).type != INT8:
            return True
        return walk_sample_rows(block)

    def invoke(self, ctx, node):
        x1, x2 = node.input_arrays[:2]
        if x1.dtype != np.int8:
            return super().invoke(ctx, node)
        out = node.output_arrays[0]
        if max(x1.ndim, x2.ndim, out.ndim) > 4:
            raise ctx.error("CMSIS-NN's int8 maximum / minimum take at most 4 dimensions")
        i1, i2 = broadcast_walk(x1.shape, x2.shape, out.shape)
        flat1, flat2, flat_out = x1.reshape(-1), x2.reshape(-1), out.reshape(-1)
        if len(i1) and (i1.min() < 0 or i1.max() >= flat1.size or i2.min() < 0
                        or i2.max() >= flat2.size or len(i1) > flat_out.size):
            raise ctx.error("CMSIS-NN's broadcast walk leaves the tensors for these shapes")
        a, b = flat1[i1], flat2[i2]
        flat_out[:len(i1)] = np.where(self.pick_first(a, b) | (a == b), a, b)
        return None


@register_variant("cmsis-nn")
class CmsisNnMaximum(_CmsisNnMaxMin, Maximum):
    op = "MAXIMUM"
    supported_types = ("float32", "int8", "int16", "int32", "int64")


@register_variant("cmsis-nn")
class CmsisNnMinimum(_CmsisNnMaxMin, Minimum):
    op = "MINIMUM"
    supported_types = ("float32", "int8", "int16", "int32", "int64")
