"""newlib's float functions (the C library of TFLM's arm-none-eabi builds,
kernels/internal/newlib_float.py) against values computed by newlib itself under QEMU
(tests/data/newlib: its README says how), and the per-target dispatch
(kernels/internal/float_math.py)."""
import json
import os

import numpy as np
import pytest

from kernels.internal import float_math, newlib_float
from kernels.internal.newlib_float import expf
from micro_runtime.targets import get_target
from tests.newlib_float_inputs import arithmetic_inputs, float_inputs

DIR = os.path.join(os.path.dirname(os.path.abspath(__file__)), "data", "newlib")
DATA = os.path.join(DIR, "expf.json")
#: |x| above which sinf / cosf reduce with __kernel_rem_pio2f (2^7 pi / 2)
LARGE_TRIG = np.float32(201.06193)


def test_expf_matches_newlib():
    with open(DATA) as f:
        record = json.load(f)
    x = np.array([int(v, 16) for v in record["inputs"]], np.uint32).view(np.float32)
    want = np.array([int(v, 16) for v in record["outputs"]], np.uint32)
    got = expf(x).view(np.uint32)
    both_nan = np.isnan(got.view(np.float32)) & np.isnan(want.view(np.float32))
    bad = (got != want) & ~both_nan
    assert not bad.any(), f"{bad.sum()} of {x.size} differ, e.g. x={x[bad][:4]}"


def test_expf_differs_from_glibc_somewhere():
    """The reason the module exists: newlib's fdlibm expf is not glibc's."""
    from kernels.internal.libm_float import expf as glibc_expf
    x = np.linspace(-20, 0, 20001, dtype=np.float32)
    assert (expf(x) != glibc_expf(x)).any()


def _recorded(function):
    x = float_inputs(function)
    want = np.fromfile(os.path.join(DIR, f"{function}.out.bin"), "<u4")
    assert want.size == x.size, "inputs and recorded outputs out of step"
    return x, want


def _assert_bit_exact(x, got, want):
    got = np.asarray(got, np.float32).view(np.uint32)
    bad = got != want       # NaN bit patterns too: TFLM's output hashes see them
    assert not bad.any(), (f"{bad.sum()} of {x.size} differ, e.g. "
                           + ", ".join(f"x={v!r}: {g:08x} vs newlib {w:08x}"
                                       for v, g, w in zip(x[bad][:4], got[bad][:4], want[bad][:4])))


@pytest.mark.parametrize("function", ["expf", "expm1f", "tanhf", "logf"])
def test_matches_newlib_bit_for_bit(function):
    x, want = _recorded(function)
    _assert_bit_exact(x, getattr(newlib_float, function)(x), want)


@pytest.mark.parametrize("function", ["sinf", "cosf"])
@pytest.mark.parametrize("large", [False, True], ids=["medium", "large"])
def test_trig_matches_newlib_bit_for_bit(function, large):
    """Medium arguments (fdlibm's float pi/2 pieces) and large ones (|x| > 2^7 pi/2:
    __kernel_rem_pio2f, incl. newlib's q0 == 0 quirk), each checked on its own."""
    x, want = _recorded(function)
    pick = (np.abs(x) > LARGE_TRIG) & np.isfinite(x)
    pick = pick if large else ~pick
    assert pick.sum() > (1500 if large else 7000)
    _assert_bit_exact(x[pick], getattr(newlib_float, function)(x[pick]), want[pick])


@pytest.mark.parametrize("function", ["expf", "logf", "sinf", "cosf"])
def test_newlib_differs_from_glibc(function):
    """Why Cortex-M targets need their own functions: glibc's differ on recorded inputs."""
    x, want = _recorded(function)
    glibc = getattr(float_math.GLIBC, function)(x).view(np.uint32)
    assert (glibc != want).sum() > 10


