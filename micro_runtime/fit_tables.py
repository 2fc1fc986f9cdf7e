"""What TFLM costs outside the arena on a recorded build, predicted from tables.

For each build whose firmware was linked and run (see docs/fit.md and
``benchmarks/fit_firmware``) a table under ``micro_runtime/data/fit/`` holds:

* ``sections``: every input section the linker kept in some firmware of the build,
  as ``[library, kind, bytes, "member:section"]`` (library ``tflm`` is
  ``libtensorflow-microlite.a``, CMSIS-NN included; ``libc`` / ``libm`` / ``libgcc`` /
  ``libstdc++`` the toolchain's; kind ``text`` / ``rodata`` / ``data`` / ``bss`` /
  ``exidx``);
* ``base``: the sections a firmware with no operator registered keeps;
* ``ops``: per operator, the sections registering it (MicroMutableOpResolver's Add
  call) adds to the base: its kernel and everything only it reaches;
* ``objects``: ``sizeof`` of MicroInterpreter and MicroMutableOpResolver<N> (a base
  plus a per-operator size), probed with the build's compiler;
* ``stack``: per operator and phase (init / prepare / invoke) the kernel's own stack
  (bytes below the stack pointer TFLM calls it with), the depth of those calls below
  the caller of AllocateTensors() / Invoke(), and the framework's own high-water marks.

The linker's garbage collection keeps what is reachable from the firmware's roots,
and what two roots reach is the union of what each reaches: the sections of a model's
firmware are the base plus the union of its operators' sections, each shared helper
counted once. TFLM's flash is then the bytes of the ``tflm`` sections of kind text,
rodata, data and exidx (the definition the recorded figures use), its static RAM
those of kind data and bss.
"""
from __future__ import annotations

import json
import os
from dataclasses import dataclass, field
from functools import lru_cache
from typing import Dict, Iterable, List, Optional, Sequence, Set

from .targets import canonical_target_name

DATA_DIR = os.path.join(os.path.dirname(os.path.abspath(__file__)), "data", "fit")
FLASH_KINDS = ("text", "rodata", "data", "exidx")
RAM_KINDS = ("data", "bss")
RUNTIME_LIBRARIES = ("libc", "libm", "libgcc", "libstdc++")
PHASES = ("init", "prepare", "invoke")


@dataclass
class Prediction:
    """TFLM's cost outside the arena for one operator set on one build (bytes)."""

    build: str
    ops: List[str]
    unknown_ops: List[str]            #: operators the table has no entry for
    tflm_flash_bytes: int             #: TFLM text + rodata + data + exidx
    tflm_static_ram_bytes: int        #: TFLM .data + .bss
    runtime_library_flash_bytes: int  #: libc / libm / libgcc code the operators add
    runtime_library_ram_bytes: int    #: their .data / .bss
    base_flash_bytes: int             #: TFLM flash of a firmware with no operator
    op_own_flash_bytes: Dict[str, int]    #: flash only this operator (of the set) brings
    shared_flash_bytes: int           #: flash two or more of the set's operators share
    interpreter_bytes: int            #: sizeof(MicroInterpreter)
    resolver_bytes: int               #: sizeof(MicroMutableOpResolver<N>)
    stack_bytes: Optional[int]        #: AllocateTensors + Invoke high-water mark
    stack_parts: Dict[str, object] = field(default_factory=dict)


