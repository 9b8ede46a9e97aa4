"""Graph analytics from one release: unbiasedness, error bars, deconvolution, bad input.

Statistical checks use fixed seeds and tolerances from theory: a mean over R
releases must lie within 4 standard errors of the truth (the standard error
is the exact one where the core knows it, else the empirical std / sqrt(R));
an interval's coverage over R releases within 4 binomial standard errors of
its level.
"""

from __future__ import annotations

import math

import networkx as nx
import numpy as np
import pytest

import dpgraph
from dpgraph.core import Channel
from dpgraph.core.probabilities import rr_probabilities
from dpgraph.graph import PrivateGraph
from dpgraph.graph import analytics as an
from dpgraph.graph.encoding import encode_graph
from dpgraph.graph.packed import PackedAdjacency, words_per_row

EPS = 1.0
REPS = 400


@pytest.fixture(scope="module")
def small_graph() -> nx.Graph:
    return nx.gnp_random_graph(30, 0.3, seed=11)


def _true_counts(G: nx.Graph) -> dict:
    return {
        "edges": G.number_of_edges(),
        "triangles": sum(nx.triangles(G).values()) / 3,
        "wedges": sum(d * (d - 1) / 2 for _, d in G.degree()),
    }


def binary_release(G: nx.Graph, alpha: float, beta: float, seed: int) -> PrivateGraph:
    """A release with P(1|edge)=alpha, P(1|non-edge)=beta (e.g. a subsampled release).

    Built here from the packed-adjacency interface, so the analytics are
    exercised with an asymmetric channel exactly as a sparse backend would.
    """
    enc = encode_graph(G)
    n = enc.n
    rng = np.random.default_rng(seed)
    X = np.zeros((n, n), dtype=bool)
    X[enc.rows, enc.cols] = True
    U = rng.random((n, n))
    Yb = np.where(X, alpha > U, beta > U)
    Yb = np.triu(Yb, 1)
    pad = np.zeros((n, words_per_row(n) * 64), dtype=bool)
    pad[:, :n] = Yb
    words = np.packbits(pad, axis=1, bitorder="little").view(np.uint64)
    adj = PackedAdjacency(np.ascontiguousarray(words), n, False)
    return PrivateGraph(adj, enc.index, rr_probabilities(1.0), channel=Channel.binary(alpha, beta))


def _within(mean: float, truth: float, se: float) -> bool:
    return abs(mean - truth) <= 4 * se


# ----------------------------------------------------------------------------- unbiasedness


def test_counts_unbiased_with_exact_std(small_graph):
    G = small_graph
    t = _true_counts(G)
    S, T = list(range(10)), list(range(10, 30))
    true_deg = np.array([d for _, d in sorted(G.degree())], float)
    true_cut = nx.cut_size(G, S, T)
    vals = {"edges": [], "density": [], "degS": [], "dens_ST": [], "deg": []}
    stds = {}
    for r in range(REPS):
        R = dpgraph.release(G, EPS, seed=r)
        e, d = R.number_of_edges(proper=False), R.density(proper=False)
        ds, dst = R.volume(S, proper=False), R.density_between(S, T, proper=False)
        dg = R.degree(proper=False)
        vals["edges"].append(e.value)
        vals["density"].append(d.value)
        vals["degS"].append(ds.value)
        vals["dens_ST"].append(dst.value)
        vals["deg"].append(dg.estimate.value)
        stds = {"edges": e.std, "density": d.std, "degS": ds.std, "dens_ST": dst.std,
                "deg": dg.estimate.std}
        assert e.exact_std and ds.exact_std
    N = 30 * 29 / 2
    truths = {"edges": t["edges"], "density": t["edges"] / N,
              "degS": float(true_deg[S].sum()), "dens_ST": true_cut / (10 * 20)}
    for k, truth in truths.items():
        arr = np.array(vals[k])
        assert _within(arr.mean(), truth, stds[k] / math.sqrt(REPS)), k
        # the exact std matches the spread of the estimates (chi-square scale, 4 se)
        assert abs(arr.std() / stds[k] - 1) < 4 * math.sqrt(1 / (2 * REPS)), k
    deg = np.array(vals["deg"])
    z = (deg.mean(axis=0) - true_deg) / (stds["deg"] / math.sqrt(REPS))
    assert np.all(np.abs(z) < 4.5)  # 30 nodes: 4.5 sd keeps the family-wise false alarm < 2e-4


