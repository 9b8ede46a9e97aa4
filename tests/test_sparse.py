"""Sparse (subsampled) releases: exact sampling, the CSR backend, estimators, bad input."""

from __future__ import annotations

from fractions import Fraction

import networkx as nx
import numpy as np
import pytest
from scipy import stats

import dpgraph
from dpgraph.core import (
    SecureRandom,
    SeededRandom,
    pair_count,
    pair_from_index,
    pair_index,
    rr_probabilities,
)
from dpgraph.core.sampling import geometric
from dpgraph.core.subsampling import subsampled_probabilities
from dpgraph.graph.encoding import EncodedGraph, NodeIndex, encode_graph
from dpgraph.graph.packed import PackedAdjacency, words_per_row
from dpgraph.graph.sparse import SparseAdjacency, bernoulli_positions, release_sparse

P_MIN = 1e-4  # chi-square / exact-test p-value threshold for every statistical test here


# ---- the pair space ------------------------------------------------------------
@pytest.mark.parametrize("directed", [False, True])
@pytest.mark.parametrize("n", [2, 3, 10, 257])
def test_pair_index_round_trip(n, directed):
    k = np.arange(pair_count(n, directed))
    r, c = pair_from_index(k, n, directed)
    assert np.array_equal(pair_index(r, c, n, directed), k)
    assert np.all(r != c) and (directed or np.all(r < c))
    # row-major order: pairs sorted by (row, col)
    assert np.all(np.diff(r * n + c) > 0)


