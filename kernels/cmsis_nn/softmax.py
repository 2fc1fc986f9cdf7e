"""SOFTMAX as TFLM's CMSIS-NN build runs it (``kernels/cmsis_nn/softmax.cc`` with
``arm_softmax_s8``, ``arm_softmax_s8_s16`` and ``arm_softmax_s16``).

Prepare is the reference kernel's (TFLM's CalculateSoftmaxParams: the two 513-entry
int16 tables for int16 inputs) in a larger OpData (SoftmaxParams + rows + row size).

Arithmetic: float32 is the reference kernel's with newlib's expf (the C library of
arm-none-eabi builds; glibc's differs by an ulp on some inputs). int8 -> int8 / int16 are the reference
values, except for rows whose sum of exponentials needs a shift of 32+ bits (512 or more
values at the row maximum, e.g. an all-equal row of 1000 classes): the reference kernel
aborts there, CMSIS-NN computes with the core's saturating register shifts. int16 ->
int16 differs from the reference where CMSIS-NN does not saturate (see
:func:`kernels.cmsis_nn.internal.arithmetic.softmax_s16`).
"""
from __future__ import annotations

import numpy as np

from kernels.base import register_variant
from kernels.softmax import OpData, Softmax

from kernels.internal.sample_rows import same_shape_rows

from .internal.arithmetic import softmax_s8, softmax_s16


@register_variant("cmsis-nn")
class CmsisNNSoftmax(Softmax):
    op = "SOFTMAX"
    supported_types = Softmax.supported_types

    def sample_rows(self, block):
        """Along the last axis, every other axis a row: ``arm_softmax_s8`` / ``_s8_s16``
        / ``_s16`` (and the float code) compute each row on its own (TFLM passes the
        number of rows), so samples stay apart."""
        return same_shape_rows(block)

    def init(self, ctx, node):
        ctx.allocate_persistent(ctx.sizeof("cmsis_nn.softmax.CMSISNNSoftmaxParams"))
        return OpData()

    # the reference kernel's invoke, with CMSIS-NN's integer routines
    @staticmethod
    def _int16(rows: np.ndarray, data) -> np.ndarray:
        return softmax_s16(rows, data.input_multiplier, data.input_left_shift, data.exp_lut,
                           data.one_over_one_plus_x_lut)

    @staticmethod
    def _int8(ctx, rows: np.ndarray, data, out_dtype) -> np.ndarray:
        return softmax_s8(rows, data.input_multiplier, data.input_left_shift, data.diff_min,
                          np.dtype(out_dtype).itemsize * 8)
