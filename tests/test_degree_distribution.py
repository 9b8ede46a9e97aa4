"""The degree distribution: its channel kernel, its fit, its band, its memory.

Fast tests check the kernel against the direct convolution, the band's
invariants (positive width, holds the estimate and, at high epsilon, the
truth), the memory refusal and the sparse path.  The slow audit (CI, -m slow)
measures the band's coverage of the true tail P(D >= k) and the fit's KL
divergence over the zoo and the real graphs at eps in {1, 2, 4}; its
tolerances are binomial (a coverage rate within 3 standard errors of the
promised level) or the stated targets.
"""

from __future__ import annotations

import math
import warnings

import networkx as nx
import numpy as np
import pytest

import dpgraph
from dpgraph.core import Channel
from dpgraph.graph import analytics as an
from dpgraph.graph.analytics import degree_band, degree_stats
from dpgraph.graph.analytics.degree_kernel import DegreeKernel, kernel_rows

warnings.simplefilter("ignore", dpgraph.SeededReleaseWarning)


def _tail(deg: np.ndarray, n: int) -> np.ndarray:
    return np.array([np.mean(deg >= k) for k in range(n)])


# ----------------------------------------------------------------------------- the kernel


@pytest.mark.parametrize("n,alpha,beta", [(12, 0.7, 0.2), (400, 0.73, 0.27), (3000, 0.98, 0.018),
                                          (5000, 0.003, 0.0001)])
