"""Memory planners: TFLM's own greedy-planner cases, and properties on random buffer sets."""
import numpy as np
import pytest
from hypothesis import given, settings, strategies as st

from arena.planners import (GreedyMemoryPlanner, LinearMemoryPlanner, PlannerError,
                            memory_plan_chart, overlapping_pairs)


def plan(planner, buffers):
    for b in buffers:
        planner.add_buffer(*b)
    return planner.offsets(), planner.maximum_size()


# ---- cases of TFLM's greedy_memory_planner_test.cc / micro_allocator_test.cc (facts) ----

def test_basics_buffers_not_alive_together_share_offset_zero():
    offsets, size = plan(GreedyMemoryPlanner(), [(10, 0, 1), (20, 2, 3)])
    assert offsets == [0, 0] and size == 20


def test_five_buffers_place_largest_first():
    offsets, size = plan(GreedyMemoryPlanner(),
                         [(10, 0, 1), (20, 1, 2), (30, 2, 3), (40, 3, 4), (50, 0, 1)])
    assert offsets == [50, 70, 40, 0, 0]
    assert size == 90


def test_mobilenet_like_chain_fits_under_tflm_bound():
    sizes = [(9216, 0, 29), (3, 28, 29), (256, 27, 28), (2304, 26, 27), (2304, 25, 26),
             (2304, 24, 25), (1152, 23, 24), (4608, 22, 23), (4608, 21, 22), (4608, 20, 21),
             (4608, 19, 20), (4608, 18, 19), (4608, 17, 18), (4608, 16, 17), (4608, 15, 16),
             (4608, 14, 15), (4608, 13, 14), (4608, 12, 13), (2304, 11, 12), (9216, 10, 11),
             (9216, 9, 10), (9216, 8, 9), (4608, 7, 8), (18432, 6, 7), (18432, 5, 6),
             (18432, 4, 5), (9216, 3, 4), (36864, 2, 3), (18432, 1, 2), (18432, 0, 1)]
    p = GreedyMemoryPlanner()
    offsets, size = plan(p, sizes)
    assert not overlapping_pairs(p.buffers, offsets)
    assert size < 241027


def test_overlapping_in_time_stack_up():
    offsets, size = plan(GreedyMemoryPlanner(), [(100, 0, 1), (50, 2, 3), (20, 1, 2)])
    assert size == 120
    assert offsets == [0, 0, 100]


