"""Kernels, bit-exact with TFLM's, laid out like TFLM's ``kernels/`` tree.

* ``kernels/<op>.py`` — TFLM's reference kernels, one module per op (one registration);
* ``kernels/signal/`` — TFLM's signal-library custom ops (``signal/micro/kernels``);
* ``kernels/internal/`` — shared math: quantization, lookup tables, padding, broadcasting,
  libm / glibc float emulation, kiss FFT, tensor helpers (no registrations);
* :mod:`kernels.base` — the :class:`Kernel` base class and the registry.

Importing the package imports every module of every kernel subpackage, so each
``@register`` runs: a new kernel needs no entry in any list.
"""
import importlib
import pkgutil

from .base import BUILTIN_KERNELS, CUSTOM_KERNELS, Kernel, register

#: subpackages holding shared code, not kernels
_SHARED = ("internal",)


def _import_kernel_modules() -> None:
    for info in pkgutil.walk_packages(__path__, prefix=f"{__name__}.",
                                      onerror=lambda name: None):
        if info.name.rsplit(".", 1)[-1].startswith("_"):
            continue
        if any(info.name.startswith(f"{__name__}.{pkg}") for pkg in _SHARED):
            continue
        importlib.import_module(info.name)


_import_kernel_modules()

# Shared math and signal ops used to live at the top of this package: keep the old names.
from micro_runtime._moved import alias_moved_modules as _alias_moved_modules  # noqa: E402

_alias_moved_modules({
    **{f"{__name__}.{info.name}": f"{__name__}.internal.{info.name}"
       for info in pkgutil.iter_modules(importlib.import_module(f"{__name__}.internal").__path__)},
    **{f"{__name__}.signal_{info.name}": f"{__name__}.signal.{info.name}"
       for info in pkgutil.iter_modules(importlib.import_module(f"{__name__}.signal").__path__)},
})

__all__ = ["BUILTIN_KERNELS", "CUSTOM_KERNELS", "Kernel", "register"]