def test_kernel_columns_are_the_exact_convolution(n, alpha, beta):
    from scipy.stats import binom

    dmax = min(n - 1, 300)
    K = DegreeKernel(n, alpha, beta, dmax)
    assert np.allclose(K.pmf.sum(axis=0), 1.0)
    for d in sorted({0, 1, dmax // 3, dmax}):
        full = np.convolve(binom.pmf(np.arange(d + 1), d, alpha),
                           binom.pmf(np.arange(n - d), n - 1 - d, beta))[:n]
        # nothing of weight is outside the window, and the window is the convolution
        assert full[: K.y0].sum() + full[K.y1 + 1 :].sum() < 1e-12
        assert np.allclose(K.pmf[:, d], full[K.y0 : K.y1 + 1], rtol=0, atol=1e-12)


def test_transition_matrix_columns_are_the_convolution():
    from scipy.stats import binom

    P = an.degree_transition_matrix(12, Channel.binary(0.7, 0.2))
    d = 4
    direct = np.convolve(binom.pmf(np.arange(d + 1), d, 0.7), binom.pmf(np.arange(12 - d), 11 - d, 0.2))
    assert np.allclose(P[:, d], direct[:12], atol=1e-12)
    assert np.allclose(P.sum(axis=0), 1.0)
    with pytest.raises(ValueError, match="n must be"):
        an.degree_transition_matrix(1, Channel.binary(0.7, 0.2))


def test_sparse_release_needs_the_window_not_n_squared():
    # a subsampled release: released degrees ~ 20 whatever the true degree, so the
    # support is every degree but the window is a few dozen released degrees
    n = 6000
    G = nx.fast_gnp_random_graph(n, 10 / n, seed=1)
    R = dpgraph.release(G, 1.0, seed=2, target_edges=10 * n)
    a, b = R.channel.alpha, R.channel.beta
    y0, y1 = kernel_rows(n, a, b, n - 1)
    assert degree_stats._support(R) == n - 1 and y1 - y0 < 200
    # memory grows like n x window: doubling n doubles it (n x n would quadruple it)
    need = [degree_stats._needed_bytes(m, a, b, m - 1) for m in (n, 2 * n, 4 * n)]
    assert need[2] / need[1] < 2.2 and need[1] / need[0] < 2.2
    h = R.degree_distribution()
    assert h.shape == (n,) and h.sum() == pytest.approx(1.0)
    assert np.all(h.ccdf_lower <= h.ccdf() + 1e-12) and np.all(h.ccdf() <= h.ccdf_upper + 1e-12)


def test_refuses_before_allocating_and_names_a_support_that_fits(monkeypatch):
    G = nx.barabasi_albert_graph(3000, 3, seed=1)
    R = dpgraph.release(G, 1.0, seed=0)
    dmax = degree_stats._support(R)
    need = degree_stats._needed_bytes(3000, R.channel.alpha, R.channel.beta, dmax)
    fixed = degree_stats._FIXED_BYTES
    monkeypatch.setattr(degree_stats, "available_memory", lambda: fixed + (need - fixed) // 2)
    with pytest.raises(MemoryError, match=r"max_degree=[\d,]+") as err:
        R.degree_distribution()
    msg = str(err.value)
    assert "GiB" in msg and "released x" in msg and "keep=" not in msg
    k = int(msg.split("max_degree=")[1].split(" ")[0].replace(",", ""))
    assert 1 <= k < dmax
    h = R.degree_distribution(max_degree=k)  # the suggestion fits
    assert h.params["support"] == k and h.sum() == pytest.approx(1.0)


# ----------------------------------------------------------------------------- the band


@pytest.mark.parametrize("make,eps", [
    (lambda: nx.barabasi_albert_graph(2000, 3, seed=1), 4.0),
    (lambda: nx.planted_partition_graph(4, 150, 0.08, 0.01, seed=2), 4.0),
    (lambda: nx.powerlaw_cluster_graph(1500, 4, 0.3, seed=3), 1.0),
])
def test_band_has_positive_width_and_holds_the_estimate(make, eps):
    G = make()
    n = G.number_of_nodes()
    R = dpgraph.release(G, eps, seed=5)
    h = R.degree_distribution()
    S = h.ccdf()
    assert h.band == "simultaneous" and h.level == 0.95
    assert np.all(h.lower <= h + 1e-12) and np.all(h <= h.upper + 1e-12)
    assert np.all(h.ccdf_lower <= S + 1e-12) and np.all(h.ccdf_upper - S >= -1e-12)
    # positive width wherever the tail is not trivially 0 or 1: at the median true degree
    deg = np.array([d for _, d in G.degree()])
    k = int(np.median(deg))
    assert h.ccdf_upper[k] - h.ccdf_lower[k] > 0.01
    assert np.max(h.upper - h.lower) > 0.01
    # monotone tails, inside [0, 1], S(0) = 1
    for b in (h.ccdf_lower, h.ccdf_upper):
        assert np.all(np.diff(b) <= 1e-12) and b[0] == 1.0 and np.all((b >= 0) & (b <= 1))
    assert h.shape == (n,)


def test_band_is_tight_and_covers_when_the_noise_is_small():
    G = nx.barabasi_albert_graph(1000, 3, seed=2)
    deg = np.array([d for _, d in G.degree()])
    R = dpgraph.release(G, 12.0, seed=1)
    h = R.degree_distribution()
    tail = _tail(deg, 1000)
    assert np.all(h.ccdf_lower <= tail + 1e-9) and np.all(tail <= h.ccdf_upper + 1e-9)
    assert np.max(h.ccdf_upper - h.ccdf_lower) < 0.15


def test_simulated_releases_keep_the_shared_pair_correlation():
    # the mean released degree is 2 (released edges) / n: each pair counts in two degrees,
    # so its variance is 2 (n - 1) b (1 - b) / n for symmetric randomized response,
    # twice that of independent nodes; the simulation must reproduce it (4-sigma band on a
    # variance estimated from B draws: relative sd sqrt(2 / (B - 1)))
    n, eps = 2000, 1.0
    p = 1 / (1 + math.exp(eps))
    K = DegreeKernel(n, 1 - p, p, 60)
    h = np.zeros(61)
    h[5] = 1.0
    rng = np.random.default_rng(3)
    B = 400
    means = []
    for _ in range(B // 100):
        Y = degree_band.simulate(K, K.cdf(), np.full((100, n), 5), rng)
        means.extend(Y.mean(axis=1))
    exact = 2 * (n - 1) * p * (1 - p) / n
    assert abs(np.var(means, ddof=1) / exact - 1) < 4 * math.sqrt(2 / (B - 1))


# ----------------------------------------------------------------------------- the fit


def test_recovers_a_two_point_histogram():
    # half the nodes have degree 4, half degree 24: the spline correction finds both modes
    G = nx.disjoint_union(nx.random_regular_graph(4, 200, seed=1),
                          nx.random_regular_graph(24, 200, seed=2))
    R = dpgraph.release(G, 3.0, seed=0)
    h = R.degree_distribution()
    assert h.shape == (400,) and h.sum() == pytest.approx(1.0)
    assert h.params["model"] == "families x spline"
    low, high = h[:12].sum(), h[14:40].sum()
    assert abs(low - 0.5) < 0.1 and abs(high - 0.5) < 0.1
    assert abs(h @ np.arange(400) - 14) < 1.0
    naive = np.bincount(R.released_degrees(), minlength=400) / 400
    true = np.bincount([d for _, d in G.degree()], minlength=400) / 400
    assert np.abs(np.cumsum(h) - np.cumsum(true)).sum() < 0.2 * np.abs(
        np.cumsum(naive) - np.cumsum(true)).sum()


def test_families_and_validation():
    from dpgraph.experiments.peers import degree_kl

    G = nx.barabasi_albert_graph(1500, 2, seed=3)
    R = dpgraph.release(G, 2.0, seed=0)
    deg = np.array([d for _, d in G.degree()])
    naive = np.bincount(R.released_degrees(), minlength=1500) / 1500
    for method in ("auto", "lognormal", "negbin"):
        h = R.degree_distribution(method=method)
        assert h.method == method and h.sum() == pytest.approx(1.0)
        assert degree_kl(deg, np.asarray(h)) < 0.25 * degree_kl(deg, naive)
    assert set(R.degree_distribution(method="negbin").params["families"]) == {"negbin"}
    for bad in ({"method": "em"}, {"level": 1.0}, {"level": True}, {"max_degree": 0}):
        with pytest.raises(ValueError, match=next(iter(bad))):
            R.degree_distribution(**bad)
    wide = R.degree_distribution(level=0.99)
    narrow = R.degree_distribution(level=0.5)
    assert np.all(wide.ccdf_upper - wide.ccdf_lower >= narrow.ccdf_upper - narrow.ccdf_lower - 1e-6)
