"""ESP-NN's plain C routines (espressif/esp-nn d45b843ca5f8: esp_nn_conv_s8_ansi,
esp_nn_depthwise_conv_s8_ansi, esp_nn_fully_connected(_per_ch)_s8_ansi,
esp_nn_softmax_s8_ansi and the common_functions.h helpers) transcribed statement by
statement into scalar Python on 32-bit wrapping ints: slow, independent of the emulator's
vectorised kernels, for the tests to compare them with. Shifts take their amount modulo
32 as the RISC-V and Xtensa shift instructions do."""
from __future__ import annotations

import numpy as np

INT32_MIN, INT32_MAX = -(1 << 31), (1 << 31) - 1


def w32(x: int) -> int:
    """Wrap to a signed 32-bit int."""
    return ((int(x) + (1 << 31)) & 0xFFFFFFFF) - (1 << 31)


def shl(x: int, n: int) -> int:
    return w32(int(x) << (n & 31))


def sar(x: int, n: int) -> int:
    return w32(x) >> (n & 31)


def clz32(x: int) -> int:
    x &= 0xFFFFFFFF
    return 32 if x == 0 else 32 - x.bit_length()


def pick_sat_high32_of64(val64: int) -> int:
    sign = -1 if val64 < 0 else 0
    to_add = sign & ((1 << 31) - 1)
    return w32((val64 + to_add) >> 31)


def sat_round_doubling_high_mul(in0: int, in1: int) -> int:
    overflow = in0 == in1 == INT32_MIN
    nudge = 1 << 30
    if (in0 < 0) != (in1 < 0):
        nudge = 1 - nudge
    result = pick_sat_high32_of64(in0 * in1 + nudge)
    return INT32_MAX if overflow else result


def div_by_power_of_two(val: int, exponent: int) -> int:
    mask = w32(shl(1, exponent) - 1)
    remainder = val & mask
    result = sar(val, exponent)
    threshold = (mask >> 1) + (1 if result < 0 else 0)
    if remainder > threshold:
        result += 1
    return w32(result)


def multiply_by_quantized_mult(x: int, mult: int, shift: int) -> int:
    left = shift if shift > 0 else 0
    right = 0 if shift > 0 else -shift
    return div_by_power_of_two(sat_round_doubling_high_mul(w32(x * (1 << left)), mult), right)


