"""Sizes of the OpData structs of TFLM's CMSIS-NN kernels (``kernels/cmsis_nn/``) as
arm-none-eabi-gcc lays them out for Cortex-M (32-bit pointers, AAPCS short enums).

Keys are ``"cmsis_nn.<kernel module>.<Struct>"`` (what a CMSIS-NN kernel variant passes to
``ctx.sizeof``); values ``(size, align, derivation)`` in bytes, the derivation listing the
fields in order as in :mod:`micro_runtime.targets`. The Cortex-M targets built with
``+cmsis-nn`` add these to their struct table.
"""
from __future__ import annotations

from typing import Dict, Tuple

CMSIS_NN_STRUCTS: Dict[str, Tuple[int, int, str]] = {
    # one block per kernel module, kept in alphabetical order of the module
    # ---- add.cc
    "cmsis_nn.add.OpData": (60, 4, "requires_broadcast 1 (bool), hole 3, input1_shift, input2_shift, "
                            "output_activation_min/max, input1/input2/output_multiplier, output_shift, "
                            "left_shift, input1/input2/output_offset 12x4, output_activation_min/max_f32 2x4"),
    # ---- batch_matmul.cc
    "cmsis_nn.batch_matmul.OpData": (
        36, 4, "reference_op_data OpDataBatchMatmul {quantization, lhs/rhs_transposed_tensor 3x4 (ptr), "
        "rhs_is_transposed, lhs/rhs_is_constant_tensor 3x1 (bool), pad 1} 16, output_shape "
        "cmsis_nn_dims {n, h, w, c} 16, buffer_idx 4"),
    # ---- conv.cc
    "cmsis_nn.conv.OpData": (60, 4, "reference_op_data OpDataConv without USE_TFLM_COMPRESSION {padding "
                             "{width, height, width_offset, height_offset} 16, input/filter/output_zero_point, "
                             "output_multiplier, output_shift 5x4, per_channel_output_multiplier/shift 2x4 (ptr), "
                             "output_activation_min/max, filter_buffer_index 3x4} 56, buffer_idx 4"),
    # ---- depthwise_conv.cc
    "cmsis_nn.depthwise_conv.OpData": (60, 4, "reference_op_data OpDataConv (no compression) 56, buffer_idx 4"),
    # ---- fully_connected.cc
    "cmsis_nn.fully_connected.OpData": (72, 4, "reference_op_data OpDataFullyConnected without USE_TFLM_COMPRESSION "
                                        "{output_multiplier, output_shift, output_activation_min/max, "
                                        "input_quantized_index, input/filter/output_zero_point, filter_buffer_index "
                                        "9x4, per_channel_output_multiplier/shift 2x4 (ptr), is_per_channel 1, pad 3} 48, "
                                        "buffer_conv_1x1_idx, buffer_idx 2x4, kernel_sums 4 (ptr), batches, "
                                        "accum_depth, output_depth 3x4"),
    # ---- pooling.cc
    "cmsis_nn.pooling.OpData": (36, 4, "reference_op_data OpDataPooling {padding 16, activation_min/max 2x4, "
                                "activation_min/max_f32 2x4} 32, buffer_idx 4"),
    # ---- softmax.cc
    "cmsis_nn.softmax.CMSISNNSoftmaxParams": (64, 8, "softmax_params SoftmaxParams {beta 8 (double), "
                                              "input_multiplier..scale 7x4, exp_lut..uint8_table2 5x4 (ptr)} 56, "
                                              "num_rows, row_size 2x4"),
    # ---- svdf.cc
    "cmsis_nn.svdf.CmsisNnOpDataSvdf": (
        40, 4, "effective_scale_1_a, effective_scale_2_a, effective_scale_1_b, effective_scale_2_b, "
        "scratch_tensor_index, scratch_output_tensor_index, input/output/activation_state_zero_point "
        "9x4 (KERNELS_OPTIMIZED_FOR_SPEED: no scratch_weight_tensor_index), kernel_sums 4 (ptr)"),
    # ---- transpose_conv.cc
    "cmsis_nn.transpose_conv.OpData": (
        76, 4, "params ConvParams {padding_type 1 (enum class : uint8_t), pad 1, padding_values "
        "{width, height, width_offset, height_offset} 4x2, stride_width..dilation_height_factor "
        "4x2 (int16), pad 2, input/weights/output_offset, output_multiplier, output_shift, "
        "quantized_activation_min/max, float_activation_min/max 9x4} 56, scratch_buffer_index, "
        "scratch_buffer_output_index, bias_converted_buffer_index 3x4, "
        "per_channel_output_multiplier/shift 2x4 (ptr)"),
    # ---- unidirectional_sequence_lstm.cc
    "cmsis_nn.unidirectional_sequence_lstm.OpData": (
        912, 8, "params_ref OpDataLSTM 688 (as the reference kernel's: no enum member "
        "changes size with short enums), params_cmsis_nn cmsis_nn_lstm_params {time_major..output_offset "
        "15x4, forget/input/cell/output gate 4x cmsis_nn_lstm_gate {input_multiplier, input_shift, "
        "input_weights, input_effective_bias, hidden_multiplier, hidden_shift, hidden_weights, "
        "hidden_effective_bias, bias 9x4, activation_type 1 (short enum), pad 3} 4x40} 220, pad 4 to the "
        "8-byte alignment of OpDataLSTM's int64 members"),
}
