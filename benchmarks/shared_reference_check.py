"""Minimum arenas against the figures made independently of this project
(../shared/reference: tflm_figures.json = the tflite-micro package, host64;
tflm_figures_32bit.json = a 32-bit x86 build, mcu32; tflm_figures_cortexm.json = TFLM for
Cortex-M under QEMU, one entry per profile), every entry that carries min_arena_bytes.

    python benchmarks/shared_reference_check.py [REFERENCE_DIR]

Prints one line per differing entry and the count; exit status 1 if any differs. Models
are read from tests/data (the zoo the figures were made for)."""
import json
import os
import sys

sys.path.insert(0, os.path.dirname(os.path.dirname(os.path.abspath(__file__))))

from micro_runtime.tools.sizing import measure_arena  # noqa: E402

#: build keys of the 32-bit file -> our profile. Its "bits64_same_source" entries (TFLM's
#: 2026-08 source built for 64 bits) are left out: the file's `about` says where they differ
#: from the package (built 2026-10-23) the difference is a TFLM version change, and host64
#: follows the package, whose figures tflm_figures.json holds
BUILD_TARGETS = {"bits32": "mcu32"}
HERE = os.path.dirname(os.path.abspath(__file__))
DATA = os.path.join(HERE, "..", "tests", "data")


def entries(reference_dir: str):
    """(file, model, target, expected min_arena_bytes) for every figure with one."""
    host = json.load(open(os.path.join(reference_dir, "tflm_figures.json")))
    for model, figures in host.items():
        if model != "about" and "min_arena_bytes" in figures:
            yield "tflm_figures.json", model, "host64", figures["min_arena_bytes"]
    for name in ("tflm_figures_32bit.json", "tflm_figures_cortexm.json"):
        data = json.load(open(os.path.join(reference_dir, name)))
        for model, builds in data["models"].items():
            for build, figures in builds.items():
                if "min_arena_bytes" in figures and build != "bits64_same_source":
                    yield name, model, BUILD_TARGETS.get(build, build), figures["min_arena_bytes"]


def main() -> int:
    reference_dir = sys.argv[1] if len(sys.argv) > 1 else os.path.join(HERE, "..", "..", "shared",
                                                                      "reference")
    checked = differ = 0
    for name, model, target, expected in entries(reference_dir):
        got = measure_arena(os.path.join(DATA, model), target=target).min_arena_bytes
        checked += 1
        if got != expected:
            differ += 1
            print(f"{name}: {model} on {target}: ours {got}, reference {expected}")
    print(f"{checked} minimum arenas checked, {differ} differ")
    return 1 if differ else 0


if __name__ == "__main__":
    sys.exit(main())
