"""The tiny base class every kernel derives from, and the kernel registry.

A kernel is TFLM's TFLMRegistration in Python: ``init`` (returns the node's OpData),
``prepare`` (checks tensors, allocates persistent memory, requests scratch buffers),
``invoke`` (computes the outputs into their arena views), and optional ``free`` /
``reset``. One instance serves every node of its op; per-node state is the object
``init`` returns (``node.user_data``).

Kernels talk to the interpreter only through the context (``ctx``) they are given; see
:class:`micro_runtime.context.KernelContext`.
"""
from __future__ import annotations

import re
from dataclasses import dataclass
from typing import Dict, Optional, Sequence, Tuple, Type

from micro_runtime.schema import BUILTIN_OP_CODES, BuiltinOperator

#: ``supported_types`` entry: DATA[ x WEIGHTS][->OUTPUT][ (note)]
_TYPES_ENTRY = re.compile(r"^\s*(?P<data>[\w*]+)(?:\s+x\s+(?P<weights>\w+))?"
                          r"(?:\s*->\s*(?P<output>\w+))?\s*(?:\((?P<note>[^()]*)\))?\s*$")


@dataclass(frozen=True)
class TypeCombo:
    """One tensor-type combination a kernel runs (an entry of :attr:`Kernel.supported_types`),
    or the one an operator of a model uses. Type names are the schema's, lower case
    (``float32``, ``int8``, ``int4``, ``bool``, ``resource`` ...); ``data`` ``"*"`` is any
    type, and a bare ``"*"`` any combination.

    * ``data``: the type TFLM's kernel dispatches on (the activations);
    * ``weights``: the weights' type where it differs from ``data`` (``"int16 x int8"``);
    * ``output``: the output's type where it differs, or for ops whose entries all name
      one (``"int8->bool"``, ``"float32->int8"``).
    """
    data: str
    weights: Optional[str] = None
    output: Optional[str] = None
    note: str = ""

    @classmethod
    def parse(cls, entry: str) -> "TypeCombo":
        m = _TYPES_ENTRY.match(entry)
        if m is None:
            raise ValueError(f"bad types entry {entry!r}: want DATA[ x WEIGHTS][->OUTPUT][ (note)]")
        return cls(m["data"], m["weights"], m["output"], (m["note"] or "").strip())

    @property
    def key(self) -> str:
        """The combination without its note: ``"int16 x int8"``, ``"float32->int8"``."""
        return (self.data + (f" x {self.weights}" if self.weights else "")
                + (f"->{self.output}" if self.output else ""))

    def __str__(self) -> str:
        return self.key + (f" ({self.note})" if self.note else "")

    def covers(self, used: "TypeCombo") -> bool:
        """Whether this declared entry covers ``used`` (an operator's combination); a
        bare ``"*"`` covers every combination (kernels that copy bytes of any type)."""
        if self.key == "*":
            return True
        return ((self.data == "*" or self.data == used.data) and self.weights == used.weights
                and self.output == used.output)


def type_pairs(inputs: Sequence[str], outputs: Sequence[str]) -> Tuple[str, ...]:
    """``supported_types`` entries for every input type -> output type (CAST)."""
    return tuple(f"{i}->{o}" for i in inputs for o in outputs)


