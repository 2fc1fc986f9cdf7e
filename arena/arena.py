"""The tensor arena: head, temporary and tail sections over ``size`` bytes.

Addresses are byte offsets from the arena's start, which is taken to be 16-byte
aligned (TFLM users declare the arena ``alignas(16)``; the tflite_micro package gets it
from ``new[]``)::

    0            head            temp ->                 <- tail          size
    [ non-persistent (planned) | temporaries ...   free   | persistent ... ]

* the **head** holds every non-persistent buffer at its planned offset; while a model is
  being prepared it is a resizable buffer holding the kernels' scratch-buffer requests;
* **temporaries** sit above the head and vanish at each reset;
* the **tail** grows down from the end and holds everything persistent.

The rules are those of TFLM's SingleArenaBufferAllocator: a persistent allocation
aligns the new tail *down*, a temporary aligns the temp pointer *up*, and a resize of the
head is only allowed while no temporary is outstanding.

TFLM checks a persistent allocation against the head only, not against the
temporaries above it: in a tight arena the new tail lands on temporaries still in use
(a kernel's temporary TfLiteTensors during its prepare). That is harmless until the
kernel writes its persistent buffer there. A temporary may name *critical* byte ranges
(the fields DeallocateTempTfLiteTensor reads back: a quantized TfLiteTensor's
quantization type and params pointer, its TfLiteAffineQuantization's zero-point array
pointer; see ``Target.critical_fields``); a persistent allocation may name the byte
ranges its kernel writes while temporaries are live. When such a write covers a live
critical range, TFLM releases a clobbered pointer and aborts ("All temp buffers must be
freed"): that arena is too small, and the allocation fails here. Success is then not
monotone in the arena size; :func:`min_arena_bytes` gives the size from which on every
arena works.

Host memory: the arena's bytes are not one ``size``-byte buffer. Only bytes something
reads or writes get host memory (:meth:`Arena.view`), in *regions*: the planned head is
backed by the union of its planned buffers (buffers that share bytes in the plan share
them in the region; a gap between offline-planned buffers costs nothing), the tail by
one region from the lowest persistent buffer a kernel views up to the next region (the
structs TFLM keeps there are bookkeeping only). Temporaries are bookkeeping only. So an
arena of any size costs at most the bytes of its head and tail, and a sizing pass that
runs a model in a nominal arena of 2^40 bytes (:data:`PROBE_ARENA_BYTES`) allocates no
more than the minimum it then reports. Regions are zero-filled numpy arrays (large ones
are mapped lazily by the C library: pages nobody touches cost nothing);
:attr:`Arena.host_bytes` counts them. A region the host cannot allocate is a
:class:`~micro_runtime.errors.LimitError`.

Every call is also appended to :attr:`Arena.trace`. The sequence of calls a model makes
does not depend on the arena size, so replaying the trace (:func:`min_arena_bytes`) gives
the exact minimum arena, including the temporaries' peak.
"""
from __future__ import annotations

import bisect
from dataclasses import dataclass
from typing import List, Optional, Sequence, Tuple

import numpy as np

from micro_runtime.errors import ArenaTooSmallError, InterpreterStateError, LimitError

#: Alignment of every arena buffer (TFLM's MicroArenaBufferAlignment()).
BUFFER_ALIGNMENT = 16
#: nominal arena size of a sizing pass (bytes): larger than any model's need, and free,
#: since only the bytes used get host memory
PROBE_ARENA_BYTES = 1 << 40
#: a planned head spanning at most this many bytes (64 MiB) is backed by one host
#: region, gaps included; a larger one (an offline plan's far offsets) only where
#: buffers are
CONTIGUOUS_HEAD_BYTES = 1 << 26


