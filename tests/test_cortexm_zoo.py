"""The Cortex-M profiles against TFLM built by its own Makefile for each core (reference and
CMSIS-NN kernels) and run under QEMU: for every recorded model and profile, the
RecordingMicroAllocator report lines, the minimum arena and the output hashes on zero and
LCG inputs (tests/data/reference/tflm_figures_cortexm*.json; their ``about`` says how they
were made, tests/tflm_figures.py how they are compared)."""
import numpy as np
import pytest

from micro_runtime import MicroInterpreter, MicroRuntimeError, ModelError, load_model
from micro_runtime.cmsis_nn_structs import CMSIS_NN_STRUCTS
from micro_runtime.targets import (CORTEX_M_CORES, TARGETS, MissingStructError, get_target)
from tests.tflm_figures import (DATA, emulate, figure_sources, fnv1a32, input_arrays,
                                lcg1_bytes, load_figures, report_arena)

FIGURES, ABOUT = load_figures()
#: recorded build -> the profile it is checked against, where the two names differ: TFLM's
#: cortex_m_qemu target compiles with -mfloat-abi=soft, under which gcc does not define
#: __ARM_FEATURE_MVE, so its Cortex-M55 CMSIS-NN build has CMSIS-NN's DSP code paths (the
#: profile cortex-m55+cmsis-nn models the MVE build of TFLM's cortex_m_generic and
#: corstone_300 targets)
RECORDED_AS = {"cortex-m55+cmsis-nn@cortex_m_qemu": "cortex-m33+cmsis-nn"}
CASES = sorted(key for key in FIGURES if key[1] in TARGETS or key[1] in RECORDED_AS)
#: (model, build) whose outputs our profile does not reproduce yet, and why; their report
#: lines and minimum arena must still match, their outputs must still differ (a fix shows)
KNOWN_OUTPUT_DIFFERENCES: dict = {}


def _has_lut_metadata(path: str) -> bool:
    model = load_model(path)
    return model.has_compression() and bool(model.compression.lut_entries)


def test_figures_are_present_documented_and_consistent():
    assert "tflm_figures_cortexm.json" in ABOUT
    assert all(("cortex_m_qemu" in text or "cortex_m_generic" in text) and "lcg1" in text
               for text in ABOUT.values())
    # the 11 zoo models on the three builds of issue 12 at least
    zoo = {m for m, p in FIGURES if "/" not in m}
    assert len(zoo) >= 11
    assert {"cortex-m4", "cortex-m4+cmsis-nn", "cortex-m3+cmsis-nn"} <= {p for _, p in FIGURES}
    # where two files record the same model and build, they agree
    for key, entries in figure_sources().items():
        for other in entries[1:]:
            for field in ("min_arena_bytes", "report_lines", "outputs_fnv1a", "status"):
                assert other.get(field) == entries[0].get(field), (key, field)


@pytest.mark.parametrize("model,profile", CASES, ids=[f"{m}-{p}" for m, p in CASES])
def test_matches_tflm_cortex_m_build(model, profile):
    ref = FIGURES[(model, profile)]
    path = f"{DATA}/{model}"
    recorded, profile = profile, RECORDED_AS.get(profile, profile)
    if _has_lut_metadata(path):
        # TFLM without USE_TFLM_COMPRESSION ignores the metadata and runs the kernels on
        # the packed indices (reading past the weight buffers); we refuse the model
        with pytest.raises(ModelError, match="USE_TFLM_COMPRESSION"):
            MicroInterpreter(path, arena_size=1 << 20, target=profile).allocate_tensors()
        return
    if ref.get("status") in ("alloc_fail", "invoke_fail"):
        # that build refuses the model at every arena size (e.g. a CMSIS-NN kernel's
        # limits): so do we, with a message
        with pytest.raises(MicroRuntimeError):
            emulate(path, profile, 1 << 22)
        return
    assert "status" not in ref, f"TFLM could not run it: {ref}"
    ours = emulate(path, profile, report_arena(ref["min_arena_bytes"]))
    assert ours["report_lines"] == ref["report_lines"]
    assert ours["min_arena_bytes"] == ref["min_arena_bytes"]
    if (model, recorded) in KNOWN_OUTPUT_DIFFERENCES:
        assert ours["outputs_fnv1a"] != ref["outputs_fnv1a"], "now equal: drop the exception"
        return
    assert ours["outputs_fnv1a"] == ref["outputs_fnv1a"]


def test_lcg1_and_fnv1a_definitions():
    # x1 = 1103515245 + 12345 = 0x41C67EA6: first byte 0xC6
    data, state = lcg1_bytes(3)
    assert state == ((((1103515245 + 12345) * 1103515245 + 12345) % 2**32) * 1103515245 + 12345) % 2**32
    assert data[0] == 0xC6
    a, b = input_arrays("lcg1", [((2,), np.int16), ((3,), np.int8)])
    stream, _ = lcg1_bytes(7)
    assert a.tobytes() + b.tobytes() == stream.tobytes()
    assert fnv1a32(b"") == "811c9dc5" and fnv1a32(b"a") == "e40c292c"


