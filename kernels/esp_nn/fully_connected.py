"""FULLY_CONNECTED as esp-tflite-micro's ESP-NN kernel runs it
(``kernels/esp_nn/fully_connected.cc`` with ``esp_nn_fully_connected_s8`` /
``esp_nn_fully_connected_per_ch_s8``).

Prepare and OpData are the reference kernel's (OpDataFullyConnected without compression;
no scratch buffer besides the int4 unpacking one).

Arithmetic:

* int8 x int8: one ESP-NN call per batch row. ESP-NN sums ``(weight + weight offset) x
  (input + input offset)`` in int32, adds the bias and requantises with
  ``esp_nn_multiply_by_quantized_mult`` (TFLM's MultiplyByQuantizedMultiplier): the
  reference values (its per-channel routine also takes the one weight offset, the tensor's
  zero point, which TFLM's CalculateOpDataFullyConnected debug-checks to be 0: ESP-IDF
  builds abort otherwise, refused in prepare on every target with ``debug_checks``);
* int8 x int4, float32: TFLM's reference code;
* int16 x int8: TFLM's reference per-tensor FullyConnected with an int64 bias, whatever
  the bias: an int16 layer without a bias takes the int64 accumulator and 64-bit
  requantisation even when the model asks for int32 bias quantisation.

Refused at invoke: int16 with per-channel weights (the ESP kernel requantises with the
per-tensor multiplier, which prepare leaves unset for them) or an int32 bias (read as
int64 values: past the bias tensor); int8 layers whose depth or output count ESP-NN
truncates to 16 bits.
"""
from __future__ import annotations

from kernels.base import register_variant
from kernels.fully_connected import FullyConnected, OpData
from kernels.internal.tensor_utils import INT8, INT16, INT32, type_name

from .internal import routes
from .internal.common import uint16_problem


class EspFullyConnectedOpData(OpData):
    esp_refusal = None


@register_variant("esp-nn")
class EspNNFullyConnected(FullyConnected):
    op = "FULLY_CONNECTED"
    supported_types = ("float32", "int8 (bias int32)",
                       "int8 x int4 (packed, bias int32)",
                       "int16 x int8 (per-tensor, bias int64 or none)")

    @classmethod
    def route(cls, target, graph, op):
        inp, flt = routes.tensor(graph, op, 0), routes.tensor(graph, op, 1)
        why = routes.int8_only("fully connected", inp, flt)
        if why:
            int16 = inp is not None and inp.type == routes.INT16
            return routes.reference(why + ("; per-tensor, int64 bias" if int16 else ""))
        q = flt.quantization
        per_channel = q is not None and len(q.scales) > 1
        return routes.esp_nn(target, "esp_nn_fully_connected_per_ch_s8" if per_channel
                             else "esp_nn_fully_connected_s8")

    def init(self, ctx, node):
        ctx.allocate_persistent(ctx.sizeof("fully_connected.OpDataFullyConnected"))
        return EspFullyConnectedOpData()

    def _prepare_quantized(self, ctx, node, data, params, inp, flt, bias, out):
        super()._prepare_quantized(ctx, node, data, params, inp, flt, bias, out)
        data.esp_refusal = None
        if inp.type == INT16:
            data.int64_accum = True
            if data.is_per_channel:
                data.esp_refusal = ("int16 input with per-channel weights: esp-tflite-micro's kernel "
                                    "requantises with the per-tensor multiplier, which its prepare "
                                    "does not set for per-channel weights")
            elif bias is not None and bias.type == INT32:
                data.esp_refusal = (f"int16 input with an {type_name(bias.type)} bias: "
                                    "esp-tflite-micro's kernel reads the bias as int64 values (past "
                                    "the bias tensor)")
        elif inp.type == INT8 and flt.type == INT8:
            data.esp_refusal = uint16_problem("esp_nn_fully_connected_s8", row_length=flt.shape[-1],
                                              output_channels=out.shape[-1])

    def invoke(self, ctx, node):
        data = node.user_data
        if data.esp_refusal is not None:
            raise ctx.error(data.esp_refusal)
        super().invoke(ctx, node)
