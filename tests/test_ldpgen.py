"""LDPGen: the budget split, the noise of each round's reports, the generated graph."""

from __future__ import annotations

import networkx as nx
import numpy as np
import pytest
from scipy import stats

from dpgraph.baselines import ldpgen
from dpgraph.baselines.local_generation import choose_k1


def _degree_vectors(G, lab):
    """True degree vector of every user (node order 0..n-1) towards the groups ``lab``."""
    n, k = G.number_of_nodes(), int(lab.max()) + 1
    D = np.zeros((n, k))
    for u, v in G.edges():
        D[u, lab[v]] += 1
        D[v, lab[u]] += 1
    return D


def test_budget_split_sums_to_epsilon_and_validation():
    G = nx.planted_partition_graph(3, 40, 0.3, 0.02, seed=0)
    res = ldpgen(G, 2.5, seed=0)
    assert set(res.budget) == {"round1", "round2"}
    assert sum(res.budget.values()) == pytest.approx(2.5, rel=1e-15)
    assert res.budget["round1"] == pytest.approx(1.25)
    res = ldpgen(G, 1.0, seed=0, split=(1, 3))
    assert [res.budget["round1"], res.budget["round2"]] == pytest.approx([0.25, 0.75])
    with pytest.raises(ValueError, match="epsilon"):
        ldpgen(G, -1.0)
    with pytest.raises(ValueError, match="split"):
        ldpgen(G, 1.0, split=(1, 1, 1))
    with pytest.raises(ValueError, match="k0"):
        ldpgen(G, 1.0, k0=0)
    with pytest.raises(TypeError, match="k1"):  # a wrong type is a TypeError
        ldpgen(G, 1.0, k1=1.5)


def test_each_round_spends_its_share_as_laplace_noise():
    """Round-1 reports minus the true degree vectors towards the random groups are Lap(1/eps1),
    round-2 reports minus those towards the round-1 clusters Lap(1/eps2): Kolmogorov-Smirnov
    p > 0.001 each, and the other round's scale is rejected (so the test can fail)."""
    G = nx.planted_partition_graph(4, 100, 0.2, 0.02, seed=1)
    res = ldpgen(G, 2.0, seed=2, split=(0.25, 0.75))
    e1, e2 = res.budget["round1"], res.budget["round2"]
    r1 = (res.reports1 - _degree_vectors(G, res.groups)).ravel()
    r2 = (res.reports2 - _degree_vectors(G, res.clusters1)).ravel()
    assert stats.kstest(r1, "laplace", args=(0, 1 / e1)).pvalue > 1e-3
    assert stats.kstest(r2, "laplace", args=(0, 1 / e2)).pvalue > 1e-3
    assert stats.kstest(r1, "laplace", args=(0, 1 / e2)).pvalue < 1e-6
    assert stats.kstest(r2, "laplace", args=(0, 1 / e1)).pvalue < 1e-6


def test_one_bit_of_a_list_moves_one_report_entry_by_one():
    """The sensitivity each user's Laplace noise is calibrated to: toggling one pair changes
    one entry of each endpoint's degree vector by exactly one."""
    G = nx.gnp_random_graph(30, 0.2, seed=3)
    lab = np.arange(30) % 4
    D0 = _degree_vectors(G, lab)
    H = G.copy()
    H.remove_edge(*next(iter(G.edges())))
    diff = np.abs(_degree_vectors(H, lab) - D0)
    assert diff.sum(axis=1).max() == 1 and np.count_nonzero(diff.sum(axis=1)) == 2


def test_edge_count_is_unbiased():
    """Block sums of unclipped reports are unbiased: mean edge count over 20 seeds within 4 se."""
    G = nx.planted_partition_graph(4, 60, 0.3, 0.02, seed=1)
    m = [ldpgen(G, 2.0, seed=s).graph.number_of_edges() for s in range(20)]
    se = np.std(m, ddof=1) / np.sqrt(len(m))
    assert abs(np.mean(m) - G.number_of_edges()) < 4 * se


def test_output_is_a_simple_graph_on_the_users_and_reproducible():
    G = nx.relabel_nodes(nx.planted_partition_graph(3, 50, 0.3, 0.02, seed=4), lambda v: f"u{v}")
    a, b = ldpgen(G, 1.0, seed=5), ldpgen(G, 1.0, seed=5)
    H = a.graph
    assert set(H.nodes()) == set(G.nodes()) and nx.number_of_selfloops(H) == 0
    assert sorted(v for blk in a.partition for v in blk) == sorted(G.nodes())
    assert sorted(H.edges()) == sorted(b.graph.edges())
    assert sorted(H.edges()) != sorted(ldpgen(G, 1.0, seed=6).graph.edges())


def test_large_epsilon_finds_planted_blocks():
    """At eps = 200 the reports are exact; round 2's vectors towards round-1 clusters separate
    well-separated blocks (k1 forced to 4)."""
    from sklearn.metrics import adjusted_rand_score

    G = nx.planted_partition_graph(4, 50, 0.5, 0.005, seed=5)
    res = ldpgen(G, 200.0, seed=0, k1=4)
    where = {v: c for c, blk in enumerate(res.partition) for v in blk}
    assert adjusted_rand_score(np.repeat(np.arange(4), 50), [where[v] for v in range(200)]) > 0.9


def test_choose_k1():
    assert choose_k1(44.0, 0.5, 4039) == 15
    assert choose_k1(1000.0, 4.0, 100) == 10  # clamped to sqrt(n)
    assert choose_k1(-5.0, 1.0, 100) == 2
