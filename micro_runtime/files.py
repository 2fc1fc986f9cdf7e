"""Reading files given by the user: models and arrays, with the same checks everywhere.

Every path a public call or a command reads goes through :func:`read_regular_file` (or
:func:`read_npy`, which uses it):

* only a **regular file** is read. A directory, a FIFO (named pipe), a socket or a
  device (``/dev/zero``, ``/dev/stdin`` on a terminal or pipe) is refused before any
  byte is read. The file is checked with ``stat`` first and then opened with
  ``O_NONBLOCK`` (an open of a FIFO never waits for a writer) and checked again with
  ``fstat`` on the open descriptor (the path cannot be swapped in between);
* at most ``limit`` bytes are read: a larger file is refused from its size alone, and a
  file that grows while it is read is refused once it passes the limit.

Limits (bytes):

* :data:`MAX_MODEL_BYTES` = 2^31 - 1: the largest flatbuffer (flatbuffers addresses
  with signed 32-bit offsets; ``FLATBUFFERS_MAX_BUFFER_SIZE``), so no valid .tflite
  model is larger;
* :data:`MAX_ARRAY_FILE_BYTES` = 2^33 (8 GiB): a .npy data set (``eval --inputs``,
  ``--labels``); ``MICRO_RUNTIME_MAX_ARRAY_BYTES`` (an environment variable, bytes)
  changes it;
* an input of one sample (``run --input``, ``drift --input``) may hold at most the
  input tensor's elements times 8 bytes (float64 real values) and k samples k times
  that, plus the .npy header: callers pass that as ``limit``.

A .npy file's header is checked before any array is allocated: its dtype must be a
plain numeric (or bool) type and its shape times the item size must equal the bytes the
file actually holds after the header, so a header that claims a shape of (2^40, 1) in a
small file is refused without allocating anything.
"""
from __future__ import annotations

import os
import stat
from typing import Optional, Type

import numpy as np

from .errors import InputError, MicroRuntimeError, ModelError

#: the largest model file (bytes): a flatbuffer cannot exceed 2^31 - 1 bytes
MAX_MODEL_BYTES = (1 << 31) - 1
#: default largest .npy data file (bytes); MICRO_RUNTIME_MAX_ARRAY_BYTES overrides it
MAX_ARRAY_FILE_BYTES = 1 << 33
#: bytes a .npy header may take (numpy writes 64-byte aligned headers of a few hundred
#: bytes; format 2.0 allows more, numpy itself refuses headers over 10,000 bytes)
MAX_NPY_HEADER_BYTES = 1 << 16
#: first bytes of every .npy file
NPY_MAGIC = b"\x93NUMPY"
#: first bytes of a .npz file (a zip archive)
ZIP_MAGIC = b"PK\x03\x04"

_KINDS = ((stat.S_ISDIR, "a directory"), (stat.S_ISFIFO, "a FIFO (named pipe)"),
          (stat.S_ISSOCK, "a socket"), (stat.S_ISCHR, "a character device"),
          (stat.S_ISBLK, "a block device"))


def max_array_file_bytes() -> int:
    """The largest .npy data file read (bytes): :data:`MAX_ARRAY_FILE_BYTES`, or the
    value of the environment variable ``MICRO_RUNTIME_MAX_ARRAY_BYTES``."""
    value = os.environ.get("MICRO_RUNTIME_MAX_ARRAY_BYTES")
    if value is None:
        return MAX_ARRAY_FILE_BYTES
    try:
        limit = int(value)
    except ValueError:
        raise InputError(f"MICRO_RUNTIME_MAX_ARRAY_BYTES={value!r} is not a number of bytes") from None
    if limit < 0:
        raise InputError(f"MICRO_RUNTIME_MAX_ARRAY_BYTES={value} must be >= 0")
    return limit


def _kind(mode: int) -> str:
    for test, name in _KINDS:
        if test(mode):
            return name
    return "not a regular file"


def open_regular_file(path, what: str, limit: int,
                      error: Type[MicroRuntimeError] = InputError):
    """``path`` opened for binary reading, after checking that it is a regular file of
    at most ``limit`` bytes (see the module docstring). Returns (file object, size in
    bytes). ``error``: the exception class raised (InputError or ModelError); its message
    names ``what`` and the path."""
    name = os.fspath(path)
    try:
        st = os.stat(name)
    except FileNotFoundError:
        raise error(f"cannot read {what} from {name}: {what} file not found") from None
    except OSError as e:
        raise error(f"cannot read {what} from {name}: {e.strerror or e}") from None
    if not stat.S_ISREG(st.st_mode):
        raise error(f"cannot read {what} from {name}: it is {_kind(st.st_mode)}, not a regular "
                    "file (only regular files are read)")
    _check_size(st.st_size, limit, what, name, error)
    flags = os.O_RDONLY | getattr(os, "O_NONBLOCK", 0) | getattr(os, "O_CLOEXEC", 0)
    try:
        fd = os.open(name, flags)
    except OSError as e:
        raise error(f"cannot read {what} from {name}: {e.strerror or e}") from None
    try:
        st = os.fstat(fd)
        if not stat.S_ISREG(st.st_mode):
            raise error(f"cannot read {what} from {name}: it is {_kind(st.st_mode)}, not a "
                        "regular file (only regular files are read)")
        _check_size(st.st_size, limit, what, name, error)
        f = os.fdopen(fd, "rb")
    except BaseException:
        os.close(fd)
        raise
    return f, int(st.st_size)


