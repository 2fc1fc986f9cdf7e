"""The CMSIS-NN SVDF kernel variant against TFLM built with CMSIS-NN for Cortex-M cores
and run under QEMU: the recorded single-op cases of tests/data/cmsis_nn_cases/svdf.json
(tests/record_cmsis_nn_cases.py), each checked for its status, allocation report lines,
minimum arena and output bytes on every recorded profile."""
import pytest

from tests.cmsis_nn_case_check import check_case, load_cases

OP = "svdf"
CASES = load_cases(OP)


@pytest.mark.parametrize("name,profile,entry", CASES, ids=[f"{n}-{p}" for n, p, _ in CASES])
def test_case_matches_tflm_cortex_m(name, profile, entry):
    check_case(OP, name, profile, entry)


def test_cases_recorded():
    assert CASES, f"no recorded cases for {OP} in tests/data/cmsis_nn_cases"
