"""The micro-runtime command: size / audit / plan / run / optimize, JSON keys, errors."""
import json
import os
import re
import subprocess
import sys
import xml.etree.ElementTree as ET

import numpy as np
import pytest

from micro_runtime.tools.cli import SIZE_KEYS, main
from micro_runtime.tools.model_writer import ModelBuilder
from tests.helpers import DATA, custom_op_model, model_bytes, model_path
from tests.test_zoo import REFERENCE, REFERENCE32, ZOO


def run(capsys, *argv):
    code = main(list(argv))
    out, err = capsys.readouterr()
    return code, out, err


@pytest.mark.parametrize("name", ZOO)
def test_size_host64_json_equals_tflm_minimum(capsys, name):
    code, out, _ = run(capsys, "size", model_path(name), "--target", "host64", "--json")
    assert code == 0
    data = json.loads(out)
    assert set(SIZE_KEYS) <= set(data)
    assert data["target"] == "host64"
    assert data["min_arena_bytes"] == REFERENCE[name + ".tflite"]["min_arena_bytes"]
    assert data["min_arena_bytes"] >= data["tflm_reported_total_bytes"]


def test_size_defaults_to_cortex_m4_with_cmsis_nn(capsys):
    """The default target is the build most TFLM boards flash; its figure is the one TFLM
    built for cortex-m4 with CMSIS-NN prints (tests/data/reference/tflm_figures_cortexm.json)."""
    cortexm = json.load(open(os.path.join(DATA, "reference", "tflm_figures_cortexm.json")))["models"]
    code, out, _ = run(capsys, "size", model_path("person_detect"), "--json")
    data = json.loads(out)
    assert data["target"] == "cortex-m4+cmsis-nn"
    assert data["min_arena_bytes"] == cortexm["person_detect.tflite"]["cortex-m4+cmsis-nn"]["min_arena_bytes"]
    code, out, _ = run(capsys, "size", "bundled:person_detect")
    assert code == 0 and "cortex-m4+cmsis-nn" in out and "82420" in out


def test_size_mcu32_when_asked(capsys):
    code, out, _ = run(capsys, "size", model_path("person_detect"), "--target", "mcu32", "--json")
    data = json.loads(out)
    assert data["target"] == "mcu32"
    assert data["min_arena_bytes"] == REFERENCE32["person_detect.tflite"]["bits32"]["min_arena_bytes"]


def test_core_alias_is_reported_under_its_profile_name(capsys):
    code, out, _ = run(capsys, "size", model_path("hello_world_int8"), "--target", "cortex-m0plus+cmsis-nn",
                       "--json")
    assert code == 0 and json.loads(out)["target"] == "cortex-m0+cmsis-nn"
    code, _, err = run(capsys, "size", model_path("hello_world_int8"), "--target", "cortex-m99")
    assert code == 1 and "unknown target 'cortex-m99'" in err and "cortex-m4+cmsis-nn" in err


def test_size_shows_that_tflm_total_under_reports(capsys):
    code, out, _ = run(capsys, "size", model_path("ad01_int8"), "--target", "host64")
    assert "4632" in out and "3976" in out and "under-reports" in out


@pytest.mark.oracle
@pytest.mark.parametrize("name", ["person_detect", "keyword_scrambled_8bit", "ad01_int8"])
def test_audit_prints_tflm_lines_exactly(capsys, oracle, name):
    code, out, _ = run(capsys, "audit", model_path(name), "--target", "host64",
                       "--arena-size", str(REFERENCE[name + ".tflite"]["min_arena_bytes"]))
    assert code == 0
    theirs = oracle.run(model_bytes(name), arena_size=REFERENCE[name + ".tflite"]["min_arena_bytes"],
                        inputs=[])
    ours = [l for l in out.splitlines() if l.startswith("[RecordingMicroAllocator]")]
    assert theirs.ok and ours == theirs.lines
    assert "operator" in out and "head" in out and "tail" in out


def test_audit_json_per_operator(capsys):
    code, out, _ = run(capsys, "audit", model_path("hello_world_int8"), "--target", "host64", "--json")
    data = json.loads(out)
    assert data["target"] == "host64" and len(data["operators"]) == 3
    assert all(o["persistent_bytes"] >= 72 for o in data["operators"])
    assert data["tflm_report"][0].startswith("[RecordingMicroAllocator] Arena allocation total")