class FitTable:
    """The tables of one build (see the module docstring)."""

    def __init__(self, data: dict):
        self.data = data
        self.build: str = data["build"]
        self.sections: List[list] = data["sections"]
        self.base: Set[int] = set(data["base"])
        self.ops: Dict[str, Set[int]] = {k: set(v) for k, v in data["ops"].items()}
        self.objects: Dict[str, int] = data["objects"]
        self.stack: dict = data.get("stack") or {}

    @property
    def about(self) -> str:
        return self.data.get("about", "")

    @property
    def build_type(self) -> str:
        return self.data.get("build_type", "default")

    def _sum(self, ids: Iterable[int], libraries: Sequence[str], kinds: Sequence[str]) -> int:
        total = 0
        for i in ids:
            lib, kind, size = self.sections[i][0], self.sections[i][1], self.sections[i][2]
            if lib in libraries and kind in kinds:
                total += size
        return total

    def resolver_bytes(self, n_ops: int) -> int:
        """sizeof(MicroMutableOpResolver<n_ops>) (n_ops >= 1)."""
        return self.objects["resolver_base"] + self.objects["resolver_per_op"] * max(1, n_ops)

    def kernel_stack(self, op: str, phase: str) -> Optional[int]:
        entry = (self.stack.get("ops") or {}).get(op)
        if entry is None:
            return None
        return entry.get(phase)

    def predict_stack(self, ops: Sequence[str]) -> (Optional[int], dict):
        """max over AllocateTensors and Invoke of: the framework's own mark, and for
        each operator and phase the call depth plus the kernel's stack. None when the
        table has no stack figures or an operator has none."""
        if not self.stack:
            return None, {}
        depth = self.stack["depth"]
        parts = {"alloc_framework": self.stack["alloc_framework"],
                 "invoke_framework": self.stack["invoke_framework"]}
        alloc = self.stack["alloc_framework"]
        invoke = self.stack["invoke_framework"]
        deepest = None
        missing = []
        for op in ops:
            entry = (self.stack.get("ops") or {}).get(op)
            if entry is None:
                missing.append(op)
                continue
            for phase in PHASES:
                usage = entry.get(phase)
                if usage is None:
                    continue
                total = depth[phase] + usage
                if phase == "invoke":
                    invoke = max(invoke, total)
                else:
                    alloc = max(alloc, total)
                if deepest is None or total > deepest[0]:
                    deepest = (total, op, phase)
        parts.update(alloc_bytes=alloc, invoke_bytes=invoke,
                     deepest=None if deepest is None else {"bytes": deepest[0], "op": deepest[1],
                                                           "phase": deepest[2]})
        if missing:
            parts["missing_ops"] = missing
            return None, parts
        return max(alloc, invoke), parts

    def predict(self, ops: Sequence[str]) -> Prediction:
        """Flash, static RAM, objects and stack for a firmware registering ``ops``."""
        ops = list(dict.fromkeys(ops))
        unknown = [op for op in ops if op not in self.ops]
        known = [op for op in ops if op in self.ops]
        union = set(self.base)
        for op in known:
            union |= self.ops[op]
        added = union - self.base
        own: Dict[str, int] = {}
        for op in known:
            others = set()
            for other in known:
                if other != op:
                    others |= self.ops[other]
            own[op] = self._sum(self.ops[op] - others - self.base, ("tflm",), FLASH_KINDS)
        tflm_flash = self._sum(union, ("tflm",), FLASH_KINDS)
        base_flash = self._sum(self.base, ("tflm",), FLASH_KINDS)
        stack, parts = self.predict_stack(known) if not unknown else (None, {"missing_ops": unknown})
        return Prediction(
            build=self.build, ops=ops, unknown_ops=unknown,
            tflm_flash_bytes=tflm_flash,
            tflm_static_ram_bytes=self._sum(union, ("tflm",), RAM_KINDS),
            runtime_library_flash_bytes=self._sum(added, RUNTIME_LIBRARIES, FLASH_KINDS),
            runtime_library_ram_bytes=self._sum(added, RUNTIME_LIBRARIES, RAM_KINDS),
            base_flash_bytes=base_flash, op_own_flash_bytes=own,
            shared_flash_bytes=tflm_flash - base_flash - sum(own.values()),
            interpreter_bytes=self.objects["MicroInterpreter"],
            resolver_bytes=self.resolver_bytes(len(ops)),
            stack_bytes=stack, stack_parts=parts)


OBJECTS_FILE = os.path.join(DATA_DIR, "objects.json")


def available_builds() -> List[str]:
    """Builds with flash / stack tables in this version."""
    if not os.path.isdir(DATA_DIR):
        return []
    return sorted(f[:-len(".json")] for f in os.listdir(DATA_DIR)
                  if f.endswith(".json") and f != os.path.basename(OBJECTS_FILE))


@lru_cache(maxsize=None)
def object_sizes(build: str) -> Optional[Dict[str, int]]:
    """sizeof(MicroInterpreter) and MicroMutableOpResolver<N> = resolver_base +
    resolver_per_op * N for a target profile, probed with the build's compiler and
    flags (data/fit/objects.json); None for profiles not probed."""
    if not os.path.exists(OBJECTS_FILE):
        return None
    with open(OBJECTS_FILE) as f:
        builds = json.load(f)["builds"]
    return builds.get(canonical_target_name(build))


@lru_cache(maxsize=None)
def load_table(build: str) -> Optional[FitTable]:
    """The table of a build (a target profile's name), None when there is none."""
    name = canonical_target_name(build)
    path = os.path.join(DATA_DIR, name + ".json")
    if not os.path.exists(path):
        return None
    with open(path) as f:
        return FitTable(json.load(f))
