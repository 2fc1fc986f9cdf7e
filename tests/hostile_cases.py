"""Hostile cases by family, for benchmarks/fuzz_hostile.py (and tests/test_hostile.py).

A case is a model (or a path that is not a regular file, or a command line) and the
public surface it goes through. Families:

* ``offline``: OfflineMemoryAllocation plans with offsets drawn from extremes (negative,
  -1, 0, misaligned, overlapping live tensors, near 2^31, past the arena), wrong
  tensor counts in the header, truncated metadata;
* ``control``: WHILE loops that never end (alone, nested, with a run-time counter),
  loops of run-time length, IF / WHILE / CALL_ONCE with subgraph indices out of range
  or pointing at themselves;
* ``shapes``: shapes decided at run time: RESHAPE / FILL / BROADCAST_TO / SLICE / PAD /
  GATHER / TILE-like operands as model inputs with extreme values, and the API's
  ``resize_input_tensor`` with huge, zero, negative and wrong-rank shapes;
* ``quant``: one requantizing operator with input, weight and output scales from 1e-45
  (denormal) to 3.4e38, zero, negative, inf and nan, and zero points at the extremes;
* ``files``: a FIFO, /dev/zero, a directory, an empty file, a truncated or oversized
  .npy, a .npz, a pickled array, as the model, an input or labels of each command;
* ``flags``: every numeric option of every command with values from its range's edges
  and far outside (negative, 2^31, 2^63, 2^70, nan, inf);
* ``mutation``: a small zoo model with one byte-level or structure-aware mutation
  (tests/fuzzing.py), through any model surface;
* ``retype``: one tensor of a small model from a wide corpus (the single-op CMSIS-NN and
  ESP-NN cases, TFLM's example models, the small zoo) given another type (any of the
  schema's 0..19), another quantized dimension or another number of scales, run on
  seeded random inputs: a kernel must check what it reads as TFLM does, or refuse.
"""
from __future__ import annotations

import os
from dataclasses import dataclass, field
from typing import List, Optional

import numpy as np

from tests.helpers import DATA, TensorDef, single_op_model

FAMILIES = ("offline", "control", "shapes", "quant", "files", "flags", "mutation", "retype")
#: the zoo models the offline family plans (small ones: a case must finish in seconds)
SMALL_MODELS = ("hello_world_int8", "hello_world_float", "simple_add_model",
                "micro_speech_quantized", "keyword_scrambled_8bit", "trained_lstm_int8")
#: surfaces a model case goes through
MODEL_SURFACES = ("micro", "api", "cli_size", "cli_info", "cli_run", "cli_audit", "eval")
INT32_EDGES = (0, 1, -1, 2, 7, 255, 1 << 16, (1 << 31) - 1, -(1 << 31), 1 << 30, -2)
SCALES = (1e-45, 1e-40, 1e-38, 1e-30, 1e-20, 1e-10, 1e-5, 1e-3, 0.05, 1.0, 3.0, 1e3, 1e10,
          1e20, 1e30, 3.4e38, 0.0, -0.5, -1e-3, float("inf"), float("-inf"), float("nan"))


@dataclass
class Case:
    family: str
    description: str
    surface: str                        #: see run_case in benchmarks/fuzz_hostile.py
    model: Optional[bytes] = None       #: model bytes (written to a file for CLI surfaces)
    model_path: Optional[str] = None    #: a path to use as the model instead (files family)
    inputs: List[np.ndarray] = field(default_factory=list)
    argv: List[str] = field(default_factory=list)   #: a full command line (files / flags)
    resize: Optional[tuple] = None      #: (input index, shape) for the API resize surface
    compare: bool = True                #: outputs are compared with TFLM when both run


def _pick(rng, seq):
    return seq[int(rng.integers(len(seq)))]


def _zoo(name: str) -> bytes:
    with open(os.path.join(DATA, name + ".tflite"), "rb") as f:
        return f.read()


def _zero_inputs(model: bytes) -> List[np.ndarray]:
    from micro_runtime import load_model
    m = load_model(model)
    return [np.zeros(m.main.tensors[t].shape, m.main.tensors[t].dtype) for t in m.main.inputs]


