"""Op resolver: which kernel runs each operator of a model.

Builtin operators are looked up by their BuiltinOperator name, custom operators by
their custom-code name. :func:`default_op_resolver` holds every kernel micro-runtime
ships; add your own (Python) kernels with :meth:`OpResolver.add`.
"""
from __future__ import annotations

from typing import Dict, Iterable, List, Optional

from .errors import InputError, UnsupportedOpError
from .schema import BUILTIN_OP_CODES, BuiltinOperator, op_name


class OpResolver:
    """Maps operators to kernels (objects with init / prepare / invoke, see
    :class:`kernels.base.Kernel`)."""

    def __init__(self, kernels: Iterable = ()):
        self._builtin: Dict[int, object] = {}
        self._custom: Dict[str, object] = {}
        for k in kernels:
            self.add(k)

    def add(self, kernel, name: Optional[str] = None) -> "OpResolver":
        """Register ``kernel``. Builtin kernels are keyed by ``kernel.op``; custom
        kernels by ``name`` or ``kernel.custom_name``."""
        for method in ("prepare", "invoke"):
            if not callable(getattr(kernel, method, None)):
                raise InputError(f"a kernel needs a callable {method}(ctx, node); "
                                 f"{kernel!r} has none")
        op = getattr(kernel, "op", None)
        custom = name or getattr(kernel, "custom_name", None)
        if op is not None and name is None:
            if op not in BUILTIN_OP_CODES:
                raise InputError(f"{op!r} is not a builtin operator name")
            self._builtin[BUILTIN_OP_CODES[op]] = kernel
        elif custom:
            self._custom[str(custom)] = kernel
        else:
            raise InputError("a kernel needs an op (builtin name) or a custom_name")
        return self

    def find(self, builtin_code: int, custom_code: Optional[str] = None):
        """The kernel for an operator, or None."""
        if builtin_code == BuiltinOperator.CUSTOM:
            return self._custom.get(custom_code or "")
        return self._builtin.get(builtin_code)

    def missing_ops(self, model) -> List[str]:
        """Names of every operator of ``model`` with no kernel, in first-use order."""
        missing: List[str] = []
        for sg in model.subgraphs:
            for op in sg.operators:
                if self.find(op.builtin_code, op.custom_code) is None:
                    name = op_name(op.builtin_code, op.custom_code)
                    if name not in missing:
                        missing.append(name)
        return missing

    def check(self, model) -> None:
        """Raise :class:`UnsupportedOpError` listing all missing operators at once."""
        missing = self.missing_ops(model)
        if missing:
            raise UnsupportedOpError(missing)

    @property
    def builtin_names(self) -> List[str]:
        from .schema import BUILTIN_OP_NAMES
        return sorted(BUILTIN_OP_NAMES[c] for c in self._builtin)

    @property
    def custom_names(self) -> List[str]:
        return sorted(self._custom)


def default_op_resolver(target=None) -> OpResolver:
    """A resolver with every builtin kernel micro-runtime ships, and the custom ops
    TFLM's python package registers (the signal library: SignalWindow, SignalRfft, ...).
    With a ``target`` (name or :class:`~micro_runtime.targets.Target`) whose build uses an
    optimized kernel library (``cortex-m4+cmsis-nn``), that library's kernels replace the
    reference ones for the ops it overrides, as TFLM's ``OPTIMIZED_KERNEL_DIR`` does; a
    target with a co-processor (``cortex-m55+ethos-u55-128``) also gets that co-processor's
    kernels (the ``ethos-u`` operator), as TFLM's ``CO_PROCESSOR`` does."""
    import kernels
    from kernels.base import CUSTOM_KERNELS, KERNEL_VARIANTS
    by_name = {**kernels.BUILTIN_KERNELS, **CUSTOM_KERNELS}
    if target is not None:
        from .targets import get_target
        t = get_target(target)
        by_name.update(KERNEL_VARIANTS.get(t.kernel_library, {}))
        if t.co_processor:
            by_name.update(KERNEL_VARIANTS.get(t.co_processor, {}))
    return OpResolver([cls() for cls in by_name.values()])
