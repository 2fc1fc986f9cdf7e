"""CMSIS-NN variants of LSTM, SVDF, TRANSPOSE_CONV and BATCH_MATMUL per core class, with
expected values worked by hand from CMSIS-NN 4ab83cc3's sources (no oracle can run the
MVE code of a Cortex-M55, so these figures come from the formulas):

* arm_svdf_s8_get_buffer_size: 4 x filters on MVE, 0 elsewhere (a persistent kernel-sum
  buffer in TFLM's KERNELS_OPTIMIZED_FOR_SPEED build);
* arm_fully_connected_s8_get_buffer_size (batch matmul int8): 4 x output columns on MVE;
* arm_transpose_conv_s8_get_buffer_size / _reverse_conv_buffer_size;
* the LSTM's eight kernel sums and three scratch buffers on every core;
* arm_nn_requantize_s64's rounding (not TFLM's) and arm_vector_sum_s8's wrap-around.
"""
from __future__ import annotations

import numpy as np
import pytest

from kernels.cmsis_nn.internal.kernel_sums import (accumulate_s16_s8, reduce_multiplier,
                                                   requantize_s64, vector_sum_s8)
from kernels.cmsis_nn.transpose_conv import (transpose_conv_s8_buffer_size,
                                             transpose_conv_s8_reverse_buffer_size)
from kernels.internal.quantization import multiply_by_quantized_multiplier_64
from micro_runtime import MicroInterpreter
from micro_runtime.targets import get_target
from tests.cmsis_nn_op_cases import lstm_case, svdf_case, batch_matmul_case

CORES = ("cortex-m3+cmsis-nn", "cortex-m4+cmsis-nn", "cortex-m55+cmsis-nn")


def _run(model, inputs, profile):
    """(interpreter after one invoke, scratch request sizes in bytes)."""
    it = MicroInterpreter(model, arena_size=1 << 21, target=get_target(profile), recording=True)
    it.allocate_tensors()
    for i, x in enumerate(inputs):
        it.set_input(x, i)
    it.invoke()
    return it, [req.bytes for req in it.allocator.scratch_requests]


def _persistent_requested(it) -> tuple:
    """(requested bytes, allocations) of 'Persistent buffer data' from the report."""
    import io
    import re
    buf = io.StringIO()
    it.print_allocations(buf)
    for line in buf.getvalue().splitlines():
        if "'Persistent buffer data'" in line:
            m = re.search(r"requested (\d+) bytes for (\d+) allocations", line)
            return int(m.group(1)), int(m.group(2))
    raise AssertionError("no persistent buffer line")


def test_svdf_kernel_sums_only_on_mve():
    rng = np.random.default_rng(3)
    name, model, inputs = svdf_case(rng, 0)            # int8 input, int16 state
    filters = int(name.split("_u")[1].split("_")[0]) * int(name.split("_r")[1].split("_")[0])
    figures = {}
    for profile in CORES:
        it, _ = _run(model, inputs, profile)
        figures[profile] = _persistent_requested(it)
    assert figures["cortex-m3+cmsis-nn"] == figures["cortex-m4+cmsis-nn"]
    m4_bytes, m4_count = figures["cortex-m4+cmsis-nn"]
    assert figures["cortex-m55+cmsis-nn"] == (m4_bytes + 4 * filters, m4_count + 1)


def test_batch_matmul_int8_scratch_only_on_mve():
    rng = np.random.default_rng(4)
    for index in (0, 2, 4):                              # int8 cases
        name, model, inputs = batch_matmul_case(rng, index)
        scratch = {p: _run(model, inputs, p)[1] for p in CORES}
        probe = MicroInterpreter(model, arena_size=1 << 21)
        probe.allocate_tensors()
        out_c = probe.output(0).shape[-1]
        assert scratch["cortex-m3+cmsis-nn"] == scratch["cortex-m4+cmsis-nn"] == []
        assert scratch["cortex-m55+cmsis-nn"] == [4 * out_c], name


def test_lstm_kernel_sums_and_buffers_on_every_core():
    rng = np.random.default_rng(5)
    name, model, inputs = lstm_case(rng, 0)               # int8
    batch = int(name.split("_b")[1].split("_")[0])
    state = int(name.split("_s")[-1].split("_")[0])
    results = {p: _run(model, inputs, p) for p in CORES}
    persistent = {p: _persistent_requested(r[0]) for p, r in results.items()}
    assert len(set(persistent.values())) == 1
    for _, scratch in results.values():
        assert scratch == [batch * state * 2] * 3