# --------------------------------------------------------------------- offline
def offline_case(rng) -> Case:
    from micro_runtime import load_model
    from micro_runtime.model import OFFLINE_MEMORY_ALLOCATION
    from micro_runtime.tools.model_writer import ModelBuilder
    name = _pick(rng, SMALL_MODELS)
    model = load_model(_zoo(name))
    total = sum(len(sg.tensors) for sg in model.subgraphs)
    values = np.full(3 + total, -1, dtype=np.int64)
    values[0], values[1], values[2] = 1, 0, total
    how = int(rng.integers(6))
    chosen = rng.choice(total, size=min(total, int(rng.integers(1, 4))), replace=False)
    extremes = (-2, -16, -(1 << 31), 0, 16, 17, (1 << 31) - 16, (1 << 31) - 4096, (1 << 30),
                1 << 24, 1 << 20, 64, 3)
    for t in chosen:
        values[3 + int(t)] = int(_pick(rng, extremes)) if how < 4 else int(rng.integers(0, 4096)) * 16
    desc = f"{name}: offsets {[(int(t), int(values[3 + t])) for t in chosen]}"
    if how == 4:
        values[2] = total + int(_pick(rng, (-1, 1, 1000, -(total + 1))))
        desc += f", header says {int(values[2])} tensors"
    raw = values.astype("<i8").astype("<i4").tobytes()
    if how == 5:
        raw = raw[: int(rng.integers(0, len(raw)))]
        desc += f", metadata cut to {len(raw)} bytes"
    mb = ModelBuilder.from_model(model)
    mb.metadata = [(n, i) for n, i in mb.metadata if n != OFFLINE_MEMORY_ALLOCATION]
    mb.add_metadata(OFFLINE_MEMORY_ALLOCATION, raw)
    data = mb.build()
    return Case("offline", desc, _pick(rng, MODEL_SURFACES), data, inputs=_zero_inputs(data))


# --------------------------------------------------------------------- control
def control_case(rng) -> Case:
    from tests.fuzzing import loop_model
    how = int(rng.integers(5))
    if how == 0:
        model, desc = loop_model(None), "WHILE forever"
    elif how == 1:
        outer, inner = int(rng.integers(1, 100)), int(rng.integers(1, 100))
        model, desc = loop_model(outer, inner), f"nested WHILE {outer} x {inner}"
    elif how == 2:
        model, desc = loop_model(None, int(rng.integers(1, 50))), "WHILE forever around an inner loop"
    elif how == 3:
        limit = int(_pick(rng, (1, 10, 1000, 100000, (1 << 31) - 1)))
        model, desc = loop_model(limit), f"WHILE counting to {limit} from the input"
    else:
        model, desc = _bad_subgraph_indices(rng)
    inputs = _zero_inputs(model)
    if how == 3 and inputs:
        start = int(_pick(rng, (0, -(1 << 31), (1 << 31) - 1, 5)))
        inputs = [np.array(start, np.int32)]
        desc += f", counter from {start}"
    # loops that end (or refuse) are compared with TFLM; endless ones would stall it
    return Case("control", desc, _pick(rng, MODEL_SURFACES), model, inputs=inputs,
                compare=how in (1, 4))


