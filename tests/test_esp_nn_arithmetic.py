"""The ESP-NN kernels' outputs against ESP-NN's plain C transcribed into scalar Python
(tests/esp_nn_scalar.py): softmax (including rows whose rounding shift reaches 32 bits and
rows whose sum of exponentials wraps int32, where TFLM's reference aborts), per-channel
fully connected layers (and the debug check on the weights zero point), int8 convolutions; the
generic optimised, plain C and modelled S3 / P4 profiles must agree with it, and the
reference build must not where ESP-NN differs from it."""
import numpy as np
import pytest

from micro_runtime import MicroInterpreter
from micro_runtime.errors import MicroRuntimeError
from kernels.internal.quantization import calculate_input_radius, quantize_multiplier
from tests import esp_nn_scalar as c
from tests.helpers import TensorDef, single_op_model

ESP = ("esp32-c3", "esp32-c3+ansi", "esp32-s3", "esp32-p4", "esp32+ansi")


def _run(model: bytes, target: str, *inputs) -> np.ndarray:
    it = MicroInterpreter(model, arena_size=1 << 22, target=target)
    it.allocate_tensors()
    for i, x in enumerate(inputs):
        it.set_input(x, i)
    it.invoke()
    return np.array(it.output(0))


def _softmax_params(scale: float, beta: float):
    real = min(float(np.float32(beta)) * float(np.float32(scale)) * float(1 << 26), float((1 << 31) - 1))
    mult, shift = quantize_multiplier(real)
    return mult, shift, -calculate_input_radius(5, shift)


@pytest.mark.parametrize("seed", range(6))
def test_softmax_int8_equals_esp_nn_c(seed):
    rng = np.random.default_rng(seed)
    rows = int(rng.integers(1, 4))
    depth = int(rng.choice([3, 17, 40, 600, 1100, 5000]))
    scale, zp, beta = float(np.float32(rng.uniform(0.02, 0.4))), int(rng.integers(-100, 100)), 1.0
    x = rng.integers(-128, 128, (rows, depth)).astype(np.int8)
    if depth >= 600:
        # hundreds or thousands of values at the row maximum: a shift of 32+ bits, or (5000)
        # a sum of exponentials past 2^31
        x[:] = np.int8(rng.integers(-30, 30))
        x[:, ::7] -= 2
    model = single_op_model("SOFTMAX", [TensorDef(x.shape, "INT8", quant=(scale, zp))],
                            [TensorDef(x.shape, "INT8", quant=(1.0 / 256, -128))], beta=beta)
    expected = c.softmax_s8_ansi(x, *_softmax_params(scale, beta))
    for target in ESP:
        assert _run(model, target, x).tobytes() == expected.tobytes(), target
    if depth >= 600:
        with pytest.raises(MicroRuntimeError, match="TFLM aborts"):
            _run(model, "riscv32", x)            # the reference kernel's shift is out of range
    else:
        assert _run(model, "riscv32", x).tobytes() == expected.tobytes()


