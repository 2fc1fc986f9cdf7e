"""Keep numpy's OpenBLAS single-threaded.

The kernels multiply many small matrices; OpenBLAS threads cost more than they give
there (person_detect: 6.8 ms per invoke with 1 thread, 27.8 ms with 2 on a 2-core host).
The environment variable only works before numpy loads, so the running library is also
told through its C API. ``MICRO_RUNTIME_BLAS_THREADS=N`` chooses N; ``0`` leaves BLAS alone.
"""
from __future__ import annotations

import ctypes
import os

_DONE = False
_SYMBOLS = ("openblas_set_num_threads", "scipy_openblas_set_num_threads64_",
            "openblas_set_num_threads64_", "scipy_openblas_set_num_threads")


def limit_blas_threads() -> None:
    """Apply the thread count once per process (Linux; elsewhere the env var only)."""
    global _DONE
    if _DONE:
        return
    _DONE = True
    wanted = int(os.environ.get("MICRO_RUNTIME_BLAS_THREADS", "1") or 0)
    if wanted <= 0:
        return
    try:
        with open("/proc/self/maps") as f:
            paths = {line.split()[-1] for line in f if "openblas" in line.lower()
                     and line.split()[-1].startswith("/")}
    except OSError:
        return
    for path in sorted(paths):
        try:
            lib = ctypes.CDLL(path)
        except OSError:
            continue
        for name in _SYMBOLS:
            fn = getattr(lib, name, None)
            if fn is not None:
                fn(ctypes.c_int(wanted))
                break
