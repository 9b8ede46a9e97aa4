"""TmF baseline: privacy split, noisy edge count, threshold, uniform non-edges, O(m) cost."""

from __future__ import annotations

import math

import networkx as nx
import numpy as np
import pytest
import scipy.stats
from scipy.stats import chisquare

from dpgraph.baselines.top_m_filter import _tmf_traced, tmf, tmf_threshold


def test_privacy_split_and_validation():
    G = nx.gnm_random_graph(50, 100, seed=0)
    res = tmf(G, 2.0, seed=0)
    assert not hasattr(res, "passing_edges")  # non-private internals are not released
    assert res.eps_cells + res.eps_count == pytest.approx(2.0)
    assert res.eps_count == pytest.approx(1.0)  # half for the count, as in the SoK port
    res = tmf(G, 2.0, seed=0, count_fraction=0.1)
    assert (res.eps_cells, res.eps_count) == pytest.approx((1.8, 0.2))
    with pytest.raises(ValueError, match="count_fraction"):
        tmf(G, 1.0, count_fraction=1.0)
    with pytest.raises(ValueError, match="epsilon"):
        tmf(G, 0.0)
    with pytest.raises(ValueError, match="directed"):
        tmf(nx.DiGraph([(0, 1)]), 1.0)


@pytest.mark.slow
def test_noisy_edge_count_is_m_plus_laplace():
    """m~ = m + Lap(1/eps2): mean m within 4 se, variance 2/eps2^2 within 4 se."""
    G = nx.gnm_random_graph(60, 1000, seed=1)
    eps, reps = 0.5, 1000
    m_t = np.array([tmf(G, eps, seed=s).noisy_edge_count for s in range(reps)], float)
    scale = 1 / (eps / 2)
    sd = math.sqrt(2) * scale
    assert abs(m_t.mean() - 1000) < 4 * sd / math.sqrt(reps)
    # Var of the sample variance of a Laplace: (mu4 - sigma^4)/reps, mu4 = 24 b^4
    se_var = math.sqrt((24 * scale**4 - sd**4) / reps)
    assert abs(m_t.var() - sd**2) < 4 * se_var + 1 / 12  # + rounding to integers


def test_threshold_formula_branches():
    N, m_t = 1_000_000, 10_000
    eps_t = math.log(N / m_t - 1)
    small = 0.5 * eps_t
    assert tmf_threshold(N, m_t, small) == pytest.approx(math.log(N / m_t - 1) / (2 * small))
    big = 2 * eps_t
    assert tmf_threshold(N, m_t, big) == pytest.approx(
        math.log(N / (2 * m_t) + (math.exp(big) - 1) / 2) / big)
    assert tmf_threshold(N, 0, 1.0) == math.inf


def test_output_size_is_m_tilde_and_passing_counts():
    G = nx.gnm_random_graph(300, 3000, seed=2)
    N = 300 * 299 // 2
    passing_non = []
    for s in range(200):
        res, diag = _tmf_traced(G, 1.0, s, 0.5, "exact-topm")
        passing = diag["passing_edges"] + diag["passing_non_edges"]
        assert res.graph.number_of_edges() == min(res.noisy_edge_count, passing)
        q0 = scipy.stats.laplace.sf(res.threshold, scale=1 / res.eps_cells)
        passing_non.append((diag["passing_non_edges"], (N - 3000) * q0))
    got = np.array(passing_non)
    # Binomial(N - m, q0) passing non-edges: standardized mean within 4 se
    z = (got[:, 0] - got[:, 1]) / np.sqrt(got[:, 1])
    assert abs(z.mean()) < 4 / math.sqrt(len(z))


def test_non_edges_are_distinct_uniform_and_never_edges():
    """Chi-square: each non-edge of a small graph is picked equally often (p > 1e-4)."""
    G = nx.Graph([(0, 1), (1, 2), (2, 3)])
    G.add_nodes_from(range(8))
    edges = {frozenset(e) for e in G.edges()}
    non_edges = [frozenset((i, j)) for i in range(8) for j in range(i + 1, 8)
                 if frozenset((i, j)) not in edges]
    counts = dict.fromkeys(non_edges, 0)
    for s in range(3000):
        res = tmf(G, 0.3, seed=s, variant=("paper", "exact-topm")[s % 2])
        out = [frozenset(e) for e in res.graph.edges()]
        assert len(set(out)) == len(out)
        for e in out:
            if e not in edges:
                counts[e] += 1
    obs = np.array(list(counts.values()))
    assert obs.sum() > 1000
    assert chisquare(obs).pvalue > 1e-4


def test_paper_variant_keeps_passing_edges_and_fills_uniformly():
    G = nx.gnm_random_graph(300, 3000, seed=2)
    for s in range(50):
        res, diag = _tmf_traced(G, 1.0, s, 0.5, "paper")
        kept = sum(G.has_edge(a, b) for a, b in res.graph.edges())
        assert res.graph.number_of_edges() == res.noisy_edge_count
        assert kept == min(diag["passing_edges"], res.noisy_edge_count)
        assert diag["filled_non_edges"] == res.noisy_edge_count - kept
    with pytest.raises(ValueError, match="variant"):
        tmf(G, 1.0, variant="nope")


@pytest.mark.parametrize("variant", ["paper", "exact-topm"])
def test_linear_cost_on_a_huge_vertex_set(variant):
    # N = 5e9 pairs would not fit; TmF touches only the m edges and m~ outputs
    G = nx.Graph()
    G.add_nodes_from(range(100_000))
    rng = np.random.default_rng(0)
    e = rng.integers(0, 100_000, size=(20_000, 2))
    G.add_edges_from((int(a), int(b)) for a, b in e if a != b)
    res = tmf(G, 1.0, seed=0, variant=variant)
    assert abs(res.graph.number_of_edges() - G.number_of_edges()) < 50


def _brute_force_tmf(A_upper: np.ndarray, m: int, eps: float, rng: np.random.Generator) -> int:
    """Materialize every noisy cell, threshold, keep the top m~; return #true edges kept."""
    eps2 = eps / 2
    eps1 = eps - eps2
    N = A_upper.size
    m_t = int(np.clip(np.rint(m + rng.laplace(0, 1 / eps2)), 0, N))
    theta = tmf_threshold(N, m_t, eps1)
    noisy = A_upper + rng.laplace(0, 1 / eps1, size=N)
    passing = np.flatnonzero(noisy > theta)
    top = passing[np.argsort(-noisy[passing])[:m_t]]
    return int(A_upper[top].sum())


@pytest.mark.slow
def test_linear_time_sampler_matches_brute_force():
    """Kept true edges: O(m) sampler vs the fully materialized mechanism (means within 4 se)."""
    G = nx.gnm_random_graph(40, 150, seed=3)
    n = 40
    iu = np.triu_indices(n, 1)
    A = nx.to_numpy_array(G, nodelist=range(n))[iu]
    reps = 1500
    rng = np.random.default_rng(9)
    brute = np.array([_brute_force_tmf(A, 150, 2.0, rng) for _ in range(reps)], float)
    fast = []
    for s in range(reps):
        H = tmf(G, 2.0, seed=s, variant="exact-topm").graph
        fast.append(sum(G.has_edge(a, b) for a, b in H.edges()))
    fast = np.array(fast, float)
    se = math.sqrt(brute.var() / reps + fast.var() / reps)
    assert abs(brute.mean() - fast.mean()) < 4 * se
