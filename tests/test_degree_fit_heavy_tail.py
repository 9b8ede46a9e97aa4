"""The degree fit's location average on graphs of many low-degree nodes.

The fit adds back the variance of the mean degree that its independent-node
likelihood misses (``location_averaged``): a shift of every degree by
X ~ N(0, var).  A node of degree >= 1 whose shift would end at 0 or below stays
where it is; the plain shift moved a fixed fraction of every low degree to 0 (a
graph without isolated nodes got about a fifth of its leaves at degree 0 at
eps = 1).  Every expected value below is the exact normal law of that rule.
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


def _leafy(size: int = 80) -> np.ndarray:
    """72% leaves, 10% degree 2, the rest on a tail: an internet-topology-like histogram."""
    h = np.zeros(size)
    h[1], h[2] = 0.72, 0.10
    h[3:41] = 0.18 / 38
    return h


def _shift_pmf(d: int, j: np.ndarray, sd: float) -> np.ndarray:
    """P(round(d + X) = j), X ~ N(0, sd^2)."""
    return ndtr((j - d + 0.5) / sd) - ndtr((j - d - 0.5) / sd)


# the missing variance at eps = 4 and eps = 1 of a 2,000-node internet graph: 0.02, 0.92
@pytest.mark.parametrize("var", [0.02, 0.3, 0.92, 3.0])
def test_no_isolated_node_is_created(var):
    g = location_averaged(_leafy(), var)
    assert g[0] == 0.0
    assert g.min() >= 0 and g.sum() == pytest.approx(1.0)


@pytest.mark.parametrize("var", [0.3, 0.92, 3.0])
def test_leaves_follow_the_exact_shift_law_kept_at_one(var):
    h = np.zeros(80)
    h[1] = 1.0
    sd = np.sqrt(var)
    g = location_averaged(h, var)
    j = np.arange(2, 80)
    assert g[1] == pytest.approx(ndtr(0.5 / sd), rel=1e-12)  # every shift to <= 1 stays at 1
    assert np.allclose(g[2:], _shift_pmf(1, j, sd), rtol=1e-10, atol=1e-300)


def test_away_from_zero_it_is_the_plain_shift():
    h = np.zeros(200)
    h[20:41] = 1 / 21
    var = 4.0
    sd = np.sqrt(var)
    g = location_averaged(h, var)
    j = np.arange(200)
    expected = sum(h[d] * _shift_pmf(d, j, sd) for d in range(20, 41))
    assert np.allclose(g, expected / expected.sum(), rtol=1e-9, atol=1e-15)
    assert float(g @ j) == pytest.approx(float(h @ j), abs=1e-9)  # a symmetric shift


def test_isolated_nodes_shift_as_before():
    h = np.zeros(30)
    h[0], h[10] = 0.3, 0.7
    sd = 1.0
    g = location_averaged(h, sd**2)
    kept = 1 - 0.3 * ndtr(-0.5 / sd)  # isolated nodes shifted below 0 are left out
    assert g[0] == pytest.approx(0.3 * _shift_pmf(0, np.array([0]), sd)[0] / kept, rel=1e-12)
    assert location_averaged(h, 0.0).tolist() == h.tolist()


def test_release_fit_gains_no_mass_at_zero_from_the_average(monkeypatch):
    # a fixed-seed internet topology graph (no node of degree 0) at eps = 1: the estimate's
    # mass at 0 is the unaveraged fit's, spread by the shift, and nothing from degrees >= 1
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
    sd = float(np.sqrt(var))
    j = np.arange(pre.size)
    above = sum(pre[d] * (1 - ndtr((pre.size - 0.5 - d) / sd)) for d in range(pre.size))
    kept = 1 - pre[0] * ndtr(-0.5 / sd) - above
    # two runs of the fit (its spline's optimizer stops at a gradient tolerance) agree to 1e-4
    assert a[0] == pytest.approx(pre[0] * _shift_pmf(0, j[:1], sd)[0] / kept, rel=1e-4)
