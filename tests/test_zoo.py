"""Every zoo model against TFLM: outputs, allocation report, minimum arena (host64 live
against the tflite-micro package; mcu32 against TFLM's 32-bit figures)."""
import io
import json
import os

import numpy as np
import pytest

from micro_runtime import ArenaTooSmallError, MicroInterpreter, load_model
from tests.helpers import DATA, assert_bit_exact, model_bytes, model_path

pytestmark = pytest.mark.oracle

REFERENCE = json.load(open(os.path.join(DATA, "reference", "tflm_figures.json")))
REFERENCE32 = json.load(open(os.path.join(DATA, "reference", "tflm_figures_32bit.json")))["models"]

ZOO = ["hello_world_int8", "hello_world_float", "simple_add_model", "ad01_int8",
       "micro_speech_quantized", "person_detect", "keyword_scrambled_8bit", "kws_ref_model",
       "trained_lstm_int8", "vww_96_int8", "pretrainedResnet_quant", "audio_preprocessor_int8",
       # TFLM-compressed (benchmarks/compression_sizes.py --write-test-data): DECODE
       # operators (TFLM's tool) and COMPRESSION_METADATA
       "hello_world_int8_lut", "kws_ref_model_lut", "kws_ref_model_lut_metadata"]


def random_inputs(name, seed):
    model = load_model(model_path(name))
    rng = np.random.default_rng(seed)
    out = []
    for t in model.main.inputs:
        spec = model.main.tensors[t]
        if spec.dtype == np.float32:
            out.append(rng.uniform(-2, 2, size=spec.shape).astype(np.float32))
        else:
            info = np.iinfo(spec.dtype)
            out.append(rng.integers(info.min, info.max, size=spec.shape, endpoint=True).astype(spec.dtype))
    return out


def report(it):
    buf = io.StringIO()
    it.print_allocations(buf)
    return buf.getvalue().splitlines()


@pytest.mark.parametrize("name", ZOO)
def test_outputs_bit_identical_on_three_seeds(oracle, name):
    raw = model_bytes(name)
    arena = REFERENCE[name + ".tflite"]["min_arena_bytes"]
    it = MicroInterpreter(raw, arena_size=arena, target="host64", recording=True)
    it.allocate_tensors()
    runs = [random_inputs(name, seed) for seed in (1, 2, 3)]
    theirs = oracle.run(raw, arena_size=arena, runs=runs)
    assert theirs.ok, theirs.error
    for k, inputs in enumerate(runs):
        for i, x in enumerate(inputs):
            it.set_input(x, i)
        it.invoke()
        assert_bit_exact([np.array(it.output(i)) for i in range(it.outputs_size)],
                         theirs.invokes[k], f"{name} seed {k + 1}")


@pytest.mark.parametrize("name", ZOO)
def test_allocation_report_identical(oracle, name):
    raw = model_bytes(name)
    arena = REFERENCE[name + ".tflite"]["min_arena_bytes"]
    theirs = oracle.run(raw, random_inputs(name, 0), arena_size=arena)
    assert theirs.ok, theirs.error
    it = MicroInterpreter(raw, arena_size=arena, target="host64", recording=True)
    it.allocate_tensors()
    it.invoke()
    assert report(it) == theirs.lines


@pytest.mark.parametrize("name", ZOO)
def test_min_arena_equals_tflm_binary_search(oracle, name):
    raw = model_bytes(name)
    ours = MicroInterpreter(raw, arena_size=1 << 22, target="host64", recording=True).min_arena_bytes()
    live = oracle.min_arena(raw, [np.zeros(x.shape, x.dtype) for x in random_inputs(name, 0)],
                            high=ours + 1024)
    assert ours == live == REFERENCE[name + ".tflite"]["min_arena_bytes"]
    # the interpreter works at exactly that size and fails one byte below
    MicroInterpreter(raw, arena_size=ours, target="host64", recording=True).allocate_tensors()
    with pytest.raises(ArenaTooSmallError) as err:
        MicroInterpreter(raw, arena_size=ours - 1, target="host64", recording=True,
                         error_reporter=lambda m: None).allocate_tensors()
    assert err.value.min_arena_bytes == ours


@pytest.mark.parametrize("name", ZOO)
def test_mcu32_matches_tflm_32bit_build(name):
    if name + ".tflite" not in REFERENCE32:   # the 32-bit build has no signal ops
        pytest.skip(f"{name}: no TFLM 32-bit figures")
    ref = REFERENCE32[name + ".tflite"]["bits32"]
    it = MicroInterpreter(model_path(name), arena_size=ref["min_arena_bytes"], target="mcu32", recording=True)
    it.allocate_tensors()
    it.invoke()
    assert report(it) == ref["recording_report"]
    assert it.min_arena_bytes() == ref["min_arena_bytes"]
