"""System-mode launch of the oracle driver: a Cortex-M firmware on one of QEMU's Arm
boards (``qemu-system-arm -M <machine>``) instead of ``qemu-arm -cpu cortex-a15``.

A profile directory ``<BIN_DIR>/<profile>/`` whose file ``machine`` names a board
(one line, e.g. ``mps3-an547``) is run in system mode: the driver is linked with
``system/startup.c`` and ``system/<board>.ld`` (our own start-up code and memory
maps) and reaches the host through Arm semihosting (argv via SYS_GET_CMDLINE,
stdout / stderr, file reads).  Without that file the profile runs in user mode.
See README.md beside this file.
"""
from __future__ import annotations

import os
from typing import Dict, List, Optional, Sequence

#: board -> (core QEMU models, where the vector table is read at reset, main memory used)
MACHINES: Dict[str, tuple] = {
    "mps3-an547": ("cortex-m55", 0x00000000, "DDR at 0x60000000 (2 GiB; 512 MiB used)"),
    "mps2-an385": ("cortex-m3", 0x00000000, "PSRAM at 0x21000000 (16 MiB)"),
    "mps2-an386": ("cortex-m4", 0x00000000, "PSRAM at 0x21000000 (16 MiB)"),
    "mps2-an500": ("cortex-m7", 0x00000000, "PSRAM at 0x60000000 (16 MiB)"),
    "mps2-an505": ("cortex-m33", 0x10000000, "main memory at 0x80000000 (16 MiB)"),
}
#: the linker script each board uses (system/<name>.ld)
LINKER_SCRIPT = {"mps3-an547": "mps3-an547", "mps2-an385": "mps2-an385",
                 "mps2-an386": "mps2-an385", "mps2-an500": "mps2-an500",
                 "mps2-an505": "mps2-an505"}
QEMU_SYSTEM = "qemu-system-arm"


def machine_of(profile_dir: str) -> Optional[str]:
    """The board named by ``<profile_dir>/machine``, or None (user mode)."""
    path = os.path.join(profile_dir, "machine")
    if not os.path.isfile(path):
        return None
    name = open(path).read().strip()
    if name not in MACHINES:
        raise ValueError(f"{path}: unknown board {name!r}; known: {', '.join(MACHINES)}")
    return name


def _escape(arg: str) -> str:
    # QEMU's option syntax: a literal comma is written twice
    return arg.replace(",", ",,")


def system_command(machine: str, driver: str, args: Sequence[str]) -> List[str]:
    """The qemu-system-arm command line running ``driver`` (an ELF) on ``machine`` with
    ``args`` as argv[1:] (argv[0] is 'driver.elf').  No display, monitor or serial port:
    all I/O is semihosting (the guest's stdout and stderr are QEMU's)."""
    semi = ",".join(["enable=on", "target=native"] +
                    [f"arg={_escape(a)}" for a in ["driver.elf", *args]])
    return [QEMU_SYSTEM, "-M", machine, "-display", "none", "-monitor", "none",
            "-serial", "none", "-semihosting-config", semi, "-kernel", driver]
