"""Batched evaluation over every model we carry (the zoo and TFLM's tree under
tests/data/tflm_examples), on host64, mcu32 and Cortex-M profiles with and without
CMSIS-NN: 7 samples in blocks of 3 (so the last block is padded) equal 7 separate
reset()/invoke()s of the single-sample interpreter on the same target, bit for bit.
Models a target refuses are refused by both paths alike."""
from __future__ import annotations

import glob
import os

import numpy as np
import pytest

from micro_runtime import MicroInterpreter
from micro_runtime.batched import Evaluator
from micro_runtime.errors import MicroRuntimeError
from tests.helpers import DATA
from tests.test_batched import assert_same, per_sample, random_samples

MODELS = sorted(glob.glob(os.path.join(DATA, "tflm_examples", "**", "*.tflite"), recursive=True)
                + glob.glob(os.path.join(DATA, "*.tflite")))
TARGETS = ["host64", "mcu32", "cortex-m4", "cortex-m0+cmsis-nn", "cortex-m4+cmsis-nn",
           "cortex-m55+cmsis-nn"]


@pytest.mark.parametrize("target", TARGETS)
def test_every_model_batched_equals_per_sample(target):
    assert len(MODELS) >= 140
    compared, on_blocks, refused = 0, 0, []
    for path in MODELS:
        raw = open(path, "rb").read()
        name = os.path.relpath(path, DATA)
        try:
            ev = Evaluator(raw, target=target, batch=3)
        except MicroRuntimeError as e:
            with pytest.raises(type(e)):       # the single-sample interpreter refuses it too
                MicroInterpreter(raw, arena_size=1 << 22, target=target).allocate_tensors()
            refused.append(name)
            continue
        inputs = random_samples(np.random.default_rng(len(name)), ev.input_specs, 7)
        assert_same(ev.run(inputs), per_sample(raw, inputs, target=target), f"{name} on {target}")
        compared += 1
        on_blocks += ev.sequential_reason is None
    # only the compressed models with metadata are refused (targets built without compression)
    assert all("lut_metadata" in name for name in refused), refused
    assert compared >= 140 and on_blocks >= compared - 12, (compared, on_blocks)
