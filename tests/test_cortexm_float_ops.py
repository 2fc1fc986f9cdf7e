"""Float32 ops whose kernels call the C library (TANH, LOGISTIC, EXP, LOG, SIN, COS, ELU,
SOFTMAX, LOG_SOFTMAX) or sqrtf (SQRT, RSQRT), and ADD / SUB / MUL / DIV (same-shape and
broadcast), ADD_N and SQUARED_DIFFERENCE on NaN operands, bit for bit against TFLM's Cortex-M builds run
under QEMU (tests/data/cortexm_float_ops.json; its ``about`` says how): newlib's fdlibm
functions and ARM soft-float NaN rules on every Cortex-M profile, glibc's / x86's on the
host builds (which differ on these inputs)."""
import json
import os

import numpy as np
import pytest

from tests.cortexm_float_op_cases import cases
from tests.helpers import run_ours

DATA = os.path.join(os.path.dirname(os.path.abspath(__file__)), "data", "cortexm_float_ops.json")
with open(DATA) as _f:
    RECORD = json.load(_f)
CASES = cases()
#: the recorded builds, and profiles sharing their float code (same newlib multilib
#: arithmetic, reference float kernels or CMSIS-NN's float softmax)
PROFILES = RECORD["profiles"] + ["cortex-m7+cmsis-nn", "cortex-m33+cmsis-nn", "cortex-m0"]


def _want(name):
    return np.frombuffer(bytes.fromhex(RECORD["cases"][name]), "<u4")


def _ours(name, target):
    model, inputs = CASES[name]
    outs, _, _ = run_ours(model, inputs, target=target)
    return np.asarray(outs[0], np.float32).reshape(-1).view(np.uint32)


def test_every_case_recorded():
    assert sorted(CASES) == sorted(RECORD["cases"])


@pytest.mark.parametrize("profile", PROFILES)
@pytest.mark.parametrize("name", sorted(CASES))
def test_matches_tflm_cortex_m(name, profile):
    want = _want(name)
    got = _ours(name, profile)
    bad = got != want
    assert not bad.any(), (f"{name} on {profile}: {bad.sum()} of {want.size} outputs differ, e.g. "
                           + ", ".join(f"{g:08x} vs TFLM {w:08x}" for g, w in zip(got[bad][:4], want[bad][:4])))


@pytest.mark.parametrize("name", ["exp", "log", "sin", "cos", "logistic", "softmax", "log_softmax",
                                  "sqrt", "add", "sub", "mul", "div", "add_broadcast",
                                  "add_n", "squared_difference"])
def test_host_build_differs(name):
    """The cases tell the C libraries apart: the host64 build (glibc, x86) computes other
    bits on them."""
    assert (_ours(name, "host64") != _want(name)).any()


@pytest.mark.parametrize("profile", PROFILES)
def test_detection_postprocess_matches_tflm_cortex_m(profile):
    """Box decoding in double with newlib's exp and libgcc's double add (size encodings
    putting exp's argument where soft-float 1 + x is not IEEE-rounded): all four outputs."""
    from tests.cortexm_float_op_cases import detection_case
    model, inputs = detection_case()
    outs, _, _ = run_ours(model, inputs, target=profile, arena_size=2_000_000)
    for k, (ours, want) in enumerate(zip(outs, RECORD["detection_postprocess"])):
        assert np.asarray(ours, np.float32).tobytes() == bytes.fromhex(want), f"output {k}"
