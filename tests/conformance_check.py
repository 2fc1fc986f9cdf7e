"""One model run by micro-runtime and by TFLM (the tflite-micro package) on seeded random
inputs, compared: acceptance, outputs bit for bit, print_allocations() lines, minimum arena.
Used by tests/test_tflm_examples.py and benchmarks/conformance.py."""
import glob
import io
import os
from typing import Dict, List, Tuple

import numpy as np

from micro_runtime import MicroInterpreter, MicroRuntimeError, load_model

#: statuses that mean micro-runtime and TFLM disagree
MISMATCHES = {"outputs differ", "report differs", "min arena differs", "TFLM rejects, we run",
              "we reject, TFLM runs"}


def random_inputs(model, seed: int) -> List[np.ndarray]:
    """Seeded inputs for every model input: floats uniform in [-1, 1], integers uniform
    over their range (clipped to int16's), booleans uniform."""
    rng = np.random.default_rng(seed)
    out = []
    for t in model.main.inputs:
        spec = model.main.tensors[t]
        dtype = np.dtype(spec.dtype)
        if dtype.kind == "f":
            out.append(rng.uniform(-1, 1, spec.shape).astype(dtype))
        elif dtype == np.bool_:
            out.append(rng.integers(0, 2, spec.shape).astype(bool))
        else:
            info = np.iinfo(dtype)
            lo, hi = max(info.min, -(1 << 15)), min(info.max, (1 << 15) - 1)
            out.append(rng.integers(lo, hi, spec.shape, endpoint=True).astype(dtype))
    return out


def _run_ours(model, arena: int, runs) -> Tuple[list, List[str], MicroInterpreter]:
    ours = MicroInterpreter(model, arena_size=arena, target="host64", recording=True,
                            error_reporter=lambda m: None)
    ours.allocate_tensors()
    outputs = []
    for inputs in runs:
        for i, x in enumerate(inputs):
            ours.set_input(x, i)
        ours.invoke()
        outputs.append([np.array(ours.output(i)) for i in range(ours.outputs_size)])
    buf = io.StringIO()
    ours.print_allocations(buf)
    return outputs, buf.getvalue().splitlines(), ours


def check(path: str, oracle, seeds: int = 2, min_arena: bool = False) -> Dict[str, str]:
    """Run ``path`` in both (host64, RecordingMicroAllocator, arena of 10x the model or
    1 MiB) on ``seeds`` seeded inputs, invoked in sequence on one interpreter. Returns
    ``{"model", "status", "detail"}``; status "identical", "both reject", or one of
    :data:`MISMATCHES`."""
    with open(path, "rb") as f:
        raw = f.read()
    arena = max(len(raw) * 10, 1 << 20)
    row = {"model": path, "status": "", "detail": ""}
    runs: list = []
    try:
        model = load_model(raw)
        runs = [random_inputs(model, s) for s in range(seeds)]
        our_outputs, our_lines, ours = _run_ours(model, arena, runs)
        our_error = None
    except MicroRuntimeError as e:
        our_error = f"{type(e).__name__}: {e}".splitlines()[0][:160]
    theirs = oracle.run(raw, runs[0] if runs else [], arena, runs=runs or None)
    if our_error is not None:
        row["status"] = "both reject" if not theirs.ok else "we reject, TFLM runs"
        row["detail"] = our_error if theirs.ok else \
            f"{our_error} | TFLM: {(theirs.error or 'crashed')[:80]}"
        return row
    if not theirs.ok:
        row["status"] = "TFLM rejects, we run"
        row["detail"] = (theirs.error or ("crashed" if theirs.crashed else ""))[:160]
        return row
    for k, (our_run, their_run) in enumerate(zip(our_outputs, theirs.invokes)):
        for j, (a, b) in enumerate(zip(our_run, their_run)):
            b = np.asarray(b)
            if a.shape != b.shape or a.dtype != b.dtype or a.tobytes() != b.tobytes():
                row["status"] = "outputs differ"
                differing = int(np.sum(a.reshape(-1) != b.reshape(-1))) if a.shape == b.shape else -1
                row["detail"] = f"seed {k} output {j}: {differing} of {a.size} values differ"
                return row
    if our_lines != theirs.lines:
        row["status"] = "report differs"
        row["detail"] = " / ".join(f"{a} <> {b}" for a, b in zip(our_lines, theirs.lines) if a != b)[:300]
        return row
    if min_arena:
        smallest = ours.min_arena_bytes()
        zeros = [np.zeros_like(x) for x in runs[0]]
        fits, fits_below = oracle.fits(raw, smallest, zeros), oracle.fits(raw, smallest - 1, zeros)
        if not fits or fits_below:
            row["status"] = "min arena differs"
            row["detail"] = f"ours {smallest}: TFLM fits at it: {fits}, one byte less: {fits_below}"
            return row
    row["status"] = "identical"
    return row


