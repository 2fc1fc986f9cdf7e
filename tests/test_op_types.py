"""Every kernel's ``supported_types`` against TFLM: for every registered op and every
candidate type combination (tests/type_cases.py: float32, int8, int16, int32, int64,
uint8, bool; the unsigned types where ops use them; int4 / int8 / int16 / float32
weights), a minimal valid one-op model of that combination. TFLM (the tflite-micro
package, one batch through one worker) runs it exactly when the kernel declares the
combination, and so do we.

TFLM runs a few combinations its kernel has no code for: it reads the bytes as another
type, or computes with parameters it never sets (:data:`UNDEFINED_IN_TFLM`). Those are
not declared and our kernels refuse them with a message; the test checks that TFLM
still runs them (so the list stays true)."""
from __future__ import annotations

import os
import re
from typing import Dict, List, Tuple

import numpy as np
import pytest

import kernels
from kernels.base import CUSTOM_KERNELS, TypeCombo
from micro_runtime import MicroInterpreter, MicroRuntimeError, load_model
from micro_runtime.api import count_resource_variables
from tests.type_cases import CASES, UNTYPED, WIDE, TypeCase

pytestmark = pytest.mark.oracle

ARENA_BYTES = 1 << 18

#: (op, combination) TFLM runs although its kernel has no code for it (the result is
#: undefined). Not declared; our kernels refuse them.
UNDEFINED_IN_TFLM: Dict[Tuple[str, str], str] = {
    **{(op, t): "reads the operands as bool" for op in ("LOGICAL_AND", "LOGICAL_OR")
       for t in WIDE if t != "bool"},
    ("GREATER", "int16->bool"): "compares with rescaling parameters it never sets",
    **{("PRELU", k): "reads alpha as the input's type" for k in (
        "float32 x int8", "float32 x int16", "float32 x int4", "int8 x float32",
        "int8 x int16", "int8 x int4")},
    **{("UNIDIRECTIONAL_SEQUENCE_LSTM", k): "the float32 kernel reads the weights as float32"
       for k in ("float32 x int8", "float32 x int16", "float32 x int4")},
    ("TRANSPOSE_CONV", "int16"): "the 16x8 kernel reads int16 weights as int8",
}


def all_kernels() -> Dict[str, type]:
    return {**kernels.BUILTIN_KERNELS, **CUSTOM_KERNELS}


def ours_accepts(tc: TypeCase) -> Tuple[bool, str]:
    """Whether our interpreter allocates and invokes the model (a MicroRuntimeError is
    a refusal; anything else fails the test)."""
    try:
        it = MicroInterpreter(tc.model, arena_size=ARENA_BYTES, target="host64", recording=True,
                              num_resource_variables=count_resource_variables(load_model(tc.model)),
                              error_reporter=lambda m: None)
        it.allocate_tensors()
        for i, x in enumerate(tc.inputs):
            it.set_input(x, i)
        it.invoke()
    except MicroRuntimeError as e:
        return False, str(e)
    return True, ""


@pytest.fixture(scope="module")
def type_models() -> Dict[Tuple[str, str], TypeCase]:
    """(op, combination key) -> its model, every candidate of every op ("" for the ops
    without typed tensors)."""
    models = {(op, key): cases.build(TypeCombo.parse(key))
              for op, cases in sorted(CASES.items()) for key in cases.candidates}
    models.update({(op, ""): build() for op, build in sorted(UNTYPED.items())})
    return models


@pytest.fixture(scope="module")
def tflm_verdicts(oracle, type_models):
    """(op, combination key) -> (TFLM ran it, why not), all models in one batch."""
    results = oracle.run_batch([dict(model=tc.model, inputs=tc.inputs, arena_size=ARENA_BYTES,
                                     lines=False, log=True) for tc in type_models.values()])
    return {k: (r.ok, "crashed" if r.crashed else f"{r.stage}: {r.log.strip()}")
            for k, r in zip(type_models, results)}


def test_every_op_has_a_builder_and_declares_its_types():
    """No op is skipped: each registered op has a model builder (or is an op without
    typed tensors), and declares types unless it has none."""
    ops = set(all_kernels())
    missing = sorted(ops - set(CASES) - set(UNTYPED))
    assert not missing, f"ops without a type-case builder in tests/type_cases.py: {missing}"
    assert not sorted((set(CASES) | set(UNTYPED)) - ops), "builders for ops that are not registered"
    undeclared = sorted(op for op in CASES if not all_kernels()[op].supported_types)
    assert not undeclared, f"ops without supported_types: {undeclared}"
    typed = sorted(op for op in UNTYPED if all_kernels()[op].supported_types)
    assert not typed, f"ops declared untyped but with supported_types: {typed}"


def test_every_declared_combination_is_tried():
    """A declared combination the builder's candidates lack would go unchecked."""
    for op, cases in CASES.items():
        candidates = [TypeCombo.parse(k) for k in cases.candidates]
        for combo in all_kernels()[op].type_combos():
            assert any(combo.covers(c) for c in candidates), \
                f"{op}: declared {combo.key!r} is not among the candidates tried"