def test_capacity_from_scratch_size():
    p = GreedyMemoryPlanner(max_buffer_count=40 // GreedyMemoryPlanner.per_buffer_scratch_bytes)
    p.add_buffer(100, 0, 1)
    with pytest.raises(PlannerError):
        p.add_buffer(50, 2, 3)


def test_equal_sizes_later_added_placed_first():
    # TFLM fills its sort array from the end, then sorts stably by size (descending):
    # among equal sizes the buffer added last is placed first (offset 0).
    offsets, _ = plan(GreedyMemoryPlanner(), [(16, 0, 1), (16, 0, 1), (16, 0, 1)])
    assert offsets == [32, 16, 0]


def test_reverse_sort_matches_tflm_stable_descending_order():
    p = GreedyMemoryPlanner()
    for i in range(100):
        p.add_buffer(1 + i % 10, 0, 0)
    order = p.placement_order()
    # TFLM: ids of value 10 come first, in the order its reversed fill leaves them
    assert [p.buffers[i].size for i in order] == sorted((1 + i % 10 for i in range(100)), reverse=True)
    assert order[:10] == [99, 89, 79, 69, 59, 49, 39, 29, 19, 9]


def test_offline_basic():
    offsets, _ = plan(GreedyMemoryPlanner(), [(48, 0, 1, 0), (48, 1, 2, 48), (48, 2, 3, 0), (48, 3, 3, 48)])
    assert offsets == [0, 48, 0, 48]


def test_offline_then_online_fills_gaps():
    # micro_allocator_test OfflinePlannerOfflineOnline: t0@0, t1@48 offline, t2 online -> 96,
    # t3@0 offline, t4 online -> 48.
    offsets, _ = plan(GreedyMemoryPlanner(), [(48, 0, 1, 0), (48, 0, 1, 48), (48, 1, 2),
                                              (48, 2, 2, 0), (48, 2, 2)])
    assert offsets == [0, 48, 96, 0, 48]


def test_linear_planner_puts_buffers_end_to_end():
    offsets, size = plan(LinearMemoryPlanner(), [(10, 0, 1), (20, 0, 1), (30, 5, 6)])
    assert offsets == [0, 10, 30] and size == 60


def test_chart_shows_every_buffer_and_step():
    p = GreedyMemoryPlanner()
    offsets, _ = plan(p, [(10, 0, 1), (20, 1, 2), (30, 2, 3)])
    lines = memory_plan_chart(p.buffers, offsets)
    assert lines[0].startswith("0 (id=0): size=10, offset=")
    assert sum(1 for l in lines if l[:5].strip().rstrip(":").isdigit()) == 4  # steps 0..3


# ------------------------------------------------------------------ properties
@st.composite
def buffer_sets(draw, with_offline=False):
    n = draw(st.integers(1, 40))
    horizon = draw(st.integers(1, 30))
    out = []
    for _ in range(n):
        first = draw(st.integers(-1, horizon))
        last = draw(st.integers(first, horizon))
        size = draw(st.integers(0, 4096)) // 16 * 16
        out.append([size, first, last, -1])
    if with_offline:
        # offline offsets: a valid non-overlapping layout for a random subset
        chosen = [i for i in range(n) if draw(st.booleans())]
        cursor = 0
        for i in chosen:
            out[i][3] = cursor
            cursor += out[i][0] + draw(st.integers(0, 3)) * 16
    return [tuple(b) for b in out]


def _check(planner_cls, buffers):
    p = planner_cls()
    for b in buffers:
        p.add_buffer(*b)
    offsets = p.offsets()
    assert not overlapping_pairs(p.buffers, offsets), "live buffers overlap"
    top = p.maximum_size()
    for o, b in zip(offsets, p.buffers):
        assert o >= 0 and o + b.size <= top, "buffer outside the reported maximum"
        if b.offline_offset != -1:
            assert o == b.offline_offset, "offline offset not honoured"
    return offsets


@settings(max_examples=600)
@given(buffer_sets())
def test_greedy_never_overlaps_and_is_deterministic(buffers):
    first = _check(GreedyMemoryPlanner, buffers)
    assert _check(GreedyMemoryPlanner, buffers) == first


@settings(max_examples=300)
@given(buffer_sets(with_offline=True))
def test_greedy_honours_offline_offsets(buffers):
    _check(GreedyMemoryPlanner, buffers)


@settings(max_examples=200)
@given(buffer_sets(with_offline=False))
def test_linear_never_overlaps(buffers):
    _check(LinearMemoryPlanner, buffers)


def _reference_greedy(buffers):
    """TFLM's algorithm written the slow way (linked list walk), to check the
    vectorised planner's offsets one for one."""
    n = len(buffers)
    offline = [i for i in range(n) if buffers[i][3] != -1]
    online = [i for i in range(n) if buffers[i][3] == -1][::-1]
    online.sort(key=lambda i: -buffers[i][0])
    order = offline + online
    placed = []  # (offset, id) in list order
    offsets = [None] * n
    for k, i in enumerate(order):
        size, first, last, off = buffers[i]
        if off != -1:
            cand = off
        elif k == 0:
            cand = 0
        else:
            cand = 0
            for o, j in placed:
                s2, f2, l2, _ = buffers[j]
                if f2 > last or first > l2:
                    continue
                if o - cand >= size:
                    break
                cand = max(cand, o + s2)
        offsets[i] = cand
        pos = 0
        while pos < len(placed) and placed[pos][0] <= cand:
            pos += 1
        placed.insert(pos, (cand, i))
    return offsets


@settings(max_examples=300)
@given(buffer_sets(with_offline=True))
def test_vectorised_greedy_equals_the_plain_algorithm(buffers):
    p = GreedyMemoryPlanner()
    for b in buffers:
        p.add_buffer(*b)
    assert p.offsets() == _reference_greedy(buffers)
