"""Many-input differential run against a TFLM Cortex-M build under QEMU.

    CORTEXM_ORACLE_BIN=DIR python benchmarks/cortexm_many_inputs.py PROFILE [--samples 64]
                                                                   [--seed 11] [--models SUBSTR]

For every zoo model (tests/data/*.tflite; the COMPRESSION_METADATA models, which the
Cortex-M builds do not support, left out): N seeded random samples (integer inputs: every
byte uniform, i.e. full range; float inputs: standard normal), each run by TFLM built for
PROFILE (``$CORTEXM_ORACLE_BIN/<PROFILE>/driver.elf``, one QEMU process per sample, see
benchmarks/cortexm_oracle/README.md) and by micro-runtime (one MicroInterpreter on that
target, reset before each sample, as a fresh TFLM process starts). Prints exact/total per
model; exit status 1 when a sample differs. Needs the oracle binaries: not a CI test.
"""
import argparse
import glob
import os
import sys
import tempfile

import numpy as np

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
sys.path.insert(0, ROOT)
sys.path.insert(0, os.path.join(ROOT, "benchmarks", "cortexm_oracle"))

import cortexm_oracle  # noqa: E402
from micro_runtime import MicroInterpreter  # noqa: E402

ARENA_BYTES = 1 << 22


def random_sample(rng: np.random.Generator, like: np.ndarray) -> np.ndarray:
    """A full-range random array shaped and typed as ``like``."""
    if like.dtype.kind == "f":
        return rng.standard_normal(like.shape).astype(like.dtype)
    return rng.integers(0, 256, like.nbytes, dtype=np.uint8).view(like.dtype).reshape(like.shape)


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("profile")
    ap.add_argument("--samples", type=int, default=64)
    ap.add_argument("--seed", type=int, default=11)
    ap.add_argument("--models", default="", help="only models whose file name contains this")
    args = ap.parse_args()
    models = [m for m in sorted(glob.glob(os.path.join(ROOT, "tests", "data", "*.tflite")))
              if "metadata" not in m and args.models in os.path.basename(m)]
    rng = np.random.default_rng(args.seed)
    total = exact = 0
    with tempfile.TemporaryDirectory(dir="/tmp") as tmp:   # short paths: semihosting truncates long ones
        for model in models:
            it = MicroInterpreter(model, arena_size=ARENA_BYTES, target=args.profile)
            it.allocate_tensors()
            good = 0
            for _ in range(args.samples):
                files = []
                for k in range(it.inputs_size):
                    sample = random_sample(rng, it.input(k))
                    it.input(k)[...] = sample
                    files.append(os.path.join(tmp, f"i{k}.bin"))
                    sample.tofile(files[-1])
                it.reset()
                it.invoke()
                ours = "".join(it.output(k).tobytes().hex() for k in range(it.outputs_size))
                run = cortexm_oracle.run(args.profile, model, ARENA_BYTES, inputs=files)
                theirs = "".join(run["outputs_hex"]) if run["status"] == "ok" else run["status"]
                good += ours == theirs
            total += args.samples
            exact += good
            print(f"  {good:3d}/{args.samples}  {os.path.basename(model)}", flush=True)
    print(f"{args.profile}: {exact} of {total} samples exact over {len(models)} models")
    return 0 if exact == total else 1


if __name__ == "__main__":
    sys.exit(main())
