"""Flash and arena of TFLM-compressed models against their uncompressed versions.

    python benchmarks/compression_sizes.py                    # markdown table (4-bit LUT)
    python benchmarks/compression_sizes.py --bits 2           # another index width
    python benchmarks/compression_sizes.py --write-test-data  # (re)write the compressed
                                                              # models under tests/data

Every weight tensor (filters of CONV_2D, DEPTHWISE_CONV_2D, FULLY_CONNECTED) is first
clustered to 2^bits values per channel (``micro_runtime.tools.compress.cluster``; a
trained, clustered model would skip this), giving the "clustered" model — the fair
uncompressed baseline. Then the weights get LUT compression and the per-channel biases a
1-bit LUT (one value per channel):

* "DECODE": TFLM's own compression tool (the tflite-micro package) when it can be
  imported, else ``micro_runtime.tools.compress`` (same form): DECODE operators decode
  each weight into the arena right before its consumer;
* "metadata": the COMPRESSION_METADATA form (``micro_runtime.tools.compress``), read by
  USE_TFLM_COMPRESSION builds: kernels decompress into scratch buffers.

Figures: model bytes (flash), and the minimum arena from ``micro-runtime size`` on mcu32
and host64 (identical to the tflite-micro package on host64: tests/test_compression.py).
"""
import argparse
import os
import sys
import warnings

sys.path.insert(0, os.path.dirname(os.path.dirname(os.path.abspath(__file__))))

from micro_runtime.model import load_model  # noqa: E402
from micro_runtime.tools.compress import TensorCompression, cluster_tensor, compress  # noqa: E402
from micro_runtime.tools.sizing import measure_arena  # noqa: E402

DATA = os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "tests", "data")
MODELS = ["hello_world_int8", "kws_ref_model", "person_detect", "micro_speech_quantized"]
WEIGHT_OPS = ("CONV_2D", "DEPTHWISE_CONV_2D", "FULLY_CONNECTED")
#: the compressed models kept under tests/data: (name, source, bit width schedule, form)
TEST_DATA = [("hello_world_int8_lut", "hello_world_int8", (4, 2, 3), "tflm"),
             ("hello_world_int8_lut_metadata", "hello_world_int8", (4, 2, 3), "metadata"),
             ("kws_ref_model_lut", "kws_ref_model", (2, 3, 4, 5, 6, 7), "tflm"),
             ("kws_ref_model_lut_metadata", "kws_ref_model", (7, 6, 5, 4, 3, 2), "metadata")]


def weight_tensors(model):
    """(filter tensor, bias tensor or None) of every weighted operator, in order."""
    out = []
    for op in model.main.operators:
        if op.name in WEIGHT_OPS:
            bias = op.inputs[2] if len(op.inputs) > 2 and op.inputs[2] >= 0 else None
            if model.main.tensors[op.inputs[1]].data is not None:
                out.append((op.inputs[1], bias))
    return out


def clustered_and_specs(raw: bytes, bits, biases: bool = False):
    """The clustered model and the LUT specs of its weights (``bits``: one width, or a
    schedule cycled over the layers) and, with ``biases``, of its per-channel biases (a
    1-bit LUT per channel: no smaller, but it exercises per-channel tables)."""
    model = load_model(raw)
    schedule = bits if isinstance(bits, (tuple, list)) else (bits,)
    specs, seen = [], set()
    for k, (w, b) in enumerate(weight_tensors(model)):
        if w in seen:
            continue
        seen.add(w)
        width = schedule[k % len(schedule)]
        raw = cluster_tensor(raw, w, 1 << width)
        specs.append(TensorCompression(w, "lut", width))
        bq = model.main.tensors[b].quantization if b is not None else None
        if (biases and b is not None and b not in seen and bq is not None and bq.scales.size > 1
                and bq.quantized_dimension in (0, len(model.main.tensors[b].shape) - 1)
                and model.main.tensors[b].data is not None):
            seen.add(b)
            specs.append(TensorCompression(b, "lut", 1))
    return raw, specs


