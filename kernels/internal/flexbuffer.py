"""Custom options read as TFLM reads them with ``flexbuffers::GetRoot(...).AsMap()``.

``m["key"]`` of a missing key is a null reference in C++ (every conversion gives 0), and
the C++ conversions differ from the Python flexbuffers module's: ``AsInt64`` of a float
truncates it, ``AsDouble`` of a bool or an int converts it, ``AsBool`` of a float is
``AsUInt64() != 0``. :class:`FlexMap` applies the C++ rules.
"""
from __future__ import annotations

import math
from typing import Optional

try:
    import flatbuffers.flexbuffers as _flex
except ImportError:  # pragma: no cover - flatbuffers is a dependency
    _flex = None


class FlexMap:
    """A flexbuffer map; raises ValueError when ``raw`` is not one."""

    def __init__(self, raw: bytes):
        if not raw:
            raise ValueError("no custom options")
        try:
            self._map = _flex.GetRoot(bytes(raw)).AsMap
            self._keys = {k.AsKey for k in self._map.Keys}
        except Exception as e:   # noqa: BLE001 - any decoding failure
            raise ValueError(f"malformed flexbuffer map ({type(e).__name__})") from None

    def _ref(self, key: str):
        if key not in self._keys:
            return None
        ref = self._map[key]
        return None if ref.IsNull else ref

    def is_null(self, key: str) -> bool:
        return self._ref(key) is None

    def as_int64(self, key: str) -> int:
        ref = self._ref(key)
        if ref is None:
            return 0
        if ref.IsFloat:
            value = ref.AsFloat
            return 0 if not math.isfinite(value) else math.trunc(value)
        return int(ref.AsInt)

    def as_int32(self, key: str) -> int:
        """``static_cast<int32_t>(AsInt64())``."""
        return ((self.as_int64(key) + (1 << 31)) & 0xFFFFFFFF) - (1 << 31)

    def as_double(self, key: str) -> float:
        ref = self._ref(key)
        if ref is None:
            return 0.0
        if ref.IsFloat:
            return float(ref.AsFloat)
        if ref.IsBool:
            return float(ref.AsBool)
        return float(ref.AsInt)

    def as_bool(self, key: str) -> bool:
        ref = self._ref(key)
        if ref is None:
            return False
        if ref.IsBool:
            return bool(ref.AsBool)
        return self.as_int64(key) != 0

    def get(self, key: str) -> Optional[object]:
        ref = self._ref(key)
        return None if ref is None else ref.Value
