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
    p1, p2 = [], []
    for b in range(on):
        base1, base2 = b * bd1, b * bd2
        if (h1, w1, c1) == (h2, w2, c2):
            k = np.arange(h1 * w1 * c1, dtype=np.int64)
            p1.append(base1 + k)
            p2.append(base2 + k)
            continue
        if h1 * w1 * c1 == 1:
            p1.append(np.full(h2 * w2 * c2, base1, np.int64))
            p2.append(base2 + np.arange(h2 * w2 * c2, dtype=np.int64))
            continue
        if h2 * w2 * c2 == 1:
            p1.append(base1 + np.arange(h1 * w1 * c1, dtype=np.int64))
            p2.append(np.full(h1 * w1 * c1, base2, np.int64))
            continue
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
        p1.append((base1 + rows * (step1 + hd1) + r1).reshape(-1))
        p2.append((base2 + rows * (step2 + hd2) + r2).reshape(-1))
    return np.concatenate(p1), np.concatenate(p2)


class _CmsisNnMaxMin:
    def sample_rows(self, block):
        return False      # int8 broadcasting depends on the 4-D layout

    def invoke(self, ctx, node):
        x1, x2 = node.input_arrays
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
