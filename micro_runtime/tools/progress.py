"""A progress bar for slow commands, drawn on stderr only when stderr is a terminal.

Piped or redirected output, and ``--json`` runs, get no progress at all (not even a
final newline), so the output of a command is the same whether it is watched or not.
"""
from __future__ import annotations

import sys
import time
from typing import Optional, TextIO


class Progress:
    """``done / total`` as a bar on one terminal line, redrawn at most every 0.1 s.

    ``enabled=None`` draws only when ``stream`` is a terminal. Use as a context manager
    (the line is cleared on exit) and call :meth:`advance` once per unit of work, or
    :meth:`update` with the count done and the total (when the total is learnt late).
    """

    WIDTH = 30

    def __init__(self, total: int, label: str = "", stream: Optional[TextIO] = None,
                 enabled: Optional[bool] = None):
        self.stream = stream if stream is not None else sys.stderr
        if enabled is None:
            enabled = is_terminal(self.stream)
        self.enabled = bool(enabled)
        self.total = max(int(total), 0)
        self.label = label
        self.done = 0
        self._last_draw = 0.0
        self._drawn = False

    def __enter__(self) -> "Progress":
        self._draw(force=True)
        return self

    def __exit__(self, *exc) -> bool:
        self.close()
        return False

    def advance(self, steps: int = 1, note: str = "") -> None:
        """``steps`` more units done; ``note`` (e.g. the current model) shown after the bar."""
        self.done = min(self.done + steps, self.total)
        self._draw(note=note, force=self.done == self.total)

    def update(self, done: int, total: Optional[int] = None, note: str = "") -> None:
        """``done`` of ``total`` units (``total`` unchanged when None)."""
        if total is not None:
            self.total = max(int(total), 0)
        self.done = min(int(done), self.total)
        self._draw(note=note, force=self.done == self.total)

    def _draw(self, note: str = "", force: bool = False) -> None:
        if not self.enabled or self.total <= 0:
            return
        now = time.monotonic()
        if not force and now - self._last_draw < 0.1:
            return
        self._last_draw = now
        filled = self.WIDTH * self.done // self.total
        bar = "#" * filled + "." * (self.WIDTH - filled)
        text = f"{self.label} [{bar}] {self.done}/{self.total}" + (f" {note}" if note else "")
        self.stream.write("\r" + text[:120] + "\x1b[K")
        self.stream.flush()
        self._drawn = True

    def close(self) -> None:
        """Erase the bar's line (nothing was written when disabled)."""
        if self.enabled and self._drawn:
            self.stream.write("\r\x1b[K")
            self.stream.flush()
            self._drawn = False


def is_terminal(stream) -> bool:
    """True when ``stream`` is an interactive terminal."""
    try:
        return bool(stream.isatty())
    except (AttributeError, ValueError, OSError):
        return False


__all__ = ["Progress", "is_terminal"]
