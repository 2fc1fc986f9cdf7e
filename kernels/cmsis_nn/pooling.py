"""AVERAGE_POOL_2D and MAX_POOL_2D as TFLM's CMSIS-NN build runs them
(``kernels/cmsis_nn/pooling.cc`` with ``arm_avgpool_s8`` / ``_s16`` and ``arm_max_pool_s8``
/ ``_s16``).

Prepare is the reference kernel's (TFLM's PoolingPrepare) in a larger OpData
(OpDataPooling + a scratch-buffer index); average pooling of int8 / int16 inputs also
requests ``arm_avgpool_s8_get_buffer_size`` / ``arm_avgpool_s16_get_buffer_size`` bytes
(DSP cores without MVE: one int32 per channel; others none).

Arithmetic: the reference kernel's. CMSIS-NN's averages round exactly as TFLM's
reference ((sum +- count / 2) / count, truncating) and its maxima are the same; float32
runs the reference code.
"""
from __future__ import annotations

from kernels.base import register_variant
from kernels.internal.sample_rows import batch_axis_rows
from kernels.internal.tensor_utils import INT8, INT16
from kernels.pooling import AveragePool2D, MaxPool2D, OpData

from .internal.buffer_sizes import avgpool_size


class CmsisPoolingOpData(OpData):
    """TFLM's CMSIS-NN pooling OpData (OpDataPooling + buffer_idx)."""
    buffer_idx = -1


class _CmsisPooling:
    """What both CMSIS-NN pooling variants share: their OpData and sample blocks."""
    library = "cmsis-nn"

    def sample_rows(self, block):
        """Batch rows are independent: TFLM passes the batch count and ``arm_avgpool_s8``
        / ``_s16`` / ``arm_max_pool_s8`` / ``_s16`` loop over it (the scratch buffer holds
        one output row of one batch), so the sample axis may replace the unit batch axis."""
        return batch_axis_rows(block)

    def init(self, ctx, node):
        ctx.allocate_persistent(ctx.sizeof("cmsis_nn.pooling.OpData"))
        return CmsisPoolingOpData()


@register_variant("cmsis-nn")
class CmsisNNAveragePool2D(_CmsisPooling, AveragePool2D):
    op = "AVERAGE_POOL_2D"
    supported_types = AveragePool2D.supported_types

    def prepare(self, ctx, node):
        super().prepare(ctx, node)
        data = node.user_data
        inp = ctx.input(node, 0)
        out = ctx.output(node, 0)
        data.buffer_idx = -1
        if inp.type in (INT8, INT16):
            size = avgpool_size(out.shape[3], ctx.target.dsp, ctx.target.mve)
            if size > 0:
                data.buffer_idx = ctx.request_scratch(size)
        ctx.release(out, inp)


@register_variant("cmsis-nn")
class CmsisNNMaxPool2D(_CmsisPooling, MaxPool2D):
    op = "MAX_POOL_2D"
    supported_types = MaxPool2D.supported_types