def test_transpose_conv_buffer_sizes():
    # ring of arm_transpose_conv_s8: input width 5, stride_w 3, stride_h 1, filter 4 x 1,
    # 2 output channels: ((5 - 1) * 3 + max(1, stride_h 1)) * 2 = 26 values a row,
    # max(4, 1) = 4 rows of int32: 416 bytes (the kernel itself uses 15-pixel rows)
    assert transpose_conv_s8_buffer_size(1, 3, 5, 16, 4, 1, 2, mve=False) == 416
    assert transpose_conv_s8_reverse_buffer_size(1, 3, 16, 4, 1, 2) == 0
    # reverse convolution (31 channels, strides <= 2): im2col of 4 x 1 x 31 = 124 columns,
    # two int16 rows = 496 bytes; MVE: ceil(124 / 16) = 8 lanes of 16, four rows = 512;
    # reversed filter 31 x 1 x 4 x 3 = 372 bytes
    assert transpose_conv_s8_buffer_size(1, 1, 6, 31, 4, 1, 3, mve=False) == 496
    assert transpose_conv_s8_buffer_size(1, 1, 6, 31, 4, 1, 3, mve=True) == 512
    assert transpose_conv_s8_reverse_buffer_size(1, 1, 31, 4, 1, 3) == 372


def test_requantize_s64_wraps_unlike_tflm():
    # multiplier 2^30 (0.5) and shift 0: REDUCE_MULTIPLIER gives 16384 (0.5 in Q15)
    assert int(reduce_multiplier(1 << 30)) == 16384
    assert int(reduce_multiplier(0x7FFF8000)) == 0x7FFF
    # 0x5A827999 = 1518500249 rounds to (1518500249 + 32768) >> 16 = 23170: 1e6 x 23170
    # >> 14 = 1414184, (1414184 + 1) >> 1 = 707092 -- TFLM's 64-bit
    # MultiplyByQuantizedMultiplier reduces the multiplier the same way and agrees
    assert int(reduce_multiplier(0x5A827999)) == 23170
    assert int(requantize_s64(np.int64(1_000_000), 0x5A827999, 0)) == 707092
    assert int(multiply_by_quantized_multiplier_64(np.int64(1_000_000), 0x5A827999, 0)) == 707092
    # but CMSIS-NN truncates (acc x m) >> (14 - shift) to int32 before its last rounding
    # shift: acc 2^31, m 16384: 2^45 >> 14 = 2^31 wraps to -2^31, (-2^31 + 1) >> 1 =
    # -2^30; TFLM: (2^45 + 2^14) >> 15 = 2^30
    assert int(requantize_s64(np.int64(1 << 31), 1 << 30, 0)) == -(1 << 30)
    assert int(multiply_by_quantized_multiplier_64(np.int64(1 << 31), 1 << 30, 0)) == 1 << 30


def test_vector_sum_s8_wraps_like_int32():
    weights = np.full((2, 3), 100, np.int8)
    # 300 * 2^23 + 5 = 2516582405 wraps to 2516582405 - 2^32
    sums = vector_sum_s8(weights, 1 << 23, np.array([5, 0]))
    assert sums.tolist() == [2516582405 - (1 << 32), 2516582400 - (1 << 32)]
    # rhs offset: (sum + cols * rhs_offset) * lhs_offset
    assert vector_sum_s8(weights, 2, None, rhs_offset=-1).tolist() == [(300 - 3) * 2] * 2


@pytest.mark.parametrize("dsp,mve,expected", [
    (False, False, 600 * (1 << 22) + 7),                 # every product in 64 bits
    (True, False, -(1 << 31) + 88 * (1 << 22) + 7),      # 512 x 2^22 = 2^31 wraps in int32
    (True, True, -(1 << 31) + 7 + 88 * (1 << 22)),       # the bias starts the int32 sum
])
def test_accumulate_s16_s8_core_widths(dsp, mve, expected):
    lhs = np.full((1, 600), -32768)                      # (-32768) x (-128) = 2^22
    weights = np.full((600, 1), -128)
    assert int(accumulate_s16_s8(lhs, weights, np.array([7]), dsp, mve)[0, 0]) == expected
