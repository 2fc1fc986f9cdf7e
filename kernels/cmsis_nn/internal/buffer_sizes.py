"""Scratch-buffer sizes of CMSIS-NN's ``*_get_buffer_size`` functions (CMSIS-NN 4ab83cc3,
the commit TFLM 90b983c2 pins), as pure functions of shapes and the core's features.

Every function takes the geometry as plain ints and the core class as two flags:

* ``mve``: the core has Helium / MVE integer vectors (Cortex-M55 / M85; CMSIS-NN's
  ``ARM_MATH_MVEI`` code paths, which also define ``ARM_MATH_DSP``);
* ``dsp``: the core has the DSP extension (Cortex-M4 / M7 / M33; ``ARM_MATH_DSP``);
* neither: Cortex-M0 / M0+ / M3 (plain C paths).

Sizes are in bytes. The build is arm-none-eabi-gcc (TFLM's Makefile): the branches
CMSIS-NN keeps for Arm Compiler 6 only (``__ARMCC_VERSION``) are not taken.
"""
from __future__ import annotations

#: Arm Compiler 6 only: gcc builds use 1 (CONVERT_DW_CONV_WITH_ONE_INPUT_CH_AND_OUTPUT_CH_ABOVE_THRESHOLD)
DW_TO_CONV_OUTPUT_CHANNEL_THRESHOLD = 1
#: input channels a Helium depthwise kernel processes per block (CH_IN_BLOCK_MVE)
CH_IN_BLOCK_MVE = 124


def _round_up(value: int, multiple: int) -> int:
    return (value + multiple - 1) // multiple * multiple


# ------------------------------------------------------------------ convolution, int8
def conv_is_1x1(pad_h: int, pad_w: int, filter_h: int, filter_w: int, dilation_h: int,
                dilation_w: int, input_c: int, filter_c: int) -> bool:
    """arm_nn_is_convolve_1x1: no padding, 1x1 filter, no dilation, no groups."""
    return (pad_w == 0 and pad_h == 0 and filter_w == 1 and filter_h == 1 and dilation_w == 1
            and dilation_h == 1 and input_c == filter_c)


def conv_is_1_x_n(input_h: int, filter_h: int, dilation_w: int, stride_w: int, input_c: int,
                  filter_c: int) -> bool:
    """arm_nn_is_convolve_1_x_n: a one-row input and filter, stride x channels a multiple
    of 4, no groups."""
    return (input_h == 1 and dilation_w == 1 and filter_h == 1 and (stride_w * input_c) % 4 == 0
            and input_c == filter_c)


