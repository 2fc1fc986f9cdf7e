"""The ESP32-family and riscv32 profiles: every name, alias and spelling in every command,
what each profile is built from, the refusals, and the struct layout against the recorded
compile-time probes (tests/data/esp_layout_probes.json)."""
import json
import os

import numpy as np
import pytest

from micro_runtime import MicroInterpreter
from micro_runtime.errors import InputError, MicroRuntimeError
from micro_runtime.targets import (ESP_CHIPS, ESP_NN_COMMIT, ESP_TFLITE_MICRO_COMMIT, TARGETS,
                                   TFLM_COMMIT, get_target, targets_help)
from micro_runtime.tools.cli import main
from tests.helpers import DATA, model_path

#: every spelling a user may type -> the profile it names
SPELLINGS = {"riscv32": "riscv32", "RISCV32": "riscv32"}
for _chip, (_set, _cpu, _what, _idf) in ESP_CHIPS.items():
    for _name in {_chip, _idf}:
        SPELLINGS[_name] = _chip
        SPELLINGS[_name + "+esp-nn"] = _chip
        SPELLINGS[_name + "+ansi"] = _chip + "+ansi"
        SPELLINGS[_name.upper() + "+ESP-NN"] = _chip
        SPELLINGS[_name.upper() + "+ANSI"] = _chip + "+ansi"


def run(capsys, *argv):
    code = main([str(a) for a in argv])
    out, err = capsys.readouterr()
    return code, out, err


@pytest.mark.parametrize("spelling", sorted(SPELLINGS))
def test_every_spelling_names_its_profile(spelling):
    target = get_target(spelling)
    assert target.name == SPELLINGS[spelling]
    assert TARGETS[target.name] is target


@pytest.mark.parametrize("spelling", sorted({"esp32s3", "ESP32-P4+ESP-NN", "esp32c3+ansi", "esp32-h2",
                                             "esp32+esp-nn", "esp32s2+ANSI", "esp32c6", "riscv32"}))
def test_every_command_takes_the_profile(capsys, tmp_path, spelling):
    """size, audit, plan, run, eval, info and ops on one conv / depthwise / pooling /
    fully-connected / softmax model, each reporting the profile's name."""
    name = get_target(spelling).name
    assert name == SPELLINGS.get(spelling, name)
    model = model_path("kws_ref_model")
    x = np.zeros((3, 1, 49, 10, 1), np.int8)
    np.save(tmp_path / "x.npy", x)
    np.save(tmp_path / "one.npy", x[0])
    for argv in (["size", model], ["audit", model], ["plan", model],
                 ["run", model, "--input", tmp_path / "one.npy"],
                 ["eval", model, "--inputs", tmp_path / "x.npy"], ["info", model], ["ops", model],
                 ["ops"]):
        code, out, err = run(capsys, *argv, "--target", spelling, "--json")
        assert code == 0, (argv, err)
        assert json.loads(out).get("target", name) == name, argv
    code, out, _ = run(capsys, "ops", model, "--target", spelling)
    library = "esp-nn" if name != "riscv32" else "reference"
    assert f"on target {name}" in out and f"{library} " in out


def test_esp_builds_and_commits_are_named():
    text = targets_help()
    for commit in (ESP_TFLITE_MICRO_COMMIT, ESP_NN_COMMIT, TFLM_COMMIT):
        assert commit in text
    for chip in ESP_CHIPS:
        assert chip in text
    # the chips whose builds are the same for sizing say so, and share one struct table
    generic = [c for c, row in ESP_CHIPS.items() if row[0] == "opt"]
    assert sorted(generic) == ["esp32", "esp32-c3", "esp32-c6", "esp32-h2", "esp32-s2"]
    for chip in generic:
        t = get_target(chip)
        assert t.esp_nn == "opt" and "the same build as" in t.description
        assert t.structs is get_target("esp32-s3").structs
    assert get_target("esp32-s3").esp_nn == "esp32s3" and get_target("esp32-p4").esp_nn == "esp32p4"
    assert all(get_target(c + "+ansi").esp_nn == "ansi" for c in ESP_CHIPS)
    assert get_target("riscv32").kernel_library == "reference"


def test_help_names_the_profiles_and_commits(capsys):
    with pytest.raises(SystemExit):
        main(["--help"])
    out = capsys.readouterr().out
    assert ESP_TFLITE_MICRO_COMMIT in out and ESP_NN_COMMIT in out and "riscv32" in out
    assert "esp32-c3+esp-nn" in out and "+ansi" in out


