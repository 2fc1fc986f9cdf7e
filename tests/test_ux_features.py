"""Features a new user expects: size on several targets, ops --cpp, the head peak,
stand-in kernels for vendor custom ops, the per-layer table of info."""
from __future__ import annotations

import json
import os
import re
import shutil
import subprocess

import numpy as np
import pytest

import micro_runtime as mr
from micro_runtime.tools.cli import main
from tests.helpers import model_path
from tests.tflm_figures import load_figures
from tests.test_ux_rules import cli, one_line_error


def recorded(model: str, target: str) -> int:
    figures, _ = load_figures()
    return figures[(model + ".tflite", target)]["min_arena_bytes"]


# ------------------------------------------------------------ size on several targets
def test_size_one_column_per_target_equals_the_recorded_builds(capsys):
    targets = ["cortex-m4", "cortex-m4+cmsis-nn", "cortex-m3+cmsis-nn"]
    code, text, _ = cli(capsys, "size", model_path("trained_lstm_int8"), "--target", ",".join(targets))
    assert code == 0
    header, first = text.splitlines()[1:3]
    assert header.split() == targets
    assert [int(v) for v in first.split()[2:]] == [recorded("trained_lstm_int8", t) for t in targets]


# -------------------------------------------------------------------- ops --cpp
def tflm_resolver_header():
    """TFLM 90b983c2's micro_mutable_op_resolver.h from the local mirror, or None."""
    mirror = "/work/.mirror/tensorflow+tflite-micro/repo"
    if not os.path.isdir(mirror) or shutil.which("git") is None:
        return None
    proc = subprocess.run(["git", "--git-dir", mirror, "show",
                           "90b983c2:tensorflow/lite/micro/micro_mutable_op_resolver.h"],
                          capture_output=True, text=True)
    return proc.stdout if proc.returncode == 0 else None


def test_resolver_methods_are_tflms():
    from micro_runtime.tools.resolver_code import RESOLVER_METHODS
    import kernels
    from kernels.base import CUSTOM_KERNELS
    assert set(RESOLVER_METHODS) == set(kernels.BUILTIN_KERNELS) | set(CUSTOM_KERNELS)
    header = tflm_resolver_header()
    if header is None:
        pytest.skip("no TFLM source mirror to read micro_mutable_op_resolver.h from")
    for op, method in RESOLVER_METHODS.items():
        body = re.search(rf"TfLiteStatus {method}\((.*?)\n  \}}", header, re.S)
        assert body, method
        assert (f"BuiltinOperator_{op}," in body.group(1) or f'"{op}"' in body.group(1)), (op, method)


@pytest.mark.parametrize("target", ["cortex-m4+cmsis-nn", "cortex-m4"])
def test_ops_cpp_declares_the_models_operators(capsys, target):
    from micro_runtime.schema import op_name
    from micro_runtime.tools.resolver_code import RESOLVER_METHODS
    from kernels.base import KERNEL_VARIANTS
    model = mr.load_model(model_path("audio_preprocessor_int8"))
    names = list(dict.fromkeys(op_name(op.builtin_code, op.custom_code) for op in model.main.operators))
    code, text, _ = cli(capsys, "ops", model_path("audio_preprocessor_int8"), "--cpp", "--target", target)
    assert code == 0
    assert f"static tflite::MicroMutableOpResolver<{len(names)}> op_resolver;" in text
    calls = re.findall(r"op_resolver\.(Add\w+)\(\)\);\s+// (.*)", text)
    assert [c[0] for c in calls] == [RESOLVER_METHODS[n] for n in names]
    for (method, note), name in zip(calls, names):
        cmsis = target.endswith("cmsis-nn") and name in KERNEL_VARIANTS["cmsis-nn"]
        assert note.endswith("CMSIS-NN kernel" if cmsis else "reference kernel"), (name, note)
    kws = cli(capsys, "ops", model_path("kws_ref_model"), "--cpp")[1]
    assert "op_resolver.AddConv2D());" in kws and "// 5 uses, int8; CMSIS-NN kernel" in kws


