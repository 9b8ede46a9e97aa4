"""Calibration of the collected release: z-scores over many simulated collections are N(0, 1).

Several graphs, both protocols, 10% of users dropped out (a fresh random
tenth each collection, fixed seeds).  For each collection, one z-score per
statistic (edge count, a cut, a degree), each against the truth over the
pairs the collection observed: pooled over collections they are independent,
so their 95% coverage is Binomial(N, 0.95), their mean has standard error
1 / sqrt(N) and their sum of squares is chi-square(N).
"""

from __future__ import annotations

import warnings

import networkx as nx
import numpy as np
import pytest
from scipy import stats

from dpgraph.exceptions import SeededReleaseWarning
from dpgraph.local import simulate_collection
from dpgraph.local.assignment import owner

GRAPHS = {
    "gnp": nx.gnp_random_graph(50, 0.12, seed=1),
    "karate": nx.karate_club_graph(),
    "clustered": nx.powerlaw_cluster_graph(44, 3, 0.3, seed=2),
}


def _observed(n: int, rep: np.ndarray, protocol: str) -> np.ndarray:
    i, j = np.meshgrid(np.arange(n), np.arange(n), indexing="ij")
    off = i != j
    if protocol == "one":
        obs = np.zeros((n, n), dtype=bool)
        obs[off] = rep[owner(i[off], j[off])]
        return obs
    return (rep[:, None] | rep[None, :]) & off


def _z_scores(protocol: str, reps: int, drop: float = 0.1, seed: int = 0) -> dict[str, list]:
    rng = np.random.default_rng(seed)
    out: dict[str, list] = {"edges": [], "cut": [], "degree": []}
    for g, G in enumerate(GRAPHS.values()):
        G = nx.convert_node_labels_to_integers(G)
        n = G.number_of_nodes()
        A = nx.to_numpy_array(G, nodelist=range(n), dtype=bool)
        for r in range(reps):
            gone = rng.choice(n, size=round(drop * n), replace=False)
            rep = np.ones(n, dtype=bool)
            rep[gone] = False
            with warnings.catch_warnings():
                warnings.simplefilter("ignore", SeededReleaseWarning)
                R = simulate_collection(G, 1.0, protocol, dropouts=gone.tolist(),
                                        seed=seed * 10**6 + g * 10**4 + r * 2 + (protocol == "both"))
            obs = _observed(n, rep, protocol)
            truth = A & obs
            e = R.number_of_edges(proper=False)
            out["edges"].append((float(e.raw) - truth.sum() / 2) / float(e.std))
            S = rng.choice(n, size=n // 3, replace=False)
            T = np.setdiff1d(np.arange(n), S)
            c = R.cut(S.tolist(), T.tolist(), proper=False)
            out["cut"].append((float(c.raw) - truth[np.ix_(S, T)].sum()) / float(c.std))
            v = int(rng.integers(n))
            d = R.degree(v, proper=False)
            out["degree"].append((float(d.raw) - truth[v].sum()) / float(d.std))
            assert int(e.missing_pairs) == n * (n - 1) // 2 - obs.sum() // 2
    return out


def _check(z: np.ndarray, what: str) -> None:
    N = z.size
    inside = int(np.count_nonzero(np.abs(z) <= 1.959964))
    lo, hi = stats.binom.ppf(0.0005, N, 0.95), stats.binom.isf(0.0005, N, 0.95)
    assert lo <= inside <= hi, f"{what}: {inside}/{N} within 1.96"
    assert abs(z.mean()) < 4 / np.sqrt(N), f"{what}: mean {z.mean():.3f}"
    chi = float(np.sum(z ** 2))
    p = min(stats.chi2.cdf(chi, N), stats.chi2.sf(chi, N))
    assert p > 0.0005, f"{what}: sum of squares {chi:.1f} for {N} scores"


@pytest.mark.parametrize("protocol", ["one", "both"])
def test_z_scores_with_ten_percent_dropouts_are_standard_normal(protocol):
    for what, z in _z_scores(protocol, reps=25).items():
        _check(np.asarray(z), f"{protocol} {what}")


@pytest.mark.slow
@pytest.mark.parametrize("protocol", ["one", "both"])
def test_z_scores_with_ten_percent_dropouts_are_standard_normal_many(protocol):
    for what, z in _z_scores(protocol, reps=150, seed=7).items():
        _check(np.asarray(z), f"{protocol} {what}")


def test_two_reports_halve_the_variance_of_a_linear_count():
    G = GRAPHS["gnp"]
    errs: dict[str, list] = {"one": [], "both": []}
    stds = {}
    for protocol in errs:
        for r in range(40):
            with warnings.catch_warnings():
                warnings.simplefilter("ignore", SeededReleaseWarning)
                R = simulate_collection(G, 1.0, protocol, seed=1000 + r)
            e = R.number_of_edges(proper=False)
            errs[protocol].append(float(e.raw) - G.number_of_edges())
            stds[protocol] = float(e.std)
    assert (stds["both"] / stds["one"]) ** 2 == pytest.approx(0.5)
    # the measured variances: their ratio over the exact one is F(40, 40)
    f = (np.mean(np.square(errs["both"])) / stds["both"] ** 2) / \
        (np.mean(np.square(errs["one"])) / stds["one"] ** 2)
    assert stats.f.ppf(0.0005, 40, 40) < f < stats.f.isf(0.0005, 40, 40)


@pytest.mark.parametrize("protocol", ["one", "both"])
def test_full_degrees_combine_the_noisy_degree_and_the_reports_without_bias(protocol):
    G = nx.convert_node_labels_to_integers(GRAPHS["clustered"])
    n = G.number_of_nodes()
    true = np.array([G.degree(v) for v in range(n)], dtype=float)
    z, shrink = [], []
    for r in range(30):
        gone = [r % n, (7 * r + 3) % n]
        with warnings.catch_warnings():
            warnings.simplefilter("ignore", SeededReleaseWarning)
            R = simulate_collection(G, 2.0, protocol, degree_share=0.5, dropouts=gone,
                                    seed=5000 + r)
        d = R.full_degrees()
        ok = np.isfinite(np.asarray(d.value))
        # every node: their noisy degrees are independent, and the pairs two nodes' report
        # counts share enter with weight v_L / (v_R + v_L), about 0.04 here
        z.extend(((np.asarray(d.value) - true) / np.asarray(d.std))[ok].tolist())
        assert not ok[gone].any() or protocol == "both"  # a dropout is never imputed
        rep = np.setdiff1d(np.arange(n), gone)
        rr = np.asarray(R.degree(proper=False).estimate.std)
        full = np.asarray(d.std)[rep]
        shrink.append(bool(np.all(full[np.isfinite(rr[rep])] <= rr[rep] + 1e-12)))
    # mostly discrete Laplace noise: not normal (kurtosis 6), so no normal coverage band or
    # chi-square; the first two moments, with standard errors from the sample itself
    z = np.asarray(z)
    assert abs(z.mean()) < 4 * z.std() / np.sqrt(z.size)
    sq = z ** 2
    assert abs(sq.mean() - 1) < 4 * sq.std() / np.sqrt(z.size), f"mean z^2 {sq.mean():.3f}"
    assert all(shrink)