def test_unknown_spellings_are_refused_clearly():
    for bad in ("esp32-c2", "esp32c3+cmsis-nn", "esp8266", "esp32-s3+esp-nn+ansi"):
        with pytest.raises(InputError, match="unknown target"):
            get_target(bad)
    code = main(["size", model_path("kws_ref_model"), "--target", "esp32-c5"])
    assert code == 1


def test_ilp32_layout_without_compression():
    """4-byte pointers, size_t and enums, 8-byte int64 / double alignment, no
    USE_TFLM_COMPRESSION: the Cortex-M table's no-compression sizes with the mcu32
    table's enum sizes."""
    esp, rv, m4, mcu32 = (get_target(n) for n in ("esp32-c3", "riscv32", "cortex-m4", "mcu32"))
    for t in (esp, rv):
        assert t.pointer_bytes == 4 and not t.compression
        assert t.struct("TfLiteTensor") == mcu32.struct("TfLiteTensor") == (40, 4)
        assert t.struct("TfLiteEvalTensor") == (12, 4)
        assert t.struct("RecordingMicroAllocator") == m4.struct("RecordingMicroAllocator") == (124, 4)
        assert t.struct("conv.OpDataConv") == (56, 4)
        assert t.struct("TfLiteConvParams") == mcu32.struct("TfLiteConvParams")
        assert "CompressionTensorData" not in t.structs
    assert esp.struct("esp_nn.softmax.NodeData") == (64, 8)
    assert esp.libm == rv.libm == "rv32" and esp.debug_checks and rv.debug_checks
    assert "esp_nn.conv.NodeData" not in rv.structs


PROBES = os.path.join(DATA, "esp_layout_probes.json")


@pytest.mark.skipif(not os.path.exists(PROBES), reason="no recorded layout probes")
def test_struct_tables_equal_the_compile_time_probes():
    """Every struct the profiles list, as riscv64-unknown-elf-g++ (rv32imc, ilp32) and
    xtensa-lx106-elf-g++ laid it out when compiled against esp-tflite-micro's sources, and
    riscv64-unknown-elf-g++ against TFLM 90b983c2's (benchmarks/esp_layout/probe.py)."""
    record = json.load(open(PROBES))
    assert {"riscv32 esp-tflite-micro", "xtensa esp-tflite-micro", "riscv32 tflite-micro"} <= set(record["runs"])
    for run_name, run_data in record["runs"].items():
        target = get_target("riscv32" if run_name.endswith("tflite-micro") and "esp" not in run_name
                            else "esp32-c3")
        probed = run_data["structs"]
        assert len(probed) >= 110, run_name
        wrong = {k: (v, target.struct(k)) for k, v in probed.items() if tuple(v) != target.struct(k)}
        assert not wrong, (run_name, wrong)
        missing = set(target.structs) - set(probed) - {"TfLiteIntArray"}
        assert not missing, (run_name, sorted(missing))
        offsets = run_data["offsets"]
        assert target.critical("TfLiteTensor.quantized") == (
            (offsets["TfLiteTensor.quantization.type"], 4), (offsets["TfLiteTensor.quantization.params"], 4))
        assert target.critical("TfLiteAffineQuantization") == ((offsets["TfLiteAffineQuantization.zero_point"], 4),)