def test_ops_cpp_compiles_against_tflm_headers(capsys, tmp_path):
    root = os.environ.get("MICRO_RUNTIME_TFLM_SOURCE", "/work/src/arm-tflm")
    header = os.path.join(root, "tensorflow/lite/micro/micro_mutable_op_resolver.h")
    if not os.path.isfile(header) or shutil.which("g++") is None:
        pytest.skip("no TFLM source tree (MICRO_RUNTIME_TFLM_SOURCE) or no g++")
    text = cli(capsys, "ops", model_path("audio_preprocessor_int8"), "--cpp")[1]
    (tmp_path / "ops.cc").write_text(text + "int main() { return RegisterOps() == kTfLiteOk ? 0 : 1; }\n")
    downloads = os.path.join(root, "tensorflow/lite/micro/tools/make/downloads")
    subprocess.run(["g++", "-std=c++17", "-fsyntax-only", "-DTF_LITE_STATIC_MEMORY", f"-I{root}",
                    f"-I{downloads}/flatbuffers/include", f"-I{downloads}/gemmlowp",
                    str(tmp_path / "ops.cc")], check=True)


# ------------------------------------------------------------------- head peak
def test_size_and_audit_name_the_operator_and_buffers_at_the_head_peak(capsys):
    data = json.loads(cli(capsys, "size", model_path("kws_ref_model"), "--json")[1])
    peak = data["head_peak"]
    assert peak["bytes"] == data["head_bytes"]
    assert peak["operator"] == 1 and peak["op"] == "DEPTHWISE_CONV_2D"
    # the buffers live there reach exactly the head and are the operator's input and output
    assert max(b["offset"] + b["size"] for b in peak["buffers"]) == peak["bytes"]
    model = mr.load_model(model_path("kws_ref_model")).main
    op = model.operators[1]
    names = {model.tensors[op.inputs[0]].name, model.tensors[op.outputs[0]].name}
    assert {b["name"] for b in peak["buffers"]} == names
    text = cli(capsys, "size", model_path("kws_ref_model"))[1]
    assert "head peak 16000 bytes at operator #1 DEPTHWISE_CONV_2D" in text
    audit = cli(capsys, "audit", model_path("kws_ref_model"))[1]
    assert "head peak 16000 bytes at operator #1 DEPTHWISE_CONV_2D" in audit


def test_head_peak_is_where_a_brute_force_scan_finds_it():
    from micro_runtime.tools.plan_view import head_peak, plan_entries
    for name in ("person_detect", "pretrainedResnet_quant", "ad01_int8", "keyword_scrambled_8bit"):
        it = mr.RecordingMicroInterpreter(model_path(name), arena_size=1 << 21)
        it.allocate_tensors()
        entries = plan_entries(it)
        best = (-1, -1, None)
        for t in range(0, max(e["last_used"] for e in entries) + 1):
            live = [e for e in entries if e["first_used"] <= t <= e["last_used"]]
            top = max((e["offset"] + e["size"] for e in live), default=0)
            filled = sum(e["size"] for e in live)
            if (top, filled) > best[:2]:
                best = (top, filled, t)
        peak = head_peak(entries)
        assert (peak["bytes"], peak["step"]) == (best[0], best[2])
        assert it.arena.head_bytes - 16 < peak["bytes"] <= it.arena.head_bytes


# ------------------------------------------------------------- stand-in kernels
def vendor_model(tmp_path):
    from micro_runtime.tools.model_writer import ModelBuilder
    b = ModelBuilder()
    g = b.subgraph()
    x = g.add_tensor("x", (1, 64), "FLOAT32")
    h = g.add_tensor("h", (1, 64), "FLOAT32")
    v = g.add_tensor("v", (1, 64), "FLOAT32")
    y = g.add_tensor("y", (1, 64), "FLOAT32")
    g.add_operator("RELU", [x], [h])
    g.add_operator("VendorScale", [h], [v])
    g.add_operator("TANH", [v], [y])
    g.inputs, g.outputs = [x], [y]
    path = tmp_path / "vendor.tflite"
    path.write_bytes(b.build())
    return path


