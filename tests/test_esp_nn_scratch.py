"""ESP-NN's scratch-size functions in Python (kernels/esp_nn/internal/scratch_sizes.py)
against ESP-NN's own C functions, compiled natively and called on every conv / depthwise /
softmax shape of the zoo models and a random sweep (tests/data/esp_nn_scratch_sizes.json:
its ``about`` says how it was made)."""
import json
import os

import pytest

from kernels.esp_nn.internal.scratch_sizes import (VARIANTS, conv_scratch_size,
                                                   depthwise_conv_scratch_size, softmax_scratch_size)

RECORD = json.load(open(os.path.join(os.path.dirname(__file__), "data", "esp_nn_scratch_sizes.json")))
#: the record's result columns, in order
SETS = ("ansi", "opt", "esp32s3", "esp32p4")


def _ours(kind, args, variant):
    if kind == "conv":
        return conv_scratch_size(variant, tuple(args[0:3]), tuple(args[3:6]), tuple(args[6:9]),
                                 tuple(args[9:11]), tuple(args[11:13]))
    if kind == "dw":
        return depthwise_conv_scratch_size(variant, tuple(args[0:3]), tuple(args[3:6]),
                                           tuple(args[6:9]), args[13], tuple(args[9:11]),
                                           tuple(args[11:13]))
    return softmax_scratch_size(variant, args[0], args[1])


def test_record_is_documented_and_large_enough():
    assert "d45b843ca5f8" in RECORD["about"] and "-fwrapv" in RECORD["about"]
    assert set(VARIANTS) == set(SETS)
    for kind in ("conv", "dw", "softmax"):
        zoo = RECORD[f"{kind}_zoo_cases"]
        assert zoo > 0 and len(RECORD[kind]) - zoo >= 500
    # the sweep reaches the branches that give nonzero sizes, and 16-bit / int overflows
    conv = RECORD["conv"]
    assert len({row[-2] for row in conv}) > 100 and len({row[-1] for row in conv}) > 100
    assert any(row[-2] < 0 for row in conv) and any(max(row[:9]) > 65535 for row in conv)


@pytest.mark.parametrize("kind", ["conv", "dw", "softmax"])
def test_python_scratch_sizes_equal_esp_nn_c(kind):
    width = len(RECORD[kind][0]) - len(SETS)
    bad = []
    for row in RECORD[kind]:
        args, expected = row[:width], dict(zip(SETS, row[width:]))
        for variant in SETS:
            got = _ours(kind, args, variant)
            if got != expected[variant]:
                bad.append((variant, args, expected[variant], got))
    assert not bad, f"{len(bad)} mismatches, first: {bad[:5]}"


def test_unknown_function_set_is_refused():
    with pytest.raises(ValueError, match="unknown ESP-NN function set"):
        softmax_scratch_size("esp32c3", 4, 1)