def _bad_subgraph_indices(rng):
    from micro_runtime.tools.model_writer import ModelBuilder
    op = _pick(rng, ("WHILE", "IF", "CALL_ONCE"))
    idx = int(_pick(rng, (0, 1, 2, 3, 100, -1, (1 << 31) - 1)))
    b = ModelBuilder()
    m = b.subgraph("main")
    x = m.add_tensor("x", (), "INT32")
    y = m.add_tensor("y", (), "INT32")
    c = m.add_tensor("c", (), "BOOL")
    if op == "WHILE":
        m.add_operator("WHILE", [x], [y], cond_subgraph_index=idx, body_subgraph_index=int(_pick(rng, (1, 2, idx))))
        m.inputs = [x]
    elif op == "IF":
        m.add_operator("IF", [c, x], [y], then_subgraph_index=idx, else_subgraph_index=1)
        m.inputs = [c, x]
    else:
        m.add_operator("CALL_ONCE", [], [], init_subgraph_index=idx)
        m.add_operator("ADD", [x, x], [y], fused_activation_function=0)
        m.inputs = [x]
    m.outputs = [y]
    s = b.subgraph("one")
    a = s.add_tensor("a", (), "INT32")
    f = s.add_tensor("f", (), "BOOL")
    s.add_operator("EQUAL", [a, a], [f])
    s.inputs, s.outputs = [a], [f]
    s2 = b.subgraph("two")
    a2 = s2.add_tensor("a", (), "INT32")
    s2.inputs, s2.outputs = [a2], [a2]
    return b.build(), f"{op} with subgraph index {idx}"


# ---------------------------------------------------------------------- shapes
def shapes_case(rng) -> Case:
    how = int(rng.integers(7))
    big = (1 << 31) - 1
    values = (0, 1, -1, 2, 3, 7, 1 << 20, big, -(1 << 31), 1 << 30)
    if how == 0:      # RESHAPE to a shape given at run time
        model = single_op_model("RESHAPE", [TensorDef((2, 3), "FLOAT32"), TensorDef((2,), "INT32")],
                                [TensorDef((3, 2), "FLOAT32")])
        shape = np.array([_pick(rng, values), _pick(rng, values)], np.int32)
        inputs, desc = [np.ones((2, 3), np.float32), shape], f"RESHAPE to run-time {shape.tolist()}"
    elif how == 1:    # FILL with run-time dims
        model = single_op_model("FILL", [TensorDef((2,), "INT32"), TensorDef((), "FLOAT32")],
                                [TensorDef((2, 3), "FLOAT32")])
        dims = np.array([_pick(rng, values), _pick(rng, values)], np.int32)
        inputs, desc = [dims, np.array(1.5, np.float32)], f"FILL dims {dims.tolist()}"
    elif how == 2:    # BROADCAST_TO a run-time shape
        model = single_op_model("BROADCAST_TO", [TensorDef((1, 3), "FLOAT32"), TensorDef((2,), "INT32")],
                                [TensorDef((2, 3), "FLOAT32")])
        shape = np.array([_pick(rng, values), _pick(rng, values)], np.int32)
        inputs, desc = [np.ones((1, 3), np.float32), shape], f"BROADCAST_TO {shape.tolist()}"
    elif how == 3:    # SLICE with run-time begin / size
        model = single_op_model("SLICE", [TensorDef((4, 4), "FLOAT32"), TensorDef((2,), "INT32"),
                                          TensorDef((2,), "INT32")], [TensorDef((2, 2), "FLOAT32")])
        begin = np.array([_pick(rng, values), _pick(rng, values)], np.int32)
        size = np.array([_pick(rng, values), _pick(rng, values)], np.int32)
        inputs, desc = [np.ones((4, 4), np.float32), begin, size], f"SLICE begin {begin.tolist()} size {size.tolist()}"
    elif how == 4:    # PAD with run-time paddings
        model = single_op_model("PAD", [TensorDef((2, 2), "FLOAT32"), TensorDef((2, 2), "INT32")],
                                [TensorDef((4, 4), "FLOAT32")])
        pads = np.array([[_pick(rng, values) for _ in range(2)] for _ in range(2)], np.int32)
        inputs, desc = [np.ones((2, 2), np.float32), pads], f"PAD paddings {pads.tolist()}"
    elif how == 5:    # GATHER with run-time indices
        model = single_op_model("GATHER", [TensorDef((4, 3), "FLOAT32"), TensorDef((2,), "INT32")],
                                [TensorDef((2, 3), "FLOAT32")], axis=0, batch_dims=0)
        idx = np.array([_pick(rng, values), _pick(rng, values)], np.int32)
        inputs, desc = [np.ones((4, 3), np.float32), idx], f"GATHER indices {idx.tolist()}"
    else:             # the API's resize_input_tensor
        model = _zoo(_pick(rng, ("hello_world_float", "simple_add_model", "hello_world_int8")))
        rank = int(rng.integers(0, 5))
        shape = tuple(int(_pick(rng, values)) for _ in range(rank))
        return Case("shapes", f"resize_input_tensor(0, {shape})", "api_resize", model,
                    inputs=_zero_inputs(model), resize=(int(_pick(rng, (0, 0, 1, -1))), shape), compare=False)
    return Case("shapes", desc, _pick(rng, ("micro", "api", "cli_run", "eval")), model, inputs=inputs)


