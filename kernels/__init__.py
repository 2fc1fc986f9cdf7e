"""Kernels, bit-exact with TFLM's, laid out like TFLM's ``kernels/`` tree.

* ``kernels/<op>.py`` — TFLM's reference kernels, one module per op (one registration);
* ``kernels/signal/`` — TFLM's signal-library custom ops (``signal/micro/kernels``);
* ``kernels/cmsis_nn/`` — the kernels TFLM's ``OPTIMIZED_KERNEL_DIR=cmsis_nn`` builds run
  instead of the reference ones (registered with :func:`kernels.base.register_variant`);
* ``kernels/internal/`` (and any ``internal`` subpackage) — shared math: quantization, lookup tables, padding, broadcasting,
  libm / glibc float emulation, kiss FFT, tensor helpers (no registrations);
* :mod:`kernels.base` — the :class:`Kernel` base class and the registry.

Importing the package imports every module of every kernel subpackage, so each
``@register`` runs: a new kernel needs no entry in any list.
"""
import importlib
import pkgutil

from .base import BUILTIN_KERNELS, CUSTOM_KERNELS, KERNEL_VARIANTS, Kernel, register, register_variant

#: subpackages (at any depth) holding shared code, not kernels
_SHARED = ("internal",)


def _import_kernel_modules() -> None:
    for info in pkgutil.walk_packages(__path__, prefix=f"{__name__}.",
                                      onerror=lambda name: None):
        if info.name.rsplit(".", 1)[-1].startswith("_"):
            continue
        if any(part in _SHARED for part in info.name.split(".")[1:]):
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

__all__ = ["BUILTIN_KERNELS", "CUSTOM_KERNELS", "KERNEL_VARIANTS", "Kernel", "register", "register_variant"]
