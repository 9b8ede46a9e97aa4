"""Time as a limit the caller chooses: decisions from operation counts, stops that keep nothing.

The refusal decision of the triangle pass and of community detection is made
from operation counts alone, so the same release gets the same decision on a
quiet and on a loaded machine (here: every clock made 20 x slower).  Without
``max_seconds`` only a prediction of hours is refused; with one, a call
predicted over it is refused (or sampled) before it starts and a call
running past it stops between blocks, keeping nothing.  Materializing calls
(``released_edges``, the assortativity moments) are sized before they
allocate.  No test here times anything.
"""

from __future__ import annotations

import re
import time

import networkx as nx
import numpy as np
import pytest
from _data import data_missing

import dpgraph
from dpgraph.cli import build_parser, main
from dpgraph.graph import _memory
from dpgraph.graph.analytics import (
    community,
    community_planning,
    triangle_counting,
    triangle_planning,
)
from dpgraph.graph.analytics._pairsplit import PairSplit
from dpgraph.graph.analytics._shared import _cache
from dpgraph.graph.analytics.community_planning import community_plan
from dpgraph.graph.analytics.triangle_planning import (
    UNLIMITED_CEILING,
    CostLimitError,
    time_limit,
    triangle_plan,
)

pytestmark = pytest.mark.filterwarnings("ignore::dpgraph.SeededReleaseWarning")


def _slow_clocks(monkeypatch, factor: float = 20.0) -> None:
    """Every clock of the time module runs ``factor`` x slower than real time from now on."""
    for name in ("perf_counter", "monotonic", "time", "process_time"):
        real = getattr(time, name)
        start = real()
        monkeypatch.setattr(time, name, lambda real=real, start=start: start + factor * (real() - start))
    for name in ("perf_counter_ns", "monotonic_ns", "time_ns", "process_time_ns"):
        real = getattr(time, name)
        start = real()
        monkeypatch.setattr(time, name,
                            lambda real=real, start=start: start + int(factor * (real() - start)))


