"""Checks of the emulator against the recorded Cortex-M CMSIS-NN single-op cases
(tests/data/cmsis_nn_cases/<op>.json, written by tests/record_cmsis_nn_cases.py): for
every case and profile, the same status, allocation report lines, minimum arena and
output bytes as TFLM built for that core and run under QEMU."""
from __future__ import annotations

import dataclasses
import io
import json
import os
from typing import List, Tuple

import numpy as np

from micro_runtime import MicroInterpreter
from micro_runtime.errors import KernelError, MicroRuntimeError
from micro_runtime.targets import StructSize, get_target

CASES_DIR = os.path.join(os.path.dirname(os.path.abspath(__file__)), "data", "cmsis_nn_cases")

#: core -> (dsp, mve), for profiles the targets module does not define yet
_CORES = {"cortex-m0": (False, False), "cortex-m3": (False, False), "cortex-m4": (True, False),
          "cortex-m7": (True, False), "cortex-m33": (True, False), "cortex-m55": (True, True)}


def profile_target(profile: str):
    """The Target of a profile name (``cortex-m4+cmsis-nn`` ...): the project's own when
    micro_runtime.targets defines it, else mcu32 with the CMSIS-NN struct table and the
    core's DSP / MVE flags (struct sizes that depend on short enums are then mcu32's)."""
    try:
        return get_target(profile)
    except MicroRuntimeError:
        pass
    from micro_runtime.cmsis_nn_structs import CMSIS_NN_STRUCTS
    core, _, library = profile.partition("+")
    dsp, mve = _CORES[core]
    base = get_target("mcu32")
    structs = dict(base.structs)
    structs.update({k: StructSize(*v) for k, v in CMSIS_NN_STRUCTS.items()})
    return dataclasses.replace(base, name=profile, structs=structs, core=core,
                               kernel_library=library or "reference", dsp=dsp, mve=mve,
                               compression=False)


def load_cases(op: str, cases_dir: str = CASES_DIR) -> List[Tuple[str, str, dict]]:
    """(name, profile, recorded entry) of every recorded case of ``op``."""
    path = os.path.join(cases_dir, op + ".json")
    if not os.path.exists(path):
        return []
    with open(path) as f:
        record = json.load(f)
    return [(name, profile, entry) for name, by_profile in sorted(record["cases"].items())
            for profile, entry in sorted(by_profile.items())]


def case_inputs(op: str, name: str, cases_dir: str = CASES_DIR) -> Tuple[bytes, List[bytes]]:
    directory = os.path.join(cases_dir, op)
    with open(os.path.join(directory, name + ".tflite"), "rb") as f:
        model = f.read()
    inputs, k = [], 0
    while os.path.exists(os.path.join(directory, f"{name}.input{k}.bin")):
        with open(os.path.join(directory, f"{name}.input{k}.bin"), "rb") as f:
            inputs.append(f.read())
        k += 1
    return model, inputs


def run_case(op: str, name: str, profile: str, arena_bytes: int, cases_dir: str = CASES_DIR):
    """(outputs as hex strings, report lines, interpreter) of our run of a case."""
    model, inputs = case_inputs(op, name, cases_dir)
    it = MicroInterpreter(model, arena_size=arena_bytes, target=profile_target(profile),
                          recording=True, error_reporter=lambda m: None)
    it.allocate_tensors()
    for i, raw in enumerate(inputs):
        spec = np.array(it.input(i))
        it.set_input(np.frombuffer(raw, dtype=spec.dtype).reshape(spec.shape), i)
    if not inputs:
        for i in range(it.inputs_size):
            spec = np.array(it.input(i))
            it.set_input(np.zeros_like(spec), i)
    it.invoke()
    outputs = [np.array(it.output(i)).tobytes().hex() for i in range(it.outputs_size)]
    buf = io.StringIO()
    it.print_allocations(buf)
    return outputs, [line.rstrip("\r") for line in buf.getvalue().splitlines()], it


def check_refused(op: str, name: str, profile: str, entry: dict, reason: str,
                  cases_dir: str = CASES_DIR) -> None:
    """A case TFLM runs but whose outputs it leaves (partly) undefined: the emulator must
    refuse it with a KernelError whose message contains ``reason``."""
    assert entry["status"] == "ok", f"{name} on {profile}: TFLM status {entry['status']}"
    try:
        run_case(op, name, profile, entry["arena_bytes"], cases_dir)
    except KernelError as e:
        assert reason in str(e), f"{name} on {profile}: unexpected error {e}"
        return
    raise AssertionError(f"{name} on {profile}: the emulator runs a case with undefined outputs")


def check_case(op: str, name: str, profile: str, entry: dict, check_lines: bool = True,
               check_outputs: bool = True, cases_dir: str = CASES_DIR) -> None:
    """Assert our run of a recorded case matches the oracle's (``check_outputs=False``:
    status, report lines and minimum arena only)."""
    if entry["status"] != "ok":
        try:
            run_case(op, name, profile, entry["arena_bytes"], cases_dir)
        except MicroRuntimeError:
            return
        raise AssertionError(f"{name} on {profile}: TFLM fails ({entry['status']}: "
                             f"{entry.get('messages')}) but the emulator runs it")
    outputs, lines, it = run_case(op, name, profile, entry["arena_bytes"], cases_dir)
    if check_outputs:
        assert outputs == entry["outputs_hex"], f"{name} on {profile}: outputs differ from TFLM's"
    if check_lines:
        assert lines == entry["report_lines"], (
            f"{name} on {profile}: allocation report differs\nours:\n" + "\n".join(lines)
            + "\nTFLM:\n" + "\n".join(entry["report_lines"]))
        if "min_arena_bytes" in entry:
            assert it.min_arena_bytes() == entry["min_arena_bytes"], (
                f"{name} on {profile}: minimum arena {it.min_arena_bytes()} vs TFLM "
                f"{entry['min_arena_bytes']}")
