"""Old import paths of modules that moved (``micro_runtime.model_writer`` ->
``micro_runtime.tools.model_writer``, ``kernels.quantization`` ->
``kernels.internal.quantization``, ...): the old name resolves to the same module object,
imported on first use."""
from __future__ import annotations

import importlib
import importlib.util
import sys
from typing import Dict

_MOVED: Dict[str, str] = {}


class _MovedModuleFinder:
    @staticmethod
    def find_spec(fullname, path=None, target=None):
        if fullname not in _MOVED:
            return None
        return importlib.util.spec_from_loader(fullname, _MovedModuleFinder)

    @staticmethod
    def create_module(spec):
        return importlib.import_module(_MOVED[spec.name])

    @staticmethod
    def exec_module(module):
        pass


def alias_moved_modules(moved: Dict[str, str]) -> None:
    """Make each old dotted name in ``moved`` import the module at its new name."""
    _MOVED.update(moved)
    if _MovedModuleFinder not in sys.meta_path:
        sys.meta_path.insert(0, _MovedModuleFinder)
