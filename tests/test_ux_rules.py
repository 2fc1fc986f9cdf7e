"""What a new user trips over: each test fails on the code before its fix.

Arena refusals that always say the minimum, TFLM's method names, one meaning of --jobs,
CLI errors in option names, one rule for output paths, one rule for input shapes,
printed sums that add up.
"""
from __future__ import annotations

import json
import os
import re
import subprocess
import sys

import numpy as np
import pytest

import micro_runtime as mr
from micro_runtime.tools.cli import main
from tests.helpers import model_path
from tests.tflm_figures import load_figures

WORKTREE = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))


def cli(capsys, *argv):
    code = main([str(a) for a in argv])
    out, err = capsys.readouterr()
    return code, out, err


def one_line_error(code, out, err, status=1):
    assert code == status and out == "" and err.startswith("error: ") and err.count("\n") == 1, (code, out, err)
    return err


def recorded(model: str, target: str) -> int:
    figures, _ = load_figures()
    return figures[(model + ".tflite", target)]["min_arena_bytes"]


# --------------------------------------------------- a too-small arena says the minimum
@pytest.mark.parametrize("arena", [2048, 16000])
def test_a_too_small_arena_always_says_the_minimum(arena):
    kws = model_path("kws_ref_model")
    needed = recorded("kws_ref_model", "cortex-m4+cmsis-nn")      # TFLM's build: 22928
    for make in (lambda: mr.RecordingMicroInterpreter(kws, mr.default_op_resolver(), arena,
                                                      error_reporter=lambda m: None).invoke(),
                 lambda: mr.Interpreter.from_file(kws, arena_size=arena, target="cortex-m4+cmsis-nn")):
        with pytest.raises(mr.ArenaTooSmallError) as e:
            make()
        assert e.value.min_arena_bytes == needed
        assert f"this model needs at least {needed} bytes" in str(e.value)
    # the plain MicroInterpreter: its own minimum, which works, one byte less does not
    with pytest.raises(mr.ArenaTooSmallError) as e:
        mr.MicroInterpreter(kws, None, arena, error_reporter=lambda m: None).invoke()
    plain = e.value.min_arena_bytes
    assert plain is not None and f"needs at least {plain} bytes" in str(e.value)
    mr.MicroInterpreter(kws, None, plain, error_reporter=lambda m: None).invoke()
    with pytest.raises(mr.ArenaTooSmallError):
        mr.MicroInterpreter(kws, None, plain - 1, error_reporter=lambda m: None).invoke()


def test_run_with_a_too_small_arena_says_the_minimum(capsys, tmp_path):
    np.save(tmp_path / "x.npy", np.zeros((1, 49, 10, 1), np.int8))
    err = one_line_error(*cli(capsys, "run", model_path("kws_ref_model"), "--arena-size", 2048,
                              "--input", tmp_path / "x.npy"))
    assert f"needs at least {recorded('kws_ref_model', 'cortex-m4+cmsis-nn')} bytes" in err
