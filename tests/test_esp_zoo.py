"""The ESP32-family and riscv32 profiles against esp-tflite-micro + ESP-NN and upstream TFLM
built for RV32 and run under qemu-system-riscv32 (tests/data/reference/
tflm_figures_esp_builds.json; its ``about`` and per-build ``builds`` say how each build was
made): for every recorded model and build, the RecordingMicroAllocator report lines, the
minimum arena and (except on the stand-in builds, whose ESP-NN compute routines are stubs)
the output hashes on zero and LCG inputs. The builds recorded first (esp32-c3, esp32-c3+ansi)
have one case per model; every later build one case that goes through all its models in
process (the ``size`` command's measure_arena for the minimum, a recording interpreter for
the report lines and outputs), so that each build adds seconds, not minutes, to a run."""
import json
import os

import pytest

from micro_runtime import MicroInterpreter, MicroRuntimeError, ModelError, load_model
from micro_runtime.targets import get_target
from micro_runtime.tools.sizing import measure_arena
from tests.tflm_figures import DATA, REFERENCE_DIR, emulate, report_arena

PATH = os.path.join(REFERENCE_DIR, "tflm_figures_esp_builds.json")
RECORD = json.load(open(PATH)) if os.path.exists(PATH) else {"models": {}, "about": ""}
#: builds whose ESP-NN compute routines are stubs: sizes and report lines only
STAND_INS = ("esp32-s3", "esp32-p4")
#: builds checked by one case each, looping over their models
SWEPT_BUILDS = ("riscv32", "esp32-s3", "esp32-c6", "esp32-p4")
CASES = sorted((model, build) for model, builds in RECORD["models"].items() for build in builds
               if build not in SWEPT_BUILDS)
ALL_BUILDS = sorted({build for builds in RECORD["models"].values() for build in builds})


def _has_lut_metadata(path: str) -> bool:
    model = load_model(path)
    return model.has_compression() and bool(model.compression.lut_entries)


def test_record_is_documented():
    if not ALL_BUILDS:
        pytest.skip("no recorded ESP figures")
    assert "qemu-system-riscv32" in json.dumps(RECORD.get("about", "")) + json.dumps(RECORD.get("builds", {}))
    for build in ALL_BUILDS:
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


def _differences(model: str, build: str) -> list:
    """How our figures for one recorded model on ``build`` differ from the record (empty
    when they agree)."""
    ref = RECORD["models"][model][build]
    path = os.path.join(DATA, model)
    if _has_lut_metadata(path):
        try:
            MicroInterpreter(path, arena_size=1 << 20, target=build).allocate_tensors()
        except ModelError as e:
            return [] if "USE_TFLM_COMPRESSION" in str(e) else [f"{model}: {e}"]
        return [f"{model}: compression metadata accepted (the build has no USE_TFLM_COMPRESSION)"]
    if ref.get("status") in ("alloc_fail", "invoke_fail"):
        try:
            emulate(path, build, 1 << 22)
        except MicroRuntimeError:
            return []
        return [f"{model}: runs here, the build refused it: {ref.get('messages')}"]
    if ref.get("status", "ok") != "ok":
        return [f"{model}: the build could not run it: {ref}"]
    out = []
    size = measure_arena(path, build).recording_min_arena_bytes
    if size != ref["min_arena_bytes"]:
        out.append(f"{model}: size {size}, build {ref['min_arena_bytes']}")
    with_outputs = build not in STAND_INS and "outputs_fnv1a" in ref
    ours = emulate(path, build, report_arena(ref["min_arena_bytes"]),
                   kinds=("zeros", "lcg1") if with_outputs else ("zeros",))
    if ours["min_arena_bytes"] != ref["min_arena_bytes"]:
        out.append(f"{model}: interpreter minimum {ours['min_arena_bytes']}, build {ref['min_arena_bytes']}")
    if ours["report_lines"] != ref["report_lines"]:
        out.append(f"{model}: report lines differ: {ours['report_lines']} != {ref['report_lines']}")
    if with_outputs and ours["outputs_fnv1a"] != ref["outputs_fnv1a"]:
        out.append(f"{model}: outputs {ours['outputs_fnv1a']}, build {ref['outputs_fnv1a']}")
    return out


@pytest.mark.parametrize("build", SWEPT_BUILDS)
def test_every_model_matches_the_build(build):
    models = sorted(m for m, builds in RECORD["models"].items() if build in builds)
    if not models:
        pytest.skip(f"{build} not recorded")
    problems = [p for model in models for p in _differences(model, build)]
    assert not problems, f"{len(problems)} differences on {build}:\n" + "\n".join(problems)
