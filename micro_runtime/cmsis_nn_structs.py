"""Sizes of the OpData structs of TFLM's CMSIS-NN kernels (``kernels/cmsis_nn/``) as
arm-none-eabi-gcc lays them out for Cortex-M (32-bit pointers, AAPCS short enums).

Keys are ``"cmsis_nn.<kernel module>.<Struct>"`` (what a CMSIS-NN kernel variant passes to
``ctx.sizeof``); values ``(size, align, derivation)`` in bytes, the derivation listing the
fields in order as in :mod:`micro_runtime.targets`. The Cortex-M targets built with
``+cmsis-nn`` add these to their struct table.
"""
from __future__ import annotations

from typing import Dict, Tuple

CMSIS_NN_STRUCTS: Dict[str, Tuple[int, int, str]] = {
    # one block per kernel module, kept in alphabetical order of the module
}
