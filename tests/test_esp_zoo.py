"""The ESP32-family and riscv32 profiles against esp-tflite-micro + ESP-NN and upstream TFLM
built for RV32 and run under qemu-system-riscv32 (tests/data/reference/
tflm_figures_esp_builds.json; its ``about`` and per-build ``builds`` say how each build was
made): for every recorded model and build, the RecordingMicroAllocator report lines, the
minimum arena and (except on the stand-in builds, whose ESP-NN compute routines are stubs)
the output hashes on zero and LCG inputs."""
import json
import os

import pytest

from micro_runtime import MicroInterpreter, MicroRuntimeError, ModelError, load_model
from micro_runtime.targets import get_target
from tests.tflm_figures import DATA, REFERENCE_DIR, emulate, report_arena

PATH = os.path.join(REFERENCE_DIR, "tflm_figures_esp_builds.json")
RECORD = json.load(open(PATH)) if os.path.exists(PATH) else {"models": {}, "about": ""}
#: builds whose ESP-NN compute routines are stubs: sizes and report lines only
STAND_INS = ("esp32-s3", "esp32-p4")
CASES = sorted((model, build) for model, builds in RECORD["models"].items() for build in builds)


def _has_lut_metadata(path: str) -> bool:
    model = load_model(path)
    return model.has_compression() and bool(model.compression.lut_entries)


def test_record_is_documented():
    if not CASES:
        pytest.skip("no recorded ESP figures")
    assert "qemu-system-riscv32" in json.dumps(RECORD.get("about", "")) + json.dumps(RECORD.get("builds", {}))
    builds = {b for _, b in CASES}
    for build in builds:
        get_target(build)                    # every recorded build is a profile


@pytest.mark.parametrize("model,build", CASES, ids=[f"{m}-{b}" for m, b in CASES])
def test_matches_the_esp_build(model, build):
    ref = RECORD["models"][model][build]
    path = os.path.join(DATA, model)
    if _has_lut_metadata(path):
        # the build has no USE_TFLM_COMPRESSION: TFLM runs the kernels on the packed
        # indices; we refuse the model
        with pytest.raises(ModelError, match="USE_TFLM_COMPRESSION"):
            MicroInterpreter(path, arena_size=1 << 20, target=build).allocate_tensors()
        return
    if ref.get("status") in ("alloc_fail", "invoke_fail"):
        with pytest.raises(MicroRuntimeError):
            emulate(path, build, 1 << 22)
        return
    assert "status" not in ref or ref["status"] == "ok", f"the build could not run it: {ref}"
    ours = emulate(path, build, report_arena(ref["min_arena_bytes"]))
    assert ours["report_lines"] == ref["report_lines"]
    assert ours["min_arena_bytes"] == ref["min_arena_bytes"]
    if build not in STAND_INS and "outputs_fnv1a" in ref:
        assert ours["outputs_fnv1a"] == ref["outputs_fnv1a"]