# ----------------------------------------------------------------------- quant
def quant_case(rng) -> Case:
    op = _pick(rng, ("FULLY_CONNECTED", "CONV_2D", "DEPTHWISE_CONV_2D", "ADD", "SUB", "MUL",
                     "QUANTIZE", "DEQUANTIZE", "LEAKY_RELU", "HARD_SWISH", "AVERAGE_POOL_2D",
                     "MEAN", "RELU", "LOGISTIC", "TANH", "SOFTMAX", "CONCATENATION", "PRELU",
                     "SQUARED_DIFFERENCE", "MAXIMUM", "BATCH_MATMUL", "ELU"))
    io = _pick(rng, ("INT8", "INT8", "INT16"))
    s = [float(np.float32(_pick(rng, SCALES))) for _ in range(4)]
    zp = [int(_pick(rng, (0, 0, 1, -128, 127, -1, 100))) if io == "INT8" else 0 for _ in range(3)]
    x_info = np.iinfo(np.int8 if io == "INT8" else np.int16)
    x = rng.integers(x_info.min, x_info.max + 1, (1, 4, 4, 2)).astype(x_info.dtype)
    desc = f"{op} {io} scales {s} zero points {zp}"
    qi, qo = (s[0], zp[0]), (s[2], zp[2])
    if op == "FULLY_CONNECTED":
        w = rng.integers(-127, 128, (3, 32)).astype(np.int8)
        bias_t = "INT32" if io == "INT8" else "INT64"
        model = single_op_model(op, [TensorDef((1, 32), io, qi),
                                     TensorDef((3, 32), "INT8", data=w, quant=(s[1], 0)),
                                     TensorDef((3,), bias_t, data=np.zeros(3, np.int32 if io == "INT8" else np.int64),
                                               quant=([float(np.float32(s[0]) * np.float32(s[1]))] if np.isfinite(s[0] * s[1]) else [s[3]], [0]))],
                                [TensorDef((1, 3), io, qo)])
        x = x.reshape(1, 32)
    elif op in ("CONV_2D", "DEPTHWISE_CONV_2D"):
        w = rng.integers(-127, 128, (2, 3, 3, 2) if op == "CONV_2D" else (1, 3, 3, 2)).astype(np.int8)
        opts = dict(padding=0, stride_w=1, stride_h=1)
        if op == "DEPTHWISE_CONV_2D":
            opts["depth_multiplier"] = 1
        bias_t = "INT32" if io == "INT8" else "INT64"
        model = single_op_model(op, [TensorDef(x.shape, io, qi),
                                     TensorDef(w.shape, "INT8", data=w, quant=([s[1], s[3]], [0, 0], 0 if op == "CONV_2D" else 3)),
                                     TensorDef((2,), bias_t, data=np.zeros(2, np.int32 if io == "INT8" else np.int64),
                                               quant=([1.0, 1.0], [0, 0]))],
                                [TensorDef(x.shape, io, qo)], **opts)
    elif op in ("ADD", "SUB", "MUL", "SQUARED_DIFFERENCE", "MAXIMUM", "PRELU"):
        model = single_op_model(op, [TensorDef(x.shape, io, qi), TensorDef(x.shape, io, (s[1], zp[1]))],
                                [TensorDef(x.shape, io, qo)])
        inputs = [x, rng.integers(x_info.min, x_info.max + 1, x.shape).astype(x_info.dtype)]
        return Case("quant", desc, _pick(rng, ("micro", "api", "eval", "cli_run")), model, inputs=inputs)
    elif op == "QUANTIZE":
        model = single_op_model(op, [TensorDef(x.shape, "FLOAT32")], [TensorDef(x.shape, io, qo)])
        x = rng.standard_normal(x.shape).astype(np.float32) * np.float32(_pick(rng, (1.0, 1e10, 1e-10)))
    elif op == "DEQUANTIZE":
        model = single_op_model(op, [TensorDef(x.shape, io, qi)], [TensorDef(x.shape, "FLOAT32")])
    elif op == "AVERAGE_POOL_2D":
        model = single_op_model(op, [TensorDef(x.shape, io, qi)], [TensorDef((1, 2, 2, 2), io, qo)],
                                padding=1, stride_w=2, stride_h=2, filter_width=2, filter_height=2)
    elif op == "MEAN":
        model = single_op_model(op, [TensorDef(x.shape, io, qi), TensorDef((2,), "INT32", data=np.array([1, 2], np.int32))],
                                [TensorDef((1, 1, 1, 2), io, qo)], keep_dims=True)
    elif op == "CONCATENATION":
        model = single_op_model(op, [TensorDef(x.shape, io, qi), TensorDef(x.shape, io, (s[1], zp[1]))],
                                [TensorDef((1, 4, 4, 4), io, qo)], axis=3)
        return Case("quant", desc, _pick(rng, ("micro", "api")), model, inputs=[x, x])
    elif op == "BATCH_MATMUL":
        model = single_op_model(op, [TensorDef((1, 4, 8), io, (qi[0], 0)), TensorDef((1, 8, 4), io, (s[1], 0))],
                                [TensorDef((1, 4, 4), io, qo)], adj_x=False, adj_y=False)
        return Case("quant", desc, _pick(rng, ("micro", "api")), model,
                    inputs=[x.reshape(1, 4, 8), x.reshape(1, 8, 4)])
    else:             # unary requantizing ops
        extra = {"alpha": float(np.float32(_pick(rng, (0.1, 1e-30, 1e30, -2.0))))} if op == "LEAKY_RELU" else {}
        if op == "SOFTMAX":
            extra = {"beta": float(np.float32(_pick(rng, (1.0, 1e-30, 1e30, 0.0, -1.0))))}
        model = single_op_model(op, [TensorDef(x.shape, io, qi)], [TensorDef(x.shape, io, qo)], **extra)
    return Case("quant", desc, _pick(rng, ("micro", "api", "eval", "cli_run")), model, inputs=[x])


