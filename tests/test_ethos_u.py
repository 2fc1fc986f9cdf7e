"""Vela-compiled models (tests/data/ethos_u) on the Ethos-U profiles: TFLM's Ethos-U build
(CMSIS-NN on the Cortex-M55, the ethos-u co-processor kernel) sizes them exactly, against
the figures of that build under QEMU with the NPU driver stubbed
(tests/data/reference/tflm_figures_ethos_u.json, whose ``about`` says how), and against
Vela's own figures; invoking the NPU operator is refused."""
import glob
import io
import json
import os

import pytest

from micro_runtime import KernelError, MicroInterpreter, load_model
from micro_runtime.targets import ETHOS_U_NPUS, TARGETS, get_target
from micro_runtime.tools.cli import main
from micro_runtime.tools.sizing import measure_arena, npu_scratch_bytes
from kernels.ethos_u.ethosu import command_stream_npu
from tests.tflm_figures import DATA, report_arena

ETHOS = os.path.join(DATA, "ethos_u")
VELA = json.load(open(os.path.join(ETHOS, "vela_figures.json")))
VELA_MODELS = sorted(os.path.relpath(p, DATA) for p in glob.glob(os.path.join(ETHOS, "*", "*_vela.tflite")))
FIGURES_PATH = os.path.join(DATA, "reference", "tflm_figures_ethos_u.json")
FIGURES = json.load(open(FIGURES_PATH)) if os.path.exists(FIGURES_PATH) else {"about": "", "models": {}}
CASES = sorted((m, p) for m, per in FIGURES["models"].items() for p in per)


def _npu_dir(model: str) -> str:
    return model.split("/")[1]


def _profile(model: str) -> str:
    npu = _npu_dir(model)
    return f"cortex-m55+{npu if npu in ETHOS_U_NPUS else 'ethos-u55-256'}"


def test_profiles_cover_every_configuration_vela_accepts():
    assert {n for n in TARGETS if "+ethos-" in n} == {f"cortex-m55+{n}" for n in ETHOS_U_NPUS}
    for npu in ETHOS_U_NPUS:
        t = get_target(f"cortex-m55+{npu}")
        assert (t.core, t.kernel_library, t.co_processor, t.npu, t.mve) == (
            "cortex-m55", "cmsis-nn", "ethos-u", npu, True)
        assert t.sizeof("ethos_u.OpData") == 12
    # an M85 with an Ethos-U55 (Corstone-310) runs the same build
    assert get_target("cortex-m85+ethos-u55-128").name == "cortex-m55+ethos-u55-128"


@pytest.mark.parametrize("model", VELA_MODELS)
def test_command_stream_names_the_npu_vela_compiled_for(model):
    m = load_model(os.path.join(DATA, model))
    sg = m.subgraphs[0]
    ops = [op for op in sg.operators if op.custom_code == "ethos-u"]
    assert ops
    npu = command_stream_npu(sg.tensors[ops[0].inputs[0]].data.tobytes())
    # the directory is the --accelerator-config Vela was given (TFLM's own model: u55-256)
    assert npu == (_npu_dir(model) if _npu_dir(model) in ETHOS_U_NPUS else "ethos-u55-256")


@pytest.mark.parametrize("model", [m for m in VELA_MODELS if _npu_dir(m) in ETHOS_U_NPUS])
def test_vela_plan_is_the_sram_vela_reports(model):
    """The arena part Vela plans (its scratch tensors with what it placed in them) against
    Vela's "Total SRAM used": in the Shared_Sram mode (U55) the scratch tensor is that SRAM;
    in the Dedicated_Sram modes (U65, U85) the SRAM is the fast-scratch tensor, and TFLM
    lays the scratch (in DRAM) and the fast scratch over each other at offset 0."""
    m = load_model(os.path.join(DATA, model))
    vela = VELA["models"][os.path.basename(model).replace("_vela", "")][_npu_dir(model)]
    sg = m.subgraphs[0]
    op = next(op for op in sg.operators if op.custom_code == "ethos-u")
    scratch = sg.tensors[op.inputs[2]]
    scratch_bytes = int(scratch.shape[0]) if scratch.shape else 0
    if vela["memory_mode"] == "Shared_Sram":
        assert op.inputs[3] == op.inputs[2]
        assert npu_scratch_bytes(m) == vela["sram_used_bytes"] == scratch_bytes
    else:
        assert npu_scratch_bytes(m) == max(vela["sram_used_bytes"], scratch_bytes)


