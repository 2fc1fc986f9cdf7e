"""A resolver names operators; the interpreter's target decides the kernels.

In TFLM the op resolver only lists operators (``AddConv2D()`` ...) and the kernel
library is the build's (``OPTIMIZED_KERNEL_DIR``). Here every public way to build an
interpreter, given any resolver, must run the target's kernel library: checked against
the registry itself (which class each target runs per op) and against recorded TFLM
builds' minimum arenas, which differ between reference and CMSIS-NN kernels
(trained_lstm_int8: 3328 vs 4160 bytes on Cortex-M4).
"""
from __future__ import annotations

import json

import numpy as np
import pytest

import kernels
from kernels.base import CUSTOM_KERNELS, KERNEL_VARIANTS, Kernel
from micro_runtime import (Evaluator, Interpreter, MicroInterpreter, OpResolver, TARGETS,
                           RecordingMicroInterpreter, default_op_resolver, evaluate, get_target)
from micro_runtime.tools.cli import main as cli_main
from micro_runtime.tools.sizing import measure_arena
from tests.helpers import model_path
from tests.tflm_figures import REFERENCE_DIR, load_figures

MODEL = "trained_lstm_int8"
ALL_TARGETS = sorted(TARGETS)


def recorded_minimum(target: str):
    """TFLM's own minimum arena (RecordingMicroInterpreter) for MODEL on ``target``, from
    the recorded builds (Cortex-M) or the tflite-micro package (host64); None if none."""
    if target == "host64":
        with open(f"{REFERENCE_DIR}/tflm_figures.json") as f:
            return json.load(f)[MODEL + ".tflite"]["min_arena_bytes"]
    figures, _ = load_figures()
    entry = figures.get((MODEL + ".tflite", target))
    return None if entry is None else entry.get("min_arena_bytes")


def expected_kernel_classes(target: str):
    """Per operator of MODEL, the class its target's library runs (from the registry)."""
    from micro_runtime.model import load_model
    from micro_runtime.schema import op_name
    library = get_target(target).kernel_library
    out = []
    for op in load_model(model_path(MODEL)).main.operators:
        name = op_name(op.builtin_code, op.custom_code)
        out.append(KERNEL_VARIANTS.get(library, {}).get(name)
                   or kernels.BUILTIN_KERNELS.get(name) or CUSTOM_KERNELS[name])
    return out


#: what a user may pass: nothing, the seed's default_op_resolver(), one made for another
#: target, one naming only the model's ops
RESOLVER_KINDS = ("default", "host64", "m55-cmsis", "named", "none")


def make_resolver(kind: str):
    if kind == "none":
        return None
    if kind == "named":
        return (OpResolver().add("UNIDIRECTIONAL_SEQUENCE_LSTM").add("RESHAPE")
                .add("FULLY_CONNECTED").add("SOFTMAX"))
    return default_op_resolver({"default": None, "host64": "host64",
                                "m55-cmsis": "cortex-m55+cmsis-nn"}[kind])


def node_classes(it):
    return [type(node.registration) for node in it.subgraphs[0].nodes]


def test_the_recorded_builds_tell_the_libraries_apart():
    assert recorded_minimum("cortex-m4") != recorded_minimum("cortex-m4+cmsis-nn")


@pytest.mark.parametrize("target", ALL_TARGETS)
@pytest.mark.parametrize("kind", RESOLVER_KINDS)
def test_every_constructor_runs_the_targets_kernels(target, kind):
    resolver = make_resolver(kind)
    expected = expected_kernel_classes(target)
    figure = recorded_minimum(target)
    path = model_path(MODEL)
    built = {
        "MicroInterpreter": MicroInterpreter(path, resolver, 1 << 16, target=target),
        "RecordingMicroInterpreter": RecordingMicroInterpreter(path, resolver, 1 << 16, target=target),
        "Interpreter.from_file": Interpreter.from_file(path, arena_size=1 << 16, target=target,
                                                       op_resolver=resolver).micro_interpreter,
        "Evaluator": Evaluator(path, target=target, op_resolver=resolver).single,
    }
    for where, it in built.items():
        it.allocate_tensors()
        assert node_classes(it) == expected, where
    if figure is not None:
        rec = built["RecordingMicroInterpreter"]
        rec.invoke()
        assert rec.min_arena_bytes() == figure
        assert measure_arena(path, target, op_resolver=resolver).recording_min_arena_bytes == figure


def test_the_seed_example_reports_the_builds_arena():
    """The seed's line, as a user writes it, on the default target (cortex-m4+cmsis-nn)."""
    import micro_runtime as mr
    it = mr.RecordingMicroInterpreter(model_path(MODEL), mr.default_op_resolver(), arena_size=20000)
    it.invoke()
    assert it.target.name == "cortex-m4+cmsis-nn"
    assert it.min_arena_bytes() == recorded_minimum("cortex-m4+cmsis-nn")


@pytest.mark.parametrize("target", ALL_TARGETS)
def test_cli_size_and_evaluate_use_the_target(target, capsys):
    figure = recorded_minimum(target)
    assert cli_main(["size", model_path(MODEL), "--target", target, "--json"]) == 0
    record = json.loads(capsys.readouterr().out)
    assert record["target"] == target
    assert record["min_arena_bytes"] == measure_arena(model_path(MODEL), target).recording_min_arena_bytes
    if figure is not None:
        assert record["min_arena_bytes"] == figure
    x = np.zeros((3, 28, 28), np.int8)
    a = evaluate(model_path(MODEL), x, target=target, op_resolver=default_op_resolver("host64"))
    b = evaluate(model_path(MODEL), x, target=target)
    assert all(np.array_equal(p, q) for p, q in zip(a, b))


class _Doubler(Kernel):
    """A user's own kernel for a builtin op: kept as given on every target."""
    op = "RESHAPE"

    def prepare(self, ctx, node):
        pass

    def invoke(self, ctx, node):
        node.output_arrays[0].reshape(-1)[:] = node.input_arrays[0].reshape(-1)


@pytest.mark.parametrize("target", ["host64", "cortex-m4+cmsis-nn", "cortex-m55+cmsis-nn"])
def test_user_kernels_are_kept(target):
    mine = _Doubler()
    it = MicroInterpreter(model_path(MODEL), default_op_resolver().add(mine), 1 << 16, target=target)
    it.allocate_tensors()
    assert it.subgraphs[0].nodes[1].registration is mine
    assert node_classes(it)[0] is expected_kernel_classes(target)[0]


def test_resolver_names_ops_and_refuses_unknown_names():
    from micro_runtime.errors import InputError, UnsupportedOpError
    with pytest.raises(InputError, match="no operator named 'NOT_AN_OP'"):
        OpResolver().add("NOT_AN_OP")
    with pytest.raises(UnsupportedOpError, match="SOFTMAX"):
        MicroInterpreter(model_path(MODEL), OpResolver().add("UNIDIRECTIONAL_SEQUENCE_LSTM")
                         .add("RESHAPE").add("FULLY_CONNECTED"), 1 << 16, error_reporter=lambda m: None)