# ----------------------------------------------------------------------- files
COMMANDS_READING = ("size", "audit", "plan", "run", "eval", "info", "drift", "bench", "ops")


def files_case(rng, workdir: str) -> Case:
    kind = _pick(rng, ("fifo", "dev_zero", "directory", "empty", "truncated_npy", "huge_header",
                       "npz", "pickled", "big_input", "garbage"))
    path = _special_path(kind, rng, workdir)
    model = os.path.join(DATA, "hello_world_float.tflite")
    role = _pick(rng, ("model", "input", "labels"))
    verb = _pick(rng, COMMANDS_READING if role == "model" else ("run", "eval", "drift") if role == "input"
                 else ("eval",))
    if role == "model":
        argv = [verb, path] + (["--inputs", _good_npy(workdir)] if verb == "eval" else [])
    elif verb == "run":
        argv = ["run", model, "--input", path]
    elif verb == "drift":
        argv = ["drift", model, "--input", path]
    elif role == "input":
        argv = ["eval", model, "--inputs", path]
    else:
        argv = ["eval", model, "--inputs", _good_npy(workdir), "--labels", path]
    if rng.integers(3) == 0 and role == "model":
        return Case("files", f"{kind} as the model of load_model / MicroInterpreter",
                    _pick(rng, ("micro", "api")), model_path=path, compare=False)
    return Case("files", f"{kind} as the {role} of {verb}", "cli", argv=argv, compare=False)


