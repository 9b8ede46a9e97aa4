"""The degree fit's location average on graphs of many low-degree nodes.

The fit adds back the variance of the mean degree that its independent-node
likelihood misses (``location_averaged``).  It does so as a change of scale
D -> round(D C), E[C] = 1, so a node of degree 1 lands at degree 0 only when
C < 1/2 and isolated nodes are never created from nothing; a shift D -> D + X
instead moved a fixed fraction of every low degree to 0 (a graph without
isolated nodes got about a fifth of its leaves at degree 0 at eps = 1).
"""

from __future__ import annotations

import warnings

import networkx as nx
import numpy as np
import pytest
from scipy.special import ndtr

import dpgraph
from dpgraph.graph.analytics.degree_fit import location_averaged

warnings.filterwarnings("ignore", category=dpgraph.exceptions.SeededReleaseWarning)


def _leafy(size: int = 60) -> np.ndarray:
    """72% leaves, 10% degree 2, the rest on a tail: an internet-topology-like histogram."""
    h = np.zeros(size)
    h[1], h[2] = 0.72, 0.10
    h[3:41] = 0.18 / 38
    return h


def _p_scaled_below(k: int, half: float, s: float) -> float:
    """P(k C < half) for log C ~ N(-s^2 / 2, s^2)."""
    return float(ndtr((np.log(half / k) + s * s / 2) / s))


@pytest.mark.parametrize("var", [0.02, 0.3, 0.92, 3.0])
def test_mass_reaching_degree_zero_is_the_exact_scale_law(var):
    # the missing variance at eps = 4 and eps = 1 of a 2,000-node internet graph (0.02, 0.92)
    h = _leafy()
    mu = float(h @ np.arange(h.size))
    s = float(np.sqrt(np.log1p(var / mu**2)))
    g = location_averaged(h, var)
    scaled_above = sum(h[k] * (1 - _p_scaled_below(k, h.size - 0.5, s)) for k in range(1, h.size))
    expected = sum(h[k] * _p_scaled_below(k, 0.5, s) for k in range(1, h.size)) / (1 - scaled_above)
    assert g[0] == pytest.approx(expected, rel=1e-9, abs=1e-15)
    # far below the additive shift's P(X < -1/2) of the leaves
    assert g[0] < 0.5 * h[1] * ndtr(-0.5 / np.sqrt(var))


def test_scale_average_keeps_the_mean_and_adds_the_variance():
    # histogram well inside the support: the average's mean is the mean (E[C] = 1) up to the
    # rounding to whole degrees, and its variance grows by var (1 + Var D / mu^2) exactly
    # before rounding; rounding adds at most 1/12 more (a uniform rounding error)
    h = np.zeros(200)
    h[20:41] = 1 / 21
    d = np.arange(h.size)
    mu, vd = float(h @ d), float(h @ d**2) - float(h @ d) ** 2
    var = 4.0
    g = location_averaged(h, var)
    assert abs(float(g @ d) - mu) < 0.05
    added = float(g @ d**2) - float(g @ d) ** 2 - vd
    assert var * (1 + vd / mu**2) - 0.05 < added < var * (1 + vd / mu**2) + 1 / 12 + 0.05
    assert g.min() >= 0 and g.sum() == pytest.approx(1.0)


def test_isolated_nodes_are_kept_and_none_created_from_a_point_mass():
    h = np.zeros(30)
    h[0], h[10] = 0.3, 0.7
    g = location_averaged(h, 1.0)
    assert g[0] == pytest.approx(0.3, rel=1e-12)  # 10 C < 1/2 has probability ~1e-200
    assert location_averaged(h, 0.0).tolist() == h.tolist()


def test_release_fit_gains_at_zero_only_what_scaling_moves(monkeypatch):
    # a fixed-seed internet topology graph (no node of degree 0) at eps = 1: the estimate's
    # mass at 0 is the unaveraged fit's plus exactly the scaled-down mass P(k C < 1/2)
    import dpgraph.graph.analytics.degree_fit as fit

    G = nx.random_internet_as_graph(600, seed=7)
    assert min(d for _, d in G.degree()) >= 1
    h = dpgraph.release(G, 1.0, seed=3).degree_distribution()
    a = np.asarray(h)
    assert a.min() >= 0 and a.sum() == pytest.approx(1.0)
    var = h.params["location_variance"]
    assert var > 0.1  # the average matters at this size and epsilon
    monkeypatch.setattr(fit, "location_averaged", lambda h, v: np.asarray(h, float).copy())
    pre = np.asarray(dpgraph.release(G, 1.0, seed=3).degree_distribution())
    d = np.arange(pre.size)
    mu = float(pre @ d)
    s = float(np.sqrt(np.log1p(var / mu**2)))
    moved = sum(pre[k] * _p_scaled_below(k, 0.5, s) for k in range(1, pre.size))
    kept = 1 - sum(pre[k] * (1 - _p_scaled_below(k, pre.size - 0.5, s)) for k in range(1, pre.size))
    # two runs of the fit (its spline's optimizer stops at a gradient tolerance) agree to 1e-4
    assert a[0] == pytest.approx((pre[0] + moved) / kept, rel=1e-4)
