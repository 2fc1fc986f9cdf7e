"""Invoke time of the matmul / data-movement kernels (BATCH_MATMUL, BATCH_TO_SPACE_ND,
SPACE_TO_BATCH_ND, DEPTH_TO_SPACE, SPACE_TO_DEPTH, DYNAMIC_UPDATE_SLICE,
EMBEDDING_LOOKUP, GATHER_ND, L2_POOL_2D, MIRROR_PAD, RESIZE_BILINEAR, REVERSE_V2) at
realistic sizes, and of an attention block, side by side with TFLM (the tflite-micro
package, timed in its worker process). Outputs are checked identical first.

    python benchmarks/bench_new_ops.py [--runs 30] [--warmup 3]

Medians in milliseconds; ratio = ours / TFLM.
"""
import argparse
import os

os.environ.setdefault("OPENBLAS_NUM_THREADS", "1")  # before numpy: see micro_runtime/__init__.py
import statistics
import sys
import time

import numpy as np

sys.path.insert(0, os.path.dirname(os.path.dirname(os.path.abspath(__file__))))

from micro_runtime import MicroInterpreter  # noqa: E402
from tests.helpers import TensorDef as T, single_op_model as model  # noqa: E402
from tests.oracle import Oracle  # noqa: E402
from tests.test_converter_graphs import attention_block  # noqa: E402

ARENA = 1 << 23


def _i8(rng, *shape):
    return rng.integers(-128, 128, shape, dtype=np.int8)


def _f32(rng, *shape):
    return rng.uniform(-4, 4, shape).astype(np.float32)


def cases():
    rng = np.random.default_rng(0)
    q = (0.05, 3)
    i32 = lambda *v: np.array(v, np.int32)  # noqa: E731
    yield ("BATCH_MATMUL int8 8x64x32 @ 8x64x32^T",
           model("BATCH_MATMUL", [T((1, 8, 64, 32), "INT8", q), T((1, 8, 64, 32), "INT8", q)],
                 [T((1, 8, 64, 64), "INT8", (0.2, -1))], adj_y=True), [_i8(rng, 1, 8, 64, 32), _i8(rng, 1, 8, 64, 32)])
    yield ("BATCH_MATMUL float32 8x64x32 @ 8x32x64",
           model("BATCH_MATMUL", [T((1, 8, 64, 32), "FLOAT32"), T((1, 8, 32, 64), "FLOAT32")],
                 [T((1, 8, 64, 64), "FLOAT32")]), [_f32(rng, 1, 8, 64, 32), _f32(rng, 1, 8, 32, 64)])
    yield ("BATCH_TO_SPACE_ND int8 4x32x32x32 -> 1x64x64x32",
           model("BATCH_TO_SPACE_ND", [T((4, 32, 32, 32), "INT8", q), T((2,), "INT32", data=i32(2, 2)),
                                       T((2, 2), "INT32", data=np.zeros((2, 2), np.int32))],
                 [T((1, 64, 64, 32), "INT8", q)]), [_i8(rng, 4, 32, 32, 32)])
    yield ("SPACE_TO_BATCH_ND int8 1x64x64x32 -> 4x32x32x32",
           model("SPACE_TO_BATCH_ND", [T((1, 64, 64, 32), "INT8", q), T((2,), "INT32", data=i32(2, 2)),
                                       T((2, 2), "INT32", data=np.zeros((2, 2), np.int32))],
                 [T((4, 32, 32, 32), "INT8", q)]), [_i8(rng, 1, 64, 64, 32)])
    yield ("DEPTH_TO_SPACE int8 1x32x32x64 b2",
           model("DEPTH_TO_SPACE", [T((1, 32, 32, 64), "INT8", q)], [T((1, 64, 64, 16), "INT8", q)], block_size=2),
           [_i8(rng, 1, 32, 32, 64)])
    yield ("SPACE_TO_DEPTH int8 1x64x64x16 b2",
           model("SPACE_TO_DEPTH", [T((1, 64, 64, 16), "INT8", q)], [T((1, 32, 32, 64), "INT8", q)], block_size=2),
           [_i8(rng, 1, 64, 64, 16)])
    yield ("DYNAMIC_UPDATE_SLICE float32 1x128x256 <- 1x16x256",
           model("DYNAMIC_UPDATE_SLICE", [T((1, 128, 256), "FLOAT32"), T((1, 16, 256), "FLOAT32"), T((3,), "INT32")],
                 [T((1, 128, 256), "FLOAT32")]), [_f32(rng, 1, 128, 256), _f32(rng, 1, 16, 256), i32(0, 40, 0)])
    yield ("EMBEDDING_LOOKUP int8 1000x64 -> float32, 128 ids",
           model("EMBEDDING_LOOKUP", [T((128,), "INT32"), T((1000, 64), "INT8", (0.02, 0), data=_i8(rng, 1000, 64))],
                 [T((128, 64), "FLOAT32")]), [rng.integers(0, 1000, 128).astype(np.int32)])
    yield ("GATHER_ND float32 64x64x32, 256x2 indices",
           model("GATHER_ND", [T((64, 64, 32), "FLOAT32"), T((256, 2), "INT32")], [T((256, 32), "FLOAT32")]),
           [_f32(rng, 64, 64, 32), rng.integers(0, 64, (256, 2)).astype(np.int32)])
    yield ("L2_POOL_2D float32 1x64x64x32 3x3/2",
           model("L2_POOL_2D", [T((1, 64, 64, 32), "FLOAT32")], [T((1, 32, 32, 32), "FLOAT32")], padding=0,
                 stride_h=2, stride_w=2, filter_height=3, filter_width=3), [_f32(rng, 1, 64, 64, 32)])
    yield ("MIRROR_PAD int8 1x64x64x32 reflect 3",
           model("MIRROR_PAD", [T((1, 64, 64, 32), "INT8", q),
                                T((4, 2), "INT32", data=np.array([[0, 0], [3, 3], [3, 3], [0, 0]], np.int32))],
                 [T((1, 70, 70, 32), "INT8", q)], mode=0), [_i8(rng, 1, 64, 64, 32)])
    for dtype, make in (("INT8", _i8), ("FLOAT32", _f32)):
        yield (f"RESIZE_BILINEAR {dtype.lower()} 1x32x32x21 -> 128x128 half-pixel",
               model("RESIZE_BILINEAR", [T((1, 32, 32, 21), dtype, q if dtype == "INT8" else None),
                                         T((2,), "INT32", data=i32(128, 128))],
                     [T((1, 128, 128, 21), dtype, q if dtype == "INT8" else None)], half_pixel_centers=True),
               [make(rng, 1, 32, 32, 21)])
    yield ("REVERSE_V2 int16 1x256x64 axis 1",
           model("REVERSE_V2", [T((1, 256, 64), "INT16"), T((1,), "INT32", data=i32(1))], [T((1, 256, 64), "INT16")]),
           [rng.integers(-32768, 32768, (1, 256, 64)).astype(np.int16)])
    yield ("attention block int8 (64 tokens, width 64, 4 heads)", attention_block("INT8", 64, 64, 4),
           [_i8(rng, 1, 64, 64)])