def align_up(value: int, alignment: int) -> int:
    """Smallest multiple of ``alignment`` that is >= ``value``."""
    return -(-value // alignment) * alignment


def align_down(value: int, alignment: int) -> int:
    """Largest multiple of ``alignment`` that is <= ``value``."""
    return (value // alignment) * alignment


# Trace opcodes (see Arena.trace).
PERSISTENT, TEMP, DEALLOC_TEMP, RESET_TEMP, RESIZE, PLANNER = range(6)


@dataclass
class ArenaStats:
    """High-water marks of the three sections over the arena's life (bytes)."""

    head_peak: int = 0        #: largest head (non-persistent section) seen
    temp_peak: int = 0        #: largest end of the temporaries, measured from the start
    tail_peak: int = 0        #: largest tail (persistent section) seen
    total_peak: int = 0       #: largest max(head, temp) + tail at any moment


class Arena:
    """Byte-exact emulation of TFLM's single-arena buffer allocator.

    ``size`` is the arena size in bytes as the user gives it; host memory is taken only
    for the bytes that are viewed (see the module docstring). With ``materialize=False``
    nothing can be viewed: the bookkeeping alone runs (used to replay traces).
    """

    def __init__(self, size: int, materialize: bool = True):
        if not isinstance(size, (int, np.integer)) or isinstance(size, bool):
            raise TypeError("arena size must be an int")
        size = int(size)
        if size < 0:
            raise ValueError("arena size must be >= 0")
        self.size = size
        self.materialize = bool(materialize)
        #: host memory regions, sorted by start: parallel lists of start, end, uint8 array
        self._region_starts: List[int] = []
        self._region_ends: List[int] = []
        self._region_data: List[np.ndarray] = []
        #: bytes of host memory the regions hold
        self.host_bytes = 0
        self.buffer_head = 0
        self.buffer_tail = size
        self.head = 0
        self.tail = size
        self.temp = 0
        self._temp_count = 0
        self._temp_checksum = 0
        #: live temporaries' critical byte ranges: address -> ((start, end), ...)
        self._critical: dict = {}
        #: check persistent writes against them (replays may switch it off or log instead)
        self.clobber_check = True
        self.overlap_log: Optional[list] = None
        self.trace: List[Tuple[int, ...]] = []
        #: append calls to ``trace`` (the interpreter stops after the first invoke)
        self.tracing = True
        self.stats = ArenaStats()

    # ------------------------------------------------------------------ figures
    @property
    def head_bytes(self) -> int:
        """Bytes of the head section (the planned non-persistent buffers)."""
        return self.head - self.buffer_head

    @property
    def non_persistent_used_bytes(self) -> int:
        """max(head, temp) measured from the arena start, as TFLM reports 'head'."""
        return max(self.head, self.temp) - self.buffer_head

    @property
    def persistent_used_bytes(self) -> int:
        """Bytes of the tail section."""
        return self.buffer_tail - self.tail

    @property
    def used_bytes(self) -> int:
        return self.non_persistent_used_bytes + self.persistent_used_bytes

    def available_bytes(self, alignment: int) -> int:
        """Bytes between the aligned temp pointer and the aligned tail."""
        return align_down(self.tail, alignment) - align_up(self.temp, alignment)

    def _note(self) -> None:
        s = self.stats
        head = self.head - self.buffer_head
        temp = self.temp - self.buffer_head
        tail = self.buffer_tail - self.tail
        if head > s.head_peak:
            s.head_peak = head
        if temp > s.temp_peak:
            s.temp_peak = temp
        if tail > s.tail_peak:
            s.tail_peak = tail
        total = max(head, temp) + tail
        if total > s.total_peak:
            s.total_peak = total

    # ------------------------------------------------------------- allocations
    def allocate_persistent(self, size: int, alignment: int,
                            written: Sequence[Tuple[int, int]] = ()) -> int:
        """Take ``size`` bytes from the tail; returns the buffer's address. ``written``:
        (offset, length) ranges of the buffer its owner writes while the current
        temporaries are live (see the module docstring)."""
        written = tuple(written)
        if self.tracing:
            self.trace.append((PERSISTENT, size, alignment, written) if written
                              else (PERSISTENT, size, alignment))
        address = align_down(self.tail - size, alignment)
        if address < self.head:
            missing = self.head - address
            raise ArenaTooSmallError(
                f"Failed to allocate tail memory. Requested: {size}, "
                f"available {size - missing}, missing: {missing}",
                requested=size, available=size - missing, missing=missing)
        if written and self._critical and self.clobber_check:
            self._check_clobber(address, size, written)
        self.tail = address
        self._note()
        return address

    def _check_clobber(self, address: int, size: int, written) -> None:
        """Fail when a write into the new persistent buffer covers a live temporary's
        critical range (TFLM would corrupt it, then follow the clobbered pointer)."""
        missing = 0
        for offset, length in written:
            start, end = address + offset, address + offset + length
            for ranges in self._critical.values():
                for lo, hi in ranges:
                    if self.overlap_log is not None:
                        self.overlap_log.append((start, end, lo, hi))
                    elif start < hi and lo < end:
                        missing = max(missing, hi - start)
        if missing:
            raise ArenaTooSmallError(
                f"Failed to allocate tail memory. Requested: {size}: the persistent buffer "
                f"would overwrite a temporary TfLiteTensor still in use (TFLM checks the "
                f"tail against the head only, then aborts on the clobbered pointer), "
                f"missing: {missing}", requested=size, available=size - missing, missing=missing)

    def allocate_temp(self, size: int, alignment: int,
                      critical: Sequence[Tuple[int, int]] = ()) -> int:
        """Take ``size`` bytes above the head, until the next :meth:`reset_temp`.
        ``critical``: (offset, length) ranges TFLM reads back before releasing it."""
        critical = tuple(critical)
        if self.tracing:
            self.trace.append((TEMP, size, alignment, critical) if critical
                              else (TEMP, size, alignment))
        address = align_up(self.temp, alignment)
        available = self.tail - address
        if available < size:
            raise ArenaTooSmallError(
                f"Failed to allocate temp memory. Requested: {size}, "
                f"available {available}, missing: {size - available}",
                requested=size, available=available, missing=size - available)
        self.temp = address + size
        self._temp_count += 1
        self._temp_checksum ^= address
        if critical:
            self._critical[address] = tuple((address + o, address + o + n) for o, n in critical)
        self._note()
        return address

    def deallocate_temp(self, address: int) -> None:
        if self.tracing:
            self.trace.append((DEALLOC_TEMP, address))
        self._temp_count -= 1
        self._temp_checksum ^= address
        self._critical.pop(address, None)

    def all_temp_deallocated(self) -> bool:
        return self._temp_count == 0 and self._temp_checksum == 0

    def reset_temp(self) -> None:
        """Drop every temporary; all of them must have been deallocated. A reset with
        nothing to drop changes nothing and is not traced (loops reset after every node)."""
        if self._temp_count == 0 and self._temp_checksum == 0 and self.temp == self.head:
            self._critical.clear()
            return
        if self.tracing:
            self.trace.append((RESET_TEMP,))
        if not self.all_temp_deallocated():
            raise InterpreterStateError(
                f"internal error: {self._temp_count} temporary buffer(s) still allocated "
                "when the temporaries were reset (a kernel did not release a temp tensor)")
        self.temp = self.head
        self._critical.clear()

    def abandon_temporaries(self) -> None:
        """Drop every temporary without the checks of :meth:`reset_temp` (after a run
        that did not finish: an interrupt or an error inside a kernel). Not traced."""
        self.temp = self.head
        self._temp_count = 0
        self._temp_checksum = 0
        self._critical.clear()

    def resize_head(self, size: int, alignment: int) -> int:
        """Make the head exactly ``size`` bytes (after aligning its start). Returns its address."""
        if self.tracing:
            self.trace.append((RESIZE, size, alignment))
        if self.head != self.temp:
            raise InterpreterStateError(
                "internal error: the head was resized while temporaries were outstanding")
        start = align_up(self.buffer_head, alignment)
        available = self.tail - start
        if available < size:
            raise ArenaTooSmallError(
                f"Failed to resize buffer. Requested: {size}, available {available}, "
                f"missing: {size - available}",
                requested=size, available=available, missing=size - available)
        self.head = start + size
        self.temp = self.head
        self._note()
        return start

    def reserve_planner_scratch(self, per_buffer_bytes: int, buffer_count: int) -> int:
        """Hand every free byte to a memory planner as its scratch, as TFLM does, and
        check that it can hold ``buffer_count`` buffers of ``per_buffer_bytes`` each.

        Returns the scratch size. The scratch is a temporary: it is gone after the
        next :meth:`reset_temp`.
        """
        if self.tracing:
            self.trace.append((PLANNER, per_buffer_bytes, buffer_count))
        remaining = self.available_bytes(BUFFER_ALIGNMENT)
        address = align_up(self.temp, BUFFER_ALIGNMENT)
        if remaining < 0:
            raise ArenaTooSmallError(
                f"Failed to allocate temp memory. Requested: {remaining}, available 0, "
                f"missing: {-remaining}", requested=0, available=0, missing=-remaining)
        if per_buffer_bytes and remaining // per_buffer_bytes < buffer_count:
            needed = per_buffer_bytes * buffer_count
            raise ArenaTooSmallError(
                f"Too many buffers (max is {remaining // per_buffer_bytes}): the memory "
                f"planner needs {needed} bytes of scratch for {buffer_count} buffers. "
                f"Requested: {needed}, available {remaining}, missing: {needed - remaining}",
                requested=needed, available=remaining, missing=needed - remaining)
        # The planner only touches per_buffer_bytes * buffer_count of its scratch: that
        # is what the high-water marks record. The whole free space stays taken until
        # the next reset, as in TFLM.
        self.temp = address + per_buffer_bytes * buffer_count
        self._note()
        self.temp = address + remaining
        return remaining

    # ----------------------------------------------------------------- data
    def view(self, address: int, dtype: np.dtype, count: int) -> np.ndarray:
        """A numpy view of ``count`` elements of ``dtype`` at ``address`` (zero copy).
        The bytes must lie in the planned head (after :meth:`back_head`) or in the tail;
        views of the same bytes share them."""
        if not self.materialize:
            raise InterpreterStateError("this arena holds no bytes (bookkeeping only)")
        dtype = np.dtype(dtype)
        count = int(count)
        address = int(address)
        if count == 0:
            return np.zeros(0, dtype=dtype)
        end = address + count * dtype.itemsize
        k = self._region_index(address, end)
        if k is None:
            if not (self.tail <= address and end <= self.size):
                raise InterpreterStateError(
                    f"internal error: arena bytes [{address}, {end}) are neither planned head "
                    f"nor tail (tail starts at {self.tail})")
            # the tail: one region from here up to the next region (or the arena's end)
            j = bisect.bisect_right(self._region_starts, address)
            upper = self._region_starts[j] if j < len(self._region_starts) else self.size
            if end > upper:
                raise InterpreterStateError(
                    f"internal error: a view of arena bytes [{address}, {end}) crosses memory "
                    f"already given out at {upper}")
            k = self._add_region(address, upper)
        return np.frombuffer(self._region_data[k], dtype=dtype, count=count,
                             offset=address - self._region_starts[k])

    def back_head(self, ranges: Sequence[Tuple[int, int]]) -> None:
        """Host memory for the planned head: one region per maximal run of overlapping
        or touching ``ranges`` ((start, end) addresses of the planned buffers). Called
        once the memory plan is committed, before any head buffer is viewed."""
        merged: List[List[int]] = []
        for start, end in sorted((int(a), int(b)) for a, b in ranges if b > a):
            if merged and start <= merged[-1][1]:
                merged[-1][1] = max(merged[-1][1], end)
            else:
                merged.append([start, end])
        if merged and merged[-1][1] - merged[0][0] <= CONTIGUOUS_HEAD_BYTES \
                and not any(self._overlaps(merged[0][0], merged[-1][1])):
            # an ordinary head: one region, as TFLM's arena is one array (a kernel that
            # writes past its buffers, like ESP-NN's softmax, lands in real bytes)
            merged = [[merged[0][0], merged[-1][1]]]
        for start, end in merged:
            if self._region_index(start, end) is None:
                self._add_region(start, end)

    def _overlaps(self, start: int, end: int):
        """The regions given out that share bytes with [start, end) (their indices)."""
        return [k for k in range(len(self._region_starts))
                if self._region_starts[k] < end and start < self._region_ends[k]]

    def backed_bytes(self, start: int, end: int) -> Optional[np.ndarray]:
        """A uint8 view of arena bytes [start, end) when one host region holds them all
        (the planned head of an ordinary model is one region), else None."""
        k = self._region_index(int(start), int(end)) if self.materialize else None
        if k is None:
            return None
        base = self._region_starts[k]
        return self._region_data[k][int(start) - base:int(end) - base]

    def window(self, start: int, end: int) -> Tuple[np.ndarray, bool]:
        """Arena bytes [start, end) as one uint8 array, and whether it is a copy: a view
        when one host region holds them all, else a copy with the regions' bytes and zeros
        where the arena has given no host memory (free bytes nobody else reads), to be
        handed back with :meth:`write_back`."""
        view = self.backed_bytes(start, end)
        if view is not None:
            return view, False
        out = np.zeros(int(end) - int(start), np.uint8)
        for k in self._overlaps(int(start), int(end)):
            lo, hi = max(start, self._region_starts[k]), min(end, self._region_ends[k])
            base = self._region_starts[k]
            out[lo - start:hi - start] = self._region_data[k][lo - base:hi - base]
        return out, True

    def write_back(self, start: int, data: np.ndarray) -> None:
        """Store a :meth:`window` copy's bytes into the regions it overlaps (bytes
        without host memory are dropped: nothing planned lives there)."""
        end = int(start) + data.size
        for k in self._overlaps(int(start), end):
            lo, hi = max(start, self._region_starts[k]), min(end, self._region_ends[k])
            base = self._region_starts[k]
            self._region_data[k][lo - base:hi - base] = data[lo - start:hi - start]

    def offset_of(self, array: np.ndarray) -> Optional[int]:
        """Byte offset in the arena of ``array``'s first element, None when it is not a
        view of the arena's memory (a host buffer, e.g. in batched evaluation)."""
        if array is None or not self.materialize:
            return None
        pointer = np.asarray(array).__array_interface__["data"][0]
        nbytes = np.asarray(array).nbytes
        for base, data in zip(self._region_starts, self._region_data):
            first = data.__array_interface__["data"][0]
            if first <= pointer and pointer + nbytes <= first + data.size:
                return base + pointer - first
        return None

    def memory_of(self, address: int) -> Optional[np.ndarray]:
        """The host memory region (a uint8 array) holding ``address``, or None."""
        k = self._region_index(int(address), int(address) + 1)
        return None if k is None else self._region_data[k]

    def _region_index(self, start: int, end: int) -> Optional[int]:
        """Index of the region holding [start, end), or None."""
        k = bisect.bisect_right(self._region_starts, start) - 1
        if k >= 0 and end <= self._region_ends[k] and start >= self._region_starts[k]:
            return k
        return None

    def _add_region(self, start: int, end: int) -> int:
        k = bisect.bisect_right(self._region_starts, start)
        if (k > 0 and self._region_ends[k - 1] > start) or (
                k < len(self._region_starts) and self._region_starts[k] < end):
            raise InterpreterStateError(
                f"internal error: arena bytes [{start}, {end}) overlap memory already given out")
        try:
            data = np.zeros(end - start, dtype=np.uint8)
        except (MemoryError, ValueError) as e:
            raise LimitError(
                f"this host cannot allocate the {end - start} bytes of arena memory the model "
                f"uses at offset {start} (the arena holds {self.host_bytes} bytes so far): {e}",
                limit="host memory") from None
        self._region_starts.insert(k, start)
        self._region_ends.insert(k, end)
        self._region_data.insert(k, data)
        self.host_bytes += end - start
        return k


def replay(trace: List[Tuple[int, ...]], size: int, clobber: bool = True,
           overlap_log: Optional[list] = None) -> Arena:
    """Run a recorded call sequence on a bookkeeping-only arena of ``size`` bytes.

    Raises :class:`ArenaTooSmallError` where a real run would. ``clobber=False`` skips
    the check of persistent writes over live temporaries; ``overlap_log`` (a list) makes
    that check record every (write start, write end, critical start, critical end) pair
    instead of failing.
    """
    arena = Arena(size, materialize=False)
    arena.tracing = False
    arena.clobber_check = clobber
    arena.overlap_log = overlap_log
    for entry in trace:
        op = entry[0]
        if op == PERSISTENT:
            arena.allocate_persistent(*entry[1:])
        elif op == TEMP:
            arena.allocate_temp(*entry[1:])
        elif op == DEALLOC_TEMP:
            # Temporaries are released by address; addresses shift with the arena size
            # only through the tail, never for temps, so the recorded address is valid.
            arena.deallocate_temp(entry[1])
        elif op == RESET_TEMP:
            arena.reset_temp()
        elif op == RESIZE:
            arena.resize_head(entry[1], entry[2])
        elif op == PLANNER:
            arena.reserve_planner_scratch(entry[1], entry[2])
    return arena


def fits(trace: List[Tuple[int, ...]], size: int, clobber: bool = True) -> bool:
    """True when every call of ``trace`` succeeds in an arena of ``size`` bytes."""
    try:
        replay(trace, size, clobber)
    except ArenaTooSmallError:
        return False
    return True


def _space_min(trace: List[Tuple[int, ...]], upper_bound: Optional[int]) -> int:
    """The smallest size in which every allocation finds room (clobbers aside; that
    success is monotone in the size): a binary search, then a scan of the 16 sizes
    below the boundary."""
    low = 0
    high = upper_bound if upper_bound is not None else 1024
    while not fits(trace, high, clobber=False):
        low = high
        high *= 2
        if high > (1 << 40):
            raise ArenaTooSmallError("no arena size fits this model", 0, 0, 0)
    if low == 0:
        # the bound given is usually the answer or a few alignments above it: step down
        # 16, 32, 64 ... bytes to a size that fails, then bisect (a handful of replays
        # instead of one per bit of the bound)
        step = BUFFER_ALIGNMENT
        while high - step > 0:
            if fits(trace, high - step, clobber=False):
                high -= step
                step *= 2
            else:
                low = high - step
                break
    while high - low > 1:
        mid = (low + high) // 2
        if fits(trace, mid, clobber=False):
            high = mid
        else:
            low = mid
    best = high
    for size in range(max(0, high - BUFFER_ALIGNMENT), high):
        if fits(trace, size, clobber=False):
            best = size
            break
    return best


def min_arena_bytes(trace: List[Tuple[int, ...]], upper_bound: Optional[int] = None) -> int:
    """The smallest arena size (bytes) from which on ``trace`` runs without a failure
    in every larger arena too.

    Room alone is monotone in the size (:func:`_space_min`). Clobbers are not: a
    persistent write can land on a live temporary's critical field at one size and on
    harmless bytes 16 bytes higher, so some arenas above the room minimum fail while
    smaller ones work (TFLM behaves so). Growing the arena by 16 bytes moves every
    persistent buffer up by 16 and no temporary (all alignments divide 16), so one replay
    per residue modulo 16 gives every (write, critical range) pair as a function of the
    size; the answer is one past the largest size at which any pair overlaps.
    """
    base = _space_min(trace, upper_bound)
    if not any(entry[0] == PERSISTENT and len(entry) > 3 for entry in trace):
        return base
    last_failure = -1
    for residue in range(BUFFER_ALIGNMENT):
        size = base + residue
        pairs: list = []
        replay(trace, size, overlap_log=pairs)
        for write_start, write_end, crit_start, crit_end in pairs:
            # at size + 16 j the write is [write_start + 16 j, write_end + 16 j)
            j_high = -((write_start - crit_end) // BUFFER_ALIGNMENT) - 1     # ceil(...) - 1
            j_low = max(0, (crit_start - write_end) // BUFFER_ALIGNMENT + 1)
            if j_high >= j_low:
                last_failure = max(last_failure, size + BUFFER_ALIGNMENT * j_high)
    return max(base, last_failure + 1)
