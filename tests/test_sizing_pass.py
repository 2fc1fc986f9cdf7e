"""The sizing pass skips the arithmetic of operators whose invoke cannot change the arena
(:meth:`kernels.base.Kernel.invoke_allocates_for`, in models without control flow): the
allocation timeline it records must be the one a full invoke records, on every test model
and target family, and its host memory must not grow with the work of the kernels."""
from __future__ import annotations

import glob
import os
import subprocess
import sys

import numpy as np
import pytest

from micro_runtime import MicroRuntimeError, load_model
from micro_runtime.interpreter import SizingProbe
from micro_runtime.targets import get_target
from micro_runtime.tools.sizing import _probe
from tests.helpers import DATA

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))

#: (model files, targets): the zoo and TFLM's examples on the host and a CMSIS-NN core,
#: the single-op CMSIS-NN and ESP-NN cases on their own libraries
CORPORA = [("*.tflite", ("host64", "cortex-m55+cmsis-nn", "cortex-m55+ethos-u55-128")),
           ("tflm_examples/**/*.tflite", ("host64", "cortex-m55+cmsis-nn")),
           ("cmsis_nn_cases/*/*.tflite", ("cortex-m4+cmsis-nn",)),
           ("esp_nn_cases/*/*.tflite", ("esp32-c3", "esp32-s3"))]


def _timeline(model, target: str, skip: bool, monkeypatch):
    """("ok", the allocation timeline) of a sizing pass, or (where it failed, the error)."""
    monkeypatch.setattr(SizingProbe, "skip_computing", skip)
    try:
        it = _probe(model, get_target(target), None, True, "greedy", invoke=False)
    except MicroRuntimeError as e:
        return "allocate", f"{type(e).__name__}: {e}"
    try:
        it.invoke()
    except MicroRuntimeError as e:
        return "invoke", f"{type(e).__name__}: {e}"
    return "ok", list(it.arena.trace)


@pytest.mark.parametrize("pattern, targets", CORPORA, ids=[c[0].split("/")[0] for c in CORPORA])
def test_skipping_the_arithmetic_changes_no_allocation_timeline(pattern, targets, monkeypatch):
    files = sorted(glob.glob(os.path.join(DATA, pattern), recursive=True))
    assert len(files) >= 5
    skipped_any = False
    for path in files:
        model = load_model(path)
        for target in targets:
            dry = _timeline(model, target, True, monkeypatch)
            full = _timeline(model, target, False, monkeypatch)
            if full[0] == "invoke":
                # a kernel's invoke fails on zeros (a check that aborts the build, an
                # operator TFLM's build skips): the arena it needs is sized all the same
                assert dry[0] == "ok" or dry == full, (path, target, dry, full)
                continue
            assert dry == full, (path, target, dry[0], full[0])
            skipped_any = True
    assert skipped_any


def test_sizing_host_memory_does_not_grow_with_the_kernels_work(tmp_path):
    """A 1x1 CONV_2D over a (1, 1024, 1024, 32) int8 tensor: a 64 MiB arena, whose full
    invoke takes about 1.7 GiB of float64 working arrays on the host. ``size`` answers
    under a 768 MiB address-space limit; ``run`` there ends with a LimitError naming the
    operator, not a MemoryError."""
    from micro_runtime.tools.model_writer import ModelBuilder
    b = ModelBuilder()
    g = b.subgraph()
    x = g.add_tensor("x", (1, 1024, 1024, 32), "INT8", quantization=(0.5, 0))
    w = g.add_tensor("w", (32, 1, 1, 32), "INT8", data=np.ones((32, 1, 1, 32), np.int8),
                     quantization=([0.1] * 32, [0] * 32, 0))
    bias = g.add_tensor("b", (32,), "INT32", data=np.zeros(32, np.int32), quantization=([0.05] * 32, [0] * 32, 0))
    y = g.add_tensor("y", (1, 1024, 1024, 32), "INT8", quantization=(0.5, 0))
    g.add_operator("CONV_2D", [x, w, bias], [y], padding=0, stride_w=1, stride_h=1)
    g.inputs, g.outputs = [x], [y]
    path = tmp_path / "big_conv.tflite"
    path.write_bytes(b.build())
    np.save(tmp_path / "x.npy", np.zeros((1, 1024, 1024, 32), np.int8))
    code = """
import resource, sys
resource.setrlimit(resource.RLIMIT_AS, (768 << 20, 768 << 20))
from micro_runtime.tools.cli import main
sys.exit(main(sys.argv[1:]))
"""
    size = subprocess.run([sys.executable, "-c", code, "size", str(path), "--target", "host64"],
                          capture_output=True, text=True, cwd=ROOT, timeout=300)
    assert size.returncode == 0, size.stderr
    from micro_runtime.tools.sizing import measure_arena
    assert f"minimum arena            {measure_arena(str(path), 'host64').min_arena_bytes} bytes" \
        in size.stdout
    run = subprocess.run([sys.executable, "-c", code, "run", str(path), "--target", "host64",
                          "--input", str(tmp_path / "x.npy")],
                         capture_output=True, text=True, cwd=ROOT, timeout=300)
    assert run.returncode == 1 and run.stderr.count("\n") == 1, run.stderr
    assert "CONV_2D (operator #0): this host ran out of memory for the working arrays of its invoke" \
        in run.stderr
