"""Differential checks for stateful ops (variable tensors carried across invokes)."""
from __future__ import annotations

import io
from typing import Dict, List, Optional, Sequence

import numpy as np

from micro_runtime import MicroInterpreter
from tests.helpers import assert_bit_exact


def compare_invokes_with_tflm(oracle, model: bytes, runs: List[Sequence[np.ndarray]],
                              arena_size: int = 1 << 20, reset_between: bool = False,
                              context: str = "", interpreter: Optional[MicroInterpreter] = None,
                              output_slices: Optional[Dict[int, slice]] = None):
    """Invoke ours (``interpreter``, default a host64 recording one) and TFLM once per entry
    of ``runs`` (state carried over, or reset after every invoke with ``reset_between``);
    assert every invoke's outputs are bit-identical (``output_slices`` restricts an output
    to a slice) and the allocation reports equal. Returns (our per-invoke outputs, our
    interpreter)."""
    theirs = oracle.run(model, arena_size=arena_size, runs=runs, reset_between=reset_between)
    assert theirs.ok, f"{context}: TFLM failed ({theirs.stage}): {theirs.error} crashed={theirs.crashed}"
    assert len(theirs.invokes) == len(runs)
    it = interpreter or MicroInterpreter(model, arena_size=arena_size, target="host64",
                                         recording=True, error_reporter=lambda m: None)
    it.allocate_tensors()
    slices = output_slices or {}
    ours = []
    for k, inputs in enumerate(runs):
        for i, x in enumerate(inputs):
            it.set_input(np.asarray(x), i)
        it.invoke()
        outs = [np.array(it.output(i)) for i in range(it.outputs_size)]
        mine = [o[slices[i]] if i in slices else o for i, o in enumerate(outs)]
        ref = [np.asarray(o)[slices[i]] if i in slices else o for i, o in enumerate(theirs.invokes[k])]
        assert_bit_exact(mine, ref, f"{context} invoke {k}")
        ours.append(outs)
        if reset_between:
            it.reset()
    buf = io.StringIO()
    it.print_allocations(buf)
    lines = buf.getvalue().splitlines()
    assert lines == theirs.lines, (f"{context}: allocation report differs\nours:\n" + "\n".join(lines)
                                   + "\nTFLM:\n" + "\n".join(theirs.lines))
    return ours, it


def compare_runs_with_tflm(oracle, model: bytes, runs: List[Sequence[np.ndarray]],
                           arena_size: int = 1 << 20, reset_between: bool = False,
                           context: str = ""):
    """:func:`compare_invokes_with_tflm`; returns our per-invoke outputs."""
    return compare_invokes_with_tflm(oracle, model, runs, arena_size, reset_between, context)[0]


def compare_zoo_tensors_with_tflm(oracle, name: str, tensors: Sequence[int], seeds=(1, 2, 3)):
    """Run a zoo model on seeded random inputs (state carried across invokes) with every
    tensor preserved (TFLM's kPreserveAllTensors / our linear planner); assert the listed
    tensors (layer outputs, variable states) equal TFLM's after the last invoke."""
    import pytest

    from micro_runtime.errors import UnsupportedOpError
    from tests.helpers import model_bytes
    from tests.test_zoo import random_inputs

    raw = model_bytes(name)
    runs = [random_inputs(name, seed) for seed in seeds]
    try:
        it = MicroInterpreter(raw, arena_size=1 << 20, target="host64", planner="linear")
    except UnsupportedOpError as e:
        pytest.skip(f"{name}: {e}")
    theirs = oracle.run(raw, arena_size=1 << 20, runs=runs, preserve=True, tensors=list(tensors))
    assert theirs.ok, f"{name}: TFLM failed ({theirs.stage}): {theirs.error}"
    it.allocate_tensors()
    for inputs in runs:
        for i, x in enumerate(inputs):
            it.set_input(x, i)
        it.invoke()
    for t in tensors:
        ref = theirs.tensors[t]
        assert ref is not None, f"{name}: TFLM gave no tensor {t}"
        assert_bit_exact([np.array(it.tensor(t))], [np.asarray(ref["tensor_data"])],
                         f"{name} tensor {t}")
