"""``micro-runtime info``: I/O, flash and weight bytes, MACs (checked against a hand count
and against TFLite's converter arithmetic counts), op list, arena."""
import json
import os

import numpy as np
import pytest

from micro_runtime import load_model
from micro_runtime.tools.cli import main
from micro_runtime.tools.info import INFO_KEYS, model_info
from micro_runtime.tools.sizing import measure_arena
from tests.helpers import TensorDef, custom_op_model, model_path, single_op_model
from tests.test_zoo import ZOO


def info_json(capsys, *argv):
    code = main(["info", *map(str, argv), "--json"])
    out, err = capsys.readouterr()
    assert code == 0, err
    return json.loads(out)


def test_json_keys_and_figures_of_a_model(capsys):
    data = info_json(capsys, model_path("person_detect"), "--target", "host64")
    assert tuple(data) == INFO_KEYS
    assert data["model"] == "person_detect.tflite"
    assert data["model_bytes"] == os.path.getsize(model_path("person_detect"))
    assert 0 < data["weights_bytes"] < data["model_bytes"]
    assert [o["op"] for o in data["operators"]][-3:] == ["CONV_2D", "RESHAPE", "SOFTMAX"]
    assert all(set(o) >= {"op", "macs"} for o in data["operators"])
    assert data["macs"] == sum(o["macs"] for o in data["operators"])
    assert {t["op"]: t["count"] for t in data["op_types"]} == {
        "DEPTHWISE_CONV_2D": 14, "CONV_2D": 14, "AVERAGE_POOL_2D": 1, "RESHAPE": 1, "SOFTMAX": 1}
    size = measure_arena(model_path("person_detect"), "host64")
    assert data["arena"] == {"target": "host64", "min_arena_bytes": size.min_arena_bytes,
                             "plain_min_arena_bytes": size.plain_min_arena_bytes}
    (inp,) = data["inputs"]
    assert inp == {"name": "input", "shape": [1, 96, 96, 1], "dtype": "int8",
                   "scale": pytest.approx(0.0078431377), "zero_point": -1, "bytes": 9216}


def test_person_detect_macs_equal_a_hand_count(capsys):
    """MobileNet v1 (alpha 0.25, 96x96x1): the layer table written out by hand."""
    def dw(h, c, k=3):      # depthwise k x k, output h x h x c
        return h * h * c * k * k

    def pw(h, c_out, c_in):  # 1x1 convolution
        return h * h * c_out * c_in
    hand = [dw(48, 8),                                   # Conv2d_0: 3x3 stride 2 on 1 channel, x8
            dw(48, 8), pw(48, 16, 8), dw(24, 16), pw(24, 32, 16), dw(24, 32), pw(24, 32, 32),
            dw(12, 32), pw(12, 64, 32), dw(12, 64), pw(12, 64, 64), dw(6, 64), pw(6, 128, 64)]
    hand += [dw(6, 128), pw(6, 128, 128)] * 5
    hand += [dw(3, 128), pw(3, 256, 128), dw(3, 256), pw(3, 256, 256),
             0,                                          # AvgPool 3x3 -> 1x1x256
             pw(1, 2, 256), 0, 0]                        # logits 1x1 conv, reshape, softmax
    data = info_json(capsys, model_path("person_detect"))
    assert [o["macs"] for o in data["operators"]] == hand
    assert data["macs"] == sum(hand) == 7_157_888


def _model(op, inputs, outputs, **options):
    return load_model(single_op_model(op, inputs, outputs, **options))


