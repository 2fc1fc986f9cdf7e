"""The ESP-NN kernels against the recorded single-op cases of the ESP builds
(tests/data/esp_nn_cases/<op>.json, written by tests/record_esp_nn_cases.py from the
esp-oracle runner: esp-tflite-micro + ESP-NN compiled for RV32 and run under QEMU; its
``about`` says how). For every case and build: the same status, allocation report lines and
minimum arena, and (except on the stand-in builds, whose compute routines are stubs) the
same output bytes; cases whose ESP-build output the emulator refuses to model must be
refused with the reason."""
import pytest

from micro_runtime.targets import get_target

from tests.cmsis_nn_case_check import check_case, check_refused, load_cases
from tests.record_esp_nn_cases import CASES_DIR, STAND_INS

OPS = ("conv", "depthwise_conv", "fully_connected", "softmax", "pooling", "add", "mul")
CASES = [(op, name, profile, entry) for op in OPS for name, profile, entry in load_cases(op, CASES_DIR)]

#: (op, case-name fragment, ESP-NN function sets) -> the reason our refusal gives: the ESP
#: build runs these, but what it computes is not modelled
REFUSED = {
    ("fully_connected", "int16_s32", ("opt", "ansi", "esp32s3", "esp32p4")): "reads the bias as int64",
    ("fully_connected", "int16_per_channel", ("opt", "ansi", "esp32s3", "esp32p4")): "per-tensor multiplier",
}


def _refusal(op, name, profile):
    function_set = get_target(profile).esp_nn
    for (o, fragment, sets), reason in REFUSED.items():
        if o == op and fragment in name and function_set in sets:
            return reason
    return None


@pytest.mark.skipif(not CASES, reason="no recorded ESP-NN cases")
@pytest.mark.parametrize("op,name,profile,entry", CASES, ids=[f"{c[2]}-{c[1]}" for c in CASES])
def test_matches_the_esp_build(op, name, profile, entry):
    reason = _refusal(op, name, profile)
    if reason and entry["status"] == "ok":
        check_refused(op, name, profile, entry, reason, cases_dir=CASES_DIR)
        return
    check_case(op, name, profile, entry, check_outputs=profile not in STAND_INS, cases_dir=CASES_DIR)