def test_pair_index_at_internet_scale():
    n = 10**8
    N = pair_count(n, False)
    k = np.array([0, 1, n - 2, n - 1, N // 3, N // 2 + 12345, N - 2, N - 1])
    r, c = pair_from_index(k, n, False)
    assert np.array_equal(pair_index(r, c, n, False), k)
    assert (r[-1], c[-1]) == (n - 2, n - 1)


# ---- exact Bernoulli process -----------------------------------------------------
def _position_counts(N, beta, reps, seed):
    counts = np.zeros(N, dtype=np.int64)
    sizes = []
    src = SeededRandom(seed)
    for _ in range(reps):
        pos = np.concatenate(list(bernoulli_positions(N, beta, src)) or [np.zeros(0, int)])
        assert np.all(np.diff(pos) > 0) and (pos.size == 0 or (pos[0] >= 0 and pos[-1] < N))
        counts[pos] += 1
        sizes.append(pos.size)
    return counts, np.array(sizes)


def test_bernoulli_positions_marginals_and_count():
    N, beta, reps = 40, Fraction(3, 10), 3000
    counts, sizes = _position_counts(N, beta, reps, seed=11)
    b = float(beta)
    # every position is in the subset with probability beta: chi-square over positions
    exp = reps * b
    chi2 = np.sum((counts - exp) ** 2 / (reps * b * (1 - b)))
    assert stats.chi2.sf(chi2, N) > P_MIN
    # the subset size is Binomial(N, beta): mean within 4 standard errors, variance too
    assert abs(sizes.mean() - N * b) < 4 * np.sqrt(N * b * (1 - b) / reps)
    v = sizes.var(ddof=1) / (N * b * (1 - b))
    assert stats.chi2.sf(v * (reps - 1), reps - 1) > P_MIN / 2
    assert stats.chi2.cdf(v * (reps - 1), reps - 1) > P_MIN / 2


def test_bernoulli_positions_exact_fallback_path():
    """With a huge margin nearly every trial is decided by the exact decimal path."""
    beta = Fraction(1, 3)  # L = 2: gaps mix D and R draws
    g = geometric(4000, beta, 10**9, SeededRandom(5), margin=0.45)
    # P(G = k) = (2/3)^k / 3; chi-square on 0..9 and the tail
    k = np.arange(10)
    p = (2 / 3) ** k / 3
    observed = np.append(np.bincount(np.minimum(g, 10), minlength=11)[:10], (g >= 10).sum())
    expected = 4000 * np.append(p, 1 - p.sum())
    assert stats.chisquare(observed, expected).pvalue > P_MIN


def test_geometric_matches_theory_for_small_beta():
    beta = Fraction(1, 5000)
    g = geometric(200_000, beta, 10**12, SeededRandom(3))
    mean = (1 - float(beta)) / float(beta)
    sd = np.sqrt(1 - float(beta)) / float(beta)
    assert abs(g.mean() - mean) < 4 * sd / np.sqrt(g.size)
    # memorylessness: P(G >= 3000) = (1 - beta)^3000
    q = (1 - float(beta)) ** 3000
    hits = int((g >= 3000).sum())
    assert stats.binomtest(hits, g.size, q).pvalue > P_MIN


# ---- the release -------------------------------------------------------------------
def _small_graph():
    return nx.gnp_random_graph(14, 0.35, seed=4)


def test_pair_marginals_are_alpha_and_beta():
    G = _small_graph()
    enc = encode_graph(G)
    rr = rr_probabilities(1.0)
    probs = subsampled_probabilities(rr, enc.n, False, keep=0.4)
    N = pair_count(enc.n, False)
    is_edge = np.zeros(N, bool)
    is_edge[pair_index(enc.rows, enc.cols, enc.n, False)] = True
    hits = np.zeros(N, np.int64)
    reps = 1500
    src = SeededRandom(21)
    for _ in range(reps):
        r, c = release_sparse(enc, probs, src).edge_array()
        k = pair_index(r, c, enc.n, False)
        assert np.all(np.diff(k) > 0)  # CSR rows sorted, no duplicate pair
        hits[k] += 1
    for mask, p in ((is_edge, float(probs.alpha)), (~is_edge, float(probs.beta))):
        chi2 = np.sum((hits[mask] - reps * p) ** 2 / (reps * p * (1 - p)))
        assert stats.chi2.sf(chi2, mask.sum()) > P_MIN
    assert probs.alpha == Fraction(probs.keep_numerator, 2**64) * (1 - rr.flip_fraction)
    assert probs.beta == Fraction(probs.keep_numerator, 2**64) * rr.flip_fraction


def test_cut_zscores_over_300_releases():
    """Unbiased with the exact (truth-dependent) variance; the reported std is a bound."""
    G = nx.gnp_random_graph(60, 0.15, seed=7)
    S, T = list(range(25)), list(range(25, 60))
    truth = nx.cut_size(G, S, T)
    reps = 400
    z, reported = np.empty(reps), np.empty(reps)
    for k in range(reps):
        R = dpgraph.release(G, epsilon=1.0, seed=1000 + k, keep=0.3)
        est = R.cut(S, T)
        a, b = float(R.channel.r[0]), float(R.channel.r[1])
        alpha = 1 - a
        var = (truth * alpha * (1 - alpha) + (len(S) * len(T) - truth) * b * (1 - b)) / R.channel.d**2
        z[k] = (est.value - truth) / np.sqrt(var)
        reported[k] = est.std
        assert est.exact_std is False  # an asymmetric channel: the std is a bound
        assert est.std >= np.sqrt(var) * (1 - 1e-12)
    assert abs(z.mean()) < 4 / np.sqrt(reps)
    stat = z.var(ddof=1) * (reps - 1)  # chi-square with reps - 1 degrees of freedom if var = 1
    assert stats.chi2.sf(stat, reps - 1) > P_MIN / 2
    assert stats.chi2.cdf(stat, reps - 1) > P_MIN / 2


def test_keep_one_matches_dense_rates_and_directed():
    G = nx.gnp_random_graph(30, 0.2, seed=2, directed=True)
    R = dpgraph.release(G, epsilon=2.0, seed=3, keep=1.0, directed=True)
    assert R.directed and R.keep == 1.0
    p = R.flip_probability
    m = G.number_of_edges()
    N = 30 * 29
    expected = m * (1 - p) + (N - m) * p
    sd = np.sqrt(m * p * (1 - p) + (N - m) * p * (1 - p))
    assert abs(R.number_of_released_edges() - expected) < 4 * sd
    r, c = R.adjacency.edge_array()
    assert np.all(r != c)


def test_reproducible_and_keyed():
    G = _small_graph()
    a = dpgraph.release(G, 1.0, seed=SecureRandom(key=bytes(range(16))), keep=0.5)
    b = dpgraph.release(G, 1.0, seed=SecureRandom(key=bytes(range(16))), keep=0.5)
    assert [x.tolist() for x in a.adjacency.edge_array()] == [x.tolist() for x in b.adjacency.edge_array()]


def test_target_edges_sets_keep_from_public_quantities():
    G = nx.empty_graph(200)
    R = dpgraph.release(G, epsilon=1.0, seed=0, target_edges=500)
    p, N = R.flip_probability, 200 * 199 // 2
    assert abs(R.keep - 500 / (p * N)) < 1e-15
    assert abs(R.number_of_released_edges() - 500) < 4 * np.sqrt(500)
    # the same keep whatever the graph: the choice does not look at the edges
    H = nx.complete_graph(200)
    assert dpgraph.release(H, epsilon=1.0, seed=0, target_edges=500).keep == R.keep


def test_memory_and_time_follow_the_output_not_the_pair_space():
    """A million nodes (5e11 pairs) with a tiny output: O(N) work would never finish."""
    n = 10**6
    rows = np.array([0, 5, 7], dtype=np.int64)
    cols = np.array([1, 9, 10**6 - 1], dtype=np.int64)
    enc = EncodedGraph(NodeIndex(range(n)), rows, cols, False)
    probs = subsampled_probabilities(rr_probabilities(1.0), n, False, target_edges=20_000)
    A = release_sparse(enc, probs, SeededRandom(0))
    assert abs(A.number_of_edges() - 20_000) < 4 * np.sqrt(20_000) + 3
    assert A.nbytes < 9 * n + 8 * 30_000


# ---- the CSR backend against the packed one ------------------------------------
def _packed_from_pairs(r, c, n, directed):
    words = np.zeros((n, words_per_row(n)), dtype=np.uint64)
    np.bitwise_or.at(words, (r, c >> 6), np.left_shift(np.uint64(1), (c & 63).astype(np.uint64)))
    return PackedAdjacency(words, n, directed)


@pytest.mark.parametrize("directed", [False, True])
def test_sparse_adjacency_agrees_with_packed(directed):
    rng = np.random.default_rng(8)
    n = 150
    k = np.unique(rng.integers(0, pair_count(n, directed), 3000))
    r, c = pair_from_index(k, n, directed)
    A = SparseAdjacency.from_pairs(r, c, n, directed)
    B = _packed_from_pairs(r, c, n, directed)
    assert A.number_of_edges() == B.number_of_edges() == k.size
    assert np.array_equal(A.degrees(), B.degrees())
    ea, eb = A.edge_array(), B.edge_array()
    assert np.array_equal(ea[0], eb[0]) and np.array_equal(ea[1], eb[1])
    for _ in range(20):
        perm = rng.permutation(n)
        cut = rng.integers(1, n - 1)
        s, t = np.sort(perm[:cut]), np.sort(perm[cut:])
        small = np.sort(perm[:3])
        assert A.cut_count(s, t) == B.cut_count(s, t)
        assert A.cut_count(small, t) == B.cut_count(small, t)
        assert A.within_count(s) == B.within_count(s)
        assert A.within_count(small) == B.within_count(small)
    for (i0, x), (j0, y) in zip(A.row_blocks(64), B.row_blocks(64)):
        assert i0 == j0 and np.array_equal(x, y)


def test_private_graph_on_sparse_backend():
    G = _small_graph()
    R = dpgraph.release(G, epsilon=1.0, seed=0, keep=0.5)
    assert isinstance(R.adjacency, SparseAdjacency)
    A = R.to_scipy_sparse()
    assert A.shape == (14, 14) and (A != A.T).nnz == 0
    assert R.to_networkx().number_of_edges() == R.number_of_released_edges()
    est = R.cuts([(range(7), range(7, 14)), ([0], [1, 2])])
    assert len(est) == 2
    assert "keep=0.5" in repr(R)


# ---- bad input -----------------------------------------------------------------
@pytest.mark.parametrize("keep", [0, -0.1, 1.5, float("nan"), float("inf"), 1e-30])
def test_keep_outside_unit_interval(keep):
    with pytest.raises(ValueError, match="keep"):
        dpgraph.release(_small_graph(), 1.0, seed=0, keep=keep)


@pytest.mark.parametrize("keep", ["0.5", True, [0.5]])
def test_keep_wrong_type(keep):
    with pytest.raises(TypeError, match="keep"):
        dpgraph.release(_small_graph(), 1.0, seed=0, keep=keep)


def test_target_edges_errors():
    G = _small_graph()  # 91 pairs; p' N is about 24.5 at eps = 1
    with pytest.raises(ValueError, match="larger than the dense release"):
        dpgraph.release(G, 1.0, seed=0, target_edges=25)
    with pytest.raises(ValueError, match="target_edges must be >= 1"):
        dpgraph.release(G, 1.0, seed=0, target_edges=0)
    with pytest.raises(TypeError, match="target_edges"):
        dpgraph.release(G, 1.0, seed=0, target_edges=10.5)
    with pytest.raises(ValueError, match="either keep= or target_edges="):
        dpgraph.release(G, 1.0, seed=0, keep=0.5, target_edges=10)


def test_dense_path_unchanged():
    G = _small_graph()
    a = dpgraph.release(G, 1.0, seed=9)
    b = dpgraph.release(G, 1.0, seed=9)
    assert isinstance(a.adjacency, PackedAdjacency) and a.keep == 1.0
    assert np.array_equal(a.adjacency.words, b.adjacency.words)


# ---- files ------------------------------------------------------------------------
@pytest.mark.parametrize("directed", [False, True])
def test_save_load_round_trip(tmp_path, directed):
    G = nx.gnp_random_graph(40, 0.2, seed=1, directed=directed)
    R = dpgraph.release(G, epsilon=1.0, seed=2, keep=0.3, directed=directed)
    path = tmp_path / "s.dpg"
    R.save(path)
    L = dpgraph.load(path)
    assert isinstance(L.adjacency, SparseAdjacency) and L.directed == directed
    assert L.keep == R.keep and L.channel.d == R.channel.d
    assert np.array_equal(L.channel.r, R.channel.r)
    assert L.adjacency.keep_numerator == R.adjacency.keep_numerator
    for a, b in zip(L.adjacency.edge_array(), R.adjacency.edge_array()):
        assert np.array_equal(a, b)
    S, T = range(20), range(20, 40)
    assert L.cut(S, T).raw == R.cut(S, T).raw


def test_load_refuses_corrupt_sparse_payload(tmp_path):
    from dpgraph.graph.sparse_io import sparse_payload, sparse_read

    R = dpgraph.release(nx.gnp_random_graph(30, 0.2, seed=1), epsilon=1.0, seed=2, keep=0.5)
    meta, buf = sparse_payload(R.adjacency)
    header = {"epsilon": 1.0, "flip_numerator": str(R.probabilities.flip_numerator),
              "keep": R.keep, "channel": {"d": R.channel.d, "r": R.channel.r.tolist()}, **meta}
    ok = sparse_read(buf.copy(), header, 30, False)
    assert ok.number_of_edges() == R.number_of_released_edges()
    bad = buf.copy()
    bad[8 * 31 : 8 * 31 + 4] = np.array([0], dtype="<i4").view(np.uint8)  # first column -> 0
    with pytest.raises(ValueError, match="outside|unsorted"):
        sparse_read(bad, header, 30, False)
    with pytest.raises(ValueError, match="payload size"):
        sparse_read(buf[:-4], header, 30, False)
    wrong = dict(header, keep_numerator=str(R.adjacency.keep_numerator // 2))
    with pytest.raises(ValueError, match="keep does not match"):
        sparse_read(buf.copy(), wrong, 30, False)
    wrong = dict(header, channel={"d": R.channel.d / 2, "r": R.channel.r.tolist()})
    with pytest.raises(ValueError, match="channel does not match"):
        sparse_read(buf.copy(), wrong, 30, False)
    with pytest.raises(ValueError, match="needs its channel"):
        sparse_read(buf.copy(), dict(header, channel=None), 30, False)
