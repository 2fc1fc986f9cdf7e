"""DEPTHWISE_CONV_2D as esp-tflite-micro's ESP-NN kernel runs it
(``kernels/esp_nn/depthwise_conv.cc`` with ``esp_nn_depthwise_conv_s8`` of the target's
ESP-NN function set).

Prepare is the reference kernel's (TFLM's DepthwiseConvPrepare) with esp-tflite-micro's
extra checks (filter of shape [1, h, w, c], filter channels a multiple of the input
channels) in a larger OpData (NodeData: OpDataConv + a scratch-buffer index); int8 inputs
(int8 or int4 filters) also request ``esp_nn_get_depthwise_conv_scratch_size`` bytes when
positive (esp32s3 only; 0 for the other function sets).

Arithmetic: int8 with int8 filters and no dilation runs ``esp_nn_depthwise_conv_s8``. The
plain C and the generic optimised C (its channel-multiplier-1 loop four channels at a
time, the general loop four multipliers at a time) sum ``(input + offset) x filter`` in
int32 over the taps inside the image, add the bias and requantise with
``esp_nn_multiply_by_quantized_mult`` (TFLM's MultiplyByQuantizedMultiplier), output
channel ``c x multiplier + m``: the reference kernel's values, computed by it. Dilated
int8, int8 x int4, int16 and float32 run TFLM's reference code.

Refused at invoke: an int8 depthwise convolution with int8 weights and no bias (the kernel
reads the absent bias with GetTensorData, whose debug check aborts: ESP-IDF builds keep
TFLM's TFLITE_DCHECK), sizes ESP-NN truncates to 16 bits, and output rows / columns whose
start ``out x stride - padding`` leaves int16 (the C keeps it in an ``int16_t``); an
esp32s3 depthwise convolution whose scratch size came out nonpositive.
"""
from __future__ import annotations

from kernels.base import register_variant
from kernels.conv import OpData
from kernels.depthwise_conv import FILTER, INPUT, DepthwiseConv2D
from kernels.internal.tensor_utils import INT8

from .internal import routes
from .internal.common import function_set, uint16_problem
from .internal.scratch_sizes import depthwise_conv_scratch_size


class EspDepthwiseOpData(OpData):
    """esp-tflite-micro's depthwise NodeData (OpDataConv + buffer_idx) and host caches."""
    buffer_idx = -1
    esp_refusal = None


@register_variant("esp-nn")
class EspNNDepthwiseConv2D(DepthwiseConv2D):
    op = "DEPTHWISE_CONV_2D"
    supported_types = DepthwiseConv2D.supported_types

    @classmethod
    def route(cls, target, graph, op):
        return routes.convolution(target, graph, op, "depthwise convolution", "esp_nn_depthwise_conv_s8")

    def init(self, ctx, node):
        ctx.allocate_persistent(ctx.sizeof("esp_nn.depthwise_conv.NodeData"))
        return EspDepthwiseOpData()

    def prepare(self, ctx, node):
        # esp-tflite-micro's own checks (on the tensors' shapes: no temporary tensors)
        inp, flt = (ctx.eval_tensor(node.inputs[i]) if len(node.inputs) > i and node.inputs[i] >= 0
                    else None for i in (INPUT, FILTER))
        if inp is not None and flt is not None and len(inp.shape) == 4 and len(flt.shape) == 4:
            if flt.shape[0] != 1:
                raise ctx.error(f"filter of shape {flt.shape}: esp-tflite-micro's depthwise "
                                "convolution needs [1, height, width, channels]")
            if inp.shape[3] == 0 or flt.shape[3] % inp.shape[3]:
                raise ctx.error(f"filter channels {flt.shape[3]} are not a multiple of the input "
                                f"channels {inp.shape[3]}")
        super().prepare(ctx, node)
        data = node.user_data
        if data.kind != INT8:
            return
        (_, in_h, in_w, in_depth, multiplier, filter_h, filter_w, out_h, out_w,
         sh, sw, dh, dw) = data.geometry
        variant = function_set(ctx)
        pad = data.padding
        channels = in_depth * multiplier
        size = depthwise_conv_scratch_size(variant, (in_w, in_h, in_depth), (filter_w, filter_h, channels),
                                           (out_w, out_h, channels), multiplier, (sw, sh),
                                           (pad.width, pad.height))
        data.buffer_idx = ctx.request_scratch(size) if size > 0 else -1
        data.esp_refusal = self._refusal(ctx, data, variant, size)

    @staticmethod
    def _refusal(ctx, data, variant, size):
        (_, in_h, in_w, in_depth, multiplier, filter_h, filter_w, out_h, out_w,
         sh, sw, dh, dw) = data.geometry
        if data.filter_type != INT8:
            return None
        if not data.has_bias:
            return ("an int8 depthwise convolution without a bias: esp-tflite-micro's kernel reads "
                    "the bias with GetTensorData, whose debug check aborts on the absent tensor "
                    "(ESP-IDF builds keep TFLM's TFLITE_DCHECK)")
        if (dh, dw) != (1, 1):
            return None
        pad = data.padding
        problem = uint16_problem("esp_nn_depthwise_conv_s8", input_width=in_w, input_height=in_h,
                                 input_channels=in_depth, filter_width=filter_w, filter_height=filter_h,
                                 output_width=out_w, output_height=out_h, stride_width=sw,
                                 stride_height=sh, padding_width=pad.width, padding_height=pad.height,
                                 depth_multiplier=multiplier)
        if problem:
            return problem
        if variant in ("opt", "ansi"):
            for name, count, stride, before in (("row", out_h, sh, pad.height),
                                                ("column", out_w, sw, pad.width)):
                if count and not -32768 <= (count - 1) * stride - before <= 32767:
                    return (f"output {name} {count - 1} starts at input {name} "
                            f"{(count - 1) * stride - before}: ESP-NN keeps that in an int16_t")
        if variant == "esp32s3" and size <= 0:
            return (f"esp_nn_get_depthwise_conv_scratch_size gave {size} bytes: the ESP build "
                    "requests no scratch buffer for ESP-NN's esp32s3 routine")
        return None

    def invoke(self, ctx, node):
        data = node.user_data
        if data.esp_refusal is not None:
            raise ctx.error(data.esp_refusal)
        super().invoke(ctx, node)