def test_an_unknown_custom_op_says_what_is_unknown_and_suggests_the_option(capsys, tmp_path):
    path = vendor_model(tmp_path)
    for verb in ("size", "audit", "plan", "optimize"):
        extra = ["-o", tmp_path / "o.tflite"] if verb == "optimize" else []
        err = one_line_error(*cli(capsys, verb, path, *extra))
        assert "VendorScale" in err and "--custom-op VendorScale=persistent:BYTES,scratch:BYTES" in err


def test_stand_ins_with_a_real_kernels_allocations_give_tflms_figure(capsys):
    """The audio front end's signal ops, each replaced by a stand-in making the
    allocations the audit reports for the real kernel: TFLM's recorded minimum."""
    model = model_path("audio_preprocessor_int8")
    audit = json.loads(cli(capsys, "audit", model, "--json")[1])
    options = []
    for o in audit["operators"]:
        if o["op"].startswith("Signal"):
            options += ["--custom-op", f"{o['op']}=persistent:{o['persistent_bytes']},scratch:{o['scratch_bytes']}"]
    assert len(options) == 2 * 9
    data = json.loads(cli(capsys, "size", model, *options, "--json")[1])
    assert data["min_arena_bytes"] == recorded("audio_preprocessor_int8", "cortex-m4+cmsis-nn")


def test_stand_in_allocations_move_head_and_tail(capsys, tmp_path):
    path = vendor_model(tmp_path)
    base = json.loads(cli(capsys, "size", path, "--custom-op", "VendorScale=", "--json")[1])
    more = json.loads(cli(capsys, "size", path, "--custom-op", "VendorScale=persistent:100,scratch:4096",
                          "--json")[1])
    assert more["tail_bytes"] - base["tail_bytes"] == 112          # 100 bytes, 16-byte aligned
    assert more["head_bytes"] >= base["head_bytes"] + 4096 - 256
    audit = json.loads(cli(capsys, "audit", path, "--custom-op", "VendorScale=persistent:100,scratch:4096",
                           "--json")[1])
    (vendor,) = [o for o in audit["operators"] if o["op"] == "VendorScale"]
    assert vendor["persistent_bytes"] == 112 and vendor["scratch_bytes"] == 4096
    for verb in ("run", "eval", "drift", "bench"):
        extra = {"run": ["--input", "x.npy"], "eval": ["--inputs", "x.npy"]}.get(verb, [])
        err = one_line_error(*cli(capsys, verb, path, *extra, "--custom-op", "VendorScale=persistent:1"))
        assert "stand-in kernel computes no outputs" in err
    for bad in ("VendorScale", "VendorScale=persistent:-1", "VendorScale=heap:3", "CONV_2D=persistent:1",
                "VendorScale=persistent:1,persistent:2"):
        err = one_line_error(*cli(capsys, "size", path, "--custom-op", bad))
        assert "--custom-op" in err


# ------------------------------------------------------------ info per-layer table
def test_info_per_layer_table_matches_the_model_and_the_audit(capsys):
    model = model_path("kws_ref_model")
    info = json.loads(cli(capsys, "info", model, "--json")[1])
    audit = json.loads(cli(capsys, "audit", model, "--json")[1])
    graph = mr.load_model(model).main
    for o, a, op in zip(info["operators"], audit["operators"], graph.operators):
        assert o["persistent_bytes"] == a["options_bytes"] + a["persistent_bytes"]
        assert o["scratch_bytes"] == a["scratch_bytes"]
        assert o["weights_bytes"] == sum(graph.tensors[t].data.nbytes for t in op.inputs
                                         if t >= 0 and graph.tensors[t].data is not None)
        assert o["output_bytes"] == sum(int(np.prod(graph.tensors[t].shape)) * graph.tensors[t].dtype.itemsize
                                        for t in op.outputs)
    assert sum(o["weights_bytes"] for o in info["operators"]) == info["weights_bytes"]
    text = cli(capsys, "info", model)[1]
    assert re.search(r"^\s+0  CONV_2D\s+320,000\s+2,816\s+8,000\s+600\s+160\s", text, re.M)