def test_plan_ascii_and_svg(capsys, tmp_path):
    svg = tmp_path / "plan.svg"
    code, out, _ = run(capsys, "plan", model_path("person_detect"), "--svg", str(svg))
    assert code == 0
    lines = out.splitlines()
    assert "head 55296 bytes" in lines[0] and "cortex-m4+cmsis-nn" in lines[0]
    assert any(re.match(r"^\s*\d+: [.0-9a-zA-Z*!]{80} \(\d+k\)$", l) for l in lines)
    root = ET.parse(svg).getroot()
    code, out, _ = run(capsys, "plan", model_path("person_detect"), "--json")
    buffers = json.loads(out)["buffers"]
    # one box per buffer, one legend swatch per producing operator type (docs/arena_terms.md)
    boxes = [g for g in root.iter() if g.get("class") == "buffer"]
    assert len(boxes) == len(buffers) and all(len([e for e in g if e.tag.endswith("rect")]) == 1 for g in boxes)
    legend = [e for e in root.iter() if e.get("class") == "legend"]
    swatches = [e for g in legend for e in g.iter() if e.tag.endswith("rect")]
    kinds = {b["producer"].split(" ", 1)[1] if b["producer"].startswith("#") else b["producer"]
             for b in buffers if b["kind"] == "tensor"} | {"scratch" for b in buffers if b["kind"] == "scratch"}
    assert len(swatches) == len(kinds) + 1          # + "live at the head peak"


def test_run_with_npy_files(capsys, tmp_path):
    x = np.array([[1.5]], np.float32)
    np.save(tmp_path / "x.npy", x)
    code, out, _ = run(capsys, "run", model_path("hello_world_float"), "--input", str(tmp_path / "x.npy"),
                       "--output", str(tmp_path / "y.npy"), "--json")
    assert code == 0
    y = np.load(tmp_path / "y.npy")
    assert y.shape == (1, 1) and abs(float(y[0, 0]) - np.sin(1.5)) < 0.1
    assert json.loads(out)["target"] == "cortex-m4+cmsis-nn"


def test_errors_are_one_line_and_nonzero(capsys, tmp_path):
    code, out, err = run(capsys, "size", str(tmp_path / "missing.tflite"))
    assert code == 1 and err.count("\n") == 1 and "not found" in err
    bad = tmp_path / "bad.tflite"
    bad.write_bytes(b"this is not a model at all")
    code, out, err = run(capsys, "audit", str(bad))
    assert code == 1 and "not a .tflite" in err and err.count("\n") == 1
    b = ModelBuilder()
    g = b.subgraph()
    t0 = g.add_tensor("a", (2,), "FLOAT32")
    t1 = g.add_tensor("b", (2,), "FLOAT32")
    t2 = g.add_tensor("c", (2,), "FLOAT32")
    g.add_operator("FancyOp", [t0], [t1], custom_options=b"")
    g.add_operator("OtherOp", [t1], [t2], custom_options=b"")
    g.inputs, g.outputs = [t0], [t2]
    unsupported = tmp_path / "custom.tflite"
    unsupported.write_bytes(b.build())
    code, out, err = run(capsys, "size", str(unsupported))
    assert code == 1 and "FancyOp" in err and "OtherOp" in err and err.count("\n") == 1
    code, out, err = run(capsys, "run", model_path("hello_world_float"), "--arena-size", "500",
                         "--input", str(tmp_path / "none.npy"))
    assert code == 1 and "needs at least" in err and err.count("\n") == 1


def test_module_entry_point_runs():
    proc = subprocess.run([sys.executable, "-m", "micro_runtime", "size", model_path("hello_world_int8"),
                           "--json"], capture_output=True, text=True, timeout=120)
    assert proc.returncode == 0 and json.loads(proc.stdout)["target"] == "cortex-m4+cmsis-nn"


def test_optimize_writes_a_smaller_plan(capsys, tmp_path):
    out_path = tmp_path / "vww_opt.tflite"
    code, out, _ = run(capsys, "optimize", model_path("vww_96_int8"), "--target", "host64",
                       "-o", str(out_path), "--json")
    data = json.loads(out)
    assert code == 0 and out_path.exists()
    assert data["optimized_head_bytes"] == 55296 and data["original_head_bytes"] == 73728


def test_ops_lists_every_registered_kernel(capsys):
    import kernels
    from kernels.base import CUSTOM_KERNELS
    code, out, _ = run(capsys, "ops", "--json")
    data = json.loads(out)
    assert code == 0
    assert data["builtin"] == sorted(kernels.BUILTIN_KERNELS)
    assert data["custom"] == sorted(CUSTOM_KERNELS)
    assert "CONV_2D" in data["builtin"] and "SignalRfft" in data["custom"]


