"""Stand-in kernels: size a model whose custom operator micro-runtime has no kernel for.

A vendor's custom operator (``VendorFFT``) is known to the firmware, not to us. For the
arena only its allocations matter: what its init reserves in the tail (persistent
bytes) and what its prepare asks for in the head (a scratch buffer). A stand-in kernel
makes exactly those allocations, so ``size``, ``audit``, ``plan``, ``info`` and
``optimize`` give the arena of the real build; its outputs are not computed (they are
zeros), so ``run``, ``eval``, ``drift`` and ``bench`` refuse a stand-in.

CLI: ``--custom-op NAME=persistent:BYTES,scratch:BYTES`` (either part may be left out).
"""
from __future__ import annotations

from typing import Tuple

import numpy as np

from kernels.base import Kernel

from .errors import InputError


class StandInKernel(Kernel):
    """A custom operator ``name`` that reserves ``persistent`` bytes in init and asks for a
    scratch buffer of ``scratch`` bytes in prepare (none for 0), and writes zeros to its
    outputs. ``stand_in`` is True: tools that need real outputs refuse it."""

    stand_in = True
    supported_types = ()

    def __init__(self, name: str, persistent: int = 0, scratch: int = 0):
        for what, value in (("persistent", persistent), ("scratch", scratch)):
            if isinstance(value, bool) or not isinstance(value, (int, np.integer)) or value < 0:
                raise InputError(f"stand-in {name!r}: {what} must be a number of bytes >= 0, "
                                 f"not {value!r}")
        if not name:
            raise InputError("a stand-in kernel needs the custom operator's name")
        self.custom_name = str(name)
        self.persistent = int(persistent)
        self.scratch = int(scratch)

    def init(self, ctx, node):
        if self.persistent:
            ctx.allocate_persistent(self.persistent)
        return None

    def prepare(self, ctx, node) -> None:
        if self.scratch:
            ctx.request_scratch(self.scratch)

    def invoke(self, ctx, node):
        for out in node.output_arrays:
            if out is not None:
                out.fill(0)
        return None

    def __repr__(self) -> str:
        return (f"<stand-in kernel {self.custom_name}: persistent {self.persistent} bytes, "
                f"scratch {self.scratch} bytes>")


def parse_custom_op(text: str, option: str = "--custom-op") -> Tuple[str, int, int]:
    """``NAME=persistent:N,scratch:M`` (either part optional, each once) -> (name, N, M);
    :class:`InputError` naming ``option`` for anything else."""
    name, eq, spec = str(text).partition("=")
    name = name.strip()
    usage = f"{option} {text}: expected NAME=persistent:BYTES,scratch:BYTES (either part may be left out)"
    if not name or not eq:
        raise InputError(usage)
    values = {}
    for part in filter(None, (p.strip() for p in spec.split(","))):
        key, colon, number = part.partition(":")
        key = key.strip()
        if key not in ("persistent", "scratch") or not colon:
            raise InputError(usage)
        if key in values:
            raise InputError(f"{option} {text}: {key} given twice")
        try:
            values[key] = int(number.strip())
        except ValueError:
            raise InputError(f"{option} {text}: {key} must be a number of bytes, not {number.strip()!r}") from None
        if values[key] < 0:
            raise InputError(f"{option} {text}: {key} must be a number of bytes >= 0, not {values[key]}")
    return name, values.get("persistent", 0), values.get("scratch", 0)


def has_stand_ins(resolver) -> bool:
    """Whether ``resolver`` holds a stand-in kernel."""
    return any(getattr(k, "stand_in", False) for k in list(resolver._builtin.values()) + list(resolver._custom.values()))


__all__ = ["StandInKernel", "parse_custom_op", "has_stand_ins"]
