"""Operators with one input or output too many or too few, for every registered op.

Each op's first declared type combination (tests/type_cases.py) gives a valid one-op
model; its variants add a copy of the last input (``+input``), drop the last input
(``-input``), add an output like the first (``+output``) or drop the last output
(``-output``). TFLM's kernels differ in what they check: many TF_LITE_ENSURE the exact
counts in prepare, others read only the tensors they use and ignore the rest, a few read
past the node's inputs. tests/test_hostile.py runs every variant through TFLM and through
us: where TFLM runs a variant we run it with the same outputs, where TFLM refuses (or
ends the process) we refuse in prepare with a MicroRuntimeError of our own words, never
a Python error from inside a kernel.
"""
from __future__ import annotations

from typing import Dict, List, Tuple

import numpy as np

from kernels.base import TypeCombo
from micro_runtime import load_model
from micro_runtime.tools.model_writer import ModelBuilder
from tests.type_cases import CASES, UNTYPED, TypeCase

VARIANTS = ("+input", "-input", "+output", "-output")


def base_cases() -> Dict[str, TypeCase]:
    """op -> its model of the first candidate combination the kernel declares."""
    import kernels
    from kernels.base import CUSTOM_KERNELS
    registry = {**kernels.BUILTIN_KERNELS, **CUSTOM_KERNELS}
    out = {}
    for op, cases in sorted(CASES.items()):
        kernel = registry[op]
        for key in cases.candidates:
            if kernel.supports_types(TypeCombo.parse(key)):
                out[op] = cases.build(TypeCombo.parse(key))
                break
    for op, build in sorted(UNTYPED.items()):
        out[op] = build()
    return out


def variant(case: TypeCase, kind: str) -> Tuple[bytes, List[np.ndarray]]:
    """The model and inputs of ``case`` with its (only) operator changed by ``kind``
    (one of VARIANTS); the main subgraph's inputs follow the operator's."""
    model = load_model(case.model)
    mb = ModelBuilder.from_model(model)
    g = mb.subgraphs[0]
    op = next(o for o in g.operators)
    inputs = list(case.inputs)
    graph_inputs = list(g.inputs)
    if kind == "+input":
        last = op.inputs[-1] if op.inputs else -1
        op.inputs = tuple(op.inputs) + (last,)
    elif kind == "-input":
        if op.inputs:
            dropped = op.inputs[-1]
            op.inputs = tuple(op.inputs[:-1])
            if dropped in graph_inputs and dropped not in op.inputs:
                k = graph_inputs.index(dropped)
                del graph_inputs[k]
                del inputs[k]
    elif kind == "+output":
        first = g.tensors[op.outputs[0]]
        t = g.add_tensor("extra_out", first.shape, first.type, quantization=first.quantization)
        op.outputs = tuple(op.outputs) + (t,)
        g.outputs = list(g.outputs) + [t]
    elif kind == "-output":
        if op.outputs:
            dropped = op.outputs[-1]
            op.outputs = tuple(op.outputs[:-1])
            g.outputs = [t for t in g.outputs if t != dropped] or list(op.outputs[:1])
    g.inputs = graph_inputs
    return mb.build(), inputs


def all_variants() -> List[Tuple[str, str, bytes, List[np.ndarray]]]:
    """(op, variant, model, inputs) for every op and variant."""
    out = []
    for op, case in base_cases().items():
        for kind in VARIANTS:
            try:
                model, inputs = variant(case, kind)
            except Exception:  # noqa: BLE001 - a variant the writer cannot express
                continue
            out.append((op, kind, model, inputs))
    return out
