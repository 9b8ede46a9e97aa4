"""Every analytic returns a finite value inside its feasible range, with an interval
inside the range that contains the value, on any graph at any epsilon (hypothesis)."""

from __future__ import annotations

import math
import warnings

import networkx as nx
import numpy as np
import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

import dpgraph
from dpgraph.core import RESOLVED_FRACTION, Estimate

graphs = st.builds(
    lambda n, p, seed: nx.gnp_random_graph(n, p, seed=seed),
    st.integers(3, 28), st.sampled_from([0.0, 0.05, 0.2, 0.5, 0.9, 1.0]), st.integers(0, 10**6),
)
epsilons = st.sampled_from([0.05, 0.3, 1.0, 2.0, 5.0, 12.0])


def _check(est, low: float, high: float) -> None:
    assert isinstance(est, Estimate)
    v = float(est.value)
    lo, hi = est.ci(0.95)
    assert all(math.isfinite(x) for x in (v, lo, hi))
    # a std, or NaN where the release gives no error bar (never a placeholder number)
    assert math.isfinite(float(est.std)) or (math.isnan(est.std) and not est.resolved)
    assert low <= lo <= v <= hi <= high
    lo90, hi90 = est.ci(0.5)
    assert low <= lo90 <= v <= hi90 <= high
    assert isinstance(est.resolved, bool)
    # the resolution rule: an interval containing 0 is never resolved, and says why
    if lo <= 0 <= hi:
        assert est.resolved is False and est.reason, (est, lo, hi)
    if est.resolved:
        assert est.reason is None and (hi - lo) / 2 <= RESOLVED_FRACTION * abs(v)
    else:
        assert str(est).startswith("-- (unresolved: ") and "unresolved" in repr(est)


@settings(max_examples=40, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(G=graphs, eps=epsilons, seed=st.integers(0, 2**31))
def test_every_analytic_is_finite_in_range_and_inside_its_interval(G, eps, seed):
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        R = dpgraph.release(G, eps, seed=seed)
    n = G.number_of_nodes()
    N = n * (n - 1) / 2
    _check(R.number_of_edges(), 0, N)
    _check(R.density(), 0, 1)
    half = list(range(n // 2))
    rest = list(range(n // 2, n))
    _check(R.density_between(half, rest), 0, 1)
    _check(R.cut(half, rest), 0, len(half) * len(rest))
    _check(R.edges_within(rest), 0, len(rest) * (len(rest) - 1) / 2)  # n >= 3: 2 nodes or more
    for e in R.cuts([(half, rest), (half[:1], rest[:1])]):
        _check(e, 0, len(half) * len(rest))
    _check(R.volume(half), 0, 2 * len(half) * (len(half) - 1) / 2 + len(half) * len(rest))
    for _, e in R.degree():
        _check(e, 0, n - 1)
    _check(R.triangles(), 0, n * (n - 1) * (n - 2) / 6)
    _check(R.wedges(), 0, n * (n - 1) * (n - 2) / 2)
    _check(R.transitivity(), 0, 1)
    _check(R.average_clustering(), 0, 1)
    _check(R.degree_assortativity(), -1, 1)
    part = [set(half), set(rest)]
    _check(R.modularity(part), -0.5, 1)
    _check(R.modularity([set(range(n))]), -0.5, 1)
    _check(R.communities().modularity, -0.5, 1)  # held-out, or exactly 0 when unresolvable
    h = R.degree_distribution()
    assert np.all(np.isfinite(h)) and np.all(h >= 0) and h.sum() == pytest.approx(1.0)


def test_raw_values_stay_available():
    G = nx.gnp_random_graph(30, 0.1, seed=1)
    R = dpgraph.release(G, 0.5, seed=2)
    for f in (R.number_of_edges, R.triangles, R.wedges):
        raw, proper = f(proper=False), f()
        assert raw.value == proper.raw
        lower, upper = proper.feasible_range
        # a proper count is the unbiased one clipped to its range and rounded to an integer
        assert proper.value == round(min(max(raw.value, lower), upper))


def test_unresolvable_is_flagged_not_presented_as_an_answer():
    # a tree at eps = 0.3: the wedge count cannot be told from zero, the ratio is noise
    G = nx.random_labeled_tree(200, seed=1)
    R = dpgraph.release(G, 0.3, seed=0)
    t = R.transitivity()
    assert not t.resolved and t.ci() == (0.0, 1.0)
    assert "unresolved" in repr(t)
    assert not R.average_clustering().resolved
    # a dense graph at eps = 4 is resolved
    D = dpgraph.release(nx.gnp_random_graph(200, 0.3, seed=1), 4.0, seed=0)
    assert D.transitivity().resolved and D.number_of_edges().resolved and D.modularity(
        [set(range(100)), set(range(100, 200))]).resolved


def test_proper_must_be_a_bool():
    R = dpgraph.release(nx.path_graph(5), 1.0, seed=0)
    for f in (R.number_of_edges, R.triangles, R.transitivity, R.average_clustering,
              R.degree_assortativity):
        with pytest.raises(TypeError, match="proper"):
            f(proper="yes")


def test_degree_is_node_keyed_like_networkx():
    G = nx.relabel_nodes(nx.star_graph(20), {i: f"n{i}" for i in range(21)})
    R = dpgraph.release(G, 3.0, seed=0)
    assert abs(R.degree("n0").value - 20) < 4 * R.degree("n0").std
    d = R.degree(["n1", "n0"])
    assert {v for v, _ in d} == {"n0", "n1"} and set(d.to_dict()["value"]) == {"n0", "n1"}
    assert dict(d)["n0"].value == R.degree("n0").value  # (node, estimate) pairs, like networkx
    assert "n1" in d and "zz" not in d and len(d) == 2
    assert set(dict(R.degree())) == set(G.nodes())
    vol = R.volume(["n0", "n1"])
    assert abs(vol.value - 21) < 4 * vol.std
    assert np.asarray(R.degree()).shape == (21,)
    with pytest.raises(ValueError, match="not in the graph"):
        R.degree(["zz"])


def test_karate_triangles_at_eps_1_are_not_resolved():
    # truth 45; at eps = 1 the interval reaches 0 in every release (a sd of about 60-80)
    G = nx.karate_club_graph()
    for seed in range(4):
        t = dpgraph.release(G, 1.0, seed=seed).triangles()
        lo, hi = t.ci()
        assert lo == 0 <= hi and not t.resolved and t.reason.endswith("contains 0")
        assert str(t) == f"-- (unresolved: {t.reason})"
