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


@pytest.mark.parametrize("channel", ["rr", "subsampled"])
def test_triangles_wedges_unbiased_and_variances(small_graph, channel):
    G = small_graph
    t = _true_counts(G)
    T, W, VT, VW, CV = [], [], [], [], []
    reps = 800
    for r in range(reps):
        if channel == "rr":
            R = dpgraph.release(G, EPS, seed=10_000 + r)
        else:  # subsampling s = 0.6 of a flip p' = 0.2 release: alpha = s(1-p'), beta = s p'
            R = binary_release(G, 0.6 * 0.8, 0.6 * 0.2, seed=20_000 + r)
        st = an.triangle_statistics(R)
        T.append(st.triangles)
        W.append(st.wedges)
        VT.append(st.var_triangles)
        VW.append(st.var_wedges)
        CV.append(st.cov)
    T, W = np.array(T), np.array(W)
    assert _within(T.mean(), t["triangles"], T.std() / math.sqrt(reps))
    assert _within(W.mean(), t["wedges"], W.std() / math.sqrt(reps))
    # the variance estimates are unbiased: compare their mean with the sample
    # (co)variance, whose own relative se is about sqrt(2 / reps) (normal theory;
    # the products are heavier-tailed, so 5 se)
    tol = 5 * math.sqrt(2 / reps)
    assert abs(np.mean(VT) / T.var() - 1) < tol
    assert abs(np.mean(VW) / W.var() - 1) < tol
    assert abs(np.mean(CV) / np.cov(T, W)[0, 1] - 1) < 2 * tol


def test_triangle_estimator_equals_trace_formula(small_graph):
    R = dpgraph.release(small_graph, EPS, seed=3)
    Y = R.to_scipy_sparse().toarray().astype(float)
    z0, z1 = R.channel.debias(np.array([0.0, 1.0]))  # debiased value of a released 0 and 1
    Z = np.where(np.eye(30, dtype=bool), 0.0, z0 + (z1 - z0) * Y)
    assert R.triangles(proper=False).value == pytest.approx(np.trace(Z @ Z @ Z) / 6, rel=1e-10)
    D = Z.sum(axis=0)
    w = 0.5 * np.sum(D**2 - (Z**2).sum(axis=0))
    assert R.wedges(proper=False).value == pytest.approx(w, rel=1e-10)


def test_compiled_triangle_pass_equals_numpy(small_graph, monkeypatch):
    pytest.importorskip("numba")
    import importlib

    motifs = importlib.import_module("dpgraph.graph.analytics.motifs")
    G = nx.disjoint_union(small_graph, nx.gnp_random_graph(70, 0.2, seed=3))
    a = motifs.triangle_statistics(dpgraph.release(G, 1.0, seed=4))
    monkeypatch.setattr(motifs, "_USE_NUMBA", False)
    b = motifs.triangle_statistics(dpgraph.release(G, 1.0, seed=4))
    for f in ("triangles", "wedges", "var_triangles", "var_wedges", "cov"):
        assert getattr(a, f) == pytest.approx(getattr(b, f), rel=1e-9), f
    assert np.allclose(a.node_triangles, b.node_triangles)
    assert np.allclose(a.node_linear, b.node_linear)


def test_triangle_ci_coverage():
    """95% intervals of the triangle count cover the truth 95% +- 4 se of the time."""
    G = nx.gnp_random_graph(60, 0.25, seed=5)
    truth = sum(nx.triangles(G).values()) / 3
    reps = 600
    hits = 0
    for r in range(reps):
        lo, hi = dpgraph.release(G, 2.0, seed=50_000 + r).triangles().ci(0.95)
        hits += lo <= truth <= hi
    se = math.sqrt(0.95 * 0.05 / reps)
    assert abs(hits / reps - 0.95) < 4 * se


def test_transitivity_close_and_error_bar_calibrated():
    G = nx.gnp_random_graph(60, 0.25, seed=5)
    truth = nx.transitivity(G)
    vals, stds, hits = [], [], 0
    reps = 300
    for r in range(reps):
        tr = dpgraph.release(G, 2.0, seed=70_000 + r).transitivity()
        vals.append(tr.value)
        stds.append(tr.std)
        lo, hi = tr.ci()
        hits += lo <= truth <= hi
    vals = np.array(vals)
    # ratio estimator: its bias O(Var W / W^2) is far below the Monte-Carlo standard
    # error here, so no slack
    assert abs(vals.mean() - truth) < 4 * vals.std() / math.sqrt(reps)
    # W is resolved here, so Fieller's half-width / 1.96 is close to the delta-method std:
    # within 4 normal-theory SEs of a sample std (1/sqrt(2(reps-1)) = 4.1%)
    assert abs(np.mean(stds) / vals.std() - 1) < 4 / math.sqrt(2 * (reps - 1))
    # Fieller's interval covers 95% +- 4 binomial SEs
    assert abs(hits / reps - 0.95) < 4 * math.sqrt(0.95 * 0.05 / reps)


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


