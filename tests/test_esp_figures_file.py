"""The recorded ESP32-family / RISC-V figures (tests/data/reference/tflm_figures_esp_builds.json)
are well-formed and documented: every build present has an ``about`` naming its commits,
compiler, flags and how it was run; every entry is either figures or a refusal with its
message; names are models under tests/data.  A build absent from the file is skipped.
(The target profiles are checked against these figures elsewhere.)"""
import json
import os
import re

import pytest

from tests.tflm_figures import DATA, REFERENCE_DIR

PATH = os.path.join(REFERENCE_DIR, "tflm_figures_esp_builds.json")
CORTEXM_PATH = os.path.join(REFERENCE_DIR, "tflm_figures_cortexm_builds.json")
#: build -> (whether outputs are recorded, words its about must contain)
BUILDS = {
    "esp32-c3": (True, ["99f49e1498b0", "d45b843ca5f8", "rv32imc_zicsr_zifencei",
                        "CONFIG_NN_OPTIMIZED", "CONFIG_IDF_TARGET_ESP32C3", "-DESP_NN", "-O3"]),
    "esp32-c3+ansi": (True, ["99f49e1498b0", "d45b843ca5f8", "rv32imc_zicsr_zifencei",
                             "CONFIG_NN_ANSI_C", "CONFIG_IDF_TARGET_ESP32C3", "-DESP_NN"]),
    "esp32-c6": (True, ["99f49e1498b0", "d45b843ca5f8", "rv32imac_zicsr_zifencei",
                        "CONFIG_NN_OPTIMIZED", "CONFIG_IDF_TARGET_ESP32C6"]),
    "riscv32": (True, ["90b983c2", "riscv32_generic", "rv32imc", "TF_LITE_MCU_DEBUG_LOG"]),
    "esp32-s3": (False, ["99f49e1498b0", "d45b843ca5f8", "CONFIG_IDF_TARGET_ESP32S3",
                         "stub"]),
    "esp32-p4": (False, ["99f49e1498b0", "d45b843ca5f8", "CONFIG_IDF_TARGET_ESP32P4",
                         "stub"]),
}
HASH = re.compile(r"^[0-9a-f]{8}$")
REPORT_TOTAL = re.compile(r"^\[RecordingMicroAllocator\] Arena allocation total \d+ bytes$")


def _load():
    if not os.path.exists(PATH):
        pytest.skip("no ESP figures recorded")
    return json.load(open(PATH))


def _check_figures(model: str, build: str, entry: dict, with_outputs: bool) -> None:
    assert isinstance(entry["min_arena_bytes"], int) and entry["min_arena_bytes"] > 0, \
        (model, build)
    lines = entry["report_lines"]
    assert lines and REPORT_TOTAL.match(lines[0]), (model, build, lines[:1])
    assert all(l.startswith("[RecordingMicroAllocator] ") for l in lines), (model, build)
    if with_outputs:
        outs = entry["outputs_fnv1a"]
        assert set(outs) == {"zeros", "lcg1"}, (model, build)
        assert outs["zeros"] and len(outs["zeros"]) == len(outs["lcg1"]), (model, build)
        assert all(HASH.match(h) for h in outs["zeros"] + outs["lcg1"]), (model, build)
    else:
        assert "outputs_fnv1a" not in entry, f"{build} is a stand-in: no outputs ({model})"


def test_file_has_about_and_known_builds():
    data = _load()
    assert set(data) == {"about", "builds", "models"}
    about = data["about"]
    for word in ("qemu-system-riscv32", "lcg1", "zeros", "FNV-1a", "1-byte", "picolibc"):
        assert word in about, word
    present = {b for per in data["models"].values() for b in per}
    assert present <= set(BUILDS), present - set(BUILDS)
    assert present == set(data["builds"])


@pytest.mark.parametrize("build", sorted(BUILDS))
def test_build_is_documented_and_well_formed(build):
    data = _load()
    if build not in data["builds"]:
        pytest.skip(f"{build} not recorded")
    with_outputs, words = BUILDS[build]
    info = data["builds"][build]
    for word in words:
        assert word in info["about"], (build, word)
    entries = {m: per[build] for m, per in data["models"].items() if build in per}
    assert info["models"] == len(entries)
    wanted = set(json.load(open(CORTEXM_PATH))["models"])
    assert info["complete"] == (wanted <= set(entries))
    if not info["complete"]:
        assert "partial" in info["about"].lower(), build
    for model, entry in entries.items():
        assert os.path.isfile(os.path.join(DATA, model)), model
        status = entry.get("status")
        if status is None:
            _check_figures(model, build, entry, with_outputs)
        elif status == "needs_USE_TFLM_COMPRESSION":
            assert "_lut_metadata" in model and "USE_TFLM_COMPRESSION" in entry["note"]
            _check_figures(model, build, entry["observed_without_compression"], with_outputs)
        else:
            # a refusal at every arena size: recorded with TFLM's messages
            assert status in ("alloc_fail", "invoke_fail"), (model, build, status)
            assert entry["messages"], (model, build)
