"""RecordingMicroInterpreter: TFLM's class by name, its figures as numbers, the seed's
example, and print_allocations' bytes, all against the tflite-micro package."""
import io
import re

import numpy as np
import pytest

import micro_runtime
from micro_runtime import (InputError, MicroInterpreter, RecordedAllocationType, RecordingMicroInterpreter,
                           default_op_resolver)
from recording import RecordingMicroAllocator
from tests.helpers import docs_text, model_bytes, model_path, readme_block, run_python
from tests.test_zoo import REFERENCE, REFERENCE32, ZOO

#: the category names TFLM prints, per RecordedAllocationType (recording_micro_allocator.cc)
PRINTED_NAME = {
    RecordedAllocationType.kTfLiteEvalTensorData: "TfLiteEvalTensor data",
    RecordedAllocationType.kPersistentTfLiteTensorData: "Persistent TfLiteTensor data",
    RecordedAllocationType.kPersistentTfLiteTensorQuantizationData: "Persistent TfLiteTensor quantization data",
    RecordedAllocationType.kPersistentBufferData: "Persistent buffer data",
    RecordedAllocationType.kTfLiteTensorVariableBufferData: "TfLiteTensor variable buffer data",
    RecordedAllocationType.kNodeAndRegistrationArray: "NodeAndRegistration struct",
    RecordedAllocationType.kOpData: "Operator runtime data",
    RecordedAllocationType.kCompressionData: "Persistent compression data",
}
CATEGORY_LINE = re.compile(r"^\[RecordingMicroAllocator\] '(.+)' used (\d+) bytes with alignment overhead "
                           r"\(requested (\d+) bytes for (\d+) .+\)$")
ARENA_LINE = re.compile(r"^\[RecordingMicroAllocator\] Arena allocation (total|head|tail) (\d+) bytes$")


def parse_report(lines):
    """TFLM's printed lines -> ({total, head, tail}, {category name: (used, requested, count)})."""
    arena, categories = {}, {}
    for line in lines:
        m = ARENA_LINE.match(line)
        if m:
            arena[m.group(1)] = int(m.group(2))
            continue
        m = CATEGORY_LINE.match(line)
        assert m, f"unexpected line {line!r}"
        categories[m.group(1)] = tuple(int(m.group(k)) for k in (2, 3, 4))
    return arena, categories


def test_enum_is_tflm_s():
    # recording_micro_allocator.h, in order, with USE_TFLM_COMPRESSION (the package's build)
    assert [k.name for k in RecordedAllocationType] == [
        "kTfLiteEvalTensorData", "kPersistentTfLiteTensorData", "kPersistentTfLiteTensorQuantizationData",
        "kPersistentBufferData", "kTfLiteTensorVariableBufferData", "kNodeAndRegistrationArray",
        "kOpData", "kCompressionData", "kNumAllocationTypes"]
    assert [int(k) for k in RecordedAllocationType] == list(range(9))
    assert micro_runtime.RecordingMicroInterpreter is RecordingMicroInterpreter
    assert issubclass(RecordingMicroInterpreter, MicroInterpreter)


def assert_figures_equal(it, lines, context):
    arena, printed = parse_report(lines)
    assert (it.arena_total_bytes, it.arena_head_bytes, it.arena_tail_bytes) == \
        (arena["total"], arena["head"], arena["tail"]), context
    for kind, printed_name in PRINTED_NAME.items():
        rec = it.get_recorded_allocation(kind)
        assert (rec.used_bytes, rec.requested_bytes, rec.count) == printed.get(printed_name, (0, 0, 0)), \
            f"{context}: {kind.name}"


@pytest.mark.parametrize("name", [n for n in ZOO if "bits32" in REFERENCE32.get(n + ".tflite", {})])
def test_recorded_allocations_equal_tflm_32bit_printed_figures(name):
    """mcu32: TFLM built for a 32-bit target printed these lines at its minimum arena."""
    ref = REFERENCE32[name + ".tflite"]["bits32"]
    it = RecordingMicroInterpreter(model_path(name), arena_size=ref["min_arena_bytes"], target="mcu32")
    it.invoke()
    assert_figures_equal(it, ref["recording_report"], name)


