"""CONV_2D as esp-tflite-micro's ESP-NN kernel runs it (``kernels/esp_nn/conv.cc`` with
``esp_nn_conv_s8`` of the target's ESP-NN function set).

Allocations (Prepare): NodeData (the reference OpDataConv + a scratch-buffer index); the
per-channel multiplier and shift arrays (for every input type, as the reference kernel);
the int4 unpacking buffer; for int8 inputs (int8 or int4 filters) one scratch buffer of
``esp_nn_get_conv_scratch_size`` bytes when that is positive (0 for the generic optimised
and plain C; see :mod:`kernels.esp_nn.internal.scratch_sizes` for esp32s3 / esp32p4).

Arithmetic:

* int8 with int8 filters and no dilation: ``esp_nn_conv_s8`` per batch. Its C routines
  (plain C, and the generic optimised C's 1x1 and general loops) sum ``(input + offset) x
  filter`` in int32, add the bias and requantise with ``esp_nn_multiply_by_quantized_mult``
  (``esp_nn_requantize`` without SKIP_NUDGE): the same saturating doubling high multiply
  and rounding shift as TFLM's MultiplyByQuantizedMultiplier, taps outside the image
  skipped, groups as TFLM's. These are the reference kernel's values, so they are computed
  by it. The esp32s3 / esp32p4 assembly is modelled by the same values;
* int8 with dilation, int8 x int4, float32: TFLM's reference code;
* int16: TFLM's reference ConvPerChannel with an int64 accumulator only for an int64 bias
  (no bias or an int32 bias: int32, whatever the model's quantized_bias_type).

Refused at invoke, where the ESP build aborts (ESP-IDF keeps TFLM's TFLITE_DCHECK: no
NDEBUG) or computes something else: an int8 convolution with int8 weights and no bias
(the kernel reads the absent bias with GetTensorData, whose debug check aborts, also on
the dilated reference path); a grouped one without dilation (its MatchingDim of the input
and filter depths aborts); a generic-optimised 1x1 convolution whose output extent
reaches past the input (the 1x1 loop reads past it); sizes ESP-NN truncates to 16 bits;
an esp32s3 / esp32p4 convolution whose scratch size came out nonpositive (the routine
returns without writing the output).
"""
from __future__ import annotations

from kernels.base import register_variant
from kernels.conv import BiasWidthParams, Conv2D, OpData
from kernels.internal.tensor_utils import INT8, INT64

from .internal import routes
from .internal.common import function_set, uint16_problem
from .internal.scratch_sizes import conv_scratch_size


class EspConvOpData(OpData):
    """esp-tflite-micro's conv NodeData (OpDataConv + buffer_idx) and host caches."""
    buffer_idx = -1
    #: why the ESP build's invoke cannot be modelled (None: it can)
    esp_refusal = None


@register_variant("esp-nn")
class EspNNConv2D(Conv2D):
    op = "CONV_2D"
    supported_types = Conv2D.supported_types

    @classmethod
    def route(cls, target, graph, op):
        return routes.convolution(target, graph, op, "convolution", "esp_nn_conv_s8")

    def init(self, ctx, node):
        ctx.allocate_persistent(ctx.sizeof("esp_nn.conv.NodeData"))
        return EspConvOpData()

    def prepare(self, ctx, node):
        super().prepare(ctx, node)
        data = node.user_data
        if data.kind != INT8:
            return
        (_, in_h, in_w, in_depth, filter_h, filter_w, out_depth, out_h, out_w,
         sh, sw, dh, dw, groups, filter_depth) = data.geometry
        variant = function_set(ctx)
        pad = data.padding
        size = conv_scratch_size(variant, (in_w, in_h, in_depth), (filter_w, filter_h, filter_depth),
                                 (out_w, out_h, out_depth), (sw, sh), (pad.width, pad.height))
        data.buffer_idx = ctx.request_scratch(size) if size > 0 else -1
        data.esp_refusal = self._refusal(ctx, data, variant, size)

    def _prepare_integer(self, ctx, data, params, inp, bias_type):
        """int16: an int64 accumulator for an int64 bias only (esp-tflite-micro's Eval
        takes the int32 one without a bias)."""
        super()._prepare_integer(ctx, data, BiasWidthParams(params, bias_type == INT64), inp, bias_type)

    @staticmethod
    def _refusal(ctx, data, variant, size):
        """Why the ESP build's int8 path cannot be modelled on this node, or None."""
        (_, in_h, in_w, in_depth, filter_h, filter_w, out_depth, out_h, out_w,
         sh, sw, dh, dw, groups, filter_depth) = data.geometry
        if data.filter_type != INT8:
            return None                              # int4: TFLM's reference code runs it
        if not data.has_bias:
            return ("an int8 convolution without a bias: esp-tflite-micro's kernel reads the bias "
                    "with GetTensorData, whose debug check aborts on the absent tensor (ESP-IDF "
                    "builds keep TFLM's TFLITE_DCHECK)")
        if (dh, dw) != (1, 1):
            return None                              # TFLM's reference ConvPerChannel runs it
        if groups > 1:
            return (f"a grouped int8 convolution ({groups} groups): esp-tflite-micro's kernel takes "
                    f"MatchingDim of the input depth {in_depth} and the filter depth {filter_depth}, "
                    "whose debug check aborts (ESP-IDF builds keep TFLM's TFLITE_DCHECK)")
        pad = data.padding
        problem = uint16_problem("esp_nn_conv_s8", input_width=in_w, input_height=in_h,
                                 input_channels=in_depth, filter_width=filter_w, filter_height=filter_h,
                                 output_width=out_w, output_height=out_h, output_channels=out_depth,
                                 stride_width=sw, stride_height=sh, padding_width=pad.width,
                                 padding_height=pad.height)
        if problem:
            return problem
        one_by_one = filter_h == 1 and filter_w == 1
        if variant == "opt" and one_by_one and ((out_h - 1) * sh >= in_h or (out_w - 1) * sw >= in_w):
            return (f"output {out_h}x{out_w} at stride {sh}x{sw} reaches past the {in_h}x{in_w} "
                    "input: ESP-NN's generic optimised 1x1 convolution reads past the input")
        if variant in ("esp32s3", "esp32p4") and size <= 0 and not (
                variant == "esp32s3" and one_by_one and sh == sw == 1 and pad.width == pad.height == 0):
            return (f"esp_nn_get_conv_scratch_size gave {size} bytes: the ESP build requests no "
                    "scratch buffer and its esp_nn_conv_s8 returns without writing the output")
        return None

    def invoke(self, ctx, node):
        data = node.user_data
        if data.esp_refusal is not None:
            raise ctx.error(data.esp_refusal)
        super().invoke(ctx, node)