def test_targets_pick_their_c_library():
    for name in ("cortex-m0", "cortex-m3", "cortex-m4", "cortex-m4+cmsis-nn", "cortex-m7+cmsis-nn",
                 "cortex-m33+cmsis-nn"):
        assert float_math.math_for(get_target(name)) is float_math.NEWLIB
    for name in ("cortex-m55", "cortex-m55+cmsis-nn", "cortex-m85+cmsis-nn"):
        assert float_math.math_for(get_target(name)) is float_math.NEWLIB_HARD
    for name in ("host64", "mcu32"):
        assert float_math.math_for(get_target(name)) is float_math.GLIBC
    assert float_math.math_for(None) is float_math.GLIBC


def test_unknown_c_library_is_a_clear_error():
    from micro_runtime.errors import MicroRuntimeError

    class Odd:
        libm = "musl"
    with pytest.raises(MicroRuntimeError, match="musl"):
        float_math.math_for(Odd())


@pytest.mark.parametrize("function", ["expf", "expm1f", "tanhf", "logf", "sinf", "cosf"])
def test_shapes_and_dtype_kept(function):
    x = np.linspace(-3, 3, 24, dtype=np.float32).reshape(2, 3, 4)
    y = getattr(newlib_float, function)(x)
    assert y.shape == x.shape and y.dtype == np.float32


@pytest.mark.parametrize("operation", ["add", "sub", "mul", "div"])
def test_arm_soft_float_nan_rules(operation):
    """libgcc's ARM soft-float +, -, *, / (what -mfloat-abi=soft Cortex-M code calls) on
    NaN / infinity / zero operand pairs, recorded under QEMU: every result bit for bit."""
    from kernels.internal import float_ops
    pairs = arithmetic_inputs()
    want = np.fromfile(os.path.join(DIR, f"{operation}.out.bin"), "<u4")
    got = getattr(float_ops, f"arm_{operation}_f32")(pairs[:, 0], pairs[:, 1]).view(np.uint32)
    bad = got != want
    assert not bad.any(), [f"{a!r} {b!r}: {g:08x} vs {w:08x}"
                           for (a, b), g, w in zip(pairs[bad][:4], got[bad][:4], want[bad][:4])]


def test_arm_soft_float_differs_from_x86():
    """Why the rule is per target: x86's sub keeps a NaN subtrahend's sign, and its
    invalid operations give the negative default NaN."""
    pairs = arithmetic_inputs()
    for operation, host in (("sub", float_math.GLIBC.sub), ("mul", float_math.GLIBC.mul),
                            ("div", float_math.GLIBC.div)):
        want = np.fromfile(os.path.join(DIR, f"{operation}.out.bin"), "<u4")
        assert (host(pairs[:, 0], pairs[:, 1]).view(np.uint32) != want).any()


def test_arm_row_sum_is_the_sequential_soft_float_sum():
    """arm_row_sum (vectorised) against TFLM's loop ``sum = sum + x`` from 0.f run with
    the recorded soft-float add, on rows with NaNs, infinities and signed zeros."""
    from kernels.internal import float_ops
    rng = np.random.default_rng(5)
    specials = np.array([np.nan, -np.nan, np.inf, -np.inf, 0.0, -0.0, 3e38, 1.0], np.float32)
    specials = np.concatenate([specials, np.array([0x7FC12345, 0xFFA00001], np.uint32).view(np.float32)])
    rows = rng.choice(specials, size=(400, 7)).astype(np.float32)
    rows = np.where(rng.random(rows.shape) < 0.5, rng.uniform(-5, 5, rows.shape).astype(np.float32), rows)
    total = np.zeros(rows.shape[0], np.float32)
    for c in range(rows.shape[1]):
        total = float_ops.arm_add_f32(total, rows[:, c])
    assert (float_ops.arm_row_sum(rows).view(np.uint32) == total.view(np.uint32)).all()
    host = np.zeros(rows.shape[0], np.float32)
    for c in range(rows.shape[1]):
        host = float_ops.add_f32(host, rows[:, c])
    assert (float_ops.x86_row_sum(rows).view(np.uint32) == host.view(np.uint32)).all()


