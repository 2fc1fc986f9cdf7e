"""Arrays in and out of the tools: reading .npy files, quantizing real inputs and
dequantizing outputs with a tensor's own scale and zero point.

Quantization is TFLM's (the QUANTIZE op's AffineQuantize: ``round(x / scale) +
zero_point`` in float32, std::round, clamped to the type); dequantization is the
DEQUANTIZE op's (``scale * (q - zero_point)`` in double, stored as float32).
"""
from __future__ import annotations

from typing import List, Optional, Sequence, Tuple

import numpy as np

from ..errors import InputError
from ..files import NPY_MAGIC  # noqa: F401 - re-exported


def load_npy(path: str, what: str = "input", limit: Optional[int] = None) -> np.ndarray:
    """The array stored in the .npy file ``path`` (:func:`micro_runtime.files.read_npy`):
    :class:`InputError` (naming ``what`` and the path) for a missing, non-regular,
    unreadable, non-.npy, pickled or damaged file, or one over ``limit`` bytes."""
    from ..files import read_npy
    return read_npy(path, what, limit)


def sample_file_limit(spec, samples: int = 1) -> int:
    """The most bytes an input file for ``samples`` samples of tensor ``spec`` may hold:
    8 bytes (a float64 real value) per element, plus the largest .npy header."""
    from ..files import MAX_NPY_HEADER_BYTES
    count = 1
    for d in spec.shape:
        count *= max(int(d), 1)
    return 8 * count * max(int(samples), 1) + MAX_NPY_HEADER_BYTES + 16


def _affine(spec, what: str):
    q = spec.quantization
    if q is None:
        return None
    if q.scales.size != 1:
        raise InputError(f"{what} {spec.describe()} is quantized per channel ({q.scales.size} "
                         "scales); only per-tensor quantization can be applied to real values")
    return float(q.scales[0]), int(q.zero_points[0])


def quantize_input(value: np.ndarray, spec, what: str = "input") -> np.ndarray:
    """Real values -> the tensor ``spec``'s type with its scale and zero point.

    A floating array is taken as float32 (the QUANTIZE op's input type) and quantized as
    TFLM's QUANTIZE op does; for a float32 tensor float32 values pass unchanged.
    Anything else is an :class:`InputError` (nothing is cast silently).
    """
    from kernels.quantize import affine_quantize
    if not np.issubdtype(value.dtype, np.floating):
        raise InputError(f"{what}: --quantize expects real (floating-point) values, got {value.dtype}")
    if spec.dtype == np.float32:
        if value.dtype != np.float32:
            raise InputError(f"{what}: the tensor is float32 and takes the values as they are; "
                             f"got {value.dtype} (save float32)")
        return value
    params = _affine(spec, what)
    if params is None or not np.issubdtype(spec.dtype, np.integer):
        raise InputError(f"{what}: {spec.describe()} of type {spec.type_name} has no affine "
                         "quantization to apply")
    scale, zero_point = params
    return affine_quantize(value.astype(np.float32), scale, zero_point, spec.dtype).astype(spec.dtype)


def load_samples(paths: Sequence[str], specs, quantize: bool = False,
                 option: str = "--input") -> Tuple[List[np.ndarray], bool]:
    """One ``(n, *shape)`` array per model input from the ``.npy`` files ``paths``
    (shapes by the rule of :mod:`micro_runtime.samples`), and whether any file held a
    batch. ``quantize``: the files hold real values, quantized with each input's scale
    and zero point (:func:`quantize_input`); otherwise the dtype must be the input's own
    (a float file for an integer input says ``--quantize`` exists)."""
    from ..samples import as_samples
    if len(paths) != len(specs):
        raise InputError(f"the model has {len(specs)} input(s); got {len(paths)} {option} file(s)")
    out, batched = [], False
    for k, (path, spec) in enumerate(zip(paths, specs)):
        value = load_npy(path, f"input {k}")
        if quantize:
            value = quantize_input(value, spec, f"input {k}")
        elif value.dtype != spec.dtype:
            hint = ""
            if np.issubdtype(value.dtype, np.floating) and spec.quantization is not None \
                    and np.issubdtype(spec.dtype, np.integer):
                hint = ("; these look like real values: --quantize quantizes them with the input's "
                        "scale and zero point")
            raise InputError(f"input {k} ({path}): expected dtype {spec.dtype} but got {value.dtype} "
                             f"(values are not cast){hint}")
        samples, was_batch = as_samples(value, spec.shape, f"input {k} ({path})")
        batched = batched or was_batch
        out.append(samples)
    counts = sorted({x.shape[0] for x in out})
    if len(counts) > 1:
        raise InputError(f"the input files hold different numbers of samples: {counts}")
    return out, batched


def dequantize_output(value: np.ndarray, spec) -> np.ndarray:
    """An output in real units (float32): ``scale * (q - zero_point)``; float outputs and
    unquantized integer outputs are returned as they are."""
    params = _affine(spec, "output") if np.issubdtype(value.dtype, np.integer) else None
    if params is None:
        return value
    scale, zero_point = params
    return (scale * (value.astype(np.float64) - zero_point)).astype(np.float32)


__all__ = ["load_npy", "load_samples", "sample_file_limit", "quantize_input", "dequantize_output",
           "NPY_MAGIC"]