def test_degree_distribution_recovers_known_histogram():
    # half the nodes have degree 4, half degree 24
    G = nx.disjoint_union(nx.random_regular_graph(4, 200, seed=1),
                          nx.random_regular_graph(24, 200, seed=2))
    R = dpgraph.release(G, 3.0, seed=0)
    h = R.degree_distribution(method="em")  # nonparametric: a two-point histogram
    assert h.shape == (400,) and h.sum() == pytest.approx(1.0)
    low, high = h[:12].sum(), h[14:40].sum()
    assert abs(low - 0.5) < 0.1 and abs(high - 0.5) < 0.1
    # mean degree preserved (unbiased edge count): 14
    assert abs(h @ np.arange(400) - 14) < 1.0
    # far better than the naive histogram of the released degrees
    naive = np.bincount(R.released_degrees(), minlength=400) / 400
    true = np.bincount([d for _, d in G.degree()], minlength=400) / 400
    assert np.abs(np.cumsum(h) - np.cumsum(true)).sum() < 0.2 * np.abs(
        np.cumsum(naive) - np.cumsum(true)).sum()


def test_degree_distribution_band_and_family():
    # a heavy-tailed sparse graph at eps = 2: the fitted family's band holds the fit
    # and is wider where the release says less
    G = nx.barabasi_albert_graph(1500, 2, seed=3)
    R = dpgraph.release(G, 2.0, seed=0)
    h = R.degree_distribution()
    assert h.method == "lognormal" and h.sum() == pytest.approx(1.0)
    assert np.all(h.lower <= h + 1e-12) and np.all(h <= h.upper + 1e-12)
    from dpgraph.experiments.peers import degree_kl

    naive = np.bincount(R.released_degrees(), minlength=1500) / 1500
    deg = np.array([d for _, d in G.degree()])
    # far closer to the truth than the released degrees' own histogram
    assert degree_kl(deg, np.asarray(h)) < 0.25 * degree_kl(deg, naive)
    with pytest.raises(ValueError, match="method"):
        R.degree_distribution(method="poisson")


def test_transition_matrix_columns_are_the_convolution():
    ch = Channel.binary(0.7, 0.2)
    P = an.degree_transition_matrix(12, ch)
    from scipy.stats import binom

    d = 4
    direct = np.convolve(binom.pmf(np.arange(d + 1), d, 0.7), binom.pmf(np.arange(12 - d), 11 - d, 0.2))
    assert np.allclose(P[:, d], direct[:12], atol=1e-12)
    assert np.allclose(P.sum(axis=0), 1.0)


# ----------------------------------------------------------------------------- communities, synthesis


def test_communities_planted_partition():
    G = nx.planted_partition_graph(3, 60, 0.4, 0.02, seed=4)
    R = dpgraph.release(G, 3.0, seed=1)
    res = R.communities()
    truth = np.repeat(np.arange(3), 60)
    from dpgraph.experiments.peers import nmi

    assert nmi(truth, res.labels(range(180))) > 0.8
    assert res.k >= 3
    assert len(res.eigenvalues) and res.noise_edge > 0
    alt = R.communities(method="spectral")
    assert nmi(truth, alt.labels(range(180))) > 0.8


def test_synthesize_edge_count_and_determinism():
    G = nx.planted_partition_graph(2, 60, 0.3, 0.02, seed=4)
    R = dpgraph.release(G, 2.0, seed=1)
    H1, H2 = R.synthesize(seed=5), R.synthesize(seed=5)
    assert sorted(H1.edges()) == sorted(H2.edges())
    assert set(H1.nodes()) == set(G.nodes())
    assert abs(H1.number_of_edges() - R.number_of_edges().value) <= 1
    # it keeps the two blocks: most synthesized edges are inside a block
    inside = sum((a < 60) == (b < 60) for a, b in H1.edges())
    assert inside / H1.number_of_edges() > 0.8


def test_synthesize_keeps_the_degree_sequence():
    # no isolated nodes in the input: the synthetic graph must not invent a mass of them
    # (the top-m^ pairs rule left 15-40% of an SBM's nodes isolated), and its degrees
    # follow the estimated sequence: the mean is 2 m^ / n
    from dpgraph.experiments import zoo

    G = zoo.generate("sbm", n=800, seed=2)
    for eps in (1.0, 2.0):
        R = dpgraph.release(G, eps, seed=3)
        H = R.synthesize(seed=0)
        deg = np.array([d for _, d in H.degree()])
        assert np.mean(deg == 0) < 0.02
        assert abs(H.number_of_edges() - R.number_of_edges().value) <= 1


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
    with pytest.raises(ValueError, match="max_communities must be an int >= 1"):
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


def test_memory_refusal_names_the_size(monkeypatch):
    from dpgraph.graph import _memory

    # allocations under 64 MiB are never checked: 3 n^2 float32 exceeds that for n = 2400
    R = dpgraph.release(nx.path_graph(2400), 1.0, seed=0)
    monkeypatch.setattr(_memory, "available_memory", lambda: 1 << 20)
    with pytest.raises(MemoryError, match=r"needs 0\.06 GiB"):
        R.triangles()
    with pytest.raises(MemoryError, match="2400 nodes"):
        R.triangles()


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