# ---------------------------------------------------------------- convolution
def conv_s8_ansi(x: np.ndarray, w: np.ndarray, bias, in_offset: int, out_offset: int,
                 stride, pad, out_hw, mult, shift, act) -> np.ndarray:
    """esp_nn_conv_s8_ansi: ``x`` (h, w, c) int8, ``w`` (o, fh, fw, fc) int8, ``out_hw``
    (out_h, out_w); returns (out_h, out_w, o) int8."""
    in_h, in_w, in_c = x.shape
    out_c, fh, fw, fc = w.shape
    sw, sh = stride
    pw, ph = pad
    out_h, out_w = out_hw
    groups = in_c // fc
    per_group = out_c // groups
    out = np.zeros((out_h, out_w, out_c), np.int8)
    for oy in range(out_h):
        for ox in range(out_w):
            for oc in range(out_c):
                acc = 0
                start = (oc // per_group) * fc
                by, bx = sh * oy - ph, sw * ox - pw
                for fy in range(max(0, -by), min(fh, in_h - by)):
                    for fx in range(max(0, -bx), min(fw, in_w - bx)):
                        for ic in range(fc):
                            acc = w32(acc + (int(x[by + fy, bx + fx, start + ic]) + in_offset)
                                      * int(w[oc, fy, fx, ic]))
                if bias is not None:
                    acc = w32(acc + int(bias[oc]))
                acc = multiply_by_quantized_mult(acc, int(mult[oc]), int(shift[oc]))
                acc = w32(acc + out_offset)
                out[oy, ox, oc] = min(max(acc, act[0]), act[1])
    return out


# ------------------------------------------------------------ fully connected
def fully_connected_per_ch_s8_ansi(x: np.ndarray, w: np.ndarray, bias, in_offset: int,
                                   filter_offset: int, out_offset: int, mult, shift,
                                   act) -> np.ndarray:
    """esp_nn_fully_connected_per_ch_s8_ansi on one row ``x`` (depth,) and ``w`` (o, depth)."""
    out = np.zeros(w.shape[0], np.int8)
    for oc in range(w.shape[0]):
        acc = 0
        for d in range(w.shape[1]):
            acc = w32(acc + (int(w[oc, d]) + filter_offset) * (int(x[d]) + in_offset))
        if bias is not None:
            acc = w32(acc + int(bias[oc]))
        acc = multiply_by_quantized_mult(acc, int(mult[oc]), int(shift[oc]))
        acc = w32(acc + out_offset)
        out[oc] = min(max(acc, act[0]), act[1])
    return out


# -------------------------------------------------------------------- softmax
def _mul_power_of_2(val: int, exp: int) -> int:
    thresh = (1 << (31 - exp)) - 1
    result = shl(val, exp)
    if val > thresh:
        result = INT32_MAX
    if val < -thresh:
        result = INT32_MIN
    return result


def _one_over_one_plus_x(val: int) -> int:
    total = val + INT32_MAX
    n = total + (1 if total >= 0 else -1)
    half_denominator = w32(n // 2 if n >= 0 else -((-n) // 2))     # C's truncating division
    x = w32(1515870810 + sat_round_doubling_high_mul(half_denominator, -1010580540))
    fixed_2_one = 1 << 29
    for _ in range(3):
        x = w32(x + _mul_power_of_2(sat_round_doubling_high_mul(
            x, w32(fixed_2_one - sat_round_doubling_high_mul(half_denominator, x))), 2))
    return _mul_power_of_2(x, 1)


def _exp_on_negative_values(val: int) -> int:
    shift = 24
    one_quarter = 1 << shift
    mask = one_quarter - 1
    val_mod_minus_quarter = w32((val & mask) - one_quarter)
    remainder = w32(val_mod_minus_quarter - val)
    x = w32(shl(val_mod_minus_quarter, 5) + (1 << 28))
    x2 = sat_round_doubling_high_mul(x, x)
    x3 = sat_round_doubling_high_mul(x2, x)
    x4 = sat_round_doubling_high_mul(x2, x2)
    x4_over_4 = div_by_power_of_two(x4, 2)
    poly = div_by_power_of_two(w32(sat_round_doubling_high_mul(w32(x4_over_4 + x3), 715827883) + x2), 1)
    result = w32(1895147668 + sat_round_doubling_high_mul(1895147668, w32(x + poly)))
    for constant in (1672461947, 1302514674, 790015084, 290630308, 39332535, 720401, 242):
        if remainder & (1 << shift):
            result = sat_round_doubling_high_mul(result, constant)
        shift += 1
    return INT32_MAX if val == 0 else result


def softmax_s8_ansi(rows: np.ndarray, mult: int, shift: int, diff_min: int) -> np.ndarray:
    """esp_nn_softmax_s8_ansi on (height, width) int8 rows."""
    out = np.zeros(rows.shape, np.int8)
    mask = shl(1, shift)
    for r, row in enumerate(rows):
        row = [int(v) for v in row]
        max_in_row = max(row)
        total = 0
        for v in row:
            diff = v - max_in_row
            if diff >= diff_min:
                rescaled = sat_round_doubling_high_mul(w32(diff * mask), mult)
                total = w32(total + div_by_power_of_two(_exp_on_negative_values(rescaled), 12))
        headroom = clz32(total)
        shifted_scale = _one_over_one_plus_x(w32(shl(total, headroom) - (1 << 31)))
        bits_over_unit = 12 - headroom + 31 - 8
        for c, v in enumerate(row):
            diff = v - max_in_row
            if diff >= diff_min:
                rescaled = sat_round_doubling_high_mul(w32(diff * mask), mult)
                exp = _exp_on_negative_values(rescaled)
                value = div_by_power_of_two(sat_round_doubling_high_mul(shifted_scale, exp), bits_over_unit) - 128
                out[r, c] = max(-128, min(127, value))
            else:
                out[r, c] = -128
    return out


def softmax_s8_opt_on_memory(mem: bytearray, in_at: int, out_at: int, scratch_at: int, height: int,
                             width: int, mult: int, shift: int, diff_min: int) -> None:
    """esp_nn_softmax_s8_opt on raw memory: the int8 rows at ``in_at``, the output at
    ``out_at``, the int32 exponentials stored at ``scratch_at`` + 4 x column (however far
    that reaches) and read back from there."""
    def i8(at):
        return mem[at] - 256 if mem[at] > 127 else mem[at]

    mask = shl(1, shift)
    for r in range(height):
        row_in, row_out = in_at + r * width, out_at + r * width
        max_in_row = i8(row_in)
        for col in range(1, width):
            max_in_row = max(max_in_row, i8(row_in + col))
        total = 0
        for col in range(width):
            diff = i8(row_in + col) - max_in_row
            if diff >= diff_min:
                exp = _exp_on_negative_values(sat_round_doubling_high_mul(w32(diff * mask), mult))
                mem[scratch_at + 4 * col:scratch_at + 4 * col + 4] = (exp & 0xFFFFFFFF).to_bytes(4, "little")
                total = w32(total + div_by_power_of_two(exp, 12))
        headroom = clz32(total)
        shifted_scale = _one_over_one_plus_x(w32(shl(total, headroom) - (1 << 31)))
        bits_over_unit = 12 - headroom + 31 - 8
        for col in range(width):
            diff = i8(row_in + col) - max_in_row
            if diff >= diff_min:
                exp = w32(int.from_bytes(mem[scratch_at + 4 * col:scratch_at + 4 * col + 4], "little"))
                value = div_by_power_of_two(sat_round_doubling_high_mul(shifted_scale, exp), bits_over_unit) - 128
                mem[row_out + col] = max(-128, min(127, value)) & 0xFF
            else:
                mem[row_out + col] = 0x80
