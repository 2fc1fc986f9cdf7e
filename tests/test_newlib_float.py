"""newlib's expf (the C library of TFLM's arm-none-eabi builds) against values computed by
newlib itself under QEMU (tests/data/newlib/expf.json; its ``about`` says how)."""
import json
import os

import numpy as np

from kernels.internal.newlib_float import expf

DATA = os.path.join(os.path.dirname(os.path.abspath(__file__)), "data", "newlib", "expf.json")


def test_expf_matches_newlib():
    with open(DATA) as f:
        record = json.load(f)
    x = np.array([int(v, 16) for v in record["inputs"]], np.uint32).view(np.float32)
    want = np.array([int(v, 16) for v in record["outputs"]], np.uint32)
    got = expf(x).view(np.uint32)
    both_nan = np.isnan(got.view(np.float32)) & np.isnan(want.view(np.float32))
    bad = (got != want) & ~both_nan
    assert not bad.any(), f"{bad.sum()} of {x.size} differ, e.g. x={x[bad][:4]}"


def test_expf_differs_from_glibc_somewhere():
    """The reason the module exists: newlib's fdlibm expf is not glibc's."""
    from kernels.internal.libm_float import expf as glibc_expf
    x = np.linspace(-20, 0, 20001, dtype=np.float32)
    assert (expf(x) != glibc_expf(x)).any()