def many_input_samples(model, samples: int, seed: int) -> List[List[np.ndarray]]:
    """``samples`` seeded input sets, drawn per model input as one block of shape
    (samples,) + input shape from ``np.random.default_rng(seed)``: integers uniform over
    their whole type (``rng.integers(min, max + 1, ..., dtype)``; int32/int64 clipped to
    int16's range), floats uniform in [-1, 1], booleans uniform. (For ad01_int8 and seed 7
    this is issue 17's ``default_rng(7).integers(-128, 128, (64, 1, 640), dtype=np.int8)``.)"""
    rng = np.random.default_rng(seed)
    blocks = []
    for t in model.main.inputs:
        spec = model.main.tensors[t]
        dtype = np.dtype(spec.dtype)
        shape = (samples,) + tuple(spec.shape)
        if dtype.kind == "f":
            blocks.append(rng.uniform(-1, 1, shape).astype(dtype))
        elif dtype == np.bool_:
            blocks.append(rng.integers(0, 2, shape).astype(bool))
        else:
            info = np.iinfo(dtype)
            lo, hi = max(info.min, -(1 << 15)), min(info.max, (1 << 15) - 1)
            blocks.append(rng.integers(lo, hi + 1, shape, dtype=dtype))
    return [[b[i] for b in blocks] for i in range(samples)]


def many_inputs(path: str, oracle, samples: int = 64, seed: int = 7) -> Dict[str, object]:
    """A user's evaluation loop over many inputs, by TFLM (the tflite-micro package, one
    interpreter) and by us (one MicroInterpreter): per sample set the inputs, invoke, read
    every output, no reset between samples (state carries over in stateful models, in
    both). Returns ``{"model", "exact", "total", "status", "detail"}``: ``exact`` counts
    the samples whose outputs are all bit-identical."""
    with open(path, "rb") as f:
        raw = f.read()
    arena = max(len(raw) * 10, 1 << 20)
    row: Dict[str, object] = {"model": path, "exact": 0, "total": samples, "status": "", "detail": ""}
    try:
        model = load_model(raw)
        runs = many_input_samples(model, samples, seed)
        ours, _, _ = _run_ours(model, arena, runs)
    except MicroRuntimeError as e:
        row["status"] = "we reject"
        row["detail"] = f"{type(e).__name__}: {e}".splitlines()[0][:160]
        return row
    theirs = oracle.run(raw, runs[0], arena, runs=runs)
    if not theirs.ok or len(theirs.invokes) != samples:
        row["status"] = "TFLM fails"
        row["detail"] = (theirs.error or ("crashed" if theirs.crashed else ""))[:160]
        return row
    first_bad = None
    for k, (our_run, their_run) in enumerate(zip(ours, theirs.invokes)):
        same = len(our_run) == len(their_run) and all(
            a.shape == np.asarray(b).shape and a.dtype == np.asarray(b).dtype
            and a.tobytes() == np.asarray(b).tobytes() for a, b in zip(our_run, their_run))
        if same:
            row["exact"] += 1
        elif first_bad is None:
            first_bad = k
    row["status"] = "exact" if row["exact"] == samples else "differs"
    if first_bad is not None:
        row["detail"] = f"first differing sample {first_bad}"
    return row


def all_models() -> List[str]:
    """Paths of every zoo model (tests/data/*.tflite), then every tests/data/tflm_examples
    model (recursively), each group sorted."""
    data = os.path.join(os.path.dirname(os.path.abspath(__file__)), "data")
    zoo = sorted(glob.glob(os.path.join(data, "*.tflite")))
    examples = sorted(os.path.join(root, n) for root, _, names in os.walk(os.path.join(data, "tflm_examples"))
                      for n in names if n.endswith(".tflite"))
    return zoo + examples
