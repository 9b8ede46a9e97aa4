"""Cut queries: unbiased with the right std, batch == single, brute force, bad input."""

from __future__ import annotations

import networkx as nx
import numpy as np
import pytest
from scipy.stats import chi2

import dpgraph
from dpgraph.graph import packed


def brute_cut(H, S, T, directed):
    """Edges between S and T (S -> T for a DiGraph), pair by pair."""
    return sum(1 for u in S for v in T if H.has_edge(u, v))


@pytest.mark.slow
def test_cut_z_scores_over_many_releases():
    """z = (estimate - truth) / std over N = 400 releases: mean within 4/sqrt(N) of 0 and
    (N-1) s^2 inside the two-sided chi-square(N-1) band at p = 1e-4."""
    G = nx.gnp_random_graph(60, 0.3, seed=3)
    S, T = list(range(25)), list(range(25, 60))
    Sd, Td = list(range(10)), list(range(40, 60))
    truth = nx.cut_size(G, S, T)
    truth_d = nx.cut_size(G, Sd, Td)
    N = 400
    for eps in (0.5, 2.0):
        z, zd = [], []
        for k in range(N):
            R = dpgraph.release(G, eps, seed=10_000 * int(eps * 10) + k)
            e = R.cut(S, T)
            z.append((e.value - truth) / e.std)
            e2 = R.cut(Sd, Td)
            zd.append((e2.value - truth_d) / e2.std)
        for zz in (np.array(z), np.array(zd)):
            assert abs(zz.mean()) < 4 / np.sqrt(N)
            stat = (N - 1) * zz.var(ddof=1)
            assert chi2.ppf(0.5e-4, N - 1) < stat < chi2.isf(0.5e-4, N - 1)


def test_cut_std_is_the_exact_formula():
    R = dpgraph.release(nx.path_graph(30), 1.0, seed=0)
    p = R.flip_probability
    e = R.cut(range(10), range(10, 30))
    assert e.std == pytest.approx(np.sqrt(200 * p * (1 - p)) / (1 - 2 * p), rel=1e-12)


@pytest.mark.parametrize("directed", [False, True])
def test_cut_matches_brute_force_on_the_release(directed):
    G = nx.gnp_random_graph(40, 0.3, seed=5, directed=directed)
    R = dpgraph.release(G, 1.0, seed=6, directed=directed)
    H = R.to_networkx()
    A = R.to_scipy_sparse().toarray()
    p = R.flip_probability
    rng = np.random.default_rng(0)
    for _ in range(25):
        perm = rng.permutation(40)
        a, b = rng.integers(1, 20, size=2)
        S, T = perm[:a].tolist(), perm[a : a + b].tolist()
        raw = brute_cut(H, S, T, directed)
        assert raw == int(A[np.ix_(S, T)].sum())
        e = R.cut(S, T)
        assert e.raw == pytest.approx((raw - p * a * b) / (1 - 2 * p), rel=1e-12, abs=1e-9)
        assert e.value == min(max(round(e.raw), 0), a * b)  # proper: clipped and rounded
    k = R.edges_within(list(range(15)))
    sub = H.subgraph(range(15)).number_of_edges()
    pairs = 15 * 14 if directed else 15 * 14 // 2
    assert k.raw == pytest.approx((sub - p * pairs) / (1 - 2 * p), rel=1e-12, abs=1e-9)


def test_cuts_equals_cut_query_by_query():
    G = nx.gnp_random_graph(150, 0.1, seed=1)
    R = dpgraph.release(G, 1.0, seed=2)
    rng = np.random.default_rng(3)
    pairs = []
    for _ in range(30):
        perm = rng.permutation(150)
        k = int(rng.integers(1, 149))
        pairs.append((perm[:k].tolist(), perm[k:].tolist()))
    batch = R.cuts(pairs)
    for k, (S, T) in enumerate(pairs):
        single = R.cut(S, T)
        assert batch[k].value == single.value and batch[k].std == single.std
    proper = R.cuts(pairs, proper=True)
    assert np.all(proper.value == np.round(proper.value))
    assert np.all((proper.value >= 0) & (proper.value <= proper.feasible_range[1]))


