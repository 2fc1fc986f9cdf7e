"""The one rule for the shape of input data, used by every command and by
:func:`~micro_runtime.evaluate`.

For a model input of shape ``S`` (e.g. ``(1, 32, 32, 3)``), an array is

* exactly ``S``: one sample;
* ``(n, *S)``: ``n`` samples on a leading axis;
* when ``S`` starts with a batch axis of 1, ``(n, *S[1:])``: ``n`` samples in place of
  that axis (a data set of images ``(300, 32, 32, 3)``).

The three cannot be confused: ``(n, *S)`` has one axis more than ``S``, and an array of
exactly ``S`` read as ``(n, *S[1:])`` is the same single sample. The dtype must be the
input's own (nothing is cast; ``--quantize`` turns real values into it first).
"""
from __future__ import annotations

from typing import Sequence, Tuple

import numpy as np

from .errors import InputError


def shape_rule(shape: Sequence[int]) -> str:
    """The shapes :func:`as_samples` accepts for an input of ``shape``, in words."""
    shape = tuple(int(d) for d in shape)
    text = f"{shape} (one sample) or (n, {', '.join(map(str, shape))}) (n samples)"
    if shape and shape[0] == 1:
        text += f" or (n, {', '.join(map(str, shape[1:]))}) (n samples in place of the batch axis)"
    return text.replace(",)", ")")


def as_samples(value: np.ndarray, shape: Sequence[int], what: str = "input") -> Tuple[np.ndarray, bool]:
    """``value`` as ``(n, *shape)`` (a view, no copy) and whether it was a batch (False:
    exactly ``shape``, one sample). :class:`InputError` naming ``what`` for any other
    shape."""
    shape = tuple(int(d) for d in shape)
    if not isinstance(value, np.ndarray):
        raise InputError(f"{what}: expected a numpy array, got {type(value).__name__}")
    got = tuple(value.shape)
    if got == shape:
        return value.reshape((1,) + shape), False
    if len(got) == len(shape) + 1 and got[1:] == shape:
        return value, True
    if shape and shape[0] == 1 and len(got) == len(shape) and got[1:] == shape[1:]:
        return value.reshape((got[0],) + shape), True
    raise InputError(f"{what}: expected shape {shape_rule(shape)}, got {got}")


__all__ = ["as_samples", "shape_rule"]