# ------------------------------------------------------------------- plan --svg
def chain_model(blocks: int = 80) -> bytes:
    """A residual chain with 2 buffers per block (skips reach back 3 blocks): 161 buffers."""
    from micro_runtime.tools.model_writer import ModelBuilder
    b = ModelBuilder()
    g = b.subgraph()
    x = g.add_tensor("input", (1, 256), "FLOAT32")
    history, cur = [x], x
    for k in range(blocks):
        r = g.add_tensor(f"block_{k}/relu", (1, 256), "FLOAT32")
        g.add_operator("RELU" if k % 3 else "TANH", [cur], [r])
        a = g.add_tensor(f"block_{k}/add", (1, 256), "FLOAT32")
        g.add_operator("ADD", [r, history[-3] if len(history) >= 3 else history[0]], [a])
        history.append(a)
        cur = a
    g.inputs, g.outputs = [x], [cur]
    return b.build()


@pytest.mark.parametrize("name", ["person_detect", "chain"])
def test_plan_svg_is_bounded_and_marks_the_peak(capsys, tmp_path, name):
    import xml.etree.ElementTree as ET
    if name == "chain":
        path = tmp_path / "chain.tflite"
        path.write_bytes(chain_model())
    else:
        path = model_path(name)
    svg = tmp_path / "plan.svg"
    data = json.loads(cli(capsys, "plan", path, "--svg", svg, "--json")[1])
    buffers = data["buffers"]
    root = ET.parse(svg).getroot()
    ns = "{http://www.w3.org/2000/svg}"
    assert (int(root.get("width")), int(root.get("height"))) == (1200, 720)
    groups = [g for g in root.iter(f"{ns}g") if g.get("class") == "buffer"]
    assert len(groups) == len(buffers) and (name != "chain" or len(buffers) > 100)
    # every buffer: a hover title with the id of --json and of the text chart (from 0)
    for k, (g, b) in enumerate(zip(groups, buffers)):
        title = g.find(f"{ns}title").text
        assert title.startswith(f"buffer {k}: {b['name']} (produced by {b['producer']})")
        label = g.find(f"{ns}text")
        if label is not None:
            assert label.text.split()[0] == str(k)
    chart = cli(capsys, "plan", path)[1]
    assert re.search(rf"^{len(buffers) - 1} \(id={len(buffers) - 1}\)|^\* \(id={len(buffers) - 1}\)", chart, re.M)
    # the peak: brute force over the steps, the outlined buffers are those live there
    steps = range(max(b["last_used"] for b in buffers) + 1)
    tops = [max([b["offset"] + b["size"] for b in buffers if b["first_used"] <= t <= b["last_used"]] + [0])
            for t in steps]
    filled = [sum(b["size"] for b in buffers if b["first_used"] <= t <= b["last_used"]) for t in steps]
    peak_step = max(steps, key=lambda t: (tops[t], filled[t], -t))
    live = {k for k, b in enumerate(buffers) if b["first_used"] <= peak_step <= b["last_used"]}
    outlined = {k for k, g in enumerate(groups) if g.find(f"{ns}rect").get("stroke") == "#d62728"}
    assert outlined == live
    assert any(g.get("class") == "peak" for g in root.iter(f"{ns}g"))
    assert f"at step {peak_step}" in "".join(root.itertext())
    # one legend entry per producing operator type (plus inputs / scratch / the peak), not per buffer
    legend = [g for g in root.iter(f"{ns}g") if g.get("class") == "legend"][0]
    producers = {b["producer"].split(" ", 1)[1] for b in buffers if b["producer"].startswith("#")}
    assert len(legend.findall(f"{ns}text")) <= len(producers) + 4
