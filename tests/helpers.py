"""Shared test helpers: one-op model builder, running ours and TFLM, exact comparison."""
from __future__ import annotations

import io
import os
from typing import Dict, List, Optional, Sequence

import numpy as np

from micro_runtime import MicroInterpreter
from micro_runtime.tools.model_writer import ModelBuilder

HERE = os.path.dirname(os.path.abspath(__file__))
DATA = os.path.join(HERE, "data")


def model_path(name: str) -> str:
    """Path of a bundled test model (tests/data/<name>.tflite)."""
    return os.path.join(DATA, name if name.endswith(".tflite") else name + ".tflite")


def model_bytes(name: str) -> bytes:
    with open(model_path(name), "rb") as f:
        return f.read()


class TensorDef:
    """A tensor of a one-op test model; ``data`` set = constant."""

    def __init__(self, shape, dtype, quant=None, data=None, name=None, is_variable=False):
        self.shape = tuple(shape)
        self.dtype = dtype
        self.quant = quant
        self.data = data
        self.name = name
        self.is_variable = is_variable


def single_op_model(op: str, inputs: Sequence[Optional[TensorDef]], outputs: Sequence[TensorDef],
                    custom_options: Optional[bytes] = None, intermediates: Sequence[TensorDef] = (),
                    **options) -> bytes:
    """A model with one operator. Non-constant, non-variable inputs become model inputs
    (in order); ``None`` in ``inputs`` is an omitted optional input (-1)."""
    b = ModelBuilder()
    g = b.subgraph()
    in_idx, model_inputs = [], []
    for k, t in enumerate(inputs):
        if t is None:
            in_idx.append(-1)
            continue
        i = g.add_tensor(t.name or f"in{k}", t.shape, t.dtype, data=t.data, quantization=t.quant,
                         is_variable=t.is_variable)
        in_idx.append(i)
        if t.data is None and not t.is_variable:
            model_inputs.append(i)
    mid = [g.add_tensor(t.name or f"mid{k}", t.shape, t.dtype, quantization=t.quant)
           for k, t in enumerate(intermediates)]
    out_idx = [g.add_tensor(t.name or f"out{k}", t.shape, t.dtype, quantization=t.quant,
                            is_variable=t.is_variable)
               for k, t in enumerate(outputs)]
    g.add_operator(op, in_idx, out_idx, intermediates=mid, custom_options=custom_options, **options)
    g.inputs, g.outputs = model_inputs, out_idx
    return b.build()


def custom_op_model(op: str = "NoSuchOp") -> bytes:
    """A one-op model x(4) -> y(4) float32 whose op is the custom ``op`` (by default one
    no resolver has)."""
    b = ModelBuilder()
    g = b.subgraph()
    x = g.add_tensor("x", (4,), "FLOAT32")
    y = g.add_tensor("y", (4,), "FLOAT32")
    g.add_operator(op, [x], [y], custom_options=b"")
    g.inputs, g.outputs = [x], [y]
    return b.build()


def run_ours(model, inputs: Sequence[np.ndarray], arena_size: int = 1 << 20, target: str = "host64",
             recording: bool = True, runs: Optional[List[Sequence[np.ndarray]]] = None):
    """Allocate, invoke (once per run) and return (outputs of the last run, report
    lines, interpreter)."""
    it = MicroInterpreter(model, arena_size=arena_size, target=target, recording=recording,
                          error_reporter=lambda m: None)
    it.allocate_tensors()
    all_runs = runs if runs is not None else [inputs]
    outs = None
    for run in all_runs:
        for i, x in enumerate(run):
            it.set_input(np.asarray(x), i)
        it.invoke()
        outs = [np.array(it.output(i)) for i in range(it.outputs_size)]
    lines = None
    if recording:
        buf = io.StringIO()
        it.print_allocations(buf)
        lines = buf.getvalue().splitlines()
    return outs, lines, it


def assert_bit_exact(ours: Sequence[np.ndarray], theirs: Sequence[np.ndarray], context: str = ""):
    assert len(ours) == len(theirs), f"{context}: {len(ours)} outputs vs TFLM's {len(theirs)}"
    for k, (a, b) in enumerate(zip(ours, theirs)):
        a, b = np.asarray(a), np.asarray(b)
        assert a.dtype == b.dtype, f"{context} output {k}: dtype {a.dtype} vs TFLM {b.dtype}"
        assert a.shape == b.shape, f"{context} output {k}: shape {a.shape} vs TFLM {b.shape}"
        if a.tobytes() != b.tobytes():
            diff = np.argwhere(a.reshape(-1).view(np.uint8 if a.dtype.itemsize == 1 else f"u{a.dtype.itemsize}")
                               != b.reshape(-1).view(np.uint8 if b.dtype.itemsize == 1 else f"u{b.dtype.itemsize}"))
            first = int(diff[0][0]) if len(diff) else -1
            raise AssertionError(
                f"{context} output {k}: {len(diff)} of {a.size} elements differ from TFLM; first at "
                f"flat index {first}: ours {a.reshape(-1)[first]!r} vs TFLM {b.reshape(-1)[first]!r}")


def compare_with_tflm(oracle, model: bytes, inputs: Sequence[np.ndarray], arena_size: int = 1 << 20,
                      check_lines: bool = True, context: str = ""):
    """Run ours and TFLM on the same model and inputs; assert identical outputs and
    identical print_allocations() lines. Returns (our outputs, TFLM result)."""
    theirs = oracle.run(model, inputs, arena_size)
    assert theirs.ok, f"{context}: TFLM failed ({theirs.stage}): {theirs.error} crashed={theirs.crashed}"
    ours, lines, _ = run_ours(model, inputs, arena_size)
    assert_bit_exact(ours, theirs.outputs, context)
    if check_lines:
        assert lines == theirs.lines, (f"{context}: allocation report differs\nours:\n" + "\n".join(lines)
                                       + "\nTFLM:\n" + "\n".join(theirs.lines))
    return ours, theirs


README = os.path.join(os.path.dirname(HERE), "README.md")
DOCS = os.path.join(os.path.dirname(HERE), "docs")


def docs_text() -> str:
    """README.md and every page of docs/, one after the other."""
    parts = [open(README, encoding="utf-8").read()]
    for name in sorted(os.listdir(DOCS)):
        if name.endswith(".md"):
            parts.append(open(os.path.join(DOCS, name), encoding="utf-8").read())
    return "\n".join(parts)


def readme_block(tag: str) -> str:
    """The code block that follows ``<!-- test: TAG -->`` in README.md or a page of docs/
    (their examples are run by tests, so they stay true)."""
    text = docs_text()
    marker = f"<!-- test: {tag} -->"
    start = text.index(marker)
    start = text.index("\n", text.index("```", start)) + 1
    return text[start:text.index("```", start)]


def run_python(source: str, *args: str, ours: bool = True, timeout: float = 300):
    """Run ``source`` as a script in a fresh interpreter (cwd: a neutral directory);
    with ``ours`` this checkout comes first on the import path. Returns the
    CompletedProcess with stdout / stderr as bytes."""
    import subprocess
    import sys
    import tempfile
    env = dict(os.environ)
    env.pop("PYTHONPATH", None)
    if ours:
        env["PYTHONPATH"] = os.path.dirname(HERE)
    with tempfile.TemporaryDirectory() as tmp:
        script = os.path.join(tmp, "script.py")
        with open(script, "w") as f:
            f.write(source)
        return subprocess.run([sys.executable, script, *args], capture_output=True, cwd=tmp,
                              env=env, timeout=timeout)
