"""The CMSIS-NN kernel variants of CONV_2D, DEPTHWISE_CONV_2D, FULLY_CONNECTED, SOFTMAX,
AVERAGE_POOL_2D / MAX_POOL_2D, ADD and MUL against TFLM's CMSIS-NN build run under QEMU:

* every recorded single-op case (tests/data/cmsis_nn_cases/<op>.json, made by
  tests/record_cmsis_nn_cases.py from tests/cmsis_nn_group1_cases.py): same status,
  allocation report lines, minimum arena and output bytes, per Cortex-M profile;
* CMSIS-NN's buffer-size functions on hand-worked shapes (values from the formulas in
  CMSIS-NN 4ab83cc3's *_get_buffer_size sources);
* the zoo models' allocation figures are checked against the shared reference file by
  the profiles' own tests.
"""
from __future__ import annotations

import pytest

from tests.cmsis_nn_case_check import check_case, load_cases
from kernels.cmsis_nn.internal import buffer_sizes as bs

OPS = ("conv", "depthwise_conv", "fully_connected", "softmax", "pooling", "add", "mul")
CASES = [(op, name, profile, entry) for op in OPS for name, profile, entry in load_cases(op)]


@pytest.mark.parametrize("op,name,profile,entry", CASES,
                         ids=[f"{name}-{profile}" for _, name, profile, _ in CASES])
def test_recorded_case(op, name, profile, entry):
    check_case(op, name, profile, entry)


def test_every_op_has_recorded_cases():
    recorded = {op for op, *_ in CASES}
    assert recorded == set(OPS), f"no recorded cases for {sorted(set(OPS) - recorded)}"


# ----------------------------------------------------------------- buffer sizes
def test_conv_s8_buffer_sizes():
    # 3x3 over 3 channels: 27 columns, rounded to 28, two int16 rows = 112 bytes; MVE:
    # ceil(27 / 16) = 2 lanes of 16, four rows = 128 bytes
    args = dict(input_h=8, input_w=8, input_c=3, filter_h=3, filter_w=3, filter_c=3, output_w=8,
                stride_h=1, stride_w=1, pad_h=1, pad_w=1, dilation_h=1, dilation_w=1)
    assert bs.conv_wrapper_s8_size(**args, dsp=True, mve=False) == 112
    assert bs.conv_wrapper_s8_size(**args, dsp=False, mve=False) == 112
    assert bs.conv_wrapper_s8_size(**args, dsp=True, mve=True) == 128
    # 1x1, no padding, no dilation: no buffer with gcc, any stride
    one = dict(args, filter_h=1, filter_w=1, pad_h=0, pad_w=0, stride_h=2, stride_w=2)
    assert bs.conv_wrapper_s8_size(**one, dsp=True, mve=False) == 0
    assert bs.conv_wrapper_s8_size(**one, dsp=True, mve=True) == 0
    # grouped 1x1 is not a "1x1" convolution: im2col of 1 x 1 x 1 column -> 4 columns
    assert bs.conv_wrapper_s8_size(**dict(one, filter_c=1), dsp=True, mve=False) == 16


def test_conv_1_x_n_mve_buffer():
    # input 1 x 10 x 4, filter 1 x 3, stride 1, SAME: pad 1, output 10; no asymmetric pad
    size = bs.conv_wrapper_s8_size(input_h=1, input_w=10, input_c=4, filter_h=1, filter_w=3,
                                   filter_c=4, output_w=10, stride_h=1, stride_w=1, pad_h=0,
                                   pad_w=1, dilation_h=1, dilation_w=1, dsp=True, mve=True)
    # left: 3 * 4 + 1 * 4 = 16; right: 8 + 4 = 12
    assert size == 16


def test_depthwise_buffer_sizes():
    geometry = dict(batches=1, input_h=6, input_w=6, input_c=8, filter_h=3, filter_w=3,
                    output_w=6, output_c=8, stride_w=1, pad_h=1, pad_w=1, dilation_h=1,
                    dilation_w=1)
    assert bs.depthwise_conv_wrapper_s8_size(**geometry, dsp=True, mve=False) == 0     # 3x3 kernel
    assert bs.depthwise_conv_wrapper_s8_size(**geometry, dsp=True, mve=True) == 4 * 124 * 9
    five = dict(geometry, filter_h=5, filter_w=5, pad_h=2, pad_w=2)
    assert bs.depthwise_conv_wrapper_s8_size(**five, dsp=True, mve=False) == 8 * 25 * 2
    assert bs.depthwise_conv_wrapper_s8_size(**five, dsp=False, mve=False) == 0
    assert bs.depthwise_conv_wrapper_s8_size(**dict(five, output_c=16), dsp=True, mve=False) == 0
    assert bs.depthwise_conv_wrapper_s8_size(**dict(five, batches=2), dsp=True, mve=False) == 0
    assert bs.depthwise_conv_wrapper_s4_size(1, 8, 5, 5, 8, 1, 1, mve=False) == 400


def test_fully_connected_and_pooling_buffer_sizes():
    assert bs.fully_connected_s8_size(10, mve=False) == 0
    assert bs.fully_connected_s8_size(10, mve=True) == 40
    assert bs.fully_connected_s16_size() == 0
    assert bs.avgpool_size(16, dsp=True, mve=False) == 64
    assert bs.avgpool_size(16, dsp=False, mve=False) == 0
    assert bs.avgpool_size(16, dsp=True, mve=True) == 0
