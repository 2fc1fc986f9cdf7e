"""What esp-tflite-micro's ESP-NN kernels share: the 16-bit limit of ESP-NN's arguments
and the description of the target's ESP-NN function set."""
from __future__ import annotations

from typing import Optional

#: ESP-NN reads widths, heights, channels, strides, paddings and row lengths into
#: ``uint16_t``: a larger value is silently truncated by the C build
UINT16_LIMIT = 65535

FUNCTION_SETS = {
    "opt": "ESP-NN's generic optimised C",
    "ansi": "ESP-NN's plain C (CONFIG_NN_ANSI_C)",
    "esp32s3": "ESP-NN's esp32s3 routines (outputs modelled by ESP-NN's C arithmetic)",
    "esp32p4": "ESP-NN's esp32p4 routines (outputs modelled by ESP-NN's C arithmetic)",
}


def function_set(ctx) -> str:
    """The target's ESP-NN function set (``"opt"``, ``"ansi"``, ``"esp32s3"``, ``"esp32p4"``)."""
    value = ctx.target.esp_nn
    if value not in FUNCTION_SETS:
        raise ctx.error(f"micro-runtime internal error: target {ctx.target.name!r} has no ESP-NN "
                        f"function set ({value!r})")
    return value


def uint16_problem(routine: str, **values: int) -> Optional[str]:
    """Why the arguments cannot be modelled when ESP-NN would truncate some to 16 bits (the
    ESP build then computes with the truncated values), else None."""
    big = {name: int(v) for name, v in values.items() if not 0 <= int(v) <= UINT16_LIMIT}
    if not big:
        return None
    listed = ", ".join(f"{name} {v}" for name, v in big.items())
    return (f"{listed}: ESP-NN's {routine} takes these as uint16_t (at most {UINT16_LIMIT}); "
            "the ESP build would compute with truncated values (not modelled)")
