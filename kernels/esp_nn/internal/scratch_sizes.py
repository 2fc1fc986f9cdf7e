"""ESP-NN's scratch-size functions (espressif/esp-nn d45b843ca5f8) as pure functions of the
arguments esp-tflite-micro passes them, for each set of ESP-NN functions a build selects:

* ``"opt"``: the generic optimised C (``esp_nn_generic_opt.h``: ESP32, ESP32-S2, ESP32-C3,
  ESP32-C6, ESP32-H2 with CONFIG_NN_OPTIMIZED);
* ``"ansi"``: the plain C functions (CONFIG_NN_ANSI_C, any chip);
* ``"esp32s3"`` / ``"esp32p4"``: the chip-specific files (CONFIG_NN_OPTIMIZED on ESP32-S3 /
  ESP32-P4).

The C functions read the dimensions into ``uint16_t`` locals and compute in ``int`` (32-bit
on every ESP chip), so each function here truncates its inputs to 16 bits and wraps every
intermediate to int32 as the C arithmetic does (two's complement, as gcc compiles it);
``size_t`` steps wrap to 32 bits and the result is the returned ``int``. esp-tflite-micro
requests a scratch buffer only when the result is positive. Sizes are in bytes.
"""
from __future__ import annotations

from typing import Tuple

#: the ESP-NN function sets (a target's ``esp_nn`` attribute)
VARIANTS = ("opt", "ansi", "esp32s3", "esp32p4")
#: esp_nn_conv_esp32p4.c's L1D_BUDGET: input bytes its tiled conv keeps in the data cache
P4_L1D_BUDGET = 32768

Dims = Tuple[int, int, int]          # (width, height, channels) of a data_dims_t


def i32(x: int) -> int:
    """``x`` wrapped to a signed 32-bit int."""
    return ((int(x) + 0x80000000) & 0xFFFFFFFF) - 0x80000000


def u16(x: int) -> int:
    """``x`` converted to ``uint16_t``."""
    return int(x) & 0xFFFF


def c_div(a: int, b: int) -> int:
    """C's int division (truncating toward zero; RISC-V's -1 for a zero divisor)."""
    a, b = i32(a), i32(b)
    if b == 0:
        return -1
    q = abs(a) // abs(b)
    return i32(q if (a < 0) == (b < 0) else -q)


def _check(variant: str) -> None:
    if variant not in VARIANTS:
        raise ValueError(f"unknown ESP-NN function set {variant!r}; known: {', '.join(VARIANTS)}")


# ---------------------------------------------------------------- CONV_2D (int8)
def conv_scratch_size(variant: str, input_dims: Dims, filter_dims: Dims, output_dims: Dims,
                      stride: Tuple[int, int], padding: Tuple[int, int]) -> int:
    """``esp_nn_get_conv_scratch_size`` of ``variant``: dims are (width, height, channels)
    as esp-tflite-micro fills its data_dims_t (filter channels = the filter's last
    dimension), ``stride`` / ``padding`` are (width, height)."""
    _check(variant)
    if variant in ("opt", "ansi"):
        return 0
    if variant == "esp32s3":
        return _conv_s3(input_dims, filter_dims, output_dims, stride, padding)
    return _conv_p4(input_dims, filter_dims, output_dims, stride, padding)


def _conv_s3(input_dims, filter_dims, output_dims, stride, padding) -> int:
    input_wd, input_ht, in_ch = (u16(v) for v in input_dims)
    filter_wd, filter_ht = u16(filter_dims[0]), u16(filter_dims[1])
    out_ch = u16(output_dims[2])
    stride_wd, stride_ht = u16(stride[0]), u16(stride[1])
    pad_wd, pad_ht = u16(padding[0]), u16(padding[1])
    align_buf = 64          # 16-byte alignment + the assembly's access margin
    if filter_wd == 1 and filter_ht == 1 and pad_wd == 0 and pad_ht == 0 \
            and stride_wd == 1 and stride_ht == 1:
        new_channels = (in_ch + 7) & ~7
        transpose = 0 if i32(input_wd * input_ht) < 8 else 2 * (8 * new_channels)
        input_scratch = i32(input_wd * input_ht * new_channels) if in_ch % 8 else 0
        filter_scratch = i32(new_channels * out_ch)
        return i32(input_scratch + filter_scratch + transpose + align_buf)
    filter_row_size = i32(filter_wd * in_ch)
    window_len = i32(filter_wd * filter_ht * in_ch)
    if filter_row_size < 16 and window_len >= 16:
        # im2col: per-channel sums, the zero-padded filter copy, one window
        window_aligned = i32(window_len + 15) & ~15
        im2col = i32(out_ch * 4 + 16 + out_ch * window_aligned + 16 + window_aligned)
        return i32(im2col + align_buf)
    new_channels = (in_ch + 15) & ~15
    input_scratch = (0 if pad_wd == 0 and pad_ht == 0
                     else i32((input_wd + 2 * pad_wd) * (input_ht + 2 * pad_ht) * in_ch))
    filter_scratch = i32(filter_wd * filter_ht * new_channels * out_ch)
    aligned_row = i32(c_div(filter_row_size + 15, 16) * 16)
    filter_alignment = i32(aligned_row * filter_ht * out_ch)
    # output_dims width / height are read as int32 here (not narrowed)
    pad_right = max(0, i32(i32(i32(output_dims[0]) * stride_wd) + filter_wd - 1 - input_wd))
    pad_bottom = max(0, i32(i32(i32(output_dims[1]) * stride_ht) + filter_ht - 1 - input_ht))
    boundary = (i32(i32(input_wd + pad_right) * i32(input_ht + pad_bottom) * in_ch)
                if pad_right > 0 or pad_bottom > 0 else 0)
    offset_acc = out_ch * 4
    return i32(input_scratch + filter_scratch + filter_alignment + boundary + align_buf + offset_acc)