def test_invoking_the_npu_operator_is_refused_sizing_is_not():
    path = os.path.join(ETHOS, "ethos-u55-128", "person_detect_vela.tflite")
    it = MicroInterpreter(path, arena_size=1 << 20, target="cortex-m55+ethos-u55-128")
    it.allocate_tensors()
    with pytest.raises(KernelError, match="ethos-u.*does not emulate.*compiled for ethos-u55-128"):
        it.invoke()
    size = measure_arena(path, "cortex-m55+ethos-u55-128")
    assert size.npu_scratch_bytes == 74480 < size.min_arena_bytes
    # on a CPU-only profile the operator has no kernel
    from micro_runtime import UnsupportedOpError
    with pytest.raises(UnsupportedOpError, match="ethos-u"):
        MicroInterpreter(path, arena_size=1 << 20, target="cortex-m55+cmsis-nn")


def test_cli_size_shows_velas_part_and_run_refuses(capsys, tmp_path):
    import numpy as np
    path = os.path.join(ETHOS, "ethos-u65-256", "kws_ref_model_vela.tflite")
    assert main(["size", path, "--target", "cortex-m55+ethos-u65-256"]) == 0
    out = capsys.readouterr().out
    assert "of which Vela's plan" in out and "TFLM's own" in out
    assert main(["size", path, "--target", "cortex-m55+ethos-u65-256", "--json"]) == 0
    data = json.loads(capsys.readouterr().out)
    assert data["npu_scratch_bytes"] == 22192
    for command in ("audit", "plan"):
        assert main([command, path, "--target", "cortex-m55+ethos-u65-256", "--json"]) == 0
        assert json.loads(capsys.readouterr().out)["npu_scratch_bytes"] == 22192
        assert main([command, path, "--target", "cortex-m55+ethos-u65-256"]) == 0
        assert "bytes are Vela's plan" in capsys.readouterr().out
    x = tmp_path / "x.npy"
    np.save(x, np.zeros((1, 49, 10, 1), np.int8))
    assert main(["run", path, "--target", "cortex-m55+ethos-u65-256", "--input", str(x)]) == 1
    err = capsys.readouterr().err
    assert "does not emulate" in err and "Traceback" not in err


def test_ethos_u_figures_are_recorded_and_documented():
    assert "CO_PROCESSOR=ethos_u" in FIGURES["about"] and "mps3-an547" in FIGURES["about"]
    profiles = {p for _, p in CASES}
    assert {"cortex-m55+ethos-u55-128", "cortex-m55+ethos-u65-256"} <= profiles
    # every Vela-compiled zoo model is recorded for at least two NPU configurations, and
    # every Vela model in tests/data/ethos_u has figures
    assert set(VELA_MODELS) == {m for m, _ in CASES}
    per_zoo_model = {}
    for m in VELA_MODELS:
        if _npu_dir(m) in ETHOS_U_NPUS:
            per_zoo_model.setdefault(os.path.basename(m).replace("_vela", ""), set()).add(
                _npu_dir(m))
    assert len(per_zoo_model) >= 13
    assert all(len(npus) >= 2 for npus in per_zoo_model.values()), per_zoo_model
    assert set(per_zoo_model) == set(VELA["models"])


def test_size_is_the_recorded_minimum():
    """What `size` reports (measure_arena) for every recorded Vela model and profile."""
    wrong = []
    for model, profile in CASES:
        ref = FIGURES["models"][model][profile]
        got = measure_arena(os.path.join(DATA, model), profile).min_arena_bytes
        if got != ref["min_arena_bytes"]:
            wrong.append((model, profile, got, ref["min_arena_bytes"]))
    assert not wrong


@pytest.mark.parametrize("model,profile", CASES, ids=[f"{m}-{p}" for m, p in CASES])
def test_matches_tflm_ethos_u_build(model, profile):
    ref = FIGURES["models"][model][profile]
    path = os.path.join(DATA, model)
    it = MicroInterpreter(path, arena_size=report_arena(ref["min_arena_bytes"]), target=profile,
                          recording=True, npu_stub=True)
    it.allocate_tensors()
    it.invoke()
    buf = io.StringIO()
    it.print_allocations(buf)
    assert buf.getvalue().splitlines() == ref["report_lines"]
    assert it.min_arena_bytes() == ref["min_arena_bytes"]
