"""The C library float functions a TFLM build's float kernels call (``std::exp``,
``std::tanh``, ``std::log``, ...), chosen by the target's ``libm`` field: the one place a
kernel asks for them.

* ``"glibc"`` (host64, mcu32: the tflite-micro package and the 32-bit x86 build link glibc
  2.36): glibc's table-driven expf / logf / sinf / cosf (:mod:`.libm_float`,
  :mod:`.glibc_float`) and fdlibm's expm1f / tanhf.
* ``"newlib"`` (every Cortex-M profile: arm-none-eabi's newlib 3.3.0, soft-float, so the
  fdlibm "obsolete math" everywhere, :mod:`.newlib_float`).

sqrtf is IEEE (exact) in both, so kernels keep ``np.sqrt``; RSQRT is ``1.f / sqrtf(x)``.
"""
from __future__ import annotations

from dataclasses import dataclass
from typing import Callable

import numpy as np

from . import glibc_float, libm_float, newlib_float

Float32Function = Callable[[np.ndarray], np.ndarray]


@dataclass(frozen=True)
class FloatMath:
    """One C library's float32 functions, each float32 array -> float32 array."""
    name: str
    expf: Float32Function
    expm1f: Float32Function
    tanhf: Float32Function
    logf: Float32Function
    sinf: Float32Function
    cosf: Float32Function


GLIBC = FloatMath("glibc", libm_float.expf, libm_float.expm1f, libm_float.tanhf,
                  glibc_float.logf, glibc_float.sinf, glibc_float.cosf)
NEWLIB = FloatMath("newlib", newlib_float.expf, newlib_float.expm1f, newlib_float.tanhf,
                   newlib_float.logf, newlib_float.sinf, newlib_float.cosf)

_LIBRARIES = {"glibc": GLIBC, "newlib": NEWLIB}


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