def _conv_p4(input_dims, filter_dims, output_dims, stride, padding) -> int:
    input_wd, input_ht, in_ch = (u16(v) for v in input_dims)
    filter_wd, filter_ht = u16(filter_dims[0]), u16(filter_dims[1])
    out_ch = u16(output_dims[2])
    stride_wd, stride_ht = u16(stride[0]), u16(stride[1])
    pad_wd, pad_ht = u16(padding[0]), u16(padding[1])
    align_buf = 32
    if filter_wd == 1 and filter_ht == 1 and pad_wd == 0 and pad_ht == 0 \
            and stride_wd == 1 and stride_ht == 1:
        if in_ch < 16:
            # channel padding: per-channel sums + a 16-channel filter copy + one input pixel
            return i32(out_ch * 4 + 16 * out_ch + 32 + align_buf)
        new_channels = (in_ch + 7) & ~7
        transpose = 0 if i32(input_wd * input_ht) < 8 else 2 * (8 * new_channels)
        input_scratch = i32(input_wd * input_ht * new_channels) if in_ch % 8 else 0
        filter_scratch = i32(new_channels * out_ch)
        return i32(input_scratch + filter_scratch + transpose + align_buf)
    new_channels = (in_ch + 15) & ~15
    offset_acc = out_ch * 4
    row = i32(filter_wd * in_ch)
    if pad_wd == 0 and pad_ht == 0 and row >= 16:
        # direct path without padding: an aligned filter copy
        return i32(i32(filter_wd * filter_ht * new_channels * out_ch) + align_buf + offset_acc)
    window_len = i32(filter_wd * filter_ht * in_ch)
    if window_len >= 16:
        return i32(offset_acc + window_len + align_buf)           # im2col: one window
    if pad_wd == 0 and pad_ht == 0:
        # tiny windows without padding: channels widened for the vector unit
        eff_ch = i32(c_div(16 + filter_wd - 1, filter_wd) + 15) & ~15
        filt_aligned = i32(filter_wd * filter_ht * eff_ch * out_ch)
        tile_input = i32(input_wd * input_ht * eff_ch)
        return i32(offset_acc + filt_aligned + tile_input + align_buf)
    padded_wd = input_wd + 2 * pad_wd
    full_input = i32(padded_wd * (input_ht + 2 * pad_ht) * in_ch)
    if i32(full_input + offset_acc) > P4_L1D_BUDGET:
        # tiled: as many output rows as fit the cache budget
        eff_ch, filt_aligned = in_ch, 0
        if row < 16:
            eff_ch = i32(c_div(16 + filter_wd - 1, filter_wd) + 15) & ~15
            filt_aligned = i32(filter_wd * filter_ht * eff_ch * out_ch)
        tile_row = i32(padded_wd * eff_ch)
        budget = i32(P4_L1D_BUDGET - offset_acc - filt_aligned)
        tile_t = 1
        if budget > 0 and i32(filter_ht * tile_row) <= budget:
            tile_t = i32(c_div(budget - filter_ht * tile_row, stride_ht * tile_row) + 1)
            if tile_t > i32(output_dims[1]):
                tile_t = i32(output_dims[1])
        tile_rows = i32((tile_t - 1) * stride_ht + filter_ht + 2 * pad_ht)
        input_scratch = i32(tile_rows * tile_row)
        filter_scratch = filt_aligned
    else:
        input_scratch = full_input
        filter_scratch = i32(filter_wd * filter_ht * new_channels * out_ch)
    return i32(input_scratch + filter_scratch + align_buf + offset_acc)


