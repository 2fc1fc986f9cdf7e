"""Records ESP-NN's scratch-buffer sizes for tests/test_esp_nn_scratch.py.

Runs the harness binaries (harness.c built once per ESP-NN function set, see README.md:
``$ESP_NN_SCRATCH_BIN/harness_{ansi,opt,s3,p4}``) on

* every CONV_2D / DEPTHWISE_CONV_2D / SOFTMAX of the zoo models (tests/data/*.tflite and
  tests/data/tflm_examples/**), with the arguments esp-tflite-micro's kernels pass (TFLM's
  padding for the node's stride, dilation and padding mode);
* a seeded random sweep of shapes per function: small and mid-size shapes, shapes around
  the functions' branch thresholds, and dimensions past 16 bits and products past 2^31
  (the C narrows to uint16_t and wraps int arithmetic);

and writes tests/data/esp_nn_scratch_sizes.json: ``{"about": ..., "conv": [[args...,
ansi, opt, esp32s3, esp32p4], ...], "dw": [...], "softmax": [...]}``.

    python benchmarks/esp_nn_scratch/sweep.py [--count 700] [--out tests/data/esp_nn_scratch_sizes.json]
"""
from __future__ import annotations

import argparse
import glob
import json
import os
import subprocess
import sys
from typing import List

import numpy as np

ROOT = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
sys.path.insert(0, ROOT)

SETS = ("ansi", "opt", "s3", "p4")


def zoo_cases() -> dict:
    """Arguments of every conv / depthwise / softmax node of the zoo models."""
    from micro_runtime import load_model
    from micro_runtime.schema import op_name
    from kernels.internal.padding import compute_padding_height_width, padding_mode
    out = {"conv": [], "dw": [], "softmax": []}
    paths = sorted(glob.glob(os.path.join(ROOT, "tests/data/*.tflite"))
                   + glob.glob(os.path.join(ROOT, "tests/data/tflm_examples/**/*.tflite"), recursive=True))
    for path in paths:
        try:
            model = load_model(path)
        except Exception:                 # a model the loader refuses has no shapes to give
            continue
        for sg in model.subgraphs:
            for op in sg.operators:
                name = op_name(op.builtin_code, op.custom_code)
                shape = lambda i: list(sg.tensors[i].shape)   # noqa: E731
                if name in ("CONV_2D", "DEPTHWISE_CONV_2D"):
                    p = op.params
                    inp, flt, res = shape(op.inputs[0]), shape(op.inputs[1]), shape(op.outputs[0])
                    if len(inp) != 4 or len(flt) != 4 or len(res) != 4:
                        continue
                    pad, _, _ = compute_padding_height_width(
                        p.stride_h, p.stride_w, p.dilation_h_factor, p.dilation_w_factor,
                        inp[1], inp[2], flt[1], flt[2], padding_mode(p))
                    args = [inp[2], inp[1], inp[3], flt[2], flt[1], flt[3], res[2], res[1], res[3],
                            p.stride_w, p.stride_h, pad.width, pad.height]
                    if name == "CONV_2D":
                        out["conv"].append(args)
                    else:
                        out["dw"].append(args + [p.depth_multiplier])
                elif name == "SOFTMAX":
                    inp = shape(op.inputs[0])
                    if len(inp) >= 2:
                        out["softmax"].append([inp[1], inp[2] if len(inp) > 2 else 0])
    return {k: [list(map(int, a)) for a in v] for k, v in out.items()}


