"""What TFLM costs outside the arena on a recorded build, predicted from tables.

For each build whose firmware was linked and run (see docs/fit.md and
``benchmarks/fit_firmware``) a table under ``micro_runtime/data/fit/`` holds:

* ``sections``: every input section the linker kept in some firmware of the build,
  as ``[library, kind, bytes, "member:section"]`` (library ``tflm`` is
  ``libtensorflow-microlite.a``, CMSIS-NN included; ``libc`` / ``libm`` / ``libgcc`` /
  ``libstdc++`` the toolchain's; kind ``text`` / ``rodata`` / ``data`` / ``bss`` /
  ``exidx``);
* ``base``: the sections a firmware with no operator registered keeps;
* ``strings``: TFLM's merged string literals (``.rodata.*.str1.*``) as a pool of
  ``[bytes, [ids of the strings it is the tail of]]`` (lengths only, not the strings);
  a merged string section's row has a fifth element, its string ids. The linker keeps
  each distinct string once, and a string that is the tail of another not at all, so
  those sections count by the merged size of all their strings, not one by one;
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
        self.strings: List[list] = data.get("strings") or []

    @property
    def about(self) -> str:
        return self.data.get("about", "")

    @property
    def build_type(self) -> str:
        return self.data.get("build_type", "default")

    def _sum(self, ids: Iterable[int], libraries: Sequence[str], kinds: Sequence[str]) -> int:
        """Bytes of the sections ``ids`` of these libraries and kinds; merged string
        sections by the merged size of their strings together."""
        total = 0
        merged: Set[int] = set()
        for i in ids:
            row = self.sections[i]
            if row[0] in libraries and row[1] in kinds:
                if len(row) > 4:
                    merged.update(row[4])
                else:
                    total += row[2]
        if merged:
            total += sum(self.strings[k][0] for k in merged
                         if not any(j in merged for j in self.strings[k][1]))
        return total

    def resolver_bytes(self, n_ops: int) -> int:
        """sizeof(MicroMutableOpResolver<n_ops>) (n_ops >= 1)."""
        return self.objects["resolver_base"] + self.objects["resolver_per_op"] * max(1, n_ops)

    def kernel_stack(self, op: str, phase: str) -> Optional[int]:
        entry = (self.stack.get("ops") or {}).get(op)
        if entry is None:
            return None
        return entry.get(phase)

    def kernel_usage(self, op: str, phase: str, key: Optional[str]) -> Optional[int]:
        """A kernel's own stack for a node: the largest recorded for the same path key,
        else for the same tensor types, else for the operator."""
        nodes = ((self.stack.get("nodes") or {}).get(op) or {}).get(phase) or {}
        if key is not None:
            if key in nodes:
                return nodes[key]
            types = key.split("|")[0]
            same = [v for k, v in nodes.items() if k.split("|")[0] == types]
            if same:
                return max(same)
        return ((self.stack.get("ops") or {}).get(op) or {}).get(phase)

    def predict_stack(self, ops: Sequence[str], nodes: Optional[Sequence[tuple]] = None
                      ) -> (Optional[int], dict):
        """max over AllocateTensors and Invoke of: the framework's own mark, and for
        each node (operator and path key; each operator alone when ``nodes`` is None)
        and phase the call depth plus the kernel's stack. None when the table has no
        stack figures or an operator has none."""
        if not self.stack:
            return None, {}
        depth = self.stack["depth"]
        parts = {"alloc_framework": self.stack["alloc_framework"],
                 "invoke_framework": self.stack["invoke_framework"]}
        alloc = self.stack["alloc_framework"]
        invoke = self.stack["invoke_framework"]
        deepest = None
        missing = []
        for op, key in (nodes if nodes is not None else [(op, None) for op in ops]):
            entry = (self.stack.get("ops") or {}).get(op)
            if entry is None:
                if op not in missing:
                    missing.append(op)
                continue
            for phase in PHASES:
                usage = self.kernel_usage(op, phase, key)
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

    def predict(self, ops: Sequence[str], nodes: Optional[Sequence[tuple]] = None) -> Prediction:
        """Flash, static RAM, objects and stack for a firmware registering ``ops``
        (``nodes``: :func:`model_node_keys` of the model, for the stack)."""
        ops = list(dict.fromkeys(ops))
        unknown = [op for op in ops if op not in self.ops]
        known = [op for op in ops if op in self.ops]
        union = set(self.base)
        for op in known:
            union |= self.ops[op]
        added = union - self.base
        tflm_flash = self._sum(union, ("tflm",), FLASH_KINDS)
        own: Dict[str, int] = {}
        for op in known:
            others = set(self.base)
            for other in known:
                if other != op:
                    others |= self.ops[other]
            own[op] = tflm_flash - self._sum(others, ("tflm",), FLASH_KINDS)
        base_flash = self._sum(self.base, ("tflm",), FLASH_KINDS)
        stack, parts = (self.predict_stack(known, nodes) if not unknown
                        else (None, {"missing_ops": unknown}))
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


_CONV_OPS = ("CONV_2D", "DEPTHWISE_CONV_2D", "TRANSPOSE_CONV")
_BINARY_OPS = ("ADD", "SUB", "MUL", "DIV", "MAXIMUM", "MINIMUM", "SQUARED_DIFFERENCE", "FLOOR_DIV",
               "FLOOR_MOD", "POW", "LESS", "LESS_EQUAL", "GREATER", "GREATER_EQUAL", "EQUAL",
               "NOT_EQUAL", "LOGICAL_AND", "LOGICAL_OR", "PRELU", "SELECT_V2")


def node_stack_key(subgraph, op) -> str:
    """What picks a kernel's code path, as far as its stack goes: the tensor types
    ("in,in->out"), then for binary element-wise operators whether inputs broadcast,
    and for convolutions the filter size, strides, dilations, padding and depth
    multiplier ("types|extra"; a broadcast carries the largest input rank)."""
    def t(i):
        return "-" if i < 0 else str(subgraph.tensors[i].type)
    key = ",".join(t(i) for i in op.inputs) + "->" + ",".join(t(i) for i in op.outputs)
    extra = ""
    if op.name in _BINARY_OPS:
        shapes = [tuple(subgraph.tensors[i].shape) for i in op.inputs if i >= 0]
        extra = f"b{max(len(s) for s in shapes)}" if len(set(shapes)) > 1 else "e"
    elif op.name in _CONV_OPS and len(op.inputs) > 1:
        p = op.params
        filt = subgraph.tensors[op.inputs[1]].shape
        hw = f"{filt[1]}x{filt[2]}" if len(filt) == 4 else "?"
        extra = (f"{hw},s{getattr(p, 'stride_h', 1)}x{getattr(p, 'stride_w', 1)},"
                 f"d{getattr(p, 'dilation_h_factor', 1)}x{getattr(p, 'dilation_w_factor', 1)},"
                 f"p{getattr(p, 'padding', 0)},m{getattr(p, 'depth_multiplier', 0)}")
    return key + "|" + extra


def model_node_keys(model) -> List[tuple]:
    """(operator name, node_stack_key) of every node, subgraph by subgraph."""
    return [(op.name, node_stack_key(sg, op)) for sg in model.subgraphs for op in sg.operators]


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
