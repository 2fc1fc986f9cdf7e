"""The signal library's int16 circular buffer (signal/src/circular_buffer), emulated
slot for slot: ``capacity`` samples mirrored into a buffer of 2 x capacity (every write
lands at ``write`` and ``write + capacity``, so any ``capacity`` consecutive samples from
``read`` are contiguous), read / write positions and an empty flag.

Like TFLM's release build, the operations do not check that they stay within the
available samples (over-full writes overwrite, over-long discards move ``read``); an
operation that would touch memory outside the buffer raises :class:`OverflowError`
instead of corrupting the arena. Several buffers driven by the same calls (one per outer
row of a tensor) are kept as the rows of one array.
"""
from __future__ import annotations

import numpy as np


class CircularBuffers:
    """``rows`` circular buffers of ``capacity`` int16 samples moving in step."""

    def __init__(self, rows: int, capacity: int):
        self.rows = int(rows)
        self.capacity = int(capacity)
        self.buffer = np.zeros((self.rows, 2 * self.capacity), dtype=np.int16)
        self.reset()

    def reset(self) -> None:
        """CircularBufferReset: empty, positions 0, memory cleared."""
        self.read = self.write = 0
        self.empty = True
        self.buffer[...] = 0

    def available(self) -> int:
        """CircularBufferAvailable: samples between read and write."""
        diff = self.write - self.read
        if diff > 0:
            return diff
        if diff < 0:
            return self.capacity + diff
        return 0 if self.empty else self.capacity

    def _check(self, stop: int) -> None:
        if stop > 2 * self.capacity:
            raise OverflowError(f"circular buffer access up to sample {stop} of "
                                f"{2 * self.capacity}")

    def write_values(self, values: np.ndarray) -> None:
        """CircularBufferWrite of ``values`` (rows, n)."""
        n = int(values.shape[1])
        if n <= 0:
            return
        w, cap = self.write, self.capacity
        end = w + n
        self._check(w + n)
        self.buffer[:, w:w + n] = values
        if end < cap:
            self.buffer[:, cap + w:cap + w + n] = values
            w += n
        else:
            n1 = cap - w
            self._check(cap + w + n1)
            self.buffer[:, cap + w:cap + w + n1] = values[:, :n1]
            n2 = end - cap
            if n2 > 0:
                self.buffer[:, :n2] = values[:, n1:]
            w = n2
        self.write = w
        self.empty = False

    def write_zeros(self, n: int) -> None:
        """CircularBufferWriteZeros."""
        if n > 0:
            self.write_values(np.zeros((self.rows, n), np.int16))

    def extend(self, count: int, n: int) -> None:
        """CircularBufferExtend: append the last ``count`` samples ``n`` more times."""
        if n <= 0 or count <= 0:
            return
        cap = self.capacity
        start = self.write + cap - count if count > self.write else self.write - count
        if start + count <= cap:
            for _ in range(n):
                self.write_values(self.buffer[:, start:start + count].copy())
        else:
            n1 = cap - start
            for _ in range(n):
                self.write_values(self.buffer[:, start:start + n1].copy())
                self.write_values(self.buffer[:, :count - n1].copy())

    def get(self, n: int) -> np.ndarray:
        """CircularBufferGet: the ``n`` samples from ``read`` (rows, n), not consumed."""
        r, cap = self.read, self.capacity
        end = r + n
        if end <= cap:
            self._check(end)
            return self.buffer[:, r:end].copy()
        n1 = cap - r
        if n1 < 0:
            raise OverflowError("circular buffer read position past its capacity")
        self._check(end - cap)
        return np.concatenate([self.buffer[:, r:cap], self.buffer[:, :end - cap]], axis=1)

    def discard(self, n: int) -> None:
        """CircularBufferDiscard."""
        self.read += n
        if self.read >= self.capacity:
            self.read -= self.capacity
        if self.read and self.read >= self.capacity:
            raise OverflowError("circular buffer read position past its capacity")
        if self.read == self.write:
            self.empty = True