def time_ours(raw, inputs, runs, warmup):
    """(median invoke seconds, outputs of the first invoke). Later invokes may see inputs
    the plan let other tensors overwrite (in TFLM too), so only the first is compared."""
    it = MicroInterpreter(raw, arena_size=ARENA, target="host64")
    it.allocate_tensors()
    for i, x in enumerate(inputs):
        it.set_input(x, i)
    it.invoke()
    outputs = [np.array(it.output(i)) for i in range(it.outputs_size)]
    for _ in range(warmup):
        it.invoke()
    times = []
    for _ in range(runs):
        t0 = time.perf_counter()
        it.invoke()
        times.append(time.perf_counter() - t0)
    return statistics.median(times), outputs


def main():
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--runs", type=int, default=30)
    ap.add_argument("--warmup", type=int, default=3)
    args = ap.parse_args()
    oracle = Oracle()
    print(f"{'case':<58}{'ours ms':>10}{'TFLM ms':>10}{'ratio':>8}")
    try:
        for name, raw, inputs in cases():
            theirs = oracle.run(raw, inputs, ARENA)
            ours, outputs = time_ours(raw, inputs, args.runs, args.warmup)
            same = theirs.ok and all(a.tobytes() == b.tobytes() for a, b in zip(outputs, theirs.outputs))
            tflm = statistics.median(oracle.time_invoke(raw, inputs, ARENA, args.warmup, args.runs))
            print(f"{name:<58}{ours * 1e3:>10.3f}{tflm * 1e3:>10.3f}{ours / tflm:>8.2f}"
                  f"{'' if same else '  OUTPUTS DIFFER'}")
    finally:
        oracle.close()


if __name__ == "__main__":
    main()