def _good_npy(workdir: str) -> str:
    path = os.path.join(workdir, "good.npy")
    if not os.path.exists(path):
        np.save(path, np.zeros((3, 1), np.float32))
    return path


def _special_path(kind: str, rng, workdir: str) -> str:
    from numpy.lib import format as npy_format
    if kind == "fifo":
        path = os.path.join(workdir, f"fifo{int(rng.integers(1 << 30))}")
        os.mkfifo(path)
        return path
    if kind == "dev_zero":
        return "/dev/zero"
    if kind == "directory":
        return workdir
    path = os.path.join(workdir, f"{kind}{int(rng.integers(1 << 30))}.npy")
    if kind == "empty":
        open(path, "wb").close()
    elif kind == "truncated_npy":
        np.save(path, np.zeros((100, 1), np.float32))
        with open(path, "r+b") as f:
            f.truncate(int(rng.integers(0, 400)))
    elif kind == "huge_header":
        with open(path, "wb") as f:
            npy_format.write_array_header_1_0(f, {"descr": _pick(rng, ("<f4", "<i8", "|b1", "<c16")),
                                                  "fortran_order": bool(rng.integers(2)),
                                                  "shape": (1 << int(rng.integers(30, 62)), 1)})
            f.write(b"\0" * 64)
    elif kind == "npz":
        np.savez(path[:-4], a=np.zeros(1))
        path = path[:-4] + ".npz"
    elif kind == "pickled":
        np.save(path, np.array([{"a": 1}], dtype=object), allow_pickle=True)
    elif kind == "big_input":
        np.save(path, np.zeros((int(rng.integers(1, 1 << 20)), 1), np.float32))
    else:
        with open(path, "wb") as f:
            f.write(os.urandom(int(rng.integers(0, 4096))))
    return path


# ----------------------------------------------------------------------- flags
NUMERIC_OPTIONS = {
    "size": ("--alt-decompression-memory", "--max-loop-iterations", "--jobs"),
    "audit": ("--arena-size", "--max-loop-iterations"),
    "plan": ("--width", "--arena-size", "--max-loop-iterations"),
    "run": ("--arena-size", "--max-loop-iterations"),
    "eval": ("--batch", "--output-index", "--max-loop-iterations"),
    "info": ("--max-loop-iterations",),
    "drift": ("--seeds", "--max-loop-iterations"),
    "bench": ("--seed", "--num_runs", "--warmup_runs", "--max-loop-iterations"),
    "optimize": ("--budget", "--time-limit", "--max-stages", "--refine-moves", "--stage-end"),
}
FLAG_VALUES = ("-1", "0", "1", "9", "10", "80", "10000", "10001", "1024", str((1 << 31) - 1), str(1 << 31),
               str(1 << 32), str(1 << 40), str((1 << 40) + 1), str(1 << 62), str(1 << 63), str(1 << 70),
               "-9223372036854775808", "nan", "inf", "-inf", "1e9", "0.5", "abc", "")


def flags_case(rng, workdir: str) -> Case:
    verb = _pick(rng, tuple(NUMERIC_OPTIONS))
    option = _pick(rng, NUMERIC_OPTIONS[verb])
    value = _pick(rng, FLAG_VALUES)
    model = os.path.join(DATA, _pick(rng, ("hello_world_float", "hello_world_int8")) + ".tflite")
    argv = [verb, model, option, value]
    if verb == "run":
        x = os.path.join(workdir, "x11.npy")
        if not os.path.exists(x):
            np.save(x, np.zeros((1, 1), np.float32))
        argv += ["--input", x, "--target", "host64"] if "float" in model else ["--target", "host64"]
    elif verb == "eval":
        argv += ["--inputs", _good_npy(workdir)]
    elif verb == "optimize":
        argv += ["-o", os.path.join(workdir, "o.tflite")] + (["--patches"] if rng.integers(2) else [])
    elif verb == "bench":
        argv += ["--num_runs", "2"] if option != "--num_runs" else []
    elif verb == "drift":
        argv += ["--seeds", "2"] if option != "--seeds" else []
    return Case("flags", " ".join(argv[2:]), "cli", argv=argv, compare=False)