def _conv_model(tmp_path, groups=1, filter_hw=(2, 2), stride=1, dilation=1, in_ch=4, out_ch=4,
                bias=True):
    from micro_runtime.tools.model_writer import ModelBuilder
    b = ModelBuilder()
    g = b.subgraph()
    x = g.add_tensor("x", (1, 6, 6, in_ch), "INT8", quantization=(0.5, 1))
    w = g.add_tensor("w", (out_ch, *filter_hw, in_ch // groups), "INT8",
                     data=np.ones((out_ch, *filter_hw, in_ch // groups), np.int8),
                     quantization=([0.25] * out_ch, [0] * out_ch, 0))
    use_bias = bias
    bias = g.add_tensor("b", (out_ch,), "INT32", data=np.zeros(out_ch, np.int32),
                        quantization=([0.125] * out_ch, [0] * out_ch, 0))
    oh = (6 - (filter_hw[0] - 1) * dilation - 1) // stride + 1
    y = g.add_tensor("y", (1, oh, oh, out_ch), "INT8", quantization=(0.5, -2))
    g.add_operator("CONV_2D", [x, w, bias if use_bias else -1], [y], padding=1, stride_w=stride, stride_h=stride,
                   dilation_w_factor=dilation, dilation_h_factor=dilation, fused_activation_function=0)
    g.inputs, g.outputs = [x], [y]
    path = tmp_path / "conv.tflite"
    path.write_bytes(b.build())
    return str(path)


@pytest.mark.parametrize("groups,dilation", [(2, 1), (1, 1), (1, 2)])
def test_int8_convolutions_the_esp_build_aborts_on_are_refused(tmp_path, groups, dilation):
    """esp-tflite-micro's int8 conv kernel takes MatchingDim(input depth, filter depth) and
    reads the bias with GetTensorData: with TFLM's debug checks on (ESP-IDF's default) a
    grouped convolution and one without a bias abort. Sizing still works (the build
    allocates them); riscv32's reference kernel runs them."""
    path = _conv_model(tmp_path, groups=groups, dilation=dilation, bias=groups > 1)
    for name in ("esp32-c3", "esp32-c3+ansi", "esp32-s3", "esp32-p4"):
        it = MicroInterpreter(path, arena_size=1 << 16, target=name)
        it.allocate_tensors()
        with pytest.raises(MicroRuntimeError, match="grouped" if groups > 1 else "without a bias"):
            it.invoke()
    it = MicroInterpreter(path, arena_size=1 << 16, target="riscv32")
    it.allocate_tensors()
    it.invoke()


def test_rv32_float_rules_canonical_nan_and_fdlibm_values():
    """RV32 builds: fdlibm's values (newlib's, as on Cortex-M) and RISC-V's canonical
    quiet NaN for every NaN an operation produces (ARM's soft-float keeps payloads)."""
    from kernels.internal.float_math import math_for
    rv, arm = math_for(get_target("esp32-c3")), math_for(get_target("cortex-m4"))
    payload = np.array([0x7fc01234, 0xffc00001], np.uint32).view(np.float32)
    for f in (rv.expf, rv.tanhf, rv.logf):
        assert (np.asarray(f(payload)).view(np.uint32) == 0x7fc00000).all()
    assert (rv.add(payload, np.float32(1)).view(np.uint32) == 0x7fc00000).all()
    assert (arm.add(payload, np.float32(1)).view(np.uint32) != 0x7fc00000).any()
    x = np.linspace(-20, 20, 4001, dtype=np.float32)
    assert rv.expf(x).tobytes() == arm.expf(x).tobytes()
    assert rv.logf(np.float32(-1)).view(np.uint32) == 0x7fc00000


def test_ops_says_which_code_runs_each_operator(capsys, tmp_path):
    code, out, _ = run(capsys, "ops", model_path("kws_ref_model"), "--target", "esp32-s3", "--json")
    runs = {o["op"]: o["runs"] for o in json.loads(out)["operators"]}
    assert code == 0
    assert runs["CONV_2D"].startswith("ESP-NN esp_nn_conv_s8: ESP-NN's esp32s3 routines (outputs modelled")
    assert runs["FULLY_CONNECTED"].startswith("ESP-NN esp_nn_fully_connected_s8")
    assert runs["RESHAPE"] is None                      # not an ESP-NN kernel
    code, out, _ = run(capsys, "ops", model_path("kws_ref_model"), "--target", "esp32c3", "--json")
    runs = {o["op"]: o["runs"] for o in json.loads(out)["operators"]}
    assert "maps it to esp_nn_avg_pool_s8_ansi" in runs["AVERAGE_POOL_2D"]
    assert runs["CONV_2D"] == "ESP-NN esp_nn_conv_s8: ESP-NN's generic optimised C"
    code, out, _ = run(capsys, "ops", model_path("hello_world_float"), "--target", "esp32-c3+ansi")
    assert "runs TFLM reference code: float32 input (ESP-NN's fully connected takes int8)" in out
    path = _conv_model(tmp_path, dilation=2)
    code, out, _ = run(capsys, "ops", path, "--target", "esp32-p4")
    assert "runs TFLM reference code: dilation 2x2" in out
    code, out, _ = run(capsys, "ops", "--target", "esp32-p4", "--json")
    assert json.loads(out)["esp_nn"] == "esp32p4"
