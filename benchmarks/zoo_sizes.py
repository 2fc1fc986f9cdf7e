"""Arena figures of every zoo model per target, and the struct-size table behind them.

    python benchmarks/zoo_sizes.py            # markdown tables for docs/targets.md
"""
import os
import sys

sys.path.insert(0, os.path.dirname(os.path.dirname(os.path.abspath(__file__))))

from micro_runtime.tools.sizing import measure_arena  # noqa: E402
from micro_runtime.targets import HOST64, MCU32  # noqa: E402
from tests.test_zoo import ZOO  # noqa: E402

DATA = os.path.join(os.path.dirname(__file__), "..", "tests", "data")
CORE_STRUCTS = ["TfLiteEvalTensor", "TfLiteTensor", "TfLiteAffineQuantization", "NodeAndRegistration",
                "SubgraphAllocations", "ScratchBufferRequest", "ScratchBufferHandle", "AllocationInfo",
                "SingleArenaBufferAllocator", "RecordingSingleArenaBufferAllocator", "MicroAllocator",
                "RecordingMicroAllocator", "MicroBuiltinDataAllocator", "GreedyMemoryPlanner",
                "LinearMemoryPlanner", "TfLiteFullyConnectedParams", "fully_connected.OpDataFullyConnected",
                "conv.OpDataConv", "softmax.SoftmaxParams", "pooling.OpDataPooling"]


def main():
    for target in ("mcu32", "host64"):
        print(f"\n**{target}**\n")
        print("| model | min arena | head | tail | temporaries peak | TFLM's reported total | plain MicroAllocator |")
        print("|---|---:|---:|---:|---:|---:|---:|")
        for name in ZOO:
            s = measure_arena(os.path.join(DATA, name + ".tflite"), target)
            print(f"| {name} | {s.min_arena_bytes} | {s.head_bytes} | {s.tail_bytes} | {s.temp_peak_bytes} | "
                  f"{s.tflm_reported_total_bytes} | {s.plain_min_arena_bytes} |")
    print("\n| struct | mcu32 | host64 | mcu32 derivation |")
    print("|---|---:|---:|---|")
    for name in CORE_STRUCTS:
        a, b = MCU32.structs[name], HOST64.structs[name]
        print(f"| {name} | {a.size} | {b.size} | {a.derivation} |")


if __name__ == "__main__":
    main()
