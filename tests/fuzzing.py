"""Model mutation fuzzing: mutate real models, then load + allocate + invoke.

Used by tests/test_fuzz.py (a bounded run in CI) and benchmarks/fuzz_models.py (long
runs). A run may end in success or in a MicroRuntimeError subclass; anything else, or
a run longer than the time limit, is a finding.
"""
from __future__ import annotations

import struct
import time
from dataclasses import dataclass
from typing import Optional

import numpy as np

from micro_runtime import MicroInterpreter, MicroRuntimeError

BYTE_MUTATIONS = ("bit_flip", "truncate", "splice", "edit_offset", "huge_dim", "zero_run")
#: structure-aware mutations: the model is parsed, one field of its tensors, operators,
#: graph or quantization is changed, and the model is written again (issue 17)
STRUCTURED_MUTATIONS = ("dims", "zero_dim_huge", "types", "buffer_index", "operator_index",
                        "quantization", "options", "graph_io", "buffer_values")
MUTATIONS = BYTE_MUTATIONS + STRUCTURED_MUTATIONS
#: arena for fuzz runs: enough for every zoo model, small enough to bound memory
FUZZ_ARENA_BYTES = 512 * 1024
#: WHILE iterations a fuzz run's invoke allows (an invoke has no bound of its own, as TFLM)
FUZZ_LOOPS = 10000