def test_macs_reproduce_the_converter_arithmetic_counts():
    """TFLite's converter (tfl-get-arithmetic-count pass, its test file
    get-arithmetic-count.mlir) counts 2 x MACs + one add per output element for the
    bias on CONV_2D / DEPTHWISE_CONV_2D / FULLY_CONNECTED, 2 x MACs for TRANSPOSE_CONV
    without bias. Same shapes here, the converter's published numbers."""
    f32 = "FLOAT32"
    conv = _model("CONV_2D", [TensorDef((256, 32, 32, 3), f32),
                              TensorDef((16, 3, 3, 3), f32, data=np.zeros((16, 3, 3, 3), np.float32)),
                              TensorDef((16,), f32, data=np.zeros(16, np.float32))],
                  [TensorDef((256, 32, 32, 16), f32)], padding=0, stride_w=1, stride_h=1)
    dwc = _model("DEPTHWISE_CONV_2D", [TensorDef((1, 112, 112, 3), f32),
                                       TensorDef((1, 3, 3, 32), f32, data=np.zeros((1, 3, 3, 32), np.float32)),
                                       TensorDef((32,), f32, data=np.zeros(32, np.float32))],
                 [TensorDef((1, 112, 112, 32), f32)], padding=0, stride_w=1, stride_h=1, depth_multiplier=1)
    fc = _model("FULLY_CONNECTED", [TensorDef((1, 37), f32),
                                    TensorDef((40, 37), f32, data=np.zeros((40, 37), np.float32)),
                                    TensorDef((40,), f32, data=np.zeros(40, np.float32))],
                [TensorDef((1, 40), f32)])
    tconv = _model("TRANSPOSE_CONV", [TensorDef((4,), "INT32", data=np.array([1, 64, 84, 32], np.int32)),
                                      TensorDef((32, 4, 4, 128), f32,
                                                data=np.zeros((32, 4, 4, 128), np.float32)),
                                      TensorDef((1, 32, 42, 128), f32)],
                   [TensorDef((1, 64, 84, 32), f32)], padding=0, stride_w=2, stride_h=2)
    converter = {"conv": 230686720, "dwc": 7626752, "fc": 3000, "tconv": 176160768}
    bias_adds = {"conv": 256 * 32 * 32 * 16, "dwc": 112 * 112 * 32, "fc": 40, "tconv": 0}
    for name, model in (("conv", conv), ("dwc", dwc), ("fc", fc), ("tconv", tconv)):
        macs = model_info(model)["macs"]
        assert 2 * macs + bias_adds[name] == converter[name], name


@pytest.mark.oracle
@pytest.mark.parametrize("name", ZOO)
def test_zoo_io_matches_the_package_details(capsys, oracle, name):
    data = info_json(capsys, model_path(name), "--target", "host64")
    raw = open(model_path(name), "rb").read()
    theirs = oracle.run(raw, [], details=True)
    assert theirs.ok, theirs.error
    for kind in ("inputs", "outputs"):
        ours = data[kind]
        details = theirs.input_details if kind == "inputs" else theirs.output_details
        assert len(ours) == len(details)
        for t, d in zip(ours, details):
            assert t["shape"] == d["shape"].tolist()
            assert t["dtype"] == np.dtype(d["dtype"]).name
            q = d["quantization_parameters"]
            if t["scale"] is None:
                assert q["scales"].size == 0
            else:
                assert np.float32(t["scale"]) == q["scales"][0] and t["zero_point"] == q["zero_points"][0]
    assert data["macs"] is not None and data["weights_bytes"] <= data["model_bytes"]


def test_text_report_and_unmeasurable_arena(capsys, tmp_path):
    code = main(["info", model_path("kws_ref_model")])
    out = capsys.readouterr().out
    assert code == 0 and "MACs" in out and "input 0:" in out and "output 0:" in out
    assert "scale" in out and "zero point" in out and "arena on" in out
    # a model with an op we cannot run still gets its info, the arena is explained
    path = tmp_path / "custom.tflite"
    path.write_bytes(custom_op_model("NoSuchOp"))
    data = info_json(capsys, path)
    assert data["arena"] is None and "NoSuchOp" in data["arena_error"]
    assert data["operators"] == [{"subgraph": 0, "index": 0, "op": "NoSuchOp", "output": "y", "macs": 0,
                                  "weights_bytes": 0, "output_bytes": 16, "persistent_bytes": None,
                                  "scratch_bytes": None}]
