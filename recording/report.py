"""The allocation report, line for line as TFLM's RecordingMicroAllocator prints it."""
from __future__ import annotations

import sys
from typing import List

from micro_runtime.interpreter import TFLM_LINE_END

from .allocator import CATEGORIES

PREFIX = "[RecordingMicroAllocator]"


def allocation_report(allocator) -> List[str]:
    """TFLM's PrintAllocations() lines for a RecordingMicroAllocator."""
    arena = allocator.arena
    lines = [
        f"{PREFIX} Arena allocation total {arena.recorded_used_bytes} bytes",
        f"{PREFIX} Arena allocation head {arena.non_persistent_used_bytes} bytes",
        f"{PREFIX} Arena allocation tail {arena.persistent_used_bytes} bytes",
    ]
    for key, name, word, _ in CATEGORIES:
        rec = allocator.recorded[key]
        if rec.used_bytes > 0 or rec.requested_bytes > 0:
            lines.append(f"{PREFIX} '{name}' used {rec.used_bytes} bytes with alignment overhead "
                         f"(requested {rec.requested_bytes} bytes for {rec.count} {word})")
    return lines


def write_allocation_report(allocator, file=None) -> None:
    """Write the report to ``file`` (default stderr) byte for byte as the tflite-micro
    package does: each line ended by TFLM's CR LF."""
    out = file if file is not None else sys.stderr
    out.write("".join(line + TFLM_LINE_END for line in allocation_report(allocator)))
    out.flush()
