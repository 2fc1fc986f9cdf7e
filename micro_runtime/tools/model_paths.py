"""Model arguments of the command line: a path, or ``bundled:NAME`` for a model shipped
with the package."""
from __future__ import annotations

import os
from typing import List

from ..errors import InputError

BUNDLED_PREFIX = "bundled:"


def bundled_dir() -> str:
    """Where the models shipped with the package live."""
    return os.path.join(os.path.dirname(os.path.dirname(os.path.abspath(__file__))), "data")


def bundled_names() -> List[str]:
    """Names usable as ``bundled:NAME``."""
    return sorted(f[:-len(".tflite")] for f in os.listdir(bundled_dir()) if f.endswith(".tflite"))


def resolve_model_path(path: str) -> str:
    """``bundled:NAME`` names a model shipped with the package (``bundled:person_detect``);
    an unknown name is an InputError listing the bundled names."""
    if path.startswith(BUNDLED_PREFIX):
        name = path[len(BUNDLED_PREFIX):]
        name = name[:-len(".tflite")] if name.endswith(".tflite") else name
        names = bundled_names()
        if name not in names:
            raise InputError(f"no bundled model {name!r}; bundled models: "
                             + ", ".join(f"bundled:{n}" for n in names))
        return os.path.join(bundled_dir(), name + ".tflite")
    return path


def load_model_arg(path: str):
    """The model a command-line argument names (:func:`resolve_model_path`), loaded."""
    from ..model import load_model
    return load_model(resolve_model_path(path))


def model_name(path: str) -> str:
    """The file name of the model a command-line argument names."""
    return os.path.basename(resolve_model_path(path))
