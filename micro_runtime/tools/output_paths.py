"""The one rule for every file a command writes (``run --output``, ``eval --output``,
``plan --svg``, ``fit --svg``, ``optimize -o``).

* The file written is exactly the path given: no suffix is added. The one exception: one
  path given for a model with several outputs, where output ``k`` goes to
  ``STEM_k.EXT`` (``y.npy`` -> ``y_0.npy``, ``y_1.npy``); the command reports the
  paths it wrote.
* Refused before any work starts, each with a one-line error naming the option: a
  directory (or a path ending in ``/``), an existing path that is not a regular file
  (``/dev/full``, a FIFO, a socket), a missing parent directory, a directory the
  user cannot write to.
* Refused too: a file the same command reads (the model, an input, the labels), and the
  same file given for two outputs -- writing would destroy what is being read or written.
* Any other existing regular file is replaced.
"""
from __future__ import annotations

import os
import stat
from typing import Callable, List, Sequence

from ..errors import InputError


def _same_file(a: str, b: str) -> bool:
    """Whether paths ``a`` and ``b`` name one existing file (links followed)."""
    try:
        return os.path.samefile(a, b)
    except (OSError, ValueError):
        return False


def check_output_path(path: str, option: str, example: str = "out.npy",
                      reads: Sequence = ()) -> str:
    """``path`` if a command may write it under the rule above, else :class:`InputError`
    naming ``option`` (``"--output"``); ``example`` is the file name suggested when a
    directory was given; ``reads``: the files the command reads (None entries and
    paths that do not exist are skipped)."""
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
    if info is not None:
        for read in reads:
            if read is not None and _same_file(path, os.fspath(read)):
                raise InputError(f"{option} {path} is a file this command reads ({os.fspath(read)}); "
                                 "give another path to write")
    return path


def output_files(given: Sequence[str], count: int, option: str = "--output",
                 example: str = "out.npy", reads: Sequence = ()) -> List[str]:
    """The files ``count`` outputs go to from the ``option`` values ``given``: none, one
    per output, or one path for all (``STEM_k.EXT`` for output ``k`` when ``count`` > 1);
    each checked by :func:`check_output_path` (``reads``: the files the command reads),
    no file twice."""
    given = [os.fspath(p) for p in given]
    if given and len(given) not in (1, count):
        raise InputError(f"the model has {count} output(s); give one {option}, or one per output")
    for p in given:
        check_output_path(p, option, example, reads)
    if len(given) == 1 and count > 1:
        stem, ext = os.path.splitext(given[0])
        given = [f"{stem}_{k}{ext}" for k in range(count)]
    for k, p in enumerate(given):
        check_output_path(p, option, example, reads)
        for q in given[:k]:
            if os.path.abspath(p) == os.path.abspath(q) or _same_file(p, q):
                raise InputError(f"{option} {p} is given for two outputs; give one file per output")
    return given


def reads_of(model: str, *others) -> List[str]:
    """The files a command reads: the model's (``bundled:NAME`` resolved; an unknown name
    is left to the loader to report) and the ``others`` given (None skipped)."""
    from .model_paths import resolve_model_path
    try:
        files = [resolve_model_path(os.fspath(model))]
    except (InputError, TypeError):
        files = []
    return files + [os.fspath(p) for p in others if p is not None]


def write_file(path: str, option: str, write: Callable) -> None:
    """Create or replace ``path`` and call ``write(binary_file)``; an OSError (disk full,
    permissions changed meanwhile) becomes an :class:`InputError` naming ``option``."""
    try:
        with open(path, "wb") as f:
            write(f)
    except OSError as e:
        raise InputError(f"cannot write {option} {path}: {e.strerror or e}") from None


__all__ = ["check_output_path", "output_files", "reads_of", "write_file"]