@pytest.mark.parametrize("seed", range(4))
def test_per_channel_fully_connected(seed):
    rng = np.random.default_rng(100 + seed)
    depth, units, batches = int(rng.integers(3, 40)), int(rng.integers(2, 12)), int(rng.integers(1, 3))
    w = rng.integers(-128, 128, (units, depth)).astype(np.int8)
    zps = rng.integers(-15, 16, units)
    zps[0] = 0                      # the tensor's zero point (TFLM debug-checks it is 0)
    scales = rng.uniform(0.002, 0.02, units).astype(np.float32)
    in_scale, in_zp, out_scale, out_zp = np.float32(0.05), 7, np.float32(0.3), -4
    bias = rng.integers(-5000, 5000, units).astype(np.int32)
    model = single_op_model(
        "FULLY_CONNECTED",
        [TensorDef((batches, depth), "INT8", quant=(float(in_scale), in_zp)),
         TensorDef((units, depth), "INT8", data=w, quant=(scales, zps, 0)),
         TensorDef((units,), "INT32", data=bias, quant=(scales * in_scale, np.zeros(units, np.int64), 0))],
        [TensorDef((batches, units), "INT8", quant=(float(out_scale), out_zp))], fused_activation_function=0)
    x = rng.integers(-128, 128, (batches, depth)).astype(np.int8)
    mult, shift = zip(*(quantize_multiplier(float(in_scale) * float(s) / float(out_scale)) for s in scales))
    expected = np.stack([c.fully_connected_per_ch_s8_ansi(row, w, bias, -in_zp, -int(zps[0]), out_zp,
                                                          mult, shift, (-128, 127)) for row in x])
    # ESP-NN takes one weights offset, the tensor's zero point (the first channel's): 0
    for target in ESP + ("riscv32",):
        assert _run(model, target, x).tobytes() == expected.tobytes(), target
    # a non-zero first zero point (the tensor's): the builds with debug checks abort in prepare
    zps[0] = 3
    bad = single_op_model(
        "FULLY_CONNECTED",
        [TensorDef((batches, depth), "INT8", quant=(float(in_scale), in_zp)),
         TensorDef((units, depth), "INT8", data=w, quant=(scales, zps, 0)), None],
        [TensorDef((batches, units), "INT8", quant=(float(out_scale), out_zp))], fused_activation_function=0)
    for target in ESP + ("riscv32",):
        with pytest.raises(MicroRuntimeError, match="debug-checks"):
            MicroInterpreter(bad, arena_size=1 << 20, target=target).allocate_tensors()