def mutate(raw: bytes, rng: np.random.Generator, kind: Optional[str] = None) -> tuple:
    """One mutation of ``raw``; returns (kind, mutated bytes)."""
    kind = kind or MUTATIONS[int(rng.integers(len(MUTATIONS)))]
    if kind in STRUCTURED_MUTATIONS:
        return kind, mutate_structure(raw, rng, kind)
    data = bytearray(raw)
    n = len(data)
    if kind == "bit_flip":
        for _ in range(int(rng.integers(1, 9))):
            pos = int(rng.integers(n))
            data[pos] ^= 1 << int(rng.integers(8))
    elif kind == "truncate":
        data = data[: int(rng.integers(0, n))]
    elif kind == "splice":
        length = int(rng.integers(1, min(256, n)))
        src = int(rng.integers(0, n - length))
        dst = int(rng.integers(0, n - length))
        data[dst:dst + length] = raw[src:src + length]
    elif kind == "edit_offset":
        pos = int(rng.integers(0, max(1, n // 4))) * 4
        value = int(rng.choice([0, 1, 4, 0x7FFFFFFF, 0xFFFFFFFF, 0x80000000, n, n - 4,
                                int(rng.integers(0, 1 << 32))]))
        if pos + 4 <= n:
            struct.pack_into("<I", data, pos, value)
    elif kind == "huge_dim":
        # overwrite small int32 values (likely shape entries / indices) with extremes
        words = np.frombuffer(bytes(data[: n - n % 4]), dtype="<i4")
        candidates = np.nonzero((words > 0) & (words < 4096))[0]
        if candidates.size:
            for _ in range(int(rng.integers(1, 4))):
                w = int(candidates[int(rng.integers(candidates.size))])
                struct.pack_into("<i", data, 4 * w,
                                 int(rng.choice([-1, 0, 1 << 20, 1 << 30, 0x7FFFFFFF, -(1 << 31)])))
    elif kind == "zero_run":
        start = int(rng.integers(0, n))
        data[start:start + int(rng.integers(1, 64))] = b"\x00" * min(64, n - start)
    return kind, bytes(data)


_PARSED: dict = {}

#: dimension values the structured mutations draw from (int32 extremes, zero, huge)
_DIMS = (0, 1, 2, 3, 7, 64, 255, 1 << 16, 1 << 20, 1 << 30, 0x7FFFFFFF, -1, -(1 << 31))
#: float values for scales and float options
_FLOATS = (0.0, -0.0, 1e-45, 1e-38, 1e-10, 0.5, 1.0, 3.0, 1e10, 3.4e38, -1.0, float("inf"),
           float("-inf"), float("nan"))
#: integer values for zero points, indices and integer options
_INTS = (0, 1, -1, 2, 3, 7, 127, -128, 255, 32767, -32768, 1 << 20, 0x7FFFFFFF, -(1 << 31))


def _parsed(raw: bytes):
    """The model of ``raw``, parsed once per distinct model (cached)."""
    from micro_runtime import load_model
    key = hash(raw)
    if key not in _PARSED:
        _PARSED[key] = load_model(raw)
    return _PARSED[key]


def _pick(rng: np.random.Generator, seq):
    return seq[int(rng.integers(len(seq)))]


def mutate_structure(raw: bytes, rng: np.random.Generator, kind: str) -> bytes:
    """Parse ``raw``, change one structural field (``kind``, see STRUCTURED_MUTATIONS),
    write the model again. Values come from extremes, other tensors' values and random
    picks; a change the writer itself cannot encode falls back to the unmutated model."""
    from micro_runtime.tools.model_writer import ModelBuilder
    mb = ModelBuilder.from_model(_parsed(raw))
    sg = _pick(rng, mb.subgraphs)
    n_tensors = len(sg.tensors)
    tensor = _pick(rng, sg.tensors) if sg.tensors else None
    op = _pick(rng, sg.operators) if sg.operators else None
    if kind == "dims" and tensor is not None:
        shape = list(tensor.shape)
        how = int(rng.integers(5))
        if how == 0 and shape:                       # one dimension to an extreme
            shape[int(rng.integers(len(shape)))] = _pick(rng, _DIMS)
        elif how == 1:                               # rank change
            shape = shape[:-1] if shape and rng.integers(2) else shape + [_pick(rng, _DIMS[:6])]
        elif how == 2:                               # every dimension huge: the product overflows
            shape = [0x7FFFFFFF] * max(len(shape), 3)
        elif how == 3:                               # another tensor's shape
            shape = list(_pick(rng, sg.tensors).shape)
        else:
            shape = [int(v) for v in rng.permutation(shape)] if shape else [0]
        tensor.shape = tuple(shape)
    elif kind == "zero_dim_huge" and tensor is not None:
        # issue 17: a zero dimension hides huge others from a byte-size check
        rank = max(len(tensor.shape), 2)
        shape = [int(_pick(rng, (1 << 20, 1 << 30, 0x7FFFFFFF))) for _ in range(rank)]
        shape[int(rng.integers(rank))] = 0
        tensor.shape = tuple(shape)
    elif kind == "types" and tensor is not None:
        tensor.type = int(rng.integers(0, 20))
    elif kind == "buffer_index" and tensor is not None:
        tensor.buffer = int(_pick(rng, (0, len(mb.buffers) - 1, len(mb.buffers), len(mb.buffers) + 7,
                                        int(rng.integers(len(mb.buffers))))))
    elif kind == "operator_index" and op is not None:
        choice = int(rng.integers(4))
        idx = int(_pick(rng, (-1, -2, 0, n_tensors - 1, n_tensors, n_tensors + 100, 0x7FFFFFFF,
                              int(rng.integers(max(n_tensors, 1))))))
        if choice == 0 and op.inputs:
            ins = list(op.inputs)
            ins[int(rng.integers(len(ins)))] = idx
            op.inputs = tuple(ins)
        elif choice == 1 and op.outputs:
            outs = list(op.outputs)
            outs[int(rng.integers(len(outs)))] = idx
            op.outputs = tuple(outs)
        elif choice == 2:
            op.opcode_index = int(_pick(rng, (0, len(mb.opcodes) - 1, len(mb.opcodes), 0x7FFFFFFF,
                                              int(rng.integers(max(len(mb.opcodes), 1))))))
        else:
            op.inputs = tuple(op.inputs[:int(rng.integers(len(op.inputs) + 1))])
    elif kind == "quantization" and tensor is not None:
        if tensor.quantization is None or rng.integers(4) == 0:
            n = int(_pick(rng, (1, 2, 3, 8)))
            tensor.quantization = (np.full(n, _pick(rng, _FLOATS), np.float32),
                                   np.zeros(n, np.int64), int(rng.integers(0, 4)))
        else:
            scales, zps, qdim = tensor.quantization
            scales = np.array(scales, np.float32)
            zps = np.array(zps, np.int64)
            how = int(rng.integers(5))
            if how == 0 and scales.size:
                scales[int(rng.integers(scales.size))] = _pick(rng, _FLOATS)
            elif how == 1 and zps.size:
                zps[int(rng.integers(zps.size))] = _pick(rng, _INTS)
            elif how == 2:
                qdim = int(_pick(rng, (-1, 0, 1, 3, 4, 100, 0x7FFFFFFF)))
            elif how == 3:                           # arrays of a different length
                k = int(_pick(rng, (0, 1, 2, scales.size + 1, 1000)))
                scales = np.resize(scales if scales.size else np.ones(1, np.float32), k)
                if rng.integers(2):
                    zps = np.resize(zps if zps.size else np.zeros(1, np.int64), k)
            else:
                scales = scales * np.float32(_pick(rng, (1e-30, 1e30, -1.0, 0.0)))
            tensor.quantization = (scales, zps, qdim)
    elif kind == "options" and op is not None:
        if op.options:
            name = _pick(rng, sorted(op.options))
            value = op.options[name]
            if isinstance(value, float):
                op.options[name] = float(_pick(rng, _FLOATS))
            elif isinstance(value, bool):
                op.options[name] = not value
            elif isinstance(value, int):
                op.options[name] = int(_pick(rng, _INTS))
            elif isinstance(value, (list, tuple)):
                op.options[name] = [int(_pick(rng, _INTS)) for _ in range(int(rng.integers(0, 6)))]
        elif op.custom_options is not None and len(op.custom_options):
            data = bytearray(op.custom_options)
            data[int(rng.integers(len(data)))] = int(rng.integers(256))
            op.custom_options = bytes(data)
    elif kind == "graph_io":
        idx = int(_pick(rng, (-1, 0, n_tensors - 1, n_tensors, 0x7FFFFFFF, int(rng.integers(max(n_tensors, 1))))))
        target = sg.inputs if rng.integers(2) else sg.outputs
        if target and rng.integers(3):
            target[int(rng.integers(len(target)))] = idx
        else:
            target.append(idx)
    elif kind == "buffer_values":
        # a constant tensor's values (weights, biases, shape / padding / axis operands, ...)
        # partly replaced by extremes of its type
        consts = [t for t in sg.tensors if 0 < t.buffer < len(mb.buffers) and mb.buffers[t.buffer]]
        if consts:
            t = _pick(rng, consts)
            from micro_runtime import schema
            dtype = schema.NUMPY_DTYPES.get(t.type, np.dtype(np.uint8))
            values = np.frombuffer(mb.buffers[t.buffer], dtype=np.uint8).copy()
            if dtype.kind in "iu" and values.size >= dtype.itemsize:
                typed = values[: values.size - values.size % dtype.itemsize].view(dtype)
                info = np.iinfo(dtype)
                extremes = np.array([info.min, info.max, 0, -1 if dtype.kind == "i" else 1,
                                     info.max // 2, 1 << min(20, dtype.itemsize * 8 - 2)], dtype=np.int64)
                k = int(rng.integers(1, max(2, typed.size // 4 + 1)))
                where = rng.integers(0, typed.size, k)
                typed[where] = extremes[rng.integers(0, extremes.size, k)].astype(dtype)
            elif dtype.kind == "f" and values.size >= dtype.itemsize:
                typed = values[: values.size - values.size % dtype.itemsize].view(dtype)
                k = int(rng.integers(1, max(2, typed.size // 4 + 1)))
                typed[rng.integers(0, typed.size, k)] = np.array(_FLOATS, dtype)[rng.integers(0, len(_FLOATS), k)]
            else:
                values[rng.integers(0, values.size, 4)] = rng.integers(0, 256, 4)
            mb.buffers[t.buffer] = values.tobytes()
    try:
        return mb.build()
    except Exception:  # noqa: BLE001 - a value the writer cannot encode (e.g. out of int32)
        return raw


@dataclass
class Outcome:
    kind: str           #: mutation
    result: str         #: "ok", an exception class name, or "other:<class>"
    seconds: float
    message: str = ""


def hostile_corpus() -> list:
    """Hand-made hostile models, run through every surface by tests/test_fuzz.py and first
    by benchmarks/fuzz_models.py: [(name, model bytes)]. Each must fail with a
    MicroRuntimeError (or run), never with a numpy error."""
    from micro_runtime.tools.model_writer import ModelBuilder

    def add_model(shape_in, shape_out=None, dtype="FLOAT32", const=None):
        b = ModelBuilder()
        g = b.subgraph()
        x = g.add_tensor("x", shape_in, dtype, data=const)
        y = g.add_tensor("y", shape_out or shape_in, dtype)
        g.add_operator("ADD", [x, x], [y], fused_activation_function=0)
        g.inputs, g.outputs = ([] if const is not None else [x]), [y]
        return b.build()

    big = 0x7FFFFFFF
    return [
        # issue 17: zero bytes, so no byte-size check sees the 2^62-element span
        ("zero dim, huge others", add_model((0, big, big, 2))),
        ("zero dim, huge others (int8)", add_model((big, 0, big, big), dtype="INT8")),
        ("zero dim in the output only", add_model((1, 4), (0, big, big, big))),
        ("dims whose product overflows int64", add_model((big, big, big))),
        ("dims whose product overflows, one of them 1", add_model((1, big, big, big, 1))),
        ("zero dim, big but representable", add_model((0, 1 << 20, 1 << 20))),
        ("constant with a zero dim and huge others", add_model((0, big, big, 4), const=np.zeros(0, np.float32))),
    ]


SURFACES = ("micro", "api", "cli_info", "cli_size", "eval")


def run_one(data: bytes, kind: str = "", surface: str = "micro") -> Outcome:
    """Load, allocate and invoke one (possibly corrupt) model through a public surface:
    ``micro`` (MicroInterpreter), ``api`` (Interpreter.from_bytes, invoke, outputs and
    tensor details), ``cli_info`` / ``cli_size`` (the command line on a file; any
    exception escaping main() is a finding, a MicroRuntimeError is reported by main as
    exit status 1)."""
    start = time.perf_counter()
    try:
        if surface == "micro":
            it = MicroInterpreter(data, arena_size=FUZZ_ARENA_BYTES, target="host64",
                                  error_reporter=lambda m: None, max_loop_iterations=FUZZ_LOOPS)
            it.allocate_tensors()
            it.invoke()
            result, message = "ok", ""
        elif surface == "api":
            from micro_runtime.api import Interpreter
            it = Interpreter.from_bytes(data, arena_size=FUZZ_ARENA_BYTES, error_reporter=lambda m: None)
            it.micro_interpreter.max_loop_iterations = FUZZ_LOOPS
            it.invoke()
            details = it.get_tensor_details()
            outs = [it.get_output(i) for i in range(it.micro_interpreter.outputs_size)]
            result, message = "ok", f"{len(details)} tensors, {len(outs)} outputs"
        elif surface == "eval":
            # batched evaluation with its automatic arena sizes, on the CMSIS-NN default
            from micro_runtime.batched import Evaluator
            ev = Evaluator(data, target="cortex-m4+cmsis-nn", batch=3, max_loop_iterations=FUZZ_LOOPS)
            rng = np.random.default_rng(len(data))
            inputs = []
            for spec in ev.input_specs:
                shape = (5,) + tuple(spec.shape)
                if spec.dtype.kind in "iu":
                    info = np.iinfo(spec.dtype)
                    inputs.append(rng.integers(info.min, info.max, shape, endpoint=True).astype(spec.dtype))
                else:
                    inputs.append(rng.standard_normal(shape).astype(spec.dtype))
            outs = ev.run(inputs)
            result, message = "ok", f"{len(outs)} outputs"
        else:
            result, message = _run_cli(data, surface.split("_", 1)[1])
    except MicroRuntimeError as e:
        result, message = type(e).__name__, str(e)[:200]
    except Exception as e:  # noqa: BLE001 - any other exception is a finding
        result, message = f"other:{type(e).__name__}", repr(e)[:300]
    return Outcome(kind, result, time.perf_counter() - start, message)


def _run_cli(data: bytes, command: str) -> tuple:
    """``micro-runtime COMMAND model.tflite`` in-process, output discarded: ("ok", "") on
    exit status 0, ("cli-error", message) on 1."""
    import contextlib
    import io
    import os
    import tempfile
    from micro_runtime.tools.cli import main
    fd, path = tempfile.mkstemp(suffix=".tflite")
    try:
        with os.fdopen(fd, "wb") as f:
            f.write(data)
        out, err = io.StringIO(), io.StringIO()
        args = [command, path] + (["--target", "host64"] if command == "size" else [])
        with contextlib.redirect_stdout(out), contextlib.redirect_stderr(err):
            status = main(args)
        if status == 0:
            return "ok", ""
        return "cli-error", err.getvalue().strip()[:200]
    finally:
        os.unlink(path)


def loop_model(outer: Optional[int] = None, inner: Optional[int] = None) -> bytes:
    """A WHILE over one int32 counter (the model input): the loop runs while the counter
    is below ``outer`` (None: forever, its condition is EQUAL(i, i)), the body adds 1;
    with ``inner`` the body also runs an inner WHILE of ``inner`` iterations (from 0),
    so the model runs outer + outer x inner iterations in all on a zero input."""
    from micro_runtime.tools.model_writer import ModelBuilder
    b = ModelBuilder()
    m = b.subgraph("main")
    i = m.add_tensor("i", (), "INT32")
    o = m.add_tensor("o", (), "INT32")
    m.add_operator("WHILE", [i], [o], cond_subgraph_index=1, body_subgraph_index=2)
    m.inputs, m.outputs = [i], [o]

    def counting(cond_index: int, limit: Optional[int]) -> None:
        c = b.subgraph("cond")
        x = c.add_tensor("x", (), "INT32")
        flag = c.add_tensor("flag", (), "BOOL")
        if limit is None:
            c.add_operator("EQUAL", [x, x], [flag])
        else:
            n = c.add_tensor("n", (), "INT32", data=np.array(limit, np.int32))
            c.add_operator("LESS", [x, n], [flag])
        c.inputs, c.outputs = [x], [flag]

    counting(1, outer)
    g = b.subgraph("body")
    x = g.add_tensor("x", (), "INT32")
    one = g.add_tensor("one", (), "INT32", data=np.array(1, np.int32))
    y = g.add_tensor("y", (), "INT32")
    g.add_operator("ADD", [x, one], [y], fused_activation_function=0)
    if inner is not None:
        zero = g.add_tensor("zero", (), "INT32")
        done = g.add_tensor("done", (), "INT32")
        g.add_operator("SUB", [x, x], [zero], fused_activation_function=0)
        g.add_operator("WHILE", [zero], [done], cond_subgraph_index=3, body_subgraph_index=4)
    g.inputs, g.outputs = [x], [y]
    if inner is not None:
        counting(3, inner)
        h = b.subgraph("inner body")
        x = h.add_tensor("x", (), "INT32")
        one = h.add_tensor("one", (), "INT32", data=np.array(1, np.int32))
        y = h.add_tensor("y", (), "INT32")
        h.add_operator("ADD", [x, one], [y], fused_activation_function=0)
        h.inputs, h.outputs = [x], [y]
    return b.build()
