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

from typing import Dict, Optional, Type

from micro_runtime.schema import BUILTIN_OP_CODES, BuiltinOperator


class Kernel:
    """Base class of a kernel. Subclasses set ``op`` (a builtin op name such as
    ``"CONV_2D"``) or ``custom_name`` (a custom op's name)."""

    op: Optional[str] = None
    custom_name: Optional[str] = None

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

    def invoke(self, ctx, node) -> None:
        """Compute the node's outputs."""
        raise NotImplementedError

    def free(self, ctx, node) -> None:
        """Called when the interpreter is destroyed."""

    def reset(self, ctx, node) -> None:
        """Called by ``interpreter.reset()`` (kernels with internal state)."""

    def __repr__(self) -> str:
        return f"<kernel {self.name}>"


#: builtin op name -> kernel class, filled by :func:`register`.
BUILTIN_KERNELS: Dict[str, Type[Kernel]] = {}
#: custom op name -> kernel class (kernels that set ``custom_name``, e.g. TFLM's signal ops).
CUSTOM_KERNELS: Dict[str, Type[Kernel]] = {}


def register(cls: Type[Kernel]) -> Type[Kernel]:
    """Class decorator adding a builtin kernel (``op``) or a custom-op kernel
    (``custom_name``) to the registry."""
    if cls.op is None and cls.custom_name:
        CUSTOM_KERNELS[cls.custom_name] = cls
        return cls
    if cls.op is None:
        raise ValueError(f"{cls.__name__}: a registered builtin kernel needs an op name")
    if cls.op not in BUILTIN_OP_CODES:
        raise ValueError(f"{cls.__name__}: {cls.op!r} is not a builtin operator")
    BUILTIN_KERNELS[cls.op] = cls
    return cls