@pytest.mark.parametrize("seed", range(6))
def test_int8_convolution_equals_esp_nn_c(seed):
    rng = np.random.default_rng(200 + seed)
    groups = int(rng.choice([1, 1, 2, 3]))
    in_c, out_c = groups * int(rng.integers(1, 4)), groups * int(rng.integers(1, 4))
    fh, fw = int(rng.integers(2, 4)), int(rng.integers(1, 4))
    sh, sw = int(rng.integers(1, 3)), int(rng.integers(1, 3))
    in_h, in_w = int(rng.integers(fh, 9)), int(rng.integers(fw, 9))
    same = bool(rng.integers(0, 2))
    out_h = -(-in_h // sh) if same else (in_h - fh) // sh + 1
    out_w = -(-in_w // sw) if same else (in_w - fw) // sw + 1
    ph = max(0, ((out_h - 1) * sh + fh - in_h) // 2) if same else 0
    pw = max(0, ((out_w - 1) * sw + fw - in_w) // 2) if same else 0
    w = rng.integers(-128, 128, (out_c, fh, fw, in_c // groups)).astype(np.int8)
    scales = rng.uniform(0.002, 0.02, out_c).astype(np.float32)
    in_scale, in_zp, out_scale, out_zp = np.float32(0.05), -3, np.float32(0.5), 5
    bias = rng.integers(-3000, 3000, out_c).astype(np.int32)
    model = single_op_model(
        "CONV_2D",
        [TensorDef((1, in_h, in_w, in_c), "INT8", quant=(float(in_scale), in_zp)),
         TensorDef(w.shape, "INT8", data=w, quant=(scales, np.zeros(out_c, np.int64), 0)),
         TensorDef((out_c,), "INT32", data=bias, quant=(scales * in_scale, np.zeros(out_c, np.int64), 0))],
        [TensorDef((1, out_h, out_w, out_c), "INT8", quant=(float(out_scale), out_zp))],
        padding=0 if same else 1, stride_w=sw, stride_h=sh, dilation_w_factor=1, dilation_h_factor=1,
        fused_activation_function=0)
    x = rng.integers(-128, 128, (1, in_h, in_w, in_c)).astype(np.int8)
    mult, shift = zip(*(quantize_multiplier(float(in_scale) * float(s) / float(out_scale)) for s in scales))
    expected = c.conv_s8_ansi(x[0], w, bias, -in_zp, out_zp, (sw, sh), (pw, ph), (out_h, out_w),
                              mult, shift, (-128, 127))[None]
    for target in ESP + ("riscv32",):
        if groups > 1 and target != "riscv32":
            # esp-tflite-micro's MatchingDim(input depth, filter depth) aborts
            with pytest.raises(MicroRuntimeError, match="grouped"):
                _run(model, target, x)
            continue
        assert _run(model, target, x).tobytes() == expected.tobytes(), target


def test_scalar_transcription_sanity():
    # the helpers behave as C on RISC-V / Xtensa: shift amounts modulo 32, int32 wrap
    assert c.div_by_power_of_two(-5, 1) == -3 and c.div_by_power_of_two(5, 1) == 3
    assert c.div_by_power_of_two(12345, 32) == 12345 and c.div_by_power_of_two(-7, 33) == -4
    assert c.sat_round_doubling_high_mul(c.INT32_MIN, c.INT32_MIN) == c.INT32_MAX
    assert c.w32(1 << 31) == c.INT32_MIN and c.clz32(1) == 31


class _Arena:
    """A stand-in KernelContext: one byte array with the input, output and scratch
    buffer at chosen offsets."""

    def __init__(self, size, persistent):
        self.mem = np.zeros(size, np.uint8)
        self.persistent = persistent
        self.scratch_view = None

    @property
    def persistent_start(self):
        return self.persistent

    def arena_window(self, start, end):
        return self.mem[start:end], False

    def arena_offset(self, array):
        start = self.mem.__array_interface__["data"][0]
        return np.asarray(array).__array_interface__["data"][0] - start

    def scratch(self, index):
        return self.scratch_view

    def error(self, message):
        return MicroRuntimeError(message)


@pytest.mark.parametrize("layout", ["apart", "over_output", "over_input", "reaches_persistent"])
def test_softmax_writing_past_its_scratch_buffer(layout):
    """Rows longer than the scratch buffer: the exponentials land past it, on whatever
    the arena holds there, and are read back from there (esp_nn_softmax_s8_opt)."""
    from kernels.esp_nn.softmax import EspNNSoftmax, EspSoftmaxOpData
    from kernels.softmax import Softmax
    rng = np.random.default_rng(7)
    rows, depth, dims1 = 3, 23, 2
    scale, zp = 0.07, 3
    mult, shift, diff_min = _softmax_params(scale, 1.0)
    data = EspSoftmaxOpData()
    data.input_multiplier, data.input_left_shift, data.diff_min, data.depth = mult, shift, diff_min, depth
    data.exp_table = Softmax._int8_exp_table(data)
    data.buffer_idx, data.overflows = 0, True
    x_at, y_at, s_at = {"apart": (0, 80, 160), "over_output": (0, 100, 96),
                        "over_input": (40, 0, 32), "reaches_persistent": (0, 80, 160)}[layout]
    ctx = _Arena(512, 200 if layout == "reaches_persistent" else 512)
    x = ctx.mem[x_at:x_at + rows * depth].view(np.int8).reshape(rows, depth)
    y = ctx.mem[y_at:y_at + rows * depth].view(np.int8).reshape(rows, depth)
    ctx.scratch_view = ctx.mem[s_at:s_at + 4 * dims1]
    x[:] = rng.integers(-128, 128, x.shape)
    ctx.mem[~np.isin(np.arange(512), np.r_[x_at:x_at + rows * depth])] = rng.integers(0, 256, 512 - rows * depth)
    expected = bytearray(ctx.mem.tobytes())
    c.softmax_s8_opt_on_memory(expected, x_at, y_at, s_at, rows, depth, mult, shift, diff_min)

    class Node:
        input_arrays, output_arrays, user_data = [x], [y], data
    if layout == "reaches_persistent":
        with pytest.raises(MicroRuntimeError, match="persistent"):
            EspNNSoftmax._invoke_overflowing(ctx, Node, data)
        return
    EspNNSoftmax._invoke_overflowing(ctx, Node, data)
    assert ctx.mem.tobytes() == bytes(expected)        # outputs and every clobbered byte