def random_cases(count: int, seed: int = 20261127) -> dict:
    """``count`` random argument lists per function, from several regimes."""
    rng = np.random.default_rng(seed)
    pick = lambda values: int(rng.choice(values))            # noqa: E731

    def dim(regime):
        if regime == 0:
            return int(rng.integers(1, 65))
        if regime == 1:
            return pick([1, 2, 3, 4, 7, 8, 9, 12, 15, 16, 17, 24, 31, 32, 33, 48, 64, 96, 128, 256])
        if regime == 2:
            return int(rng.integers(1, 1024))
        return pick([255, 4096, 32767, 32768, 65535, 65536, 65537, 70000, 100000])

    conv, dw, softmax = [], [], []
    for i in range(count):
        regime = i % 4 if i % 4 != 3 else (3 if rng.random() < 0.5 else 2)
        in_w, in_h, in_c = dim(regime), dim(regime), dim(regime)
        f_w = pick([1, 1, 1, 2, 3, 3, 3, 5, 7, 9]) if regime != 3 else dim(rng.integers(0, 4))
        f_h = pick([1, 1, 1, 2, 3, 3, 3, 5, 7, 9]) if regime != 3 else dim(rng.integers(0, 4))
        s_w, s_h = pick([1, 1, 1, 2, 2, 3]), pick([1, 1, 1, 2, 2, 3])
        p_w, p_h = pick([0, 0, 0, 1, 1, 2, 3]), pick([0, 0, 0, 1, 1, 2, 3])
        out_w, out_h, out_c = dim(regime), dim(regime), dim(regime)
        if regime != 3 and rng.random() < 0.7:       # consistent geometry (TFLM's output size)
            out_w = max(1, (in_w + 2 * p_w - f_w) // s_w + 1)
            out_h = max(1, (in_h + 2 * p_h - f_h) // s_h + 1)
        f_c = in_c if rng.random() < 0.8 else max(1, in_c // pick([1, 2, 3, 4]))
        conv.append([in_w, in_h, in_c, f_w, f_h, f_c, out_w, out_h, out_c, s_w, s_h, p_w, p_h])
        mult = pick([1, 1, 1, 1, 2, 3, 4, 8]) if regime != 3 else dim(rng.integers(0, 4))
        dw.append([in_w, in_h, in_c, f_w, f_h, in_c * mult, out_w, out_h, in_c * mult,
                   s_w, s_h, p_w, p_h, mult])
        softmax.append([dim(regime), dim(regime)])
    return {"conv": conv, "dw": dw, "softmax": softmax}


def run_harness(binary: str, kind: str, cases: List[list]) -> List[int]:
    text = "".join(f"{kind} {' '.join(map(str, a))}\n" for a in cases)
    proc = subprocess.run([binary], input=text, capture_output=True, text=True, check=True)
    values = proc.stdout.split()
    if len(values) != len(cases) or "bad" in values:
        raise RuntimeError(f"{binary}: {len(values)} results for {len(cases)} cases")
    return [int(v) for v in values]


def main(argv=None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--bin", default=os.environ.get("ESP_NN_SCRATCH_BIN", "/work/oracle/esp-nn-scratch"))
    ap.add_argument("--count", type=int, default=700)
    ap.add_argument("--about", required=True, help="text file: how the harnesses were built")
    ap.add_argument("--out", default=os.path.join(ROOT, "tests/data/esp_nn_scratch_sizes.json"))
    args = ap.parse_args(argv)
    zoo, rand = zoo_cases(), random_cases(args.count)
    record = {"about": open(args.about).read().strip(), "columns": {}}
    for kind in ("conv", "dw", "softmax"):
        cases = zoo[kind] + rand[kind]
        results = {s: run_harness(os.path.join(args.bin, f"harness_{s}"), kind, cases) for s in SETS}
        record[kind] = [a + [results[s][i] for s in SETS] for i, a in enumerate(cases)]
        record[f"{kind}_zoo_cases"] = len(zoo[kind])
    record["columns"] = {
        "conv": "in_w in_h in_c f_w f_h f_c out_w out_h out_c stride_w stride_h pad_w pad_h | ansi opt esp32s3 esp32p4",
        "dw": "in_w in_h in_c f_w f_h f_c out_w out_h out_c stride_w stride_h pad_w pad_h ch_mult | ansi opt esp32s3 esp32p4",
        "softmax": "width height | ansi opt esp32s3 esp32p4"}
    with open(args.out, "w") as f:
        json.dump(record, f, separators=(",", ":"))
        f.write("\n")
    print(f"wrote {args.out}: " + ", ".join(f"{k} {len(record[k])} ({record[k + '_zoo_cases']} from the zoo)"
                                          for k in ("conv", "dw", "softmax")))
    return 0


if __name__ == "__main__":
    sys.exit(main())
