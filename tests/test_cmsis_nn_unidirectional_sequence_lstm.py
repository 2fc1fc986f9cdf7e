"""The CMSIS-NN UNIDIRECTIONAL_SEQUENCE_LSTM kernel variant against TFLM built with CMSIS-NN for Cortex-M cores
and run under QEMU: the recorded single-op cases of tests/data/cmsis_nn_cases/unidirectional_sequence_lstm.json
(tests/record_cmsis_nn_cases.py), each checked for its status, allocation report lines,
minimum arena and output bytes on every recorded profile."""
import pytest

from tests.cmsis_nn_case_check import check_case, load_cases

OP = "unidirectional_sequence_lstm"
CASES = load_cases(OP)


#: float32 LSTMs run TFLM's reference float code, whose sigmoid / tanh call the C
#: library: newlib's expf on Cortex-M, which the Cortex-M targets use (Target.libm)
FLOAT = [c for c in CASES if "_float32_" in c[0]]


@pytest.mark.parametrize("name,profile,entry", CASES, ids=[f"{n}-{p}" for n, p, _ in CASES])
def test_case_matches_tflm_cortex_m(name, profile, entry):
    check_case(OP, name, profile, entry, check_outputs="_float32_" not in name)


@pytest.mark.parametrize("name,profile,entry", FLOAT, ids=[f"{n}-{p}" for n, p, _ in FLOAT])
def test_float_outputs_match_tflm_cortex_m(name, profile, entry):
    check_case(OP, name, profile, entry)


def test_cases_recorded():
    assert CASES, f"no recorded cases for {OP} in tests/data/cmsis_nn_cases"
