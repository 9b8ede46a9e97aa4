"""PrivGraph baseline: budget accounting, simple output graph, reproducibility, noise laws."""

from __future__ import annotations

import math

import networkx as nx
import numpy as np
import pytest

from dpgraph.baselines.community_model import community_statistics, privgraph


def test_budget_sums_to_epsilon_and_validation():
    G = nx.planted_partition_graph(3, 30, 0.3, 0.02, seed=0)
    res = privgraph(G, 2.5, seed=0)
    assert set(res.budget) == {"init", "adjust", "degrees", "between"}
    assert sum(res.budget.values()) == pytest.approx(2.5)
    assert all(v > 0 for v in res.budget.values())
    res = privgraph(G, 1.0, seed=0, split=(1, 1, 2, 4))
    assert [res.budget[k] for k in ("init", "adjust", "degrees", "between")] == pytest.approx(
        [0.125, 0.125, 0.25, 0.5])
    with pytest.raises(ValueError, match="epsilon"):
        privgraph(G, 0.0)
    with pytest.raises(ValueError, match="split"):
        privgraph(G, 1.0, split=(1, 1, 1))
    with pytest.raises(ValueError, match="split"):
        privgraph(G, 1.0, split=(1, 1, 1, -1))
    with pytest.raises(ValueError, match="group_size"):
        privgraph(G, 1.0, group_size=0)
    with pytest.raises(ValueError, match="directed"):
        privgraph(nx.DiGraph([(0, 1)]), 1.0)
    assert "communities=" in repr(res) and "frozenset" not in repr(res)


@pytest.mark.parametrize("eps", [0.5, 4.0])
def test_output_is_simple_graph_on_the_public_nodes(eps):
    G = nx.relabel_nodes(nx.barabasi_albert_graph(300, 3, seed=1), lambda v: f"u{v}")
    res = privgraph(G, eps, seed=3)
    H = res.graph
    assert type(H) is nx.Graph
    assert set(H.nodes()) == set(G.nodes())
    assert nx.number_of_selfloops(H) == 0
    # the partition covers every node exactly once
    assert sorted(v for b in res.partition for v in b) == sorted(G.nodes())
    assert res.intra_degrees.min() >= 0
    assert np.array_equal(res.between_counts, res.between_counts.T)


def test_seeded_reproducibility():
    G = nx.planted_partition_graph(4, 40, 0.25, 0.02, seed=2)
    a, b = privgraph(G, 1.0, seed=11), privgraph(G, 1.0, seed=11)
    assert sorted(a.graph.edges()) == sorted(b.graph.edges())
    assert a.partition == b.partition
    c = privgraph(G, 1.0, seed=12)
    assert sorted(c.graph.edges()) != sorted(a.graph.edges())


def test_community_statistics_are_true_counts_plus_laplace():
    """intra_v = true + Lap(2/eps2), between_kl = true + Lap(1/eps3): means within 4 se,
    variances (2 b^2) within 4 se of the sample variance (mu4 = 24 b^4)."""
    G = nx.planted_partition_graph(3, 40, 0.3, 0.05, seed=4)
    part = [range(40), range(40, 80), range(80, 120)]
    lab = np.repeat(np.arange(3), 40)
    true_intra = np.array([sum(lab[u] == lab[v] for u in G[v]) for v in range(120)], float)
    true_btw = np.zeros((3, 3))
    for u, v in G.edges():
        if lab[u] != lab[v]:
            true_btw[lab[u], lab[v]] += 1
            true_btw[lab[v], lab[u]] += 1
    e2, e3, reps = 0.7, 1.3, 400
    d_intra, d_btw = [], []
    for s in range(reps):
        intra, btw = community_statistics(G, part, e2, e3, seed=s)
        d_intra.append(intra - true_intra)
        d_btw.append(btw[np.triu_indices(3, 1)] - true_btw[np.triu_indices(3, 1)])
    for dev, b in ((np.concatenate(d_intra), 2 / e2), (np.concatenate(d_btw), 1 / e3)):
        k = dev.size
        sd = math.sqrt(2) * b
        assert abs(dev.mean()) < 4 * sd / math.sqrt(k)
        se_var = math.sqrt((24 * b**4 - sd**4) / k)
        assert abs(dev.var() - sd**2) < 4 * se_var


def test_community_statistics_validates_partition():
    G = nx.path_graph(4)
    with pytest.raises(ValueError, match="cover"):
        community_statistics(G, [[0, 1]], 1.0, 1.0, seed=0)
    with pytest.raises(ValueError, match="disjoint"):
        community_statistics(G, [[0, 1], [1, 2, 3]], 1.0, 1.0, seed=0)
    with pytest.raises(ValueError, match="eps_degrees"):
        community_statistics(G, [[0, 1, 2, 3]], -1.0, 1.0, seed=0)


def test_large_epsilon_recovers_planted_communities_and_size():
    """With eps = 200 every Laplace scale is <= 0.03 and with super nodes of one node
    Louvain sees the graph itself, so the planted blocks (p_in = 0.5,
    p_out = 0.005) are found, and the synthetic edge count is the true one up to the
    Chung-Lu repeats it drops (below 1% here)."""
    from sklearn.metrics import adjusted_rand_score

    G = nx.planted_partition_graph(4, 50, 0.5, 0.005, seed=5)
    res = privgraph(G, 200.0, seed=0, group_size=1)
    truth = np.repeat(np.arange(4), 50)
    where = {v: c for c, b in enumerate(res.partition) for v in b}
    assert adjusted_rand_score(truth, [where[v] for v in range(200)]) > 0.95
    m, mh = G.number_of_edges(), res.graph.number_of_edges()
    assert 0.97 * m <= mh <= m + 5