def _planted(n: int = 600, eps: float = 3.0):
    G = nx.planted_partition_graph(2, n // 2, 0.2, 0.01, seed=1)
    return dpgraph.release(G, epsilon=eps, seed=0)


def _decisions(R) -> list:
    """The triangle and community decisions for R at no limit and at limits around the predictions."""
    full = triangle_plan(R).full.seconds
    split = PairSplit(R.number_of_nodes(), 0.1, 0.05, 0)
    com = community_plan(R, None, split, 10, 6).detect_seconds  # the refusal is on the screen
    out = []
    for t in (None, full / 4, full * 4):
        p = triangle_plan(R, t, sample=True)
        out.append((p.mode, p.rows, p.resolvable, p.reason))
    for t in (None, com / 4, com * 4):
        p = community_plan(R, t, split, 10, 6)
        out.append((p.mode, p.seconds, p.reason))
    return out


def test_the_decision_does_not_depend_on_the_measured_speed(monkeypatch):
    """The same release gets the same decisions (modes, rows, reasons) with every clock 20 x
    slower, and planning reads no clock at all: nothing is measured at call time."""
    R = dpgraph.release(nx.powerlaw_cluster_graph(3000, 5, 0.5, seed=1), 5.0, seed=3)
    quiet = _decisions(R)
    with monkeypatch.context() as m:
        _slow_clocks(m)
        assert _decisions(R) == quiet
    assert [d[0] for d in quiet] == ["full", "sampled", "full", "run", "refused", "run"]

    def no_clock(*a, **k):
        raise AssertionError("a clock was read while planning")

    for name in ("perf_counter", "monotonic", "time", "process_time", "perf_counter_ns"):
        monkeypatch.setattr(time, name, no_clock)
    assert _decisions(R) == quiet


def test_without_a_limit_only_a_prediction_of_hours_is_refused(monkeypatch):
    """No max_seconds: a prediction below UNLIMITED_CEILING runs; above it the refusal says the
    max_seconds that runs it anyway (which then does run it)."""
    R = _planted()
    assert triangle_plan(R).mode == "full" and triangle_plan(R).max_seconds is None
    split = PairSplit(R.number_of_nodes(), 0.1, 0.05, 0)
    assert community_plan(R, None, split, 10, 6).mode == "run"
    # a model whose per-operation constants predict hours for this release (a slower kind of
    # machine, fixed in the model: not a measurement)
    factor = 2 * UNLIMITED_CEILING / community_plan(R, None, split, 10, 6).detect_seconds
    for name in ("_SEC_SPLIT_PAIR", "_SEC_COUNT_PAIR", "_SEC_SIM", "_SEC_EDGE", "_SEC_BYTE_COL",
                 "_SEC_PAIR_COL"):
        monkeypatch.setattr(community_planning, name, getattr(community_planning, name) * factor)
    plan = community_plan(R, None, split, 10, 6)
    assert plan.seconds > UNLIMITED_CEILING and plan.mode == "refused"
    assert "without a limit" in plan.reason and "Pass max_seconds=" in plan.reason
    allowed = int(plan.reason.split("Pass max_seconds=")[1].split()[0])
    assert allowed >= plan.seconds
    assert community_plan(R, allowed, split, 10, 6).mode == "run"


@pytest.mark.skipif(data_missing("facebook"), reason="ego-Facebook not available locally")
def test_ego_facebook_communities_and_triangles_run_with_the_defaults():
    """The README's graph (4,039 nodes, eps = 1) is planned to run, not refused: no limit by
    default, and its predicted cost is far below the hours that would refuse it."""
    R = dpgraph.release(dpgraph.datasets.facebook(), epsilon=1.0, seed=0)
    split = PairSplit(R.number_of_nodes(), 0.1, 0.05, 0)
    plan = community_plan(R, None, split, 10, 6)
    assert plan.mode in ("run", "unresolvable") and plan.max_seconds is None
    assert plan.seconds < UNLIMITED_CEILING / 10
    t = triangle_plan(R)
    assert t.mode == "full" and t.max_seconds is None


def test_communities_of_an_ego_facebook_sized_release_run_with_the_defaults():
    """4,039 nodes and 88,234 edges (ego-Facebook's size) at eps = 1: R.communities() with
    default arguments runs (its plan says so), where the old 60-second default refused it."""
    G = nx.gnm_random_graph(4039, 88234, seed=2)
    R = dpgraph.release(G, epsilon=1.0, seed=0)
    split = PairSplit(4039, 0.1, 0.05, 0)
    plan = community_plan(R, None, split, 10, 6)
    assert plan.mode == "run" and plan.max_seconds is None
    assert "no limit set" in plan.reason


def _jumping_clock(monkeypatch, step: float) -> None:
    """triangle_planning's clock advances ``step`` seconds at every reading (a stand-in for a slow pass)."""
    now = [0.0]

    def tick():
        now[0] += step
        return now[0]

    monkeypatch.setattr(triangle_planning.time, "perf_counter", tick)


def test_a_triangle_pass_past_max_seconds_stops_names_the_fix_and_keeps_nothing(monkeypatch):
    R = _planted()
    limit = 2 * triangle_plan(R).full.seconds + 5.0  # the plan allows every row
    assert triangle_plan(R, limit).mode == "full"
    with monkeypatch.context() as m:
        _jumping_clock(m, 1000.0)
        with pytest.raises(CostLimitError, match=r"stopped after .* over max_seconds=[\d.]+.*"
                                                 r"nothing was kept\. Pass a larger max_seconds "
                                                 r"\(e\.g\. \d+\) or max_seconds=None"):
            R.triangles(max_seconds=limit, progress=False)
    assert "tri" not in _cache(R) and "tri-red" not in _cache(R)
    assert R.triangles(max_seconds=limit).plan.mode == "full"  # the clock back: it completes
    assert "tri" in _cache(R)


def test_a_refusal_names_only_the_limit_exceeded_and_its_fix(monkeypatch):
    R = dpgraph.release(nx.powerlaw_cluster_graph(3000, 5, 0.5, seed=1), 5.0, seed=3)
    full = triangle_plan(R).full
    slow = triangle_plan(R, full.seconds / 1e4, sample=False).reason
    assert re.search(r"it exceeds max_seconds=[\d.e-]+, and could resolve", slow)
    assert re.search(r"refused \(pass sample=True, or max_seconds=\d+ or more\)$", slow)
    big = triangle_plan(R, max_memory=full.bytes // 4, sample=False).reason
    assert re.search(r"it exceeds max_memory=[\d.]+ (MiB|GiB), and", big)
    assert big.endswith("refused (pass sample=True, or a larger max_memory)")
    both = triangle_plan(R, full.seconds / 1e4, max_memory=full.bytes // 4, sample=False).reason
    assert "it exceeds max_seconds=" in both and " and max_memory=" in both
    assert both.endswith("or more or a larger max_memory)")


def test_a_limit_set_around_the_call_applies_and_an_argument_wins():
    R = _planted()
    with time_limit(1e-6):
        assert triangle_plan(R).max_seconds == 1e-6
        assert triangle_plan(R, 100.0).max_seconds == 100.0
    assert triangle_plan(R).max_seconds is None
    with pytest.raises(ValueError, match="max_seconds"), time_limit(0):
        pass


def test_communities_past_max_seconds_stop_with_how_to_raise_it(monkeypatch):
    R = _planted()
    split = PairSplit(R.number_of_nodes(), 0.15, 0.05, 0)
    limit = 3 * community_plan(R, None, split, 10, 6).seconds + 5.0
    with monkeypatch.context() as m:
        _jumping_clock(m, 1000.0)
        with pytest.raises(CostLimitError, match=r"community detection on 600 nodes stopped "
                                                 r"after .*over max_seconds=.*Pass a larger "
                                                 r"max_seconds"):
            R.communities(max_seconds=limit, seed=0, progress=False)
    assert R.communities(max_seconds=limit, seed=0).resolvable


def test_the_held_out_pass_is_stopped_between_row_blocks(monkeypatch):
    """A limit is checked inside the longest stage too, not only between stages."""
    from dpgraph.graph.analytics import _pairsplit

    R = _planted()
    split = PairSplit(R.number_of_nodes(), 0.15, 0.05, 0)
    limit = 3 * community_plan(R, None, split, 10, 6).seconds + 5.0
    monkeypatch.setattr(community_planning.StageProgress, "done", lambda self, stage: None)
    monkeypatch.setattr(community, "check_structure_stage", lambda *a: None)
    entered = []
    real = _pairsplit.PairSplit.block_counts

    def spy(self, *a, **k):
        entered.append(True)
        return real(self, *a, **k)

    monkeypatch.setattr(_pairsplit.PairSplit, "block_counts", spy)
    _jumping_clock(monkeypatch, 1000.0)
    with pytest.raises(CostLimitError, match=r"community detection on 600 nodes stopped after"):
        R.communities(max_seconds=limit, seed=0, progress=False)
    assert entered == [True]  # stopped inside the held-out pass


def test_ctrl_c_in_the_triangle_pass_keeps_nothing(monkeypatch):
    R = _planted()
    real = triangle_counting.TriangleCounter.reductions

    def interrupted(self, *a, **k):
        raise KeyboardInterrupt

    monkeypatch.setattr(triangle_counting.TriangleCounter, "reductions", interrupted)
    with pytest.raises(KeyboardInterrupt):
        R.triangles()
    kept = [k for k in _cache(R) if k in ("tri", "tri-red", "tri-sampled")
            or (isinstance(k, tuple) and k[0] == "tri-sampled")]
    assert kept == []
    monkeypatch.setattr(triangle_counting.TriangleCounter, "reductions", real)
    assert np.isfinite(R.triangles().value) and "tri" in _cache(R)


def _big_release():
    """About 3 x 10^6 released edges (eps = 0.5 on 4,000 nodes): 96 MB of edge arrays."""
    return dpgraph.release(nx.empty_graph(4000), epsilon=0.5, seed=0)


def test_released_edges_refuses_under_small_free_memory(monkeypatch):
    R = _big_release()
    m = R.number_of_released_edges()
    assert 32 * m > _memory.SMALL  # two int64 arrays, and the row blocks' parts they join

    def boom(*a, **k):
        raise AssertionError("the edges were gathered before the size check")

    monkeypatch.setattr(type(R.adjacency), "edge_array", boom)
    monkeypatch.setattr(_memory, "available_memory", lambda: 32 << 20)
    with pytest.raises(MemoryError) as info:
        R.released_edges()
    said = str(info.value)
    assert f"R.released_edges() of {m:,} released edges needs" in said
    assert "only 32.00 MiB is available" in said and "nothing was allocated" in said
    assert "R.to_edgelist(path)" in said and "target_edges" in said
    monkeypatch.undo()
    rows, cols = R.released_edges()  # with the memory it needs, the same call answers
    assert rows.size == m and bool((rows < cols).all())


def test_degree_assortativity_never_builds_the_released_edges(monkeypatch):
    """The report's assortativity step: one product with the released adjacency, O(n) memory,
    never the edge list or a sparse matrix of the release; the same value as from the edges."""
    R = dpgraph.release(nx.powerlaw_cluster_graph(500, 4, 0.3, seed=1), epsilon=2.0, seed=0)
    expected = R.degree_assortativity(proper=False)

    def boom(*a, **k):
        raise AssertionError("the released edges were materialized")

    R2 = dpgraph.release(nx.powerlaw_cluster_graph(500, 4, 0.3, seed=1), epsilon=2.0, seed=0)
    for cls, name in ((type(R2), "to_scipy_sparse"), (type(R2), "released_edges"),
                      (type(R2.adjacency), "edge_array")):
        monkeypatch.setattr(cls, name, boom)
    got = R2.degree_assortativity(proper=False)
    assert got.value == pytest.approx(expected.value, rel=1e-9)
    assert got.std == pytest.approx(expected.std, rel=1e-9, nan_ok=True)


def test_the_cli_shows_and_applies_a_time_limit(tmp_path, capsys):
    """`dpgraph report` and every `dpgraph experiment` show --max-seconds in their help, reject a
    non-positive one, and a report under a tiny limit lists what it refused and why."""
    ap = build_parser()
    for argv in (["report", "--help"], ["experiment", "peers", "--help"]):
        with pytest.raises(SystemExit):
            ap.parse_args(argv)
        out = capsys.readouterr().out
        assert "--max-seconds S" in out and "Default: no limit" in out
    with pytest.raises(SystemExit):
        ap.parse_args(["experiment", "peers", "--max-seconds", "0"])
    assert "--max-seconds must be finite and > 0" in capsys.readouterr().err
    path = tmp_path / "r.dpg"
    _planted(300).save(path)
    out = tmp_path / "r.html"
    assert main(["report", str(path), "-o", str(out), "--quiet", "--max-seconds", "1e-6"]) == 0
    html = out.read_text()
    assert "max_seconds=1e-06" in html and "Not computed" in html


def test_ctrl_c_in_a_command_is_one_line_and_exit_code_130(monkeypatch, tmp_path, capsys):
    from dpgraph import planning_cli

    def interrupted(args):
        raise KeyboardInterrupt

    monkeypatch.setattr(planning_cli, "_report", interrupted)
    path = tmp_path / "r.dpg"
    _planted(300).save(path)
    assert main(["report", str(path), "-o", str(tmp_path / "r.html"), "--quiet"]) == 130
    assert capsys.readouterr().err == "dpgraph: interrupted\n"
    assert not (tmp_path / "r.html").exists()


def test_an_experiment_runs_under_its_max_seconds(monkeypatch, tmp_path):
    """`dpgraph experiment NAME --max-seconds S`: every analytic the experiment calls without
    its own limit gets S; without the flag, none."""
    import dpgraph.experiments.peers as peers

    seen = []
    monkeypatch.setattr(peers, "_main", lambda args: seen.append(triangle_planning.limit_seconds(None)))
    assert main(["experiment", "peers", "--quick", "--out", str(tmp_path), "--max-seconds", "120"]) == 0
    assert main(["experiment", "peers", "--quick", "--out", str(tmp_path)]) == 0
    assert seen == [(120.0, True), (UNLIMITED_CEILING, False)]
