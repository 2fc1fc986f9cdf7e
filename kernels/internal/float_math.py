"""The C library float functions a TFLM build's float kernels call (``std::exp``,
``std::tanh``, ``std::log``, ...) and the NaN rules of its float32 arithmetic, chosen by
the target's ``libm`` field: the one place a kernel asks for them.

* ``"glibc"`` (host64, mcu32: the tflite-micro package and the 32-bit x86 build link glibc
  2.36): glibc's table-driven expf / logf / sinf / cosf (:mod:`.libm_float`,
  :mod:`.glibc_float`) and fdlibm's expm1f / tanhf.
* ``"newlib"`` (the Cortex-M profiles of soft-float builds: arm-none-eabi's newlib 3.3.0,
  soft-float, so the fdlibm "obsolete math" everywhere, :mod:`.newlib_float`).
* ``"newlib-hard"`` (Cortex-M55 profiles: TFLM built with -mfloat-abi=hard links newlib's
  thumb/v8-m.main+dp/hard multilib): with a double-precision FPU newlib compiles the
  table-driven expf / logf / sinf / cosf / exp (the algorithms glibc uses, with fused
  multiply-adds) instead of fdlibm's, and fdlibm's expm1f / tanhf with gcc's fused
  multiply-adds. Measured under QEMU (mps3-an547) on 2^20 float32 inputs spread over
  all bit patterns: equal bit for bit, logf's invalid-operation NaN being Arm's
  0x7fc00000.
* ``"rv32"`` (the ESP32 family and riscv32: picolibc's / newlib's fdlibm functions for
  RV32 and RISC-V's NaN rule: every NaN an operation makes is the canonical 0x7fc00000).

Arithmetic: glibc builds run x86 SSE (a NaN operand: the first one, quieted; an invalid
operation: 0xffc00000); Cortex-M builds are -mfloat-abi=soft and call libgcc's ARM soft-float
routines, whose NaN rules differ (:func:`.float_ops._arm_nan`); only NaN bit patterns differ.
The hard-float Cortex-M55 profiles keep those rules for + - * / (the FPU's differ only for
NaN operands); their fused multiply-adds follow the FPU's (:func:`.matmul.float32_fma`).

sqrtf is IEEE (exact) in both; only the NaN of a negative argument differs (x86's default
NaN 0xffc00000 against newlib's 0x7fc00000). RSQRT is ``1.f / sqrtf(x)``.
"""
from __future__ import annotations

import math
from dataclasses import dataclass
from typing import Callable, Optional

import numpy as np

from . import float_ops, glibc_float, libm_float, newlib_float

Float32Function = Callable[[np.ndarray], np.ndarray]


@dataclass(frozen=True)
class FloatMath:
    """One build's float32 functions, each float32 array(s) -> float32 array: the C
    library's, the element-wise arithmetic (``add`` ... ``div``, broadcasting) and the
    sequential sum along the last axis (``row_sum``), with the build's NaN rules."""
    name: str
    expf: Float32Function
    expm1f: Float32Function
    tanhf: Float32Function
    logf: Float32Function
    sinf: Float32Function
    cosf: Float32Function
    sqrtf: Float32Function
    add: Callable[[np.ndarray, np.ndarray], np.ndarray]
    sub: Callable[[np.ndarray, np.ndarray], np.ndarray]
    mul: Callable[[np.ndarray, np.ndarray], np.ndarray]
    div: Callable[[np.ndarray, np.ndarray], np.ndarray]
    row_sum: Float32Function
    #: double ``exp`` (``std::exp(double)``) and double ``a + b``, float64 arrays
    exp64: Callable[[np.ndarray], np.ndarray]
    dadd: Callable[[np.ndarray, np.ndarray], np.ndarray]
    #: the build's compiled float ADD / MUL loops pass input 2 as the first operand of
    #: the add / multiply (arm-none-eabi-gcc commutes them; which NaN comes out depends
    #: on it): measured on TFLM's Cortex-M builds for same-shape inputs; their broadcast
    #: loops keep input 1 first
    commuted_add_mul: bool = False
    #: the host build's rule instead (None: the one above): ``(op, shape1, shape2)`` ->
    #: whether input 2 is the first operand (:func:`x86_input2_first`)
    input2_first_rule: Optional[Callable[[str, tuple, tuple], bool]] = None

    def input2_first(self, op: str, shape1: tuple, shape2: tuple) -> bool:
        """Whether the float ADD / MUL loop of this build takes input 2 as the first
        operand for inputs of these shapes (which NaN of two comes out)."""
        if self.input2_first_rule is not None:
            return self.input2_first_rule(op, tuple(shape1), tuple(shape2))
        return self.commuted_add_mul and tuple(shape1) == tuple(shape2)


def x86_input2_first(op: str, shape1: tuple, shape2: tuple) -> bool:
    """The tflite-micro package's float ADD / MUL operand order, measured with two NaN
    inputs (tests/test_float_nans.py): same shapes, ADD input 1 first and MUL input 2
    first; input 2 of one element (the scalar loop), input 1 first; input 1 of one
    element, and every other broadcast, input 2 first."""
    if shape1 == shape2:
        return op == "MUL"
    if math.prod(shape2) == 1:
        return False
    return True


def _sqrtf_x86(x) -> np.ndarray:
    """sqrtss: IEEE square root, the default NaN 0xffc00000 for x < 0."""
    with np.errstate(all="ignore"):
        return np.sqrt(np.asarray(x, dtype=np.float32))