def test_numba_and_numpy_counts_agree():
    rng = np.random.default_rng(0)
    for n in (5, 64, 130, 700):
        words = rng.integers(0, 2**63, size=(n, packed.words_per_row(n)), dtype=np.uint64)
        rows = rng.choice(n, size=max(1, n // 3), replace=False)
        mask = packed.pack_indices(rng.choice(n, size=max(1, n // 2), replace=False), n)
        expected = sum(int(np.bitwise_count(words[i] & mask).sum()) for i in rows)
        assert packed._masked_row_popcount_numpy(words, rows, mask, False) == expected
        assert packed.masked_row_popcount(words, rows, mask, False) == expected
        kernel = packed._numba_kernel() if packed.HAVE_NUMBA else None
        if kernel is not None:
            assert int(kernel(words, rows.astype(np.int64), mask, False)) == expected
        upper = words.copy()
        for i in range(n):  # zero the words left of the diagonal word
            upper[i, : i >> 6] = 0
        exp_u = sum(int(np.bitwise_count(upper[i] & mask).sum()) for i in rows)
        assert packed.masked_row_popcount(upper, rows, mask, True) == exp_u
        if kernel is not None:
            assert int(kernel(upper, rows.astype(np.int64), mask, True)) == exp_u


@pytest.mark.parametrize("S, T, exc, msg", [
    ([0, 1], [1, 2], ValueError, "share"),
    ([], [1, 2], ValueError, "S is empty"),
    ([0], [], ValueError, "T is empty"),
    ([0, 99], [1], ValueError, "S contains 1 node"),
    ([0], [1, "x"], ValueError, "T contains 1 node"),
    (None, [1], TypeError, "S must be"),
    ([0], "12", TypeError, "T must be"),
    ([[0]], [1], TypeError, "S contains unhashable"),
])
def test_bad_cut_arguments(S, T, exc, msg):
    R = dpgraph.release(nx.path_graph(10), 1.0, seed=0)
    with pytest.raises(exc, match=msg):
        R.cut(S, T)
    with pytest.raises(exc, match=msg):
        R.cuts([([0], [5]), (S, T)])


def test_bad_batches():
    R = dpgraph.release(nx.path_graph(10), 1.0, seed=0)
    with pytest.raises(ValueError, match="pairs is empty"):
        R.cuts([])
    with pytest.raises(TypeError, match=r"pairs\[0\]"):
        R.cuts([[0, 1, 2]])
    with pytest.raises(TypeError, match="pairs must be"):
        R.cuts(5)


def test_errors_name_the_unknown_node_only():
    """An unknown label is named (labels are public); the rest of the set passed is not."""
    G = nx.relabel_nodes(nx.path_graph(4), dict(enumerate(["alice", "bob", "carol", "dave"])))
    R = dpgraph.release(G, 1.0, seed=0)
    with pytest.raises(ValueError) as info:
        R.cut(["alice", "carol", "zed"], ["bob"])
    assert "'zed'" in str(info.value) and "1 node(s)" in str(info.value)
    assert "alice" not in str(info.value) and "carol" not in str(info.value)


def test_repr_has_public_metadata_only():
    G = nx.relabel_nodes(nx.path_graph(5), {i: f"secret{i}" for i in range(5)})
    r = repr(dpgraph.release(G, 1.0, seed=0))
    assert "secret" not in r and "epsilon=1" in r and "nodes=5" in r


def test_numpy_fallback_gives_the_same_answers():
    """With DPGRAPH_DISABLE_NUMBA=1 (a fresh process) the cut answers are identical."""
    import os
    import subprocess
    import sys

    code = (
        "import networkx as nx, dpgraph\n"
        "from dpgraph.graph import packed\n"
        "R = dpgraph.release(nx.gnp_random_graph(300, 0.1, seed=1), 1.0, seed=2)\n"
        "print(packed.HAVE_NUMBA, repr(R.cut(range(0, 140), range(140, 300)).raw))\n"
    )
    env = dict(os.environ, DPGRAPH_DISABLE_NUMBA="1")
    out = subprocess.run([sys.executable, "-c", code], env=env, capture_output=True, text=True,
                         check=True).stdout.split()
    assert out[0] == "False"
    R = dpgraph.release(nx.gnp_random_graph(300, 0.1, seed=1), 1.0, seed=2)
    assert float(out[1]) == R.cut(range(140), range(140, 300)).raw


@pytest.mark.parametrize("directed", [False, True])
def test_batch_counts_equal_single_counts(directed):
    """PackedAdjacency.cut_counts (one pass for all queries) == cut_count query by query."""
    n = 9000  # 9000^2 / 8 bytes > 8 MiB: the one-pass kernel is used when numba is present
    rng = np.random.default_rng(1)
    words = rng.integers(0, 2**63, size=(n, packed.words_per_row(n)), dtype=np.uint64)
    words[:, -1] &= np.uint64((1 << (n % 64)) - 1)
    if not directed:
        for i in range(n):
            words[i, : i >> 6] = 0
            words[i, i >> 6] &= ~np.uint64((2 << (i & 63)) - 1) if (i & 63) < 63 else np.uint64(0)
    else:
        words[np.arange(n), np.arange(n) >> 6] &= ~(np.uint64(1) << (np.arange(n) & 63).astype(np.uint64))
    A = packed.PackedAdjacency(words, n, directed)
    sides = []
    for _ in range(6):
        p = rng.permutation(n)
        a = int(rng.integers(1, n - 1))
        sides.append((np.sort(p[:a]), np.sort(p[a : a + int(rng.integers(1, n - a + 1))])))
    batch = A.cut_counts(sides)
    assert batch.tolist() == [A.cut_count(s, t) for s, t in sides]