def test_double_exp_matches_newlib():
    """newlib's double exp (DETECTION_POSTPROCESS's std::exp(double) on Cortex-M), incl.
    the inputs where libgcc's soft-float double add is not IEEE-rounded (1 + x for
    x in (-2^-32, -2^-33))."""
    from tests.newlib_float_inputs import double_inputs
    x = double_inputs("exp")
    want = np.fromfile(os.path.join(DIR, "exp.out.bin"), "<u8")
    got = newlib_float.exp64(x).view(np.uint64)
    bad = got != want
    assert not bad.any(), [f"{v!r}: {g:016x} vs {w:016x}" for v, g, w in zip(x[bad][:4], got[bad][:4], want[bad][:4])]
    assert (float_math.GLIBC.exp64(x).view(np.uint64) != want).any()


def test_libgcc_double_add():
    """libgcc's __aeabi_dadd on operand pairs 25..60 binades apart, recorded under QEMU:
    bit for bit, including the pairs it does not round as IEEE does."""
    from kernels.internal.float_ops import libgcc_dadd
    from tests.newlib_float_inputs import double_add_inputs
    pairs = double_add_inputs()
    want = np.fromfile(os.path.join(DIR, "dadd.out.bin"), "<u8")
    assert (libgcc_dadd(pairs[:, 0], pairs[:, 1]).view(np.uint64) == want).all()
    assert ((pairs[:, 0] + pairs[:, 1]).view(np.uint64) != want).sum() >= 5   # the quirk is there


HARD = json.load(open(os.path.join(DIR, "hard_float.json")))


def test_hard_float_newlib_matches_the_cortex_m55_build():
    """The hard-float (Cortex-M55) newlib's float functions, bit for bit on 65,536 inputs
    spread over all float32 bit patterns (NaN payloads included), against its outputs
    under QEMU; the soft-float library's differ (so the recording tells them apart)."""
    import hashlib
    sample = HARD["sample"]
    i = np.arange(0, sample["count"], sample["subsample_step"], dtype=np.uint64)
    x = ((i * sample["multiplier"]) & 0xFFFFFFFF).astype(np.uint32).view(np.float32)
    hard = float_math.math_for(get_target("cortex-m55+cmsis-nn"))
    soft = float_math.math_for(get_target("cortex-m4"))
    assert hard.name == "newlib-hard" and soft.name == "newlib"
    assert float_math.math_for(get_target("cortex-m55+ethos-u55-128")) is hard
    digest = lambda v: hashlib.sha256(np.asarray(v, np.float32).tobytes()).hexdigest()  # noqa: E731
    with np.errstate(all="ignore"):
        for name, want in HARD["functions"].items():
            assert digest(getattr(hard, name)(x)) == want["sha256_every_16th"], name
        for name in ("expf", "logf"):
            assert digest(getattr(soft, name)(x)) != HARD["functions"][name]["sha256_every_16th"]


def test_arm_fused_multiply_add_nan_rules():
    """vfma's NaN (Arm FPMulAdd, default-NaN mode off): signalling NaNs first, in the
    order addend, factor, factor; then quiet NaNs in that order; 0 * inf gives the
    default NaN even with a quiet-NaN addend."""
    from kernels.internal.matmul import float32_fma
    f = lambda bits: np.array([bits], np.uint32).view(np.float32)     # noqa: E731
    q1, q2, s1 = f(0x7FC00011), f(0xFFC00022), f(0x7F800033)
    one, zero, inf = np.float32([1.0]), np.float32([0.0]), np.float32([np.inf])
    bits = lambda v: int(np.asarray(v, np.float32).view(np.uint32)[0])  # noqa: E731
    assert bits(float32_fma(q1, one, q2)) == 0xFFC00022          # the addend's quiet NaN
    assert bits(float32_fma(one, q1, q2)) == 0xFFC00022
    assert bits(float32_fma(q1, one, one)) == 0x7FC00011
    assert bits(float32_fma(s1, one, q2)) == 0x7FC00033          # a signalling NaN, quieted
    assert bits(float32_fma(zero, inf, q2)) == 0x7FC00000        # 0 * inf + qNaN
    assert bits(float32_fma(zero, inf, one)) == 0x7FC00000
    assert bits(float32_fma(inf, one, -inf)) == 0x7FC00000
    assert float32_fma(np.float32([2.0]), np.float32([3.0]), one)[0] == 7.0
