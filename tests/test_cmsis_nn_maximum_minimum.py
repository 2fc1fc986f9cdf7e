"""The CMSIS-NN MAXIMUM / MINIMUM kernel variants against TFLM built with CMSIS-NN for
Cortex-M cores and run under QEMU: the recorded single-op cases of
tests/data/cmsis_nn_cases/maximum_minimum.json (tests/record_cmsis_nn_cases.py), each
checked for its status, allocation report lines, minimum arena and output bytes on every
recorded profile. Shapes whose int8 broadcast walk reads past an input (TFLM then
computes from whatever follows it in the arena) must be refused by the emulator."""
import numpy as np
import pytest

from kernels.cmsis_nn.maximum_minimum import broadcast_walk
from tests.cmsis_nn_case_check import check_case, check_refused, load_cases

OP = "maximum_minimum"
ALL = load_cases(OP)


def _walk_leaves_inputs(name: str) -> bool:
    parts = name.split("_")
    if parts[3] != "int8":
        return False
    s1, s2 = (tuple(int(d) for d in p.split("x")) for p in parts[4:6])
    i1, i2 = broadcast_walk(s1, s2, np.broadcast_shapes(s1, s2))
    return bool(i1.max() >= np.prod(s1) or i2.max() >= np.prod(s2))


UNDEFINED = [c for c in ALL if _walk_leaves_inputs(c[0])]
CASES = [c for c in ALL if c not in UNDEFINED]


@pytest.mark.parametrize("name,profile,entry", CASES, ids=[f"{n}-{p}" for n, p, _ in CASES])
def test_case_matches_tflm_cortex_m(name, profile, entry):
    check_case(OP, name, profile, entry)


@pytest.mark.parametrize("name,profile,entry", UNDEFINED, ids=[f"{n}-{p}" for n, p, _ in UNDEFINED])
def test_walk_past_input_refused(name, profile, entry):
    check_refused(OP, name, profile, entry, "leaves the tensors")


def test_cases_recorded():
    assert CASES, f"no recorded cases for {OP} in tests/data/cmsis_nn_cases"


def test_walk_is_numpy_broadcasting_for_regular_shapes():
    for s1, s2 in (((2, 3, 4, 5), (1, 3, 4, 5)), ((2, 3, 4, 5), (2, 3, 1, 5)),
                   ((2, 1, 4, 1), (2, 3, 4, 5)), ((3, 4, 5), (5,)), ((4, 1), (1, 6))):
        shape = np.broadcast_shapes(s1, s2)
        a, b = np.broadcast_arrays(np.arange(np.prod(s1)).reshape(s1),
                                   np.arange(np.prod(s2)).reshape(s2))
        i1, i2 = broadcast_walk(s1, s2, shape)
        assert i1.tolist() == a.reshape(-1).tolist() and i2.tolist() == b.reshape(-1).tolist()
