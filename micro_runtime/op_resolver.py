"""Op resolver: which operators a model may use, and any kernels of the user's own.

As in TFLM, a resolver *names* operators (``MicroMutableOpResolver::AddConv2D()`` ...);
the kernel that runs a builtin operator is the one of the build's kernel library, i.e.
of the interpreter's target (TFLM's ``OPTIMIZED_KERNEL_DIR``). So a resolver and a target
cannot disagree: an interpreter binds the resolver to its target
(:meth:`OpResolver.for_target`), replacing every kernel micro-runtime ships by the target
library's kernel for that operator. Kernels of the user's own (any other class, custom
ops or a builtin operator's replacement) are kept as given.

Builtin operators are looked up by their BuiltinOperator name, custom operators by
their custom-code name. :func:`default_op_resolver` names every operator micro-runtime
runs; :meth:`OpResolver.add` adds one by name or a kernel of your own.
"""
from __future__ import annotations

from typing import Dict, FrozenSet, Iterable, List, Optional

from .errors import InputError, UnsupportedOpError
from .schema import BUILTIN_OP_CODES, BuiltinOperator, op_name


def _stock_classes() -> FrozenSet[type]:
    """Every kernel class micro-runtime ships (reference kernels, signal custom ops and
    every library's variants): the kernels an interpreter replaces by its target's."""
    import kernels
    from kernels.base import CUSTOM_KERNELS, KERNEL_VARIANTS
    classes = set(kernels.BUILTIN_KERNELS.values()) | set(CUSTOM_KERNELS.values())
    for variants in KERNEL_VARIANTS.values():
        classes.update(variants.values())
    return frozenset(classes)


def _co_processor_kernels() -> Dict[str, type]:
    """Operator name -> kernel class of every co-processor a target profile has (TFLM's
    ``CO_PROCESSOR``: ``ethos-u``)."""
    from kernels.base import KERNEL_VARIANTS
    from .targets import TARGETS
    out: Dict[str, type] = {}
    for name in sorted({t.co_processor for t in TARGETS.values() if t.co_processor}):
        out.update(KERNEL_VARIANTS.get(name, {}))
    return out


def library_kernel_class(name: str, library: str = "reference",
                         co_processor: Optional[str] = None) -> Optional[type]:
    """The class of the kernel that kernel library ``library`` (a target's
    ``kernel_library``) runs for operator ``name`` (a builtin name such as ``"CONV_2D"``
    or a custom op name): the co-processor's kernel where the target has one for it
    (``co_processor``, e.g. ``ethos-u``), else the library's variant where it has one,
    else the reference kernel; None when the build has no kernel for it (a co-processor
    operator on a target without that co-processor included)."""
    import kernels
    from kernels.base import CUSTOM_KERNELS, KERNEL_VARIANTS
    if co_processor:
        own = KERNEL_VARIANTS.get(co_processor, {}).get(name)
        if own is not None:
            return own
    variant = KERNEL_VARIANTS.get(library, {}).get(name)
    if variant is not None:
        return variant
    found = kernels.BUILTIN_KERNELS.get(name) or CUSTOM_KERNELS.get(name)
    if found is None and name in _co_processor_kernels():
        return None
    return found


class OpResolver:
    """Names the operators a model may use (TFLM's ``MicroMutableOpResolver``) and holds
    kernels of the user's own (objects with init / prepare / invoke, see
    :class:`kernels.base.Kernel`).

    An interpreter runs the kernels of :meth:`for_target` of its target: the kernels
    micro-runtime ships are always those of the target's kernel library."""

    def __init__(self, kernels: Iterable = ()):
        self._builtin: Dict[int, object] = {}
        self._custom: Dict[str, object] = {}
        for k in kernels:
            self.add(k)

    def add(self, kernel, name: Optional[str] = None) -> "OpResolver":
        """Register an operator: ``kernel`` is an operator's name (``"CONV_2D"``,
        ``"SignalWindow"``: the kernel micro-runtime ships, as TFLM's ``AddConv2D()``) or a
        kernel object. Builtin kernels are keyed by ``kernel.op``; custom kernels by
        ``name`` or ``kernel.custom_name``. Returns the resolver (calls chain)."""
        if isinstance(kernel, str):
            cls = library_kernel_class(kernel) or _co_processor_kernels().get(kernel)
            if cls is None:
                raise InputError(f"no operator named {kernel!r} among the kernels micro-runtime "
                                 "ships; register a kernel object for a custom operator")
            kernel = cls()
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

    def for_target(self, target) -> "OpResolver":
        """This resolver as ``target`` (a name or :class:`~micro_runtime.targets.Target`)
        runs it: every kernel micro-runtime ships replaced by the one of the target's
        kernel library for that operator (a CMSIS-NN build's variant, or the reference
        kernel); kernels of other classes (the user's own) kept. The same object when
        nothing changes."""
        from .targets import get_target
        t = get_target(target)
        library, co_processor = t.kernel_library, t.co_processor
        stock = _stock_classes()
        co_processor_classes = set(_co_processor_kernels().values())

        def bound(kernel, name: str):
            if type(kernel) not in stock:
                return kernel
            cls = library_kernel_class(name, library, co_processor)
            if cls is None:
                # a co-processor's kernel on a build without that co-processor: absent
                return None if type(kernel) in co_processor_classes else kernel
            return kernel if type(kernel) is cls else cls()

        from .schema import BUILTIN_OP_NAMES
        builtin = {code: bound(k, BUILTIN_OP_NAMES[code]) for code, k in self._builtin.items()}
        custom = {name: bound(k, name) for name, k in self._custom.items()}
        custom = {name: k for name, k in custom.items() if k is not None}
        if all(builtin[c] is self._builtin[c] for c in builtin) and \
                len(custom) == len(self._custom) and all(custom[n] is self._custom[n] for n in custom):
            return self
        out = OpResolver()
        out._builtin, out._custom = builtin, custom
        return out

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
    """A resolver naming every builtin operator micro-runtime runs, and the custom ops
    TFLM's python package registers (the signal library: SignalWindow, SignalRfft, ...).
    The kernels of every co-processor micro-runtime models (the ``ethos-u`` operator of
    Vela-compiled models) are named too; an interpreter keeps them only on a target
    with that co-processor (``cortex-m55+ethos-u55-128``), as only TFLM's
    ``CO_PROCESSOR=ethos_u`` build has them.

    An interpreter always runs its own target's kernel library (see
    :meth:`OpResolver.for_target`), whatever ``target`` says here; ``target`` (a name or
    :class:`~micro_runtime.targets.Target`) only chooses the kernels the resolver holds
    when it is used on its own (listing kernels, calling one directly): with an
    optimized library (``cortex-m4+cmsis-nn``), that library's kernels for the ops it
    overrides, as TFLM's ``OPTIMIZED_KERNEL_DIR`` does."""
    import kernels
    from kernels.base import CUSTOM_KERNELS
    by_name = {**kernels.BUILTIN_KERNELS, **CUSTOM_KERNELS, **_co_processor_kernels()}
    resolver = OpResolver([cls() for cls in by_name.values()])
    return resolver if target is None else resolver.for_target(target)
