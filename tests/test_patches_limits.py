"""The patch search's bounds: it stops at its time limit and still answers with the best
rewrite found so far, and it keeps a bounded set of rewrites whatever the model."""
from __future__ import annotations

import contextlib
import io
import itertools
import json

import pytest
from hypothesis import given, settings, strategies as st

from micro_runtime.model import load_model
from micro_runtime.tools.patches import PatchError, optimize_with_patches, run_outputs, search, seeded_inputs
from micro_runtime.tools.patches import searching
from micro_runtime.tools.sizing import measure_arena
from tests.helpers import assert_bit_exact
from tests.test_patches import _small_chain


def _ticking_clock(monkeypatch):
    """Every reading of the search's clock advances it by one second: a time limit of N
    seconds then allows exactly N checks, on any machine."""
    ticks = itertools.count()
    monkeypatch.setattr(searching, "_clock", lambda: float(next(ticks)))


def test_search_stops_at_the_time_limit_with_the_best_so_far(monkeypatch):
    model = load_model(_small_chain())
    full = search(model, "host64", measure_top=1, budget_s=0.2, refine_moves=50)
    assert full.stopped_early is None and full.measured
    _ticking_clock(monkeypatch)
    stopped = None
    for limit in (10, 20, 40, 80, 160, 320, 640, 1280):
        found = search(model, "host64", measure_top=1, budget_s=0.2, refine_moves=50, time_limit_s=limit)
        if found.stopped_early is None:
            break
        assert found.estimated < full.estimated
        if found.measured:
            stopped = found
            break
    assert stopped is not None, "no limit stopped the search after it had found a rewrite"
    assert stopped.stopped_early
    best = stopped.measured[0]
    assert best.min_arena_bytes == measure_arena(best.model, "host64").min_arena_bytes
    x = seeded_inputs(model, 3)
    assert_bit_exact(run_outputs(best.model, x), run_outputs(model, x), "stopped search")


def test_no_time_left_keeps_the_offline_plan(monkeypatch):
    _ticking_clock(monkeypatch)
    result = optimize_with_patches(_small_chain(), "host64", budget_s=0.2, time_limit_s=1)
    assert result.stopped_early and result.programs == []
    assert result.min_arena_bytes == result.offline_plan_min_arena_bytes
    assert result.as_dict()["stopped_early"] == result.stopped_early


def test_no_time_left_for_a_requested_grid_is_an_error(monkeypatch):
    _ticking_clock(monkeypatch)
    with pytest.raises(PatchError, match="time limit"):
        optimize_with_patches(_small_chain(), "host64", grid="2x2", stage_end=2, budget_s=0.2, time_limit_s=1)


def test_cli_with_a_tiny_time_limit_still_writes_a_model(tmp_path):
    from micro_runtime.tools.cli import main
    src = tmp_path / "chain.tflite"
    src.write_bytes(_small_chain())
    out = tmp_path / "out.tflite"
    args = ["optimize", str(src), "-o", str(out), "--target", "host64", "--patches", "--time-limit", "0.001",
            "--budget", "0.2"]
    buf = io.StringIO()
    with contextlib.redirect_stdout(buf):
        assert main(args + ["--json"]) == 0
    data = json.loads(buf.getvalue())
    assert data["stopped_early"]
    assert data["min_arena_bytes"] == measure_arena(out.read_bytes(), "host64").min_arena_bytes
    buf = io.StringIO()
    with contextlib.redirect_stdout(buf):
        assert main(args) == 0
    assert "the search reached --time-limit" in buf.getvalue()


# ------------------------------------------------------------------ the store
def _single(start, end, peak, tail, arena, seq):
    stage = searching.Stage(start, end, 0, 1, [])
    return searching._Single(stage, (1, 2), "tight", -1, peak, tail, arena, seq)


@settings(max_examples=60, deadline=None)
@given(st.lists(st.tuples(st.integers(0, 3), st.integers(0, 2), st.integers(0, 40), st.integers(0, 40),
                          st.integers(0, 60)), min_size=1, max_size=60),
       st.integers(1, 4))
def test_store_keeps_each_stages_front_and_the_best(entries, top):
    store = searching._SingleStore(top)
    singles = []
    for seq, (start, length, peak, tail, arena) in enumerate(entries):
        x = _single(start, start + length, peak, tail, arena, seq)
        singles.append(x)
        store.add(x)
    assert store.count == len(singles) and store.dropped == 0
    for key, front in store.fronts.items():
        mine = [x for x in singles if (x.stage.start, x.stage.end) == key]
        # the front: every rewrite that no earlier one matches or beats on both peak and tail
        expected = [x for i, x in enumerate(mine)
                    if not any(o.peak <= x.peak and o.tail <= x.tail and (o.peak, o.tail) != (x.peak, x.tail)
                               for o in mine)
                    and not any((o.peak, o.tail) == (x.peak, x.tail) for o in mine[:i])]
        assert sorted(x.seq for x in front) == sorted(x.seq for x in expected)
        assert [x.peak for x in front] == sorted(x.peak for x in front)
    assert {(x.stage.start, x.stage.end) for x in singles} == set(store.fronts)
    ranked = sorted(singles, key=lambda x: (x.min_arena, x.seq))[:top]
    assert [x.seq for x in store.top] == [x.seq for x in ranked]


def test_store_front_is_capped():
    store = searching._SingleStore(1, max_front=3)
    for seq in range(5):   # none beats another: peaks rise as tails fall
        store.add(_single(0, 1, 10 + seq, 100 - seq, 50, seq))
    assert [x.peak for x in store.fronts[(0, 1)]] == [10, 11, 12]
    assert store.dropped == 2