def mutation_case(rng) -> Case:
    from tests.fuzzing import MUTATIONS, mutate
    name = _pick(rng, SMALL_MODELS)
    kind, data = mutate(_zoo(name), rng, _pick(rng, MUTATIONS))
    try:
        inputs = _zero_inputs(data)
    except Exception:  # noqa: BLE001 - an unreadable model: the surface reports it
        inputs = []
    return Case("mutation", f"{name}: {kind}", _pick(rng, MODEL_SURFACES), data, inputs=inputs)


def _retype_corpus() -> List[str]:
    """Paths of the retype family's models (each under 256 KiB), sorted."""
    import glob
    paths = [os.path.join(DATA, name + ".tflite") for name in SMALL_MODELS]
    for pattern in ("cmsis_nn_cases/*/*.tflite", "esp_nn_cases/*/*.tflite", "tflm_examples/**/*.tflite"):
        paths += glob.glob(os.path.join(DATA, pattern), recursive=True)
    return sorted(p for p in set(paths) if os.path.getsize(p) < 256 << 10)


_RETYPE_CORPUS: List[str] = []


def retype_case(rng) -> Case:
    from micro_runtime import load_model
    from micro_runtime.tools.model_writer import ModelBuilder
    from tests.conformance_check import random_inputs
    if not _RETYPE_CORPUS:
        _RETYPE_CORPUS.extend(_retype_corpus())
    path = _pick(rng, _RETYPE_CORPUS)
    with open(path, "rb") as f:
        raw = f.read()
    mb = ModelBuilder.from_model(load_model(raw))
    sg = _pick(rng, mb.subgraphs)
    name = os.path.relpath(path, DATA)
    if not sg.tensors:
        return Case("retype", f"{name}: no tensors", "micro", raw, inputs=_zero_inputs(raw))
    index = int(rng.integers(len(sg.tensors)))
    tensor = sg.tensors[index]
    how = int(rng.integers(4))
    if how <= 1 or tensor.quantization is None:
        tensor.type = int(rng.integers(0, 20))
        what = f"tensor {index} type {tensor.type}"
    elif how == 2:
        scales, zero_points, _ = tensor.quantization
        qdim = int(_pick(rng, (-1, len(tensor.shape), len(tensor.shape) + 3, 0, 1 << 20)))
        tensor.quantization = (scales, zero_points, qdim)
        what = f"tensor {index} quantized dimension {qdim}"
    else:
        scales, zero_points, qdim = tensor.quantization
        count = int(_pick(rng, (1, 2, max(len(scales) - 1, 1), len(scales) + 1, 3)))
        tensor.quantization = (np.resize(np.asarray(scales, np.float32), count),
                               np.resize(np.asarray(zero_points, np.int64), count), qdim)
        what = f"tensor {index} with {count} scales"
    seed = int(rng.integers(1 << 16))
    try:
        model = mb.build()
    except Exception:  # noqa: BLE001 - a change the writer cannot encode: the model unchanged
        model = raw
        what += " (not writable: unchanged)"
    try:
        inputs = random_inputs(load_model(model), seed)
    except Exception:  # noqa: BLE001 - the loader refuses the model: the surface reports it
        inputs = []
    return Case("retype", f"{name}: {what}", _pick(rng, ("micro", "api", "eval", "micro", "cli_run")),
                model, inputs=inputs)


def make_case(family: str, rng, workdir: str) -> Case:
    """One case of ``family`` (see :data:`FAMILIES`)."""
    if family == "offline":
        return offline_case(rng)
    if family == "control":
        return control_case(rng)
    if family == "shapes":
        return shapes_case(rng)
    if family == "quant":
        return quant_case(rng)
    if family == "files":
        return files_case(rng, workdir)
    if family == "flags":
        return flags_case(rng, workdir)
    if family == "mutation":
        return mutation_case(rng)
    if family == "retype":
        return retype_case(rng)
    raise ValueError(f"unknown family {family!r}")


__all__ = ["FAMILIES", "Case", "make_case"]