def test_modularity_of_fixed_partition():
    G = nx.karate_club_graph()
    part = nx.community.louvain_communities(G, seed=1)
    # the release is unweighted: compare with the unweighted modularity (karate has weights)
    truth = nx.community.modularity(G, part, weight=None)
    vals, stds = [], []
    for r in range(300):
        q = dpgraph.release(G, 3.0, seed=80_000 + r).modularity(part)
        vals.append(q.value)
        stds.append(q.std)
    vals = np.array(vals)
    # E D_c^2 is debiased; only the division by m^ is plug-in (relative bias ~ Var m / m^2,
    # far below the Monte-Carlo SE), so the mean must sit within 4 SEs without slack
    assert abs(vals.mean() - truth) < 4 * vals.std() / math.sqrt(300)
    # two-sided: for symmetric randomized response v0 == v1, so the "largest per-pair
    # variance" in the delta method is the exact one and the std is not an upper bound;
    # tolerance = 4 normal-theory SEs of a sample std, 1/sqrt(2(reps-1))
    assert abs(np.mean(stds) / vals.std() - 1) < 4 / math.sqrt(2 * 299)


# ----------------------------------------------------------------------------- deconvolution


# the degree distribution (kernel, fit, band, memory) is tested in tests/test_degree_distribution.py


# ----------------------------------------------------------------------------- communities, synthesis


def test_communities_planted_partition():
    G = nx.planted_partition_graph(3, 60, 0.4, 0.02, seed=4)
    R = dpgraph.release(G, 3.0, seed=1)
    res = R.communities()
    truth = np.repeat(np.arange(3), 60)
    from dpgraph.experiments.peers import nmi

    assert nmi(truth, res.labels(range(180))) > 0.8
    assert res.n_above_edge >= 3
    assert len(res.eigenvalues) and res.noise_edge > 0
    alt = R.communities(method="spectral")
    assert nmi(truth, alt.labels(range(180))) > 0.8


def test_synthesize_edge_count_and_determinism():
    G = nx.planted_partition_graph(2, 60, 0.3, 0.02, seed=4)
    R = dpgraph.release(G, 2.0, seed=1)
    H1, H2 = R.synthesize(seed=5), R.synthesize(seed=5)
    assert sorted(H1.edges()) == sorted(H2.edges())
    assert set(H1.nodes()) == set(G.nodes())
    est = R.number_of_edges()  # the degree distribution's count, within the estimate's 95% interval
    assert abs(H1.number_of_edges() - est.value) <= 1.96 * est.std + 1
    # it keeps the two blocks: most synthesized edges are inside a block
    inside = sum((a < 60) == (b < 60) for a, b in H1.edges())
    assert inside / H1.number_of_edges() > 0.8


def test_synthesize_keeps_the_degree_sequence():
    # no isolated nodes in the input: the synthetic graph must not invent a mass of them
    # (the top-m^ pairs rule left 15-40% of an SBM's nodes isolated), and its degrees
    # follow the estimated sequence: the mean is 2 m / n, m within the edge count's 95% interval
    from dpgraph.experiments import zoo

    G = zoo.generate("sbm", n=800, seed=2)
    for eps in (1.0, 2.0):
        R = dpgraph.release(G, eps, seed=3)
        H = R.synthesize(seed=0)
        deg = np.array([d for _, d in H.degree()])
        assert np.mean(deg == 0) < 0.02
        est = R.number_of_edges()
        assert abs(H.number_of_edges() - est.value) <= 1.96 * est.std + 1


# ----------------------------------------------------------------------------- bad input


