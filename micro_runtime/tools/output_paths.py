"""The one rule for every file a command writes (``run --output``, ``eval --output``,
``plan --svg``, ``optimize -o``).

* The file written is exactly the path given: no suffix is added. The one exception: one
  path given for a model with several outputs, where output ``k`` goes to
  ``STEM_k.EXT`` (``y.npy`` -> ``y_0.npy``, ``y_1.npy``); the command reports the
  paths it wrote.
* Refused before any work starts, each with a one-line error naming the option: a
  directory (or a path ending in ``/``), an existing path that is not a regular file
  (``/dev/full``, a FIFO, a socket), a missing parent directory, a directory the
  user cannot write to.
* An existing regular file is replaced.
"""
from __future__ import annotations

import os
import stat
from typing import Callable, List, Sequence

from ..errors import InputError


def check_output_path(path: str, option: str, example: str = "out.npy") -> str:
    """``path`` if a command may write it under the rule above, else :class:`InputError`
    naming ``option`` (``"--output"``); ``example`` is the file name suggested when a
    directory was given."""
    path = os.fspath(path)
    if not path:
        raise InputError(f"{option}: an empty path; give a file name such as {example}")
    if path.endswith(("/", os.sep)) or os.path.isdir(path):
        raise InputError(f"{option} {path} is a directory; give a file name such as "
                         f"{os.path.join(path, example)}")
    try:
        info = os.stat(path)
    except FileNotFoundError:
        info = None
    except OSError as e:
        raise InputError(f"cannot write {option} {path}: {e.strerror or e}") from None
    if info is not None and not stat.S_ISREG(info.st_mode):
        raise InputError(f"{option} {path} exists and is not a regular file (a device, pipe or "
                         "socket); give the path of a file to write")
    parent = os.path.dirname(os.path.abspath(path))
    if not os.path.isdir(parent):
        raise InputError(f"cannot write {option} {path}: directory {parent} does not exist")
    if info is None and not os.access(parent, os.W_OK | os.X_OK):
        raise InputError(f"cannot write {option} {path}: no permission to create files in {parent}")
    if info is not None and not os.access(path, os.W_OK):
        raise InputError(f"cannot write {option} {path}: the file is not writable")
    return path


def output_files(given: Sequence[str], count: int, option: str = "--output",
                 example: str = "out.npy") -> List[str]:
    """The files ``count`` outputs go to from the ``option`` values ``given``: none, one
    per output, or one path for all (``STEM_k.EXT`` for output ``k`` when ``count`` > 1);
    each checked by :func:`check_output_path`."""
    given = [os.fspath(p) for p in given]
    if given and len(given) not in (1, count):
        raise InputError(f"the model has {count} output(s); give one {option}, or one per output")
    for p in given:
        check_output_path(p, option, example)
    if len(given) == 1 and count > 1:
        stem, ext = os.path.splitext(given[0])
        given = [f"{stem}_{k}{ext}" for k in range(count)]
        for p in given:
            check_output_path(p, option, example)
    return given


def write_file(path: str, option: str, write: Callable) -> None:
    """Create or replace ``path`` and call ``write(binary_file)``; an OSError (disk full,
    permissions changed meanwhile) becomes an :class:`InputError` naming ``option``."""
    try:
        with open(path, "wb") as f:
            write(f)
    except OSError as e:
        raise InputError(f"cannot write {option} {path}: {e.strerror or e}") from None


__all__ = ["check_output_path", "output_files", "write_file"]