def test_ops_lists_the_types_of_every_op(capsys):
    """Each op with its declared types (the facts tests/test_op_types.py checks against
    TFLM), in the JSON and in the text."""
    import kernels
    from kernels.base import CUSTOM_KERNELS
    code, out, _ = run(capsys, "ops", "--target", "cortex-m4", "--json")
    data = json.loads(out)
    registry = {**kernels.BUILTIN_KERNELS, **CUSTOM_KERNELS}
    types = {o["op"]: o["types"] for o in data["operators"]}
    assert set(types) == set(registry)
    assert all(types[op] == list(k.supported_types) for op, k in registry.items())
    assert "int16 x int8 (bias int32 or int64)" in types["FULLY_CONNECTED"]
    assert types["QUANTIZE"][0] == "float32->int8" and types["CALL_ONCE"] == []
    code, out, _ = run(capsys, "ops", "--target", "cortex-m4")
    lines = {line.split()[0]: line for line in out.splitlines() if line.startswith("  ")}
    assert code == 0 and len(lines) == len(registry)
    assert lines["ADD"].split(None, 1)[1] == "float32, int8, int16, int32"
    assert lines["EQUAL"].split(None, 1)[1] == "float32, int8, int32, int64, bool -> bool"
    assert lines["QUANTIZE"].split(None, 1)[1] == ("float32, int32 -> int8, int16; "
                                                  "int8 -> int8, int16, int32, uint8; "
                                                  "int16 -> int8, int16, int32; uint8 -> int8")
    assert lines["RESHAPE"].split(None, 1)[1] == "any"


def test_ops_says_which_kernel_library_runs_each_operator(capsys):
    """On a +cmsis-nn target the operators CMSIS-NN overrides run its kernels (those
    registered with register_variant("cmsis-nn")), the rest TFLM's reference kernels."""
    from kernels.base import KERNEL_VARIANTS
    variants = set(KERNEL_VARIANTS.get("cmsis-nn", {}))
    code, out, _ = run(capsys, "ops", model_path("person_detect"), "--target", "cortex-m7+cmsis-nn", "--json")
    data = json.loads(out)
    assert code == 0 and data["target"] == "cortex-m7+cmsis-nn"
    library = {o["op"]: o["library"] for o in data["operators"]}
    assert library == {op: "cmsis-nn" if op in variants else "reference" for op in library}
    assert library["RESHAPE"] == "reference"
    code, out, _ = run(capsys, "ops", model_path("person_detect"), "--target", "cortex-m7")
    assert code == 0 and "cmsis-nn" not in out and out.count("reference") == 5
    code, out, _ = run(capsys, "ops", "--target", "cortex-m55+cmsis-nn", "--json")
    listed = {o["op"]: o["library"] for o in json.loads(out)["operators"]}
    assert {op for op, lib in listed.items() if lib == "cmsis-nn"} == variants


def test_ops_of_a_model_names_types_a_kernel_does_not_run(capsys, tmp_path):
    b = ModelBuilder()
    g = b.subgraph()
    x, y, z = (g.add_tensor(n, (2,), "INT64") for n in "xyz")
    g.add_operator("ADD", [x, y], [z])
    w = g.add_tensor("w", (2,), "FLOAT32")
    g.add_operator("CAST", [z], [w])
    q = g.add_tensor("q", (2,), "INT16", quantization=(0.1, 0))
    g.add_operator("QUANTIZE", [w], [q])
    fc_in = g.add_tensor("fc_in", (1, 2), "INT16", quantization=(0.1, 0))
    fc_w = g.add_tensor("fc_w", (2, 2), "INT8", data=np.ones((2, 2), np.int8), quantization=(0.1, 0))
    fc_out = g.add_tensor("fc_out", (1, 2), "INT16", quantization=(0.1, 0))
    g.add_operator("FULLY_CONNECTED", [fc_in, fc_w, -1], [fc_out])
    g.inputs, g.outputs = [x, y, fc_in], [q, fc_out]
    path = tmp_path / "mixed.tflite"
    path.write_bytes(b.build())
    code, out, _ = run(capsys, "ops", str(path), "--json")
    data = json.loads(out)
    assert code == 1 and data["missing"] == []
    assert data["unsupported_types"] == ["ADD int64", "CAST int64->float32"]
    rows = {o["op"]: (o["types"], o["supported"]) for o in data["operators"]}
    assert rows == {"ADD": ("int64", False), "CAST": ("int64->float32", False),
                    "QUANTIZE": ("float32->int16", True), "FULLY_CONNECTED": ("int16 x int8", True)}
    code, out, _ = run(capsys, "ops", str(path))
    assert code == 1
    assert "NOT SUPPORTED: ADD runs float32, int8, int16, int32" in out
    assert "types not supported: ADD int64, CAST int64->float32" in out


def test_ops_of_a_model_counts_uses_and_names_the_missing(capsys, tmp_path):
    code, out, _ = run(capsys, "ops", model_path("person_detect"), "--json")
    data = json.loads(out)
    assert code == 0 and data["missing"] == []
    counts = {o["op"]: o["count"] for o in data["operators"]}
    assert counts == {"DEPTHWISE_CONV_2D": 14, "CONV_2D": 14, "AVERAGE_POOL_2D": 1,
                      "RESHAPE": 1, "SOFTMAX": 1}
    assert {o["types"] for o in data["operators"]} == {"int8", "int8->int8"}   # SOFTMAX: pairs
    path = tmp_path / "custom.tflite"
    path.write_bytes(custom_op_model("NoSuchOp"))
    code, out, _ = run(capsys, "ops", str(path))
    assert code == 1 and "NoSuchOp" in out and "NOT SUPPORTED" in out