def test_cortex_m_struct_layout():
    """arm-none-eabi-gcc's short enums and no USE_TFLM_COMPRESSION (sizes checked by
    compiling probes against TFLM's headers with arm-none-eabi-g++)."""
    m4, mcu32 = get_target("cortex-m4"), get_target("mcu32")
    assert (m4.sizeof("TfLiteTensor"), mcu32.sizeof("TfLiteTensor")) == (32, 40)
    assert m4.struct("TfLiteFullyConnectedParams") == (5, 1)
    assert m4.sizeof("TfLiteEvalTensor") == 12 and m4.sizeof("SubgraphAllocations") == 8
    assert m4.sizeof("concatenation.OpData") == 24 and mcu32.sizeof("concatenation.OpData") == 64
    assert not m4.compression and m4.pointer_bytes == 4
    assert "CompressionTensorData" not in m4.structs


def test_profiles_cores_and_libraries():
    for core, (dsp, mve, _, aliases) in CORTEX_M_CORES.items():
        for library in ("reference", "cmsis-nn"):
            name = core + ("+cmsis-nn" if library == "cmsis-nn" else "")
            t = get_target(name)
            assert (t.name, t.core, t.kernel_library, t.dsp, t.mve) == (name, core, library, dsp, mve)
            for alias in aliases:
                assert get_target(alias + name[len(core):]) is t
    assert [c for c, f in CORTEX_M_CORES.items() if not f[0]] == ["cortex-m0", "cortex-m3"]
    assert [c for c, f in CORTEX_M_CORES.items() if f[1]] == ["cortex-m55"]
    assert get_target("cortex-m85+cmsis-nn").name == "cortex-m55+cmsis-nn"
    assert get_target("cortex-m0plus").name == "cortex-m0"


def test_cmsis_nn_profiles_carry_the_cmsis_nn_structs():
    for name, (size, align, _) in CMSIS_NN_STRUCTS.items():
        assert get_target("cortex-m7+cmsis-nn").struct(name) == (size, align)
        assert name not in get_target("cortex-m7").structs


def test_a_struct_missing_from_a_table_is_an_internal_error():
    with pytest.raises(MissingStructError, match="internal error.*cmsis_nn.nothing.OpData.*cmsis_nn_structs"):
        get_target("cortex-m4+cmsis-nn").sizeof("cmsis_nn.nothing.OpData")
    # not a KeyError: the interpreter would turn that into a kernel failure
    assert not issubclass(MissingStructError, KeyError)


def test_default_target_is_cortex_m4_with_cmsis_nn():
    it = MicroInterpreter(f"{DATA}/hello_world_int8.tflite", arena_size=4096)
    assert it.target.name == "cortex-m4+cmsis-nn"
    from micro_runtime import Interpreter
    assert Interpreter.from_file(f"{DATA}/hello_world_int8.tflite")._interpreter.target.name == "host64"


def test_cortex_m_builds_call_newlibs_expf():
    """TFLM's float kernels call std::exp: newlib's fdlibm expf on Cortex-M, glibc's on
    the host (the float LSTM of tflm_examples/trained_lstm.tflite differs otherwise)."""
    from kernels.internal import float_math, libm_float, newlib_float
    assert float_math.c_expf(get_target("cortex-m3")) is newlib_float.expf
    assert float_math.c_expf(get_target("host64")) is libm_float.expf
    x = np.linspace(-20, 20, 20001, dtype=np.float32)
    assert (newlib_float.expf(x) != libm_float.expf(x)).any()


def test_route_crosscheck_is_recorded_for_real_m_profile_cores():
    """The A15 user-mode route against system mode on QEMU's M-profile boards
    (tests/data/reference/cortexm_route_crosscheck.json): every build checked is a
    recorded one, each route saw every runnable model, and no figure differed."""
    import json
    path = f"{DATA}/reference/cortexm_route_crosscheck.json"
    data = json.load(open(path))
    assert "crosscheck.py" in data["about"]
    recorded = {p for _, p in FIGURES}
    boards = set()
    for build, routes in data["builds"].items():
        assert build in recorded
        runnable = sum(1 for (m, p), e in FIGURES.items() if p == build and "status" not in e)
        assert "qemu-arm -cpu cortex-a15" in routes
        for route, result in routes.items():
            if not route.startswith("qemu"):
                continue
            if route.startswith("qemu-system-arm"):
                boards.add(route.split()[-1])
            assert result["models_checked"] == runnable, (build, route)
            assert result["models_same"] == runnable and not result["differences"], (build, route)
    assert {"mps2-an385", "mps2-an386", "mps2-an500", "mps2-an505"} <= boards