@pytest.mark.oracle
@pytest.mark.parametrize("name", ZOO)
def test_recorded_allocations_equal_the_package_printed_figures(oracle, name):
    raw = model_bytes(name)
    arena_size = REFERENCE[name + ".tflite"]["min_arena_bytes"]
    theirs = oracle.run(raw, [], arena_size=arena_size)
    assert theirs.ok, theirs.error
    it = RecordingMicroInterpreter(raw, arena_size=arena_size, target="host64")
    it.invoke()                                       # allocates, as TFLM's Invoke() does
    assert_figures_equal(it, theirs.lines, name)
    allocator = it.get_micro_allocator()
    assert isinstance(allocator, RecordingMicroAllocator)
    assert (allocator.total_bytes, allocator.head_bytes, allocator.tail_bytes) == \
        (it.arena_total_bytes, it.arena_head_bytes, it.arena_tail_bytes)
    for kind in PRINTED_NAME:
        assert allocator.get_recorded_allocation(int(kind)) == it.get_recorded_allocation(kind)


def test_recorded_allocation_is_a_copy_and_bad_kinds_are_refused():
    it = RecordingMicroInterpreter(model_path("hello_world_int8"), arena_size=4096, target="host64")
    it.allocate_tensors()
    rec = it.get_recorded_allocation(RecordedAllocationType.kPersistentBufferData)
    rec.used_bytes = -1
    assert it.get_recorded_allocation(RecordedAllocationType.kPersistentBufferData).used_bytes > 0
    for bad in (RecordedAllocationType.kNumAllocationTypes, 99, "kOpData", None, True):
        with pytest.raises(InputError, match="Invalid allocation type supplied"):
            it.get_recorded_allocation(bad)


def test_same_constructor_as_micro_interpreter():
    resolver = default_op_resolver()
    plain = MicroInterpreter(model_path("hello_world_int8"), resolver, 16384, target="host64", planner="linear")
    rec = RecordingMicroInterpreter(model_path("hello_world_int8"), resolver, 16384, target="host64",
                                    planner="linear")
    for it in (plain, rec):
        it.invoke()
    assert plain.output(0).tobytes() == rec.output(0).tobytes()
    assert rec.recording and not plain.recording
    with pytest.raises(TypeError):
        RecordingMicroInterpreter(model_path("hello_world_int8"), resolver, 4096, recording=False)


def print_allocations_bytes(source: str, model: str, ours: bool) -> bytes:
    proc = run_python(source, model, ours=ours)
    assert proc.returncode == 0, proc.stderr.decode()
    return proc.stderr


@pytest.mark.oracle
def test_readme_seed_example_prints_the_package_bytes():
    """The seed's C++ example in Python (docs/python-api.md): one invoke, then print_allocations,
    gives the bytes the package writes for the same model and arena (CR LF included)."""
    example = readme_block("seed")
    assert "RecordingMicroInterpreter" in example and example.count(".invoke()") == 1
    arena = re.search(r"arena_size=(\d+)", example).group(1)
    ours = print_allocations_bytes(
        "import sys\n" + example.replace('"model.tflite"', "sys.argv[1]"), model_path("hello_world_int8"), True)
    theirs = print_allocations_bytes(
        "import sys\nfrom tflite_micro import runtime\n"
        f"runtime.Interpreter.from_file(sys.argv[1], arena_size={arena}).print_allocations()\n",
        model_path("hello_world_int8"), False)
    assert ours == theirs
    assert theirs.count(b"\r\n") == len(theirs.splitlines()) == 8
    # and the docs show exactly those lines
    shown = docs_text()
    for line in theirs.decode().splitlines():
        assert line in shown


def test_print_allocations_writes_crlf_like_the_package():
    it = RecordingMicroInterpreter(model_path("hello_world_int8"), arena_size=1936, target="host64")
    it.invoke()
    for printer in (it.print_allocations, it.get_micro_allocator().print_allocations):
        buf = io.StringIO(newline="")
        printer(buf)
        text = buf.getvalue()
        assert text.endswith("\r\n") and "\n" not in text.replace("\r\n", "")
        assert text.count("\r\n") == 8


def test_figures_before_and_after_invoke():
    it = RecordingMicroInterpreter(model_path("person_detect"), arena_size=90_000, target="mcu32")
    assert it.arena_head_bytes == 0 and it.arena_tail_bytes > 0    # allocator structs only
    it.invoke()
    figures = (it.arena_total_bytes, it.arena_head_bytes, it.arena_tail_bytes)
    assert figures[0] == figures[1] + figures[2] and figures[1] == 55296
    it.set_input(np.zeros((1, 96, 96, 1), np.int8))
    it.invoke()
    assert (it.arena_total_bytes, it.arena_head_bytes, it.arena_tail_bytes) == figures
