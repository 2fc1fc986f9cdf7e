"""Reference kernels, bit-exact with TFLM's reference kernels.

Importing the package registers every kernel module in :data:`BUILTIN_KERNELS`.
"""
import importlib
import pkgutil

from .base import BUILTIN_KERNELS, Kernel, register

_HELPERS = {"base", "quantization", "broadcast", "padding", "lut", "matmul", "tensor_utils",
            "resource_variables", "glibc_float", "float_ops"}

for _info in pkgutil.iter_modules(__path__):
    if _info.name not in _HELPERS and not _info.name.startswith("_"):
        importlib.import_module(f"{__name__}.{_info.name}")

__all__ = ["BUILTIN_KERNELS", "Kernel", "register"]
