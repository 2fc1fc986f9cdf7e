"""The CMSIS-NN PAD kernel variant against TFLM built with CMSIS-NN for Cortex-M cores
and run under QEMU: the recorded single-op cases of tests/data/cmsis_nn_cases/pad.json
(tests/record_cmsis_nn_cases.py), each checked for its status, allocation report lines,
minimum arena and output bytes on every recorded profile."""
import pytest

from tests.cmsis_nn_case_check import check_case, check_refused, load_cases

OP = "pad"
ALL = load_cases(OP)
#: 5-D int8 cases: TFLM's CMSIS-NN build leaves (part of) the output unwritten
UNDEFINED = [c for c in ALL if "_int8_" in c[0] and len(c[0].split("_int8_")[1].split("_")[0].split("x")) == 5]
CASES = [c for c in ALL if c not in UNDEFINED]


@pytest.mark.parametrize("name,profile,entry", CASES, ids=[f"{n}-{p}" for n, p, _ in CASES])
def test_case_matches_tflm_cortex_m(name, profile, entry):
    check_case(OP, name, profile, entry)


@pytest.mark.parametrize("name,profile,entry", UNDEFINED, ids=[f"{n}-{p}" for n, p, _ in UNDEFINED])
def test_undefined_outputs_refused(name, profile, entry):
    check_refused(OP, name, profile, entry, "unwritten")


def test_cases_recorded():
    assert CASES, f"no recorded cases for {OP} in tests/data/cmsis_nn_cases"