class Kernel:
    """Base class of a kernel. Subclasses set ``op`` (a builtin op name such as
    ``"CONV_2D"``) or ``custom_name`` (a custom op's name), and ``supported_types``."""

    op: Optional[str] = None
    custom_name: Optional[str] = None
    #: the kernel library this kernel belongs to: TFLM's reference kernels, or an
    #: ``OPTIMIZED_KERNEL_DIR`` such as ``"cmsis-nn"`` (set by :func:`register_variant`)
    library: str = "reference"
    #: The tensor types the kernel runs, in TFLM's terms: one entry per combination TFLM's
    #: kernel accepts, ``DATA[ x WEIGHTS][->OUTPUT][ (note)]`` (see :class:`TypeCombo`):
    #: ``"int8"``, ``"int16 x int8 (bias int32 or int64)"``, ``"int8->bool"``,
    #: ``"*->int32"``. Empty: the op has no typed tensors. tests/test_op_types.py checks
    #: every entry, and every type not listed, against the tflite-micro package.
    supported_types: Tuple[str, ...] = ()
    #: which input carries the ``data`` type (None: output 0 does)
    type_input: Optional[int] = 0
    #: which input is the weights tensor of ``"DATA x WEIGHTS"`` entries (None: no weights)
    weights_input: Optional[int] = None
    #: Whether invoke may change the arena: take temporaries, persistent buffers or
    #: decompression memory, run other subgraphs, create resource variables. A sizing
    #: pass (which needs the allocation timeline, not the outputs) runs such invokes and
    #: skips the arithmetic of the others in models without control flow. True for a
    #: kernel of a user; the registered kernels of this package that do not set it get
    #: False (:func:`register`), and tests/test_sizing_pass.py checks on the test models
    #: that skipping changes no timeline.
    invoke_allocates: bool = True

    def invoke_allocates_for(self, node) -> bool:
        """:attr:`invoke_allocates` for one prepared node; also True for a node that
        decompresses inputs at invoke (its OpData's ``decompress`` scratch map)."""
        return self.invoke_allocates or bool(getattr(node.user_data, "decompress", None))

    @property
    def builtin_code(self) -> int:
        if self.op is None:
            return BuiltinOperator.CUSTOM
        return BUILTIN_OP_CODES[self.op]

    @property
    def name(self) -> str:
        return self.op if self.op is not None else str(self.custom_name)

    def init(self, ctx, node):
        """Called once per node before prepare; returns the node's OpData object."""
        return None

    def prepare(self, ctx, node) -> None:
        """Check the node's tensors and parameters, allocate what the kernel needs."""

    def invoke(self, ctx, node) -> Optional[int]:
        """Compute the node's outputs. Returning :data:`ABORT` ends the current run
        early (TFLM's kTfLiteAbort: the operators after this one do not run)."""
        raise NotImplementedError

    def free(self, ctx, node) -> None:
        """Called when the interpreter is destroyed."""

    def reset(self, ctx, node) -> None:
        """Called by ``interpreter.reset()`` (kernels with internal state)."""

    def sample_rows(self, block) -> bool:
        """Batched evaluation: True when this kernel, prepared and invoked once on a
        block of samples (every sample-dependent tensor with a leading sample axis; see
        :mod:`kernels.internal.sample_rows`), computes every sample exactly as separate
        invokes would. ``block`` is a :class:`~kernels.internal.sample_rows.SampleBlock`.
        The default, False, runs the node sample by sample: always correct."""
        return False

    @classmethod
    def route(cls, target, graph, op) -> Optional[str]:
        """What code runs operator ``op`` (an OperatorSpec of SubGraphSpec ``graph``) on
        ``target``, for kernels of an optimised library that hand some operators to
        TFLM's reference code (``micro-runtime ops`` shows it); None: nothing to add."""
        return None

    @classmethod
    def type_combos(cls) -> Tuple[TypeCombo, ...]:
        """:attr:`supported_types`, parsed."""
        return tuple(TypeCombo.parse(entry) for entry in cls.supported_types)

    @classmethod
    def types_used(cls, input_types: Sequence[Optional[str]],
                   output_types: Sequence[str]) -> Optional[TypeCombo]:
        """The combination an operator of this op uses, from its tensors' type names
        (None for an omitted input); None when a tensor that carries it is missing."""
        def pick(types, index):
            return types[index] if index is not None and 0 <= index < len(types) else None

        data = pick(output_types, 0) if cls.type_input is None else pick(input_types, cls.type_input)
        if data is None:
            return None
        weights = pick(input_types, cls.weights_input)
        output = pick(output_types, 0)
        pairs = any(c.output is not None for c in cls.type_combos())
        return TypeCombo(data, weights if weights not in (None, data) else None,
                         output if output is not None and (pairs or output != data) else None)

    @classmethod
    def supports_types(cls, used: TypeCombo) -> bool:
        """Whether a declared entry covers ``used``."""
        return any(c.covers(used) for c in cls.type_combos())

    def __repr__(self) -> str:
        return f"<kernel {self.name}>"


#: TFLM's kTfLiteAbort, for a kernel's invoke to return
ABORT = 15

#: builtin op name -> kernel class, filled by :func:`register`.
BUILTIN_KERNELS: Dict[str, Type[Kernel]] = {}
#: custom op name -> kernel class (kernels that set ``custom_name``, e.g. TFLM's signal ops).
CUSTOM_KERNELS: Dict[str, Type[Kernel]] = {}


def _package_kernel_default(cls: Type[Kernel]) -> None:
    """A kernel of this package that states nothing about :attr:`Kernel.invoke_allocates`
    (neither it nor a base below :class:`Kernel`) computes only: False."""
    if cls.__module__.split(".")[0] == "kernels" and not any(
            "invoke_allocates" in vars(k) for k in cls.__mro__ if k is not Kernel):
        cls.invoke_allocates = False


def register(cls: Type[Kernel]) -> Type[Kernel]:
    """Class decorator adding a builtin kernel (``op``) or a custom-op kernel
    (``custom_name``) to the registry."""
    cls.type_combos()        # a malformed entry fails at import
    _package_kernel_default(cls)
    if cls.op is None and cls.custom_name:
        CUSTOM_KERNELS[cls.custom_name] = cls
        return cls
    if cls.op is None:
        raise ValueError(f"{cls.__name__}: a registered builtin kernel needs an op name")
    if cls.op not in BUILTIN_OP_CODES:
        raise ValueError(f"{cls.__name__}: {cls.op!r} is not a builtin operator")
    BUILTIN_KERNELS[cls.op] = cls
    return cls


#: kernel library (a Target's ``kernel_library``, e.g. ``"cmsis-nn"``) -> op name (builtin
#: or custom) -> the kernel class that library's TFLM build runs instead of the reference
#: kernel, filled by :func:`register_variant`.
KERNEL_VARIANTS: Dict[str, Dict[str, Type[Kernel]]] = {}


def register_variant(library: str):
    """Class decorator for a kernel that replaces the reference kernel of its op in the
    TFLM builds made with ``OPTIMIZED_KERNEL_DIR=<library>`` (``kernels/cmsis_nn/`` for
    ``"cmsis-nn"``). The class sets ``op`` / ``custom_name`` and ``supported_types`` as a
    reference kernel does; ops a library does not override keep the reference kernel."""
    def wrap(cls: Type[Kernel]) -> Type[Kernel]:
        cls.type_combos()
        _package_kernel_default(cls)
        name = cls.op if cls.op is not None else cls.custom_name
        if not name:
            raise ValueError(f"{cls.__name__}: a kernel variant needs an op or custom_name")
        if cls.op is not None and cls.op not in BUILTIN_OP_CODES:
            raise ValueError(f"{cls.__name__}: {cls.op!r} is not a builtin operator")
        cls.library = library
        KERNEL_VARIANTS.setdefault(library, {})[name] = cls
        return cls
    return wrap
