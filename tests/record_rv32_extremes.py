"""Record the RV32 builds' outputs for the extreme-scale single-op cases of
tests/rv32_extreme_cases.py into tests/data/rv32_extremes/ (models, inputs) and
tests/data/rv32_extremes.json.

    ESP_ORACLE_BIN=/work/oracle/esp/bin python -m tests.record_rv32_extremes \\
        --count 6 --seed 1 --builds esp32-c3 esp32-p4 riscv32

Each case runs once per build, in its own QEMU process (benchmarks/esp_oracle/esp_oracle.py's
``run``: qemu-system-riscv32 -M virt, the build's driver.elf, a 1 MiB arena, the stored
.input<k>.bin files). Recorded per case and build: status (``ok``, or how the build stopped:
``crash`` = abort, e.g. a failing TFLITE_CHECK; ``timeout`` = no answer within
:data:`TIMEOUT_S` (the riscv32 build's abort spins instead of exiting); ``alloc_fail`` / ``invoke_fail`` = TFLM's
own refusal), the output bytes (hex; not for the stand-in ``esp32-p4``, whose ESP-NN compute
routines are stubs: its status is its own, its outputs only for ops ESP-NN does not
replace, see :data:`ESP_NN_OPS`), and the last messages when not ok.
"""
from __future__ import annotations

import argparse
import datetime
import json
import os
import shutil
import subprocess
import sys

import numpy as np

from tests.record_cmsis_nn_cases import load_oracle, short_copy
from tests.rv32_extreme_cases import CASES, generate

HERE = os.path.dirname(os.path.abspath(__file__))
CASES_DIR = os.path.join(HERE, "data", "rv32_extremes")
RECORD = os.path.join(HERE, "data", "rv32_extremes.json")
ORACLE_DIR = os.path.join(os.path.dirname(HERE), "benchmarks", "esp_oracle")
ARENA_BYTES = 1 << 20
#: seconds before a run counts as stopped ('timeout': the riscv32 build's abort spins)
TIMEOUT_S = 8.0
#: the ops esp-tflite-micro replaces by its kernels/esp_nn/ versions (ESP-NN's C on the C3;
#: stubbed assembly on the stand-in esp32-p4, whose outputs for these mean nothing)
ESP_NN_OPS = ("add", "conv_2d", "depthwise_conv_2d", "fully_connected", "mul", "softmax")
STAND_INS = ("esp32-p4",)


def esp_nn_replaced(op: str) -> bool:
    return any(op == o or op.startswith(o + "_int") for o in ESP_NN_OPS)


def write_cases(op: str, count: int, seed: int) -> str:
    directory = os.path.join(CASES_DIR, op)
    os.makedirs(directory, exist_ok=True)
    for old in os.listdir(directory):
        os.remove(os.path.join(directory, old))
    for name, model, inputs in generate(op, count, seed):
        with open(os.path.join(directory, name + ".tflite"), "wb") as f:
            f.write(model)
        for k, x in enumerate(inputs):
            with open(os.path.join(directory, f"{name}.input{k}.bin"), "wb") as f:
                f.write(np.ascontiguousarray(x).tobytes())
    return directory


def qemu_version() -> str:
    try:
        out = subprocess.run(["qemu-system-riscv32", "--version"], capture_output=True, text=True).stdout
        return out.splitlines()[0].strip()
    except (OSError, IndexError):
        return "unknown"


def main(argv=None) -> int:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--count", type=int, default=6)
    ap.add_argument("--seed", type=int, default=1)
    ap.add_argument("--ops", nargs="*", default=sorted(CASES))
    ap.add_argument("--builds", nargs="+", default=["esp32-c3", "esp32-p4", "riscv32"])
    a = ap.parse_args(argv)
    oracle = load_oracle(ORACLE_DIR, "esp_oracle.py")
    record = {"cases": {}}
    if os.path.exists(RECORD):
        with open(RECORD) as f:
            record = json.load(f)
    for op in a.ops:
        directory = write_cases(op, a.count, a.seed)
        short_dir, names = short_copy(directory)
        by_case = {}
        try:
            for build in a.builds:
                for short, name in sorted(names.items()):
                    model = os.path.join(short_dir, short + ".tflite")
                    inputs = sorted((os.path.join(short_dir, f) for f in os.listdir(short_dir)
                                     if f.startswith(short + ".input")))
                    r = oracle.run(build, model, ARENA_BYTES, inputs or "zeros", timeout_s=TIMEOUT_S)
                    entry = {"status": r["status"], "arena_bytes": ARENA_BYTES}
                    if r["status"] == "ok" and not (build in STAND_INS and esp_nn_replaced(op)):
                        entry["outputs_hex"] = r["outputs_hex"]
                    if r["status"] != "ok":
                        entry["messages"] = r["messages"][-4:]
                    by_case.setdefault(name, {})[build] = entry
                    print(f"{build} {name}: {r['status']}", file=sys.stderr, flush=True)
        finally:
            shutil.rmtree(short_dir, ignore_errors=True)
        record["cases"][op] = by_case
    builds = sorted({b for per_op in record["cases"].values() for e in per_op.values() for b in e})
    about_builds = load_oracle(ORACLE_DIR, "esp_oracle.py").about_text(builds)
    record["about"] = (
        "Extreme-scale single-op cases (tests/rv32_extreme_cases.py: scales from "
        "tests/test_scale_sweep.py's ExtremeDraw, 1e-45 .. 3.4e38, and one case in three "
        f"from SpecialDraw: nan, +-inf, 0, negative; seed {a.seed}, {a.count} cases per op) "
        "run once each by the RV32 TFLM builds of the esp oracle (benchmarks/esp_oracle/"
        "README.md; builds and commits in tests/data/reference/tflm_figures_esp_builds.json's "
        f"'builds': {', '.join(builds)}) under {qemu_version()} (Debian qemu-system-misc "
        "1:7.2+dfsg-7+deb12u18+b3): qemu-system-riscv32 -M virt -m 1G -bios none "
        "-semihosting-config enable=on,target=native,arg=<model>,arg=1048576,arg=<input files> "
        "-kernel <build>/driver.elf, one process per run, one invoke. status: 'ok', 'crash' "
        "(the build aborted: a failing TFLITE_CHECK / TF_LITE_ASSERT), 'timeout' (no answer "
        f"within {TIMEOUT_S:.0f} s: the riscv32 build's abort spins), 'alloc_fail' / "
        "'invoke_fail' (TFLM refused). outputs_hex: each output tensor's bytes; not kept "
        "for the stand-in esp32-p4 on the ops ESP-NN replaces (" + ", ".join(ESP_NN_OPS)
        + "), whose compute there is stubbed. Recorded " + datetime.date.today().isoformat()
        + " by python -m tests.record_rv32_extremes --count " + str(a.count) + " --seed "
        + str(a.seed) + " --builds " + " ".join(a.builds) + ". About the builds: " + about_builds)
    record["builds"] = builds
    with open(RECORD, "w") as f:
        json.dump({"about": record["about"], "builds": builds, "cases": record["cases"]},
                  f, indent=1, sort_keys=True)
    print(f"wrote {RECORD}", file=sys.stderr)
    return 0


if __name__ == "__main__":
    sys.exit(main())