def tflm_tool_compress(raw: bytes, specs, model) -> bytes:
    """DECODE-form compression by TFLM's own tool (the tflite-micro package)."""
    import importlib
    tool = importlib.import_module("tflite_micro.tensorflow.lite.micro.compression.compress")
    from tflite_micro.tensorflow.lite.micro.compression import spec as tspec
    out = []
    for s in specs:
        q = model.main.tensors[s.tensor].quantization
        mode = (tspec.PerChannel(int(q.quantized_dimension)) if q is not None and q.scales.size > 1
                else tspec.PerTensor())
        out.append(tspec.Tensor(0, s.tensor, [tspec.LookUpTableCompression(s.bit_width, mode)]))
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        stderr = sys.stderr
        sys.stderr = open(os.devnull, "w")   # the tool warns about wider-than-needed indices
        try:
            return bytes(tool.compress(raw, out))
        finally:
            sys.stderr.close()
            sys.stderr = stderr


def decode_form(raw: bytes, specs) -> bytes:
    try:
        return tflm_tool_compress(raw, specs, load_model(raw))
    except ImportError:
        return compress(raw, specs, "decode")


def variants(name: str, bits):
    raw = open(os.path.join(DATA, name + ".tflite"), "rb").read()
    clustered, specs = clustered_and_specs(raw, bits)
    return [("original", raw), (f"clustered ({len(specs)} tensors)", clustered),
            ("DECODE", decode_form(clustered, specs)),
            ("metadata", compress(clustered, specs, "metadata"))]


def write_test_data():
    """The compressed models of TEST_DATA, and the tflite-micro package's figures for
    them in tests/data/reference/tflm_figures.json (as for the other zoo models)."""
    import hashlib
    import json
    import numpy as np
    from tests.oracle import Oracle
    reference_path = os.path.join(DATA, "reference", "tflm_figures.json")
    reference = json.load(open(reference_path))
    oracle = Oracle()
    for out_name, source, schedule, form in TEST_DATA:
        raw = open(os.path.join(DATA, source + ".tflite"), "rb").read()
        clustered, specs = clustered_and_specs(raw, schedule, biases=True)
        data = (tflm_tool_compress(clustered, specs, load_model(clustered)) if form == "tflm"
                else compress(clustered, specs, "metadata"))
        with open(os.path.join(DATA, out_name + ".tflite"), "wb") as f:
            f.write(data)
        model = load_model(data)
        zeros = [np.zeros(model.main.tensors[t].shape, model.main.tensors[t].dtype)
                 for t in model.main.inputs]
        minimum = oracle.min_arena(data, zeros)
        result = oracle.run(data, zeros, arena_size=minimum)
        reference[out_name + ".tflite"] = {
            "min_arena_bytes": minimum,
            "inputs": [{"dtype": str(x.dtype), "shape": list(x.shape)} for x in zeros],
            "recording_report": result.lines,
            "sha256": hashlib.sha256(data).hexdigest()}
        print(f"wrote tests/data/{out_name}.tflite ({len(data)} bytes, {len(specs)} tensors; "
              f"TFLM's minimum arena {minimum})")
    oracle.close()
    with open(reference_path, "w") as f:
        json.dump(dict(sorted(reference.items())), f, indent=1)
        f.write("\n")


def main():
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--bits", type=int, default=4, help="LUT index width of the weights")
    parser.add_argument("--write-test-data", action="store_true")
    args = parser.parse_args()
    if args.write_test_data:
        write_test_data()
        return
    print(f"LUT weights at {args.bits} bits; arena = minimum arena (bytes)\n")
    print("| model | version | model bytes | vs clustered | arena mcu32 | arena host64 |")
    print("|---|---|---:|---:|---:|---:|")
    for name in MODELS:
        rows = variants(name, args.bits)
        base = len(rows[1][1])
        for label, data in rows:
            mcu = measure_arena(data, "mcu32").min_arena_bytes
            host = measure_arena(data, "host64").min_arena_bytes
            print(f"| {name} | {label} | {len(data)} | {100.0 * len(data) / base:.0f}% | {mcu} | {host} |")


if __name__ == "__main__":
    main()