@pytest.mark.parametrize("op", sorted(CASES))
def test_tflm_and_ours_accept_exactly_the_declared_types(op, tflm_verdicts, type_models):
    kernel = all_kernels()[op]
    cases = CASES[op]
    wrong = []
    for key in cases.candidates:
        combo = TypeCombo.parse(key)
        declared = kernel.supports_types(combo)
        tflm_ok, why = tflm_verdicts[(op, key)]
        ours_ok, our_error = ours_accepts(type_models[(op, key)])
        undefined = UNDEFINED_IN_TFLM.get((op, key))
        expect_tflm = declared or undefined is not None
        if tflm_ok != expect_tflm:
            wrong.append(f"{key}: TFLM {'runs' if tflm_ok else 'refuses'} it, declared "
                         f"{declared}{' (listed as undefined in TFLM)' if undefined else ''}"
                         + ("" if tflm_ok else f" [{why[:160]}]"))
        if ours_ok != declared:
            wrong.append(f"{key}: ours {'runs' if ours_ok else 'refuses'} it, declared {declared}"
                         + ("" if ours_ok else f" [{our_error[:160]}]"))
    assert not wrong, f"{op}:\n  " + "\n  ".join(wrong)


@pytest.mark.parametrize("op", sorted(UNTYPED))
def test_ops_without_typed_tensors_run(op, tflm_verdicts, type_models):
    tflm_ok, why = tflm_verdicts[(op, "")]
    assert tflm_ok, why
    ours_ok, error = ours_accepts(type_models[(op, "")])
    assert ours_ok, error


def test_undefined_combinations_are_candidates():
    """Each UNDEFINED_IN_TFLM entry is tried (else it would be a stale claim)."""
    for (op, key) in UNDEFINED_IN_TFLM:
        assert key in CASES[op].candidates, (op, key)
        assert not all_kernels()[op].supports_types(TypeCombo.parse(key)), (op, key)


#: bias types tried against the "bias ..." notes of the weighted ops
BIAS_TYPES = ("int16", "int32", "int64")


def test_bias_notes(oracle):
    """A note "bias int32 or int64" is a checked fact too: with each of BIAS_TYPES as
    the bias, ours runs the combination exactly when the note names that type, and TFLM
    runs every named one (it does not check the bias type everywhere, so a bias it
    does not name may still run there)."""
    cases, expected = [], []
    for op in sorted(CASES):
        for combo in all_kernels()[op].type_combos():
            named = re.search(r"\bbias ((?:\w+(?: or )?)+)", combo.note)
            if not named:
                continue
            allowed = set(named.group(1).split(" or "))
            assert allowed <= set(BIAS_TYPES), (op, combo.note)
            for t in BIAS_TYPES:
                cases.append((op, combo.key, t, CASES[op].build(
                    TypeCombo(combo.data, combo.weights, combo.output, f"bias {t}"))))
                expected.append(t in allowed)
    assert len({c[0] for c in cases}) >= 4, "the weighted ops' notes name their bias types"
    theirs = oracle.run_batch([dict(model=tc.model, inputs=tc.inputs, arena_size=ARENA_BYTES,
                                    lines=False) for *_, tc in cases])
    wrong = []
    for (op, key, t, tc), named, tflm in zip(cases, expected, theirs):
        ours_ok, error = ours_accepts(tc)
        if ours_ok != named:
            wrong.append(f"{op} {key} bias {t}: ours {'runs' if ours_ok else 'refuses'} it [{error}]")
        if named and not tflm.ok:
            wrong.append(f"{op} {key} bias {t}: named in the note, TFLM refuses it")
    assert not wrong, "\n".join(wrong)


def test_types_used_by_operators():
    """How an operator's combination is read from its tensors."""
    k = all_kernels()
    assert k["FULLY_CONNECTED"].types_used(["int16", "int8", "int64"], ["int16"]).key == "int16 x int8"
    assert k["FULLY_CONNECTED"].types_used(["int8", "int8", None], ["int8"]).key == "int8"
    assert k["FULLY_CONNECTED"].types_used(["int8", "int8", None], ["int16"]).key == "int8->int16"
    assert k["QUANTIZE"].types_used(["float32"], ["int8"]).key == "float32->int8"
    assert k["EQUAL"].types_used(["int8", "int8"], ["bool"]).key == "int8->bool"
    assert k["SHAPE"].supports_types(k["SHAPE"].types_used(["uint8"], ["int32"]))
    assert k["TRANSPOSE_CONV"].types_used(["int32", "int8", "int16", "int64"], ["int16"]).key \
        == "int16 x int8"
    assert k["ADD"].types_used(["int8", "int8"], ["int8"]).key == "int8"
    assert not k["ADD"].supports_types(k["ADD"].types_used(["int64", "int64"], ["int64"]))


def test_readme_type_table_matches_the_declarations():
    """The docs' table of ops and types names the declared data types."""
    from tests.helpers import DOCS
    text = open(os.path.join(DOCS, "operators.md"), encoding="utf-8").read()
    lines = text[text.index("| op | types | notes |"):].splitlines()[2:]
    rows = []
    for line in lines:
        if not line.startswith("| "):
            break
        rows.append(line.split("|")[1:3])
    assert len(rows) >= 10
    registry = all_kernels()
    for ops, types in rows:
        named = set(re.findall(r"\b(?:u?int\d+|float32|bool)\b", types))
        for op in ops.split(","):
            declared = {c.data for c in registry[op.strip()].type_combos()}
            assert named == declared, f"docs/operators.md: {op.strip()} {sorted(named)} vs declared {sorted(declared)}"