def _mul_x86(a, b) -> np.ndarray:
    """``a * b`` in float32 (x86 NaN choice: ``a``'s of two NaNs)."""
    with np.errstate(all="ignore"):
        return float_ops.first_nan(a, b, np.multiply(a, b, dtype=np.float32))


def _div_x86(a, b) -> np.ndarray:
    with np.errstate(all="ignore"):
        return np.divide(a, b, dtype=np.float32)


def _exp64_glibc(x) -> np.ndarray:
    """glibc's double exp (Python's ``math.exp`` calls it), element by element."""
    def one(v: float) -> float:
        try:
            return math.exp(v)
        except OverflowError:
            return math.inf
    x = np.asarray(x, np.float64)
    return np.array([one(v) for v in x.reshape(-1).tolist()], np.float64).reshape(x.shape)


def _dadd_ieee(a, b) -> np.ndarray:
    with np.errstate(all="ignore"):
        return np.add(a, b, dtype=np.float64)


GLIBC = FloatMath("glibc", libm_float.expf, libm_float.expm1f, libm_float.tanhf,
                  glibc_float.logf, glibc_float.sinf, glibc_float.cosf, _sqrtf_x86,
                  float_ops.add_f32, float_ops.sub_f32, _mul_x86, _div_x86,
                  float_ops.x86_row_sum, _exp64_glibc, _dadd_ieee,
                  input2_first_rule=x86_input2_first)
NEWLIB = FloatMath("newlib", newlib_float.expf, newlib_float.expm1f, newlib_float.tanhf,
                   newlib_float.logf, newlib_float.sinf, newlib_float.cosf, newlib_float.sqrtf,
                   float_ops.arm_add_f32, float_ops.arm_sub_f32, float_ops.arm_mul_f32,
                   float_ops.arm_div_f32, float_ops.arm_row_sum, newlib_float.exp64,
                   float_ops.libgcc_dadd, commuted_add_mul=True)



def _logf_arm_nan(x) -> np.ndarray:
    """glibc's table-driven logf with Arm's default NaN (0x7fc00000) for x < 0."""
    x = np.asarray(x, dtype=np.float32)
    y = glibc_float.logf(x)
    invalid = np.isnan(y) & ~np.isnan(x)
    return np.where(invalid, np.uint32(0x7FC00000).view(np.float32), y).astype(np.float32)


def _expm1f_fused(x) -> np.ndarray:
    return libm_float.expm1f(x, fused=True)


def _tanhf_fused(x) -> np.ndarray:
    return libm_float.tanhf(x, fused=True)


NEWLIB_HARD = FloatMath("newlib-hard", libm_float.expf, _expm1f_fused, _tanhf_fused,
                        _logf_arm_nan, glibc_float.sinf, glibc_float.cosf, newlib_float.sqrtf,
                        float_ops.arm_add_f32, float_ops.arm_sub_f32, float_ops.arm_mul_f32,
                        float_ops.arm_div_f32, float_ops.arm_row_sum, _exp64_glibc,
                        _dadd_ieee, commuted_add_mul=True)


def _canonical_nan(function, double: bool = False):
    """``function`` with every NaN result replaced by RISC-V's canonical quiet NaN
    (0x7fc00000; 0x7ff8000000000000 in double)."""
    dtype = np.float64 if double else np.float32

    def wrapped(*args):
        result = np.asarray(function(*args))
        nan = np.isnan(result)
        if nan.any():
            result = np.where(nan, dtype(np.nan), result).astype(dtype, copy=False)
        return result
    wrapped.__name__ = getattr(function, "__name__", "function")
    return wrapped


#: RV32 builds (ESP-IDF's and TFLM's riscv32_generic, picolibc / newlib's fdlibm float
#: functions, libgcc's RISC-V soft-float or the F extension): fdlibm's values, and every
#: NaN an operation produces is the canonical quiet NaN (libgcc's RISC-V soft-fp keeps no
#: NaN payload, as the F extension does not)
RV32 = FloatMath("rv32", *(_canonical_nan(f) for f in (
    newlib_float.expf, newlib_float.expm1f, newlib_float.tanhf, newlib_float.logf,
    newlib_float.sinf, newlib_float.cosf, newlib_float.sqrtf, float_ops.add_f32,
    float_ops.sub_f32, _mul_x86, _div_x86, float_ops.x86_row_sum)),
    _canonical_nan(newlib_float.exp64, double=True), _canonical_nan(_dadd_ieee, double=True))

_LIBRARIES = {"glibc": GLIBC, "newlib": NEWLIB, "newlib-hard": NEWLIB_HARD, "rv32": RV32}


def math_for(target=None) -> FloatMath:
    """The float functions of ``target``'s C library (``Target.libm``; glibc when
    ``target`` is None or has no such field)."""
    name = getattr(target, "libm", "glibc")
    try:
        return _LIBRARIES[name]
    except KeyError:
        from micro_runtime.errors import MicroRuntimeError
        raise MicroRuntimeError(f"unknown C library {name!r} for float functions "
                                f"(known: {', '.join(sorted(_LIBRARIES))})") from None


def c_expf(target=None):
    """The ``expf`` of the C library ``target``'s build links (``Target.libm``): glibc's
    (host builds, the default) or newlib's (Cortex-M builds); shorthand for
    ``math_for(target).expf``."""
    return math_for(target).expf
