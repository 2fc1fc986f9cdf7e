"""The mcu32 profile against TFLM's own 32-bit figures for the models of
tests/data/tflm_examples (SEANet int16 kernels, DTLN, LSTMs, sine): minimum arena and every
RecordingMicroAllocator report line. The figures come from a real 32-bit TFLM build
(tests/data/tflm_examples/tflm_figures_32bit.json, field "about" says how it was built;
benchmarks/mcu32_check.py re-checks against any such build)."""
import io
import json
import os

import numpy as np
import pytest

from micro_runtime import ArenaTooSmallError, MicroInterpreter
from micro_runtime.tools.sizing import measure_arena

HERE = os.path.join(os.path.dirname(os.path.abspath(__file__)), "data", "tflm_examples")
FIGURES = json.load(open(os.path.join(HERE, "tflm_figures_32bit.json")))
MODELS = sorted(FIGURES["models"])


def test_figures_cover_every_example_model_tflm_can_run():
    on_disk = sorted(os.path.relpath(os.path.join(root, name), HERE)
                     for root, _, names in os.walk(HERE) for name in names if name.endswith(".tflite"))
    # the 32-bit build has no TFLM signal kernels: only the audio front end is left out
    assert sorted(set(on_disk) - set(MODELS)) == ["audio_preprocessor_float.tflite"]
    assert set(MODELS) <= set(on_disk)
    assert len(MODELS) == 131


@pytest.mark.parametrize("name", MODELS)
def test_mcu32_matches_tflm_32bit_build(name):
    ref = FIGURES["models"][name]
    path = os.path.join(HERE, name)
    assert measure_arena(path, "mcu32").min_arena_bytes == ref["min_arena_bytes"]
    it = MicroInterpreter(path, arena_size=ref["min_arena_bytes"], target="mcu32", recording=True)
    it.allocate_tensors()
    for i in range(it.inputs_size):
        x = it.input(i)
        it.set_input(np.zeros(x.shape, x.dtype), i)
    it.invoke()
    buf = io.StringIO()
    it.print_allocations(buf)
    assert buf.getvalue().splitlines() == ref["report"]
    assert it.min_arena_bytes() == ref["min_arena_bytes"]
    with pytest.raises(ArenaTooSmallError):
        MicroInterpreter(path, arena_size=ref["min_arena_bytes"] - 1, target="mcu32", recording=True,
                         error_reporter=lambda m: None).allocate_tensors()
