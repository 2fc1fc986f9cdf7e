"""Record the ESP oracle's figures for seeded ESP-NN single-op cases
(tests/esp_nn_op_cases.py's ``generate(op, count, seed)``) into tests/data/esp_nn_cases/.

    python -m tests.record_esp_nn_cases --oracle DIR --op conv --count 36 --seed 1 \\
        --profiles esp32-c3 esp32-c3+ansi riscv32 esp32-s3 esp32-p4

``DIR`` holds ``esp_oracle.py`` (the esp-oracle runner: esp-tflite-micro + ESP-NN and
upstream TFLM built for RV32 and run under qemu-system-riscv32; its ``about`` says how). The
stand-in builds (``esp32-s3``, ``esp32-p4``: the chips' C with their assembly routines
stubbed) give status, report lines and minimum arenas only; the others also the output
bytes. Writes ``tests/data/esp_nn_cases/<op>/<name>.tflite`` / ``.input<k>.bin`` and
``tests/data/esp_nn_cases/<op>.json`` = {about, profiles, cases: {name: {profile: {status,
report_lines, outputs_hex, min_arena_bytes}}}}; with ``--keep-models`` the stored models
are recorded again and profiles not asked for are kept.
"""
from __future__ import annotations

import argparse
import datetime
import json
import os
import shutil
import sys

from tests.record_cmsis_nn_cases import load_oracle, record_case, short_copy, write_cases

CASES_DIR = os.path.join(os.path.dirname(os.path.abspath(__file__)), "data", "esp_nn_cases")
#: builds whose ESP-NN compute routines are stubs (no outputs recorded)
STAND_INS = ("esp32-s3", "esp32-p4")


def main(argv=None) -> int:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--oracle", required=True, help="directory of esp_oracle.py")
    ap.add_argument("--op", required=True)
    ap.add_argument("--count", type=int, default=36)
    ap.add_argument("--seed", type=int, default=1)
    ap.add_argument("--profiles", nargs="+", default=["esp32-c3", "esp32-c3+ansi"])
    ap.add_argument("--note", default="", help="how the oracle's binaries were made (into the about)")
    ap.add_argument("--keep-models", action="store_true",
                    help="record the stored models again instead of generating them")
    a = ap.parse_args(argv)
    oracle = load_oracle(a.oracle, "esp_oracle.py")
    directory = (os.path.join(CASES_DIR, a.op) if a.keep_models
                 else write_cases(a.op, a.count, a.seed, "tests.esp_nn_op_cases", CASES_DIR))
    path = os.path.join(CASES_DIR, a.op + ".json")
    record = {"cases": {}}
    if os.path.exists(path) and a.keep_models:
        with open(path) as f:
            record = json.load(f)
    short_dir, names = short_copy(directory)
    try:
        for profile in a.profiles:
            for short, name in sorted(names.items()):
                entry = record_case(oracle, profile, short_dir, short, a.op, name, CASES_DIR,
                                    outputs=profile not in STAND_INS)
                record["cases"].setdefault(name, {})[profile] = entry
                print(f"{profile} {name}: {entry['status']} {entry.get('min_arena_bytes', '')}",
                      file=sys.stderr, flush=True)
    finally:
        shutil.rmtree(short_dir, ignore_errors=True)
    profiles = sorted({p for entry in record["cases"].values() for p in entry})
    about = getattr(oracle, "about_text", lambda p: "see the esp-oracle runner's README")(profiles)
    record["about"] = (
        f"{a.op}: single-op models from tests/esp_nn_op_cases.py (seed {a.seed}, "
        f"{len(record['cases'])} cases), each run once on its stored .input<k>.bin files by the "
        f"esp-oracle builds ({', '.join(profiles)}; stand-ins {', '.join(STAND_INS)}: no outputs). "
        f"{about} {a.note + ' ' if a.note else ''}report_lines = PrintAllocations, outputs_hex = each output tensor's bytes "
        "after the invoke, min_arena_bytes = binary search (1-byte grid, one QEMU process per "
        "try, success = AllocateTensors and Invoke OK). Recorded "
        + datetime.date.today().isoformat() + " by tests/record_esp_nn_cases.py.")
    with open(path, "w") as f:
        json.dump({"about": record["about"], "profiles": profiles, "cases": record["cases"]},
                  f, indent=1, sort_keys=True)
    print(f"wrote {path}: {len(record['cases'])} cases x {profiles}", file=sys.stderr)
    return 0


if __name__ == "__main__":
    sys.exit(main())