def conv_s8_im2col_size(input_c: int, filter_h: int, filter_w: int, mve: bool) -> int:
    """arm_convolve_s8_get_buffer_size.

    * MVE: 4 im2col rows of ``ceil(C*FH*FW / 16) * 16`` int8 values;
    * otherwise (DSP or not): 2 rows of C*FH*FW rounded up to a multiple of 4, as int16:
      ``2 * round4(C*FH*FW) * 2``."""
    cols = input_c * filter_w * filter_h
    if mve:
        return 4 * ((cols + 15) // 16) * 16
    return 2 * _round_up(cols, 4) * 2


def conv_1_x_n_s8_size_mve(input_w: int, input_c: int, filter_w: int, output_w: int,
                           pad_w: int, stride_w: int, filter_h: int) -> int:
    """arm_convolve_1_x_n_s8_get_buffer_size for MVE: the left / right padded im2col
    rows, or the general im2col size when the padded columns do not tile the output."""
    total_pad = (output_w - 1) * stride_w + filter_w - input_w
    asym_pad = _c_mod(total_pad, 2)
    if pad_w + asym_pad != 0:
        right_pad_num = max(1, _c_div(pad_w + asym_pad + stride_w - 1, stride_w))
    else:
        right_pad_num = 0
    left_pad_num = max(1, _c_div(pad_w + stride_w - 1, stride_w)) if pad_w != 0 else 0
    no_pad_num = max(output_w - (right_pad_num + left_pad_num), 0)
    if right_pad_num + no_pad_num + left_pad_num != output_w:
        return conv_s8_im2col_size(input_c, filter_h, filter_w, mve=True)
    pad_size_left = pad_w * input_c
    pad_size_right = right_pad_num * input_c if asym_pad else pad_size_left
    num_elem_left = filter_w * input_c
    num_elem_right = num_elem_left - input_c
    return max(num_elem_left + pad_size_left, num_elem_right + pad_size_right)


def conv_wrapper_s8_size(input_h: int, input_w: int, input_c: int, filter_h: int, filter_w: int,
                         filter_c: int, output_w: int, stride_h: int, stride_w: int,
                         pad_h: int, pad_w: int, dilation_h: int, dilation_w: int,
                         dsp: bool, mve: bool) -> int:
    """arm_convolve_wrapper_s8_get_buffer_size (CONV_2D int8, int8 weights).

    * 1x1 convolution (see :func:`conv_is_1x1`): 0 bytes on every core with gcc (the
      stride-1 fast kernel needs ``4 * C`` only with Arm Compiler 6; others need none);
    * 1 x N convolution (:func:`conv_is_1_x_n`): MVE :func:`conv_1_x_n_s8_size_mve`, other
      cores the general im2col size;
    * otherwise :func:`conv_s8_im2col_size`: ``2 * round4(C*FH*FW) * 2`` (no MVE),
      ``64 * ceil(C*FH*FW / 16)`` (MVE)."""
    del stride_h, dsp  # the DSP and plain-C builds size the buffers alike with gcc
    if conv_is_1x1(pad_h, pad_w, filter_h, filter_w, dilation_h, dilation_w, input_c, filter_c):
        return 0
    if conv_is_1_x_n(input_h, filter_h, dilation_w, stride_w, input_c, filter_c):
        if mve:
            return conv_1_x_n_s8_size_mve(input_w, input_c, filter_w, output_w, pad_w,
                                          stride_w, filter_h)
        return conv_s8_im2col_size(input_c, filter_h, filter_w, mve=False)
    return conv_s8_im2col_size(input_c, filter_h, filter_w, mve)


def conv_wrapper_s16_size(input_c: int, filter_h: int, filter_w: int, mve: bool) -> int:
    """arm_convolve_wrapper_s16_get_buffer_size (CONV_2D int16): MVE 4 rows of
    ``ceil(C*FH*FW / 8) * 8`` int16 (``64 * ceil(C*FH*FW / 8)``), otherwise 2 im2col
    columns of int16: ``4 * C*FH*FW``."""
    cols = input_c * filter_w * filter_h
    if mve:
        return 4 * ((cols + 7) // 8) * 8 * 2
    return 2 * cols * 2


# ------------------------------------------------------------ depthwise convolution
def depthwise_conv_s8_opt_size(input_c: int, filter_h: int, filter_w: int, dsp: bool,
                               mve: bool) -> int:
    """arm_depthwise_conv_s8_opt_get_buffer_size: MVE ``4 * 124 * FH*FW``
    (CH_IN_BLOCK_MVE channels of 4 rows), DSP ``C*FH*FW`` int16 (``2 * C*FH*FW``),
    no DSP 0."""
    if mve:
        return 4 * CH_IN_BLOCK_MVE * filter_w * filter_h
    if dsp:
        return input_c * filter_w * filter_h * 2
    return 0


def depthwise_conv_wrapper_s8_size(batches: int, input_h: int, input_w: int, input_c: int,
                                   filter_h: int, filter_w: int, output_w: int, output_c: int,
                                   stride_w: int, pad_h: int, pad_w: int, dilation_h: int,
                                   dilation_w: int, dsp: bool, mve: bool) -> int:
    """arm_depthwise_conv_wrapper_s8_get_buffer_size (DEPTHWISE_CONV_2D int8, int8 weights).

    * MVE, one input channel and more than 1 output channel (gcc's threshold): the
      layer runs as a convolution: the 1 x N / im2col size of that convolution plus
      room for the transposed filter (``C_out*FH*FW``);
    * depth multiplier 1 (input channels == output channels), batch 1, no dilation:
      no MVE: a 3x3 filter with padding <= 1 takes the 3x3 kernel (0 bytes), anything
      else :func:`depthwise_conv_s8_opt_size`; MVE always the latter;
    * otherwise 0 (the generic kernel needs no buffer)."""
    if mve and input_c == 1 and output_c > DW_TO_CONV_OUTPUT_CHANNEL_THRESHOLD:
        # the converted convolution: filter (C_out, FH, FW, 1), input (N, H, W, 1)
        size = conv_wrapper_s8_size(input_h, input_w, 1, filter_h, filter_w, 1, output_w,
                                    stride_w, stride_w, pad_h, pad_w, dilation_h, dilation_w,
                                    dsp=True, mve=True)
        return size + output_c * filter_h * filter_w
    if input_c == output_c and batches == 1 and dilation_w == 1 and dilation_h == 1:
        if not mve and filter_w == 3 and filter_h == 3 and pad_h <= 1 and pad_w <= 1:
            return 0
        return depthwise_conv_s8_opt_size(input_c, filter_h, filter_w, dsp, mve)
    return 0


def depthwise_conv_wrapper_s4_size(batches: int, input_c: int, filter_h: int, filter_w: int,
                                   output_c: int, dilation_h: int, dilation_w: int,
                                   mve: bool) -> int:
    """arm_depthwise_conv_wrapper_s4_get_buffer_size (DEPTHWISE_CONV_2D int8, int4
    weights): with depth multiplier 1, batch 1 and no dilation, MVE ``4 * 124 * FH*FW``,
    every other core (with or without DSP) ``2 * C*FH*FW``; otherwise 0."""
    if input_c == output_c and batches == 1 and dilation_w == 1 and dilation_h == 1:
        if mve:
            return 4 * CH_IN_BLOCK_MVE * filter_w * filter_h
        return input_c * filter_w * filter_h * 2
    return 0


# ------------------------------------------------------------------ fully connected
def fully_connected_s8_size(output_c: int, mve: bool) -> int:
    """arm_fully_connected_s8_get_buffer_size: MVE ``4 * output depth`` (the kernel
    sums, int32 per output), other cores 0."""
    return output_c * 4 if mve else 0


def fully_connected_s16_size() -> int:
    """arm_fully_connected_s16_get_buffer_size: 0 on every core."""
    return 0


# ------------------------------------------------------------------------- pooling
def avgpool_size(channels: int, dsp: bool, mve: bool) -> int:
    """arm_avgpool_s8_get_buffer_size / arm_avgpool_s16_get_buffer_size: DSP without
    MVE ``4 * C`` (an int32 sum per channel), MVE and no-DSP cores 0."""
    return channels * 4 if dsp and not mve else 0


# ------------------------------------------------------------------------- helpers
def _c_div(a: int, b: int) -> int:
    """C integer division (truncates toward zero)."""
    q = abs(a) // abs(b)
    return q if (a >= 0) == (b >= 0) else -q


def _c_mod(a: int, b: int) -> int:
    return a - _c_div(a, b) * b