# ------------------------------------------------------- DEPTHWISE_CONV_2D (int8)
def depthwise_conv_scratch_size(variant: str, input_dims: Dims, filter_dims: Dims,
                                output_dims: Dims, ch_mult: int, stride: Tuple[int, int],
                                padding: Tuple[int, int]) -> int:
    """``esp_nn_get_depthwise_conv_scratch_size`` of ``variant`` (``ch_mult``: the node's
    depth_multiplier option)."""
    _check(variant)
    if variant != "esp32s3":
        return 0
    input_wd, input_ht, channels = (u16(v) for v in input_dims)
    filter_wd, filter_ht = u16(filter_dims[0]), u16(filter_dims[1])
    ch_mult = u16(ch_mult)
    out_wd, out_ht = u16(output_dims[0]), u16(output_dims[1])
    pad_wd, pad_ht = u16(padding[0]), u16(padding[1])
    stride_wd, stride_ht = u16(stride[0]), u16(stride[1])
    filter_size = i32(filter_wd * filter_ht * channels * ch_mult)
    if ch_mult == 1 and channels % 8 == 0:
        if filter_wd == 3 and filter_ht == 3:
            if channels % 16 == 0:
                if pad_wd or pad_ht:
                    pad_width, pad_height = pad_wd * 2, pad_ht * 2
                else:
                    pad_width = i32(out_wd * stride_wd + filter_wd - 1 - input_wd)
                    pad_height = i32(out_ht * stride_ht + filter_ht - 1 - input_ht)
                if pad_width or pad_height:
                    full_input = i32(i32(input_wd + pad_width) * i32(input_ht + pad_height) * channels)
                    if full_input <= 40 * 1024:
                        return i32(filter_size + full_input + 16)
                    strip = i32(i32(input_wd + pad_width) * filter_ht * channels)     # tiled
                    return i32(filter_size + strip + 16)
                return i32(filter_size + 16)
            if channels >= 12:
                # channels padded to 16, the int8 path and a compaction buffer
                new_ch = (channels + 15) & ~15
                total_pad_wd = i32(pad_wd * 2 + max(0, i32(out_wd * stride_wd + 2 - input_wd)))
                total_pad_ht = i32(pad_ht * 2 + max(0, i32(out_ht * stride_ht + 2 - input_ht)))
                new_input = i32(i32(input_wd + total_pad_wd) * i32(input_ht + total_pad_ht) * new_ch)
                out_buf = i32(out_wd * out_ht * new_ch)
                return i32(9 * new_ch + new_input + out_buf + 64)
            return i32(2 * i32(filter_size + i32(input_wd * input_ht * channels)) + 32)   # 8 channels
        input_size = i32(input_wd * input_ht * channels)
        total_s16 = i32(2 * i32(filter_size + input_size))
        if total_s16 <= 48 * 1024:
            return i32(total_s16 + 32)
        tile_s16 = i32(2 * input_wd * filter_ht * channels)
        return i32(2 * filter_size + tile_s16 + 32)
    if ch_mult == 1 and channels > 3:
        # channels padded to a multiple of 8; size_t offsets rounded to 16 bytes
        padded = (channels + 7) & ~7
        u32 = 0xFFFFFFFF
        filter_bytes = (i32(filter_wd * filter_ht * padded) * 2) & u32
        input_start = (filter_bytes + 15) & ~15 & u32
        input_bytes = (i32(input_wd * input_ht * padded) * 2) & u32
        out_start = (input_start + input_bytes + 15) & ~15 & u32
        out_bytes = i32(out_wd * out_ht * padded) & u32
        bias_start = (out_start + out_bytes + 15) & ~15 & u32
        total = (bias_start + 3 * padded * 4) & u32
        return i32(total + 16)
    if ch_mult % 4 == 0:
        return i32(2 * i32(filter_size + i32(input_wd * input_ht * channels)) + 32)
    return 32


# ----------------------------------------------------------------- SOFTMAX (int8)
def softmax_scratch_size(variant: str, width: int, height: int) -> int:
    """``esp_nn_get_softmax_scratch_size(width, height)``: esp-tflite-micro passes the input's
    dims[1] and dims[2] (the scratch holds one int32 per value of a row of ``width``)."""
    _check(variant)
    if variant == "ansi":
        return 0
    return i32(i32(width) * 4)