def test_bad_partitions():
    R = dpgraph.release(nx.path_graph(6), 1.0, seed=0)
    with pytest.raises(ValueError, match="repeats a node"):
        R.modularity([{0, 1, 2}, {2, 3, 4, 5}])
    with pytest.raises(ValueError, match="covers 5 of 6"):
        R.modularity([{0, 1, 2}, {3, 4}])
    with pytest.raises(ValueError, match="not in the graph"):
        R.modularity([{0, 1, 2}, {3, 4, 5, 99}])
    with pytest.raises(ValueError, match="empty"):
        R.modularity([{0, 1, 2, 3, 4, 5}, set()])
    with pytest.raises(TypeError, match="partition"):
        R.modularity("abc")


def test_communities_and_synthesize_validate_their_arguments():
    R = dpgraph.release(nx.karate_club_graph(), 3.0, seed=0)
    with pytest.raises(ValueError, match="max_communities must be >= 1"):
        R.communities(max_communities=0)
    with pytest.raises(TypeError, match="max_communities"):
        R.communities(max_communities=2.5)
    with pytest.raises(ValueError, match="holdout"):
        R.communities(holdout=1.0)
    with pytest.raises(ValueError, match="seed"):
        R.communities(seed=-1)
    with pytest.raises(ValueError, match="seed"):
        R.synthesize(seed=-1)
    with pytest.raises(TypeError, match="seed"):
        R.synthesize(seed=1.5)
    # the smallest legal value works: one community holding every node
    assert len(R.communities(max_communities=1).partition) == 1


def test_degree_assortativity_has_no_error_bar():
    r = dpgraph.release(nx.barabasi_albert_graph(200, 3, seed=1), 4.0, seed=0).degree_assortativity()
    # no error bar: the interval is the whole range and the estimate says it is unresolved
    assert -1.0 <= r.value <= 1.0 and r.ci() == (-1.0, 1.0) and not r.resolved


def test_unknown_nodes_and_directed():
    R = dpgraph.release(nx.path_graph(6), 1.0, seed=0)
    with pytest.raises(ValueError, match="not in the graph"):
        R.degree([0, 77])
    with pytest.raises(ValueError, match="not in the graph"):
        R.volume([0, 77])
    with pytest.raises(ValueError, match="share"):
        R.density_between([0, 1], [1, 2])
    D = dpgraph.release(nx.DiGraph([(0, 1), (1, 2), (2, 0)]), 1.0, seed=0, directed=True)
    assert len(D.degree()) == 3  # out-degrees are defined
    for call in (D.triangles, D.wedges, D.transitivity, D.degree_distribution,
                 D.communities, D.synthesize, lambda: D.modularity([{0, 1, 2}])):
        with pytest.raises(ValueError, match="undirected"):
            call()


def test_errors_do_not_echo_edges():
    G = nx.Graph([("alice", "bob"), ("bob", "carol")])
    R = dpgraph.release(G, 1.0, seed=0)
    with pytest.raises(ValueError) as exc:
        R.modularity([{"alice", "bob"}, {"bob", "carol"}])
    assert "alice" not in str(exc.value) and "carol" not in str(exc.value)


@pytest.mark.parametrize("channel", ["rr", "subsampled"])
def test_degree_moments_unbiased(small_graph, channel):
    G = small_graph
    d = np.array([k for _, k in G.degree()], float)
    truth = {"m": G.number_of_edges(), "d2": float(np.sum(d**2)), "d3": float(np.sum(d**3)),
             "B": float(sum(G.degree(a) * G.degree(b) for a, b in G.edges()))}
    reps = 800
    got = {k: [] for k in truth}
    for r in range(reps):
        R = (dpgraph.release(G, EPS, seed=90_000 + r) if channel == "rr"
             else binary_release(G, 0.48, 0.12, seed=95_000 + r))
        mo = an.degree_moments(R)
        for k in truth:
            got[k].append(mo[k])
    for k, t in truth.items():
        arr = np.array(got[k])
        assert _within(arr.mean(), t, arr.std() / math.sqrt(reps)), k