def _check_size(size: int, limit: int, what: str, name: str, error) -> None:
    if size > limit:
        raise error(f"cannot read {what} from {name}: the file is {size} bytes, more than the "
                    f"{limit} bytes a {what} file may have")


def read_regular_file(path, what: str, limit: int,
                      error: Type[MicroRuntimeError] = InputError) -> bytes:
    """The bytes of the regular file ``path`` (at most ``limit`` of them); ``error`` for
    anything else (see :func:`open_regular_file`)."""
    name = os.fspath(path)
    f, size = open_regular_file(path, what, limit, error)
    with f:
        try:
            data = f.read(size)             # the size fstat gave (never more than limit)
            extra = f.read(1)               # a file that grew after the fstat
        except MemoryError:
            raise error(f"cannot read {what} from {name}: not enough memory for its "
                        f"{size} bytes") from None
        except OSError as e:
            raise error(f"cannot read {what} from {name}: {e.strerror or e}") from None
    if extra or len(data) != size:
        raise error(f"cannot read {what} from {name}: the file changed while it was read")
    return data


def read_model_file(path) -> bytes:
    """A .tflite file's bytes (:class:`ModelError` for anything but a regular file of at
    most :data:`MAX_MODEL_BYTES`)."""
    return read_regular_file(path, "model", MAX_MODEL_BYTES, ModelError)


def read_npy(path, what: str = "input", limit: Optional[int] = None) -> np.ndarray:
    """The array of the .npy file ``path`` (at most ``limit`` bytes, default
    :func:`max_array_file_bytes`), checked before anything is allocated:
    :class:`InputError` naming ``what`` and the path for a missing, non-regular, empty,
    non-.npy (a .npz archive included), pickled or damaged file, or a header whose shape
    and dtype do not match the bytes stored."""
    from numpy.lib import format as npy_format
    name = os.fspath(path)
    limit = max_array_file_bytes() if limit is None else int(limit)

    def bad(reason: str) -> InputError:
        return InputError(f"cannot read {what} from {name}: {reason}")

    f, size = open_regular_file(path, what, limit, InputError)
    with f:
        head = f.read(len(NPY_MAGIC))
        if head != NPY_MAGIC:
            if not head:
                raise bad("an empty file, not a .npy file; write arrays with numpy.save")
            if head.startswith(ZIP_MAGIC):
                raise bad("it is a .npz archive (several arrays); give one .npy file per "
                          "array (numpy.save)")
            shown = head.decode("ascii", "replace")
            raise bad(f"not a .npy file (it starts with {shown!r}, a .npy file with the bytes "
                      "\\x93NUMPY); write arrays with numpy.save")
        f.seek(0)
        try:
            version = npy_format.read_magic(f)
            if version not in ((1, 0), (2, 0), (3, 0)):
                raise ValueError(f"unknown .npy format version {version}")
            reader = npy_format.read_array_header_1_0 if version == (1, 0) else npy_format.read_array_header_2_0
            kwargs = {"max_header_size": MAX_NPY_HEADER_BYTES} if _takes_max_header() else {}
            shape, fortran, dtype = reader(f, **kwargs)
        except (ValueError, EOFError, OSError, SyntaxError, TypeError, KeyError) as e:
            raise bad(f"damaged .npy header ({e})") from None
        if dtype.hasobject:
            raise bad("it holds Python objects (a pickled array), not numbers; save a numeric array")
        if dtype.kind not in "biufc" or dtype.subdtype is not None or dtype.names is not None:
            raise bad(f"its dtype {dtype} is not a plain numeric type")
        offset = f.tell()
        stored = size - offset
        count = 1
        for d in shape:
            count *= int(d)
        expected = count * dtype.itemsize
        if expected != stored:
            raise bad(f"its header says shape {tuple(shape)} of {dtype} ({expected} bytes) but "
                      f"the file holds {stored} bytes of data")
        try:
            raw = bytearray(stored)
        except MemoryError:
            raise bad(f"not enough memory for its {stored} bytes") from None
        got = f.readinto(raw)
        if got != stored:
            raise bad(f"the file changed while it was read ({got} of {stored} bytes)")
    value = np.frombuffer(raw, dtype=dtype, count=count)
    if fortran:
        return value.reshape(shape[::-1]).transpose()
    return value.reshape(shape)


def _takes_max_header() -> bool:
    import inspect
    from numpy.lib import format as npy_format
    try:
        return "max_header_size" in inspect.signature(npy_format.read_array_header_1_0).parameters
    except (TypeError, ValueError):
        return False


__all__ = ["MAX_MODEL_BYTES", "MAX_ARRAY_FILE_BYTES", "MAX_NPY_HEADER_BYTES", "max_array_file_bytes",
           "open_regular_file", "read_regular_file", "read_model_file", "read_npy"]
