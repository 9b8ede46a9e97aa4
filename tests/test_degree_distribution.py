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
    n = 3000
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
    G = nx.barabasi_albert_graph(1500, 3, seed=1)
    R = dpgraph.release(G, 1.0, seed=0)
    dmax = degree_stats._support(R)
    need = degree_stats._needed_bytes(1500, R.channel.alpha, R.channel.beta, dmax)
    fixed = degree_stats._FIXED_BYTES
    monkeypatch.setattr(degree_stats, "available_memory", lambda: fixed + (need - fixed) // 2)
    with pytest.raises(MemoryError, match=r"max_degree=[\d,]+") as err:
        R.degree_distribution()
    msg = str(err.value)
    assert " MiB " in msg and "0.00" not in msg and "released x" in msg and "keep=" not in msg
    k = int(msg.split("max_degree=")[1].split(" ")[0].replace(",", ""))
    assert 1 <= k < dmax
    h = R.degree_distribution(max_degree=k)  # the suggestion fits
    assert h.params["support"] == k and h.sum() == pytest.approx(1.0)


# ----------------------------------------------------------------------------- the band


def _dense_gnp():
    from dpgraph.experiments import zoo

    return zoo.generate("dense-gnp", n=1000, seed=0)


@pytest.mark.parametrize("make,eps", [
    # the previous band (a 28 x 64 grid of log-normals) was a point here: width 0.0
    (_dense_gnp, 4.0),
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

    G = nx.barabasi_albert_graph(800, 2, seed=3)
    R = dpgraph.release(G, 2.0, seed=0)
    deg = np.array([d for _, d in G.degree()])
    naive = np.bincount(R.released_degrees(), minlength=800) / 800
    for method in ("auto", "lognormal", "negbin"):
        h = R.degree_distribution(method=method)
        assert h.method == method and h.sum() == pytest.approx(1.0)
        assert degree_kl(deg, np.asarray(h)) < 0.25 * degree_kl(deg, naive)
    assert set(R.degree_distribution(method="negbin").params["families"]) == {"negbin"}
    for bad in ({"method": "em"}, {"level": 1.0}, {"level": True}, {"max_degree": 0}):
        with pytest.raises((TypeError, ValueError), match=next(iter(bad))):
            R.degree_distribution(**bad)
    wide = R.degree_distribution(level=0.99)
    narrow = R.degree_distribution(level=0.5)
    assert np.all(wide.ccdf_upper - wide.ccdf_lower >= narrow.ccdf_upper - narrow.ccdf_lower - 1e-6)


# ----------------------------------------------------------------------------- the slow audit

SPARSE = ("sbm", "gnp", "powerlaw", "holme-kim", "watts-strogatz", "geometric", "tree")
REAL = ("facebook", "email-eu-core")
REPS = {1.0: 3, 2.0: 2, 4.0: 3}


def _band(p: float, n: int) -> float:
    return 3 * math.sqrt(p * (1 - p) / n)


@pytest.fixture(scope="module")
def audit():
    """One row per release: the graph's sparse zoo kinds at their default sizes and the two
    real graphs, eps in {1, 2, 4}, fixed seeds."""
    from _data import data_missing

    from dpgraph.experiments import zoo
    from dpgraph.experiments.peers import degree_kl

    rows = []
    for g, name in enumerate(SPARSE + REAL):
        if name in REAL:
            if data_missing(name):
                continue
            G = zoo.real(name)
        else:
            G = zoo.generate(name, seed=0)
        deg = np.array([d for _, d in G.degree()])
        n = deg.size
        tail = _tail(deg, n)
        shifted = _tail(deg + 1, n)  # the same histogram one degree higher
        ks = np.unique(np.quantile(deg, [0.25, 0.5, 0.75, 0.95], method="lower").astype(int))
        for e, eps in enumerate(REPS):
            for r in range(REPS[eps]):
                R = dpgraph.release(G, eps, seed=50_000 + 1000 * g + 100 * e + r)
                h = R.degree_distribution()
                inside = (h.ccdf_lower <= tail + 1e-9) & (tail <= h.ccdf_upper + 1e-9)
                m = R.number_of_edges(proper=False)
                up = (h.ccdf_lower <= shifted + 1e-9) & (shifted <= h.ccdf_upper + 1e-9)
                rows.append({"graph": name, "eps": eps, "kl": degree_kl(deg, np.asarray(h)),
                             "z": (m.value - G.number_of_edges()) / m.std,
                             "pointwise": inside[ks], "simultaneous": bool(inside.all()),
                             "holds one degree higher": bool(up.all()),
                             "width": h.ccdf_upper[ks] - h.ccdf_lower[ks],
                             "estimate": h.ccdf()[ks]})
    return rows


@pytest.mark.slow
def test_band_covers_the_true_tail(audit):
    # the band is simultaneous at 95%: its coverage at a few degrees (the true 25/50/75/95%
    # quantiles) and at every degree at once must not fall below 0.95 by more than 3
    # binomial standard errors (one-sided: a simultaneous band covers each degree more often)
    point = np.concatenate([r["pointwise"] for r in audit])
    simul = np.array([r["simultaneous"] for r in audit])
    assert point.mean() >= 0.95 - _band(0.95, point.size), (point.mean(), point.size)
    assert simul.mean() >= 0.95 - _band(0.95, simul.size), (simul.mean(), simul.size)


@pytest.mark.slow
def test_band_is_never_narrower_than_the_estimates_spread(audit):
    # two releases of one graph at one eps: the band at a degree must be wider than the
    # difference between the two estimates there (a 95% band is about 2.8 times the sd of
    # that difference); a collapsed band (width 0) fails
    cells: dict = {}
    for r in audit:
        cells.setdefault((r["graph"], r["eps"]), []).append(r)
    widths, spreads = [], []
    for rows in cells.values():
        widths.append(np.mean([r["width"] for r in rows[:2]], axis=0))
        spreads.append(np.abs(rows[0]["estimate"] - rows[1]["estimate"]))
    widths, spreads = np.concatenate(widths), np.concatenate(spreads)
    assert np.all(widths > 0)
    assert np.mean(widths >= spreads) >= 0.95


@pytest.mark.slow
def test_kl_target_at_eps_4(audit):
    # KL(true || estimate) <= 0.15 at eps = 4 on every sparse zoo graph and the real graphs,
    # in every release whose edge count lies within 2 sd of the truth (about 95% of
    # releases).  Outside, the release itself misplaces the mean degree by 0.4 degree or
    # more, and on the narrow histograms (tree: mean 2; watts-strogatz: sd 0.5) no estimate
    # can undo that (measured: 0.15-0.45 there).  And no release far worse than the
    # graph's median: at most twice the median, or half the target where twice the
    # median is below it (medians are 0.004-0.14; a release at 0.06 against 0.007 is no
    # jump a user would see, while 0.24 -> 1.45, the failure this rule is about, is).
    for name in SPARSE + REAL:
        rows = [r for r in audit if r["graph"] == name and r["eps"] == 4.0]
        if not rows:
            continue
        kl = np.array([r["kl"] for r in rows if abs(r["z"]) <= 2])
        assert kl.size >= 1, (name, [r["z"] for r in rows])
        assert kl.max() <= 0.15, (name, kl)
        assert kl.max() <= max(2 * np.median(kl), 0.15 / 2), (name, kl)


# eps = 1 places the mean degree only to +- 1.36 (the sd of 2 m^ / n, whatever n).  Even an
# estimate told that the graph is G(n, p) (its release is G(n, p'), the edge count sufficient)
# has KL(truth || Poisson(2 m^ / n)) above 0.35 once the edge count is more than 1.21 sd below
# the truth (1.55 above).  docs/analytics.md claims the target on the graphs whose shape the
# families fit, in every release whose edge count lies within 1.2 sd of the truth ...
EPS1_TARGET = ("sbm", "gnp", "geometric") + REAL
# ... and says why it is missed on the others: the release cannot place their histogram to
# within one degree (the 95% band holds the truth and the truth one degree higher), and one
# degree costs more than the target on each (KL 1.7-3.7 from the truth).
EPS1_MISSED = ("powerlaw", "holme-kim", "watts-strogatz", "tree")


@pytest.mark.slow
@pytest.mark.parametrize("name", EPS1_TARGET)
def test_kl_target_at_eps_1(audit, name):
    rows = [r for r in audit if r["graph"] == name and r["eps"] == 1.0]
    if not rows:
        pytest.skip("data not available")
    kl = np.array([r["kl"] for r in rows if abs(r["z"]) <= 1.2])
    assert kl.size >= 1, (name, [r["z"] for r in rows])
    assert kl.max() <= 0.35, (name, kl)


@pytest.mark.slow
@pytest.mark.parametrize("name", EPS1_MISSED)
def test_eps_1_cannot_place_the_histogram_within_one_degree(audit, name):
    from dpgraph.experiments import zoo
    from dpgraph.experiments.peers import degree_kl

    deg = np.array([d for _, d in zoo.generate(name, seed=0).degree()])
    one_up = np.bincount(deg + 1, minlength=deg.size)[: deg.size] / deg.size
    assert degree_kl(deg, one_up) > 0.35  # one degree off misses the target by itself
    rows = [r for r in audit if r["graph"] == name and r["eps"] == 1.0]
    assert rows and all(r["holds one degree higher"] for r in rows), name
