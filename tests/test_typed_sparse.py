"""Sparse typed releases (keep=, target_edges=): the channel's pmf, K = 2 is the binary sparse
release, the CSR store against the dense planes, calibrated cuts, files."""

from __future__ import annotations

import hashlib
import json
import math
import warnings

import networkx as nx
import numpy as np
import pytest
from scipy import stats

import dpgraph
from dpgraph.core import TypedSubsampling, rr_probabilities, typed_subsampling
from dpgraph.experiments import signed_data
from dpgraph.graph.adjacency import Adjacency, PackedWords, ValuedAdjacency
from dpgraph.graph.encoding import encode_graph
from dpgraph.graph.io import _PREFIX
from dpgraph.graph.packed import words_per_row
from dpgraph.graph.typed.adjacency import TypedAdjacency
from dpgraph.graph.typed.encoding import encode_typed, value_bits
from dpgraph.graph.typed.sparse_adjacency import SparseTypedAdjacency
from dpgraph.planner import typed_count_std

warnings.filterwarnings("ignore", category=dpgraph.SeededReleaseWarning)

P_MIN = 1e-4  # a chi-square p-value below this fails: about 1 false alarm in 10,000 runs
VALUES = signed_data.VALUES
WEIGHTS = signed_data.WEIGHTS


def _typed_graph(n: int, K: int, density: float, seed: int, directed: bool = False) -> nx.Graph:
    rng = np.random.default_rng(seed)
    G = nx.gnp_random_graph(n, density, seed=seed, directed=directed)
    for u, v in G.edges:
        G.edges[u, v]["kind"] = f"v{rng.integers(1, K)}"
    return G


@pytest.mark.parametrize("K,directed,keep", [(4, False, 0.6), (3, True, 0.35), (5, False, 1.0)])
def test_stored_values_follow_the_subsampled_channel(K, directed, keep):
    """Every row of P(stored value | true value) is the exact channel d [v = x] + r_v (chi-square)."""
    G = _typed_graph(400, K, 0.4, seed=K, directed=directed)
    values = [f"v{k}" for k in range(1, K)]
    R = dpgraph.release(G, 1.0, seed=20 + K, directed=directed, edge_attr="kind", values=values,
                        keep=keep)
    assert isinstance(R.adjacency, SparseTypedAdjacency) and R.keep == keep
    enc = encode_graph(G, directed=directed, edge_data=True)
    n = R.number_of_nodes()
    X = np.zeros((n, n), dtype=np.int64)
    X[enc.rows, enc.cols] = encode_typed(enc, R.tie_values)
    i, j = np.nonzero(~np.eye(n, dtype=bool)) if directed else np.triu_indices(n, 1)
    x, y = X[i, j], R.adjacency.edge_values(i, j)
    table = np.zeros((K, K))
    np.add.at(table, (x, y), 1)
    ch = TypedSubsampling(rr_probabilities(1.0, K), round(keep * 2**64)).channel
    assert R.typed_channel.d == ch.d and np.array_equal(R.typed_channel.r, ch.r)
    for true in range(K):
        pmf = ch.r.copy()
        pmf[true] += ch.d
        assert abs(pmf.sum() - 1) < 1e-12
        row = table[true]
        assert row.sum() > 5_000
        assert stats.chisquare(row, pmf * row.sum()).pvalue > P_MIN, (true, row / row.sum(), pmf)


@pytest.mark.filterwarnings("ignore::dpgraph.exceptions.DroppedAttributesWarning")  # untyped on purpose
@pytest.mark.parametrize("directed", [False, True])
@pytest.mark.parametrize("sub", [{"keep": 0.3}, {"target_edges": 500}, {"keep": 1.0}])
def test_k2_sparse_typed_release_is_the_binary_sparse_release(directed, sub):
    """One tie value: the same words give the same stored pairs, and the same channel."""
    G = _typed_graph(300, 2, 0.03, seed=9, directed=directed)
    B = dpgraph.release(G, 1.5, seed=4, directed=directed, **sub)
    T = dpgraph.release(G, 1.5, seed=4, directed=directed, edge_attr="kind", values=["v1"], **sub)
    assert np.array_equal(B.adjacency.indptr, T.adjacency.indptr)
    assert np.array_equal(B.adjacency.indices, T.adjacency.indices)
    assert np.all(T.adjacency.values == 1) and B.keep == T.keep
    assert T.channel.d == pytest.approx(B.channel.d, rel=1e-15)
    assert T.channel.r == pytest.approx(B.channel.r, rel=1e-15)


def test_sparse_store_answers_as_the_dense_planes_of_the_same_pairs():
    """Every ValuedAdjacency member of the CSR store equals the bit planes holding the same values."""
    rng = np.random.default_rng(5)
    for directed in (False, True):
        n, K = 150, 5
        i, j = np.nonzero(~np.eye(n, dtype=bool)) if directed else np.triu_indices(n, 1)
        on = rng.random(i.size) < 0.1
        r, c, v = i[on], j[on], rng.integers(1, K, int(on.sum()))
        indptr = np.zeros(n + 1, dtype=np.int64)
        np.cumsum(np.bincount(r, minlength=n), out=indptr[1:])
        A = SparseTypedAdjacency(indptr, c.astype(np.int32), v.astype(np.uint8), n, directed, K)
        planes = np.zeros((value_bits(K), n, words_per_row(n)), dtype=np.uint64)
        for b in range(value_bits(K)):
            bit = ((v >> b) & 1).astype(bool)
            np.bitwise_or.at(planes[b], (r[bit], c[bit] >> 6),
                             np.left_shift(np.uint64(1), (c[bit] & 63).astype(np.uint64)))
        D = TypedAdjacency(planes, n, directed, K)
        assert isinstance(A, ValuedAdjacency) and isinstance(A, Adjacency)
        assert not isinstance(A, PackedWords) and isinstance(D, PackedWords)
        s, t = np.arange(0, 40), np.arange(60, 150)
        assert A.value_counts().tolist() == D.value_counts().tolist()
        assert A.value_cut_counts(s, t).tolist() == D.value_cut_counts(s, t).tolist()
        assert A.value_within_counts(t).tolist() == D.value_within_counts(t).tolist()
        for direction in ("out", "in"):
            assert np.array_equal(A.value_degrees(direction), D.value_degrees(direction))
        assert np.array_equal(A.edge_values(i, j), D.edge_values(i, j))
        for value in range(1, K):
            for (a0, a), (d0, d) in zip(A.value_row_blocks(value, 64), D.value_row_blocks(value, 64)):
                assert a0 == d0 and np.array_equal(a, d)
        assert A.number_of_edges() == D.number_of_edges() == r.size
        assert np.array_equal(A.degrees(), D.degrees())
        assert A.cut_count(s, t) == D.cut_count(s, t)


def _zscores(G, eps, releases, seed, S, T, **sub):
    nodes = tuple(sorted(G))
    mats = signed_data.value_matrices(G, nodes)
    truth = signed_data.true_cuts(mats, np.isin(nodes, list(S))[None], np.isin(nodes, list(T))[None])[0]
    w = np.array([WEIGHTS[v] for v in VALUES])
    z = {k: [] for k in (*VALUES, "weighted", "any")}
    hits = {k: [] for k in z}
    for r in range(releases):
        R = dpgraph.release(G, eps, seed=seed + r, edge_attr="kind", values=VALUES, **sub)
        ests = {v: (R.cut(S, T, value=v), truth[k]) for k, v in enumerate(VALUES)}
        ests["weighted"] = (R.cut(S, T, weights=WEIGHTS), truth @ w)
        ests["any"] = (R.cut(S, T), truth.sum())
        for k, (e, t) in ests.items():
            z[k].append((e.raw - t) / e.std)
            lo, hi = e.ci()
            half = 1.959963984540054 * e.std  # and the unbiased normal interval's
            hits[k].append((lo <= t <= hi, e.raw - half <= t <= e.raw + half))
    return {k: np.array(v) for k, v in z.items()}, {k: np.array(v) for k, v in hits.items()}


def _z_checks(z: np.ndarray, what: str) -> None:
    """Mean within 4 standard errors of 0, variance inside the chi-square band of N(0, 1)."""
    N = z.size
    assert abs(z.mean()) < 4 / math.sqrt(N), (what, z.mean())
    lo, hi = stats.chi2.ppf([P_MIN / 2, 1 - P_MIN / 2], N - 1) / (N - 1)
    assert lo < z.var(ddof=1) < hi, (what, z.var(ddof=1), lo, hi)


def test_sparse_typed_cut_zscores_are_standard_normal():
    """Typed, weighted and any-tie cuts of 300 sparse releases (keep = 0.4)."""
    G = signed_data.signed_sbm(200, seed=1)
    z, _ = _zscores(G, 2.0, 300, 0, range(100), range(100, 200), keep=0.4)
    for k, v in z.items():
        _z_checks(v, k)


@pytest.mark.slow
def test_sparse_typed_cut_intervals_cover():
    """z-scores and 95% coverage in [0.93, 0.97] (the normal interval; the proper one covers
    wherever it does) over 1,500 intervals a kind (3 queries x 500
    sparse releases, keep = 0.4)."""
    G = signed_data.signed_sbm(200, seed=1)
    z_all, hits_all = {}, {}
    for q, (S, T) in enumerate([(range(100), range(100, 200)), (range(0, 200, 2), range(1, 200, 2)),
                                (range(50), range(50, 200))]):
        z, hits = _zscores(G, 2.0, 500, 1000 * q, S, T, keep=0.4)
        for k in z:
            z_all.setdefault(k, []).append(z[k])
            hits_all.setdefault(k, []).append(hits[k])
    for k in z_all:
        _z_checks(np.concatenate(z_all[k]), k)
        hits = np.concatenate(hits_all[k])  # the proper interval covers where the normal one does
        assert 0.93 <= hits[:, 1].mean() <= 0.97, (k, hits[:, 1].mean())
        assert np.all(hits[:, 0] >= hits[:, 1]), k


def test_counts_and_degrees_are_unbiased_and_cost_what_the_planner_says():
    G = signed_data.typed_configuration(200, seed=2)
    truth = {v: sum(1 for *_, k in G.edges(data="kind") if k == v) for v in VALUES}
    deg5 = sum(1 for u in G[5] if G.edges[5, u]["kind"] == "trust")
    zc, zd = [], []
    for r in range(300):
        R = dpgraph.release(G, 1.0, seed=r, edge_attr="kind", values=VALUES, target_edges=3000)
        c = R.value_counts(proper=False)["trust"]
        d = R.value_degree(5, value="trust", proper=False)
        zc.append((c.value - truth["trust"]) / c.std)
        zd.append((d.value - deg5) / d.std)
    _z_checks(np.array(zc), "count")
    _z_checks(np.array(zd), "degree")
    sub = typed_subsampling(rr_probabilities(1.0, 4), 200, False, target_edges=3000)
    assert R.keep == sub.keep
    worst = typed_count_std(199, 1.0, VALUES, value="trust", keep=sub.keep)
    assert d.std <= worst * (1 + 1e-12)
    assert worst > typed_count_std(199, 1.0, VALUES, value="trust")  # subsampling costs accuracy


def _release(directed: bool):
    G = signed_data.signed_sbm(90, seed=2)
    if directed:
        G = nx.DiGraph(G.to_directed())
    return dpgraph.release(G, 1.0, seed=3, directed=directed, edge_attr="kind", values=VALUES,
                           keep=0.5)


@pytest.mark.parametrize("directed", [False, True])
def test_round_trip_signed(tmp_path, directed):
    R = _release(directed)
    sk, vk = dpgraph.generate_signing_key()
    path = tmp_path / "sparse_typed.dpg"
    R.save(path, signing_key=sk)
    L = dpgraph.load(path, verify_key=vk)
    assert isinstance(L.adjacency, SparseTypedAdjacency)
    assert L.tie_values == R.tie_values and L.keep == R.keep and L.directed == directed
    for a, b in ((L.adjacency.indptr, R.adjacency.indptr), (L.adjacency.indices, R.adjacency.indices),
                 (L.adjacency.values, R.adjacency.values)):
        assert np.array_equal(a, b)
    assert L.typed_channel.d == R.typed_channel.d
    assert np.array_equal(L.typed_channel.r, R.typed_channel.r)
    assert L.channel.d == R.channel.d and np.array_equal(L.channel.r, R.channel.r)
    S, T = range(40), range(40, 90)
    assert L.cut(S, T, weights=WEIGHTS).value == R.cut(S, T, weights=WEIGHTS).value
    H = L.to_networkx()
    assert H.number_of_edges() == L.number_of_released_edges()
    assert {k for *_, k in H.edges(data="kind")} <= set(VALUES)


def _rewrite(path, header_edit=None, payload_edit=None):
    """Rewrite a file with an edited header or payload and a fresh (valid) digest."""
    raw = path.read_bytes()
    _, version, hlen = _PREFIX.unpack(raw[: _PREFIX.size])
    header = json.loads(raw[_PREFIX.size : _PREFIX.size + hlen])
    payload = bytearray(raw[_PREFIX.size + hlen : _PREFIX.size + hlen + header["payload_bytes"]])
    if header_edit:
        header_edit(header)
    if payload_edit:
        payload_edit(payload)
    head = json.dumps(header, separators=(",", ":")).encode()
    body = _PREFIX.pack(b"\x89DPGRAPH", version, len(head)) + head + bytes(payload)
    path.write_bytes(body + hashlib.sha256(body).digest())


def test_reader_refuses_tampered_sparse_typed_files(tmp_path):
    R = _release(False)

    def bad_value(payload):  # the last stored value becomes 4: not one of K - 1 = 3 tie values
        payload[-1] = 4

    def keep_less(header):  # numerators that give another keep than the header claims
        header["keep_numerator"] = str(int(header["keep_numerator"]) // 2)

    def no_values(header):
        header["value_bytes"] = 2

    for k, (edit, match) in enumerate(((dict(payload_edit=bad_value), "value index"),
                                       (dict(header_edit=keep_less), "keep"),
                                       (dict(header_edit=no_values), "value_bytes"))):
        path = tmp_path / f"s{k}.dpg"
        R.save(path)
        _rewrite(path, **edit)
        with pytest.raises(ValueError, match=match):
            dpgraph.load(path)


def test_bad_subsampling_is_refused_before_anything_is_charged(tmp_path):
    G = signed_data.signed_sbm(60, seed=1)
    ledger = dpgraph.PrivacyLedger.open(tmp_path / "ledger.json", total_epsilon=1.0)
    for sub, match in (({"keep": 1.5}, "keep"), ({"keep": 0.1, "target_edges": 5}, "either"),
                       ({"target_edges": 10**6}, "larger than the dense release")):
        with pytest.raises((TypeError, ValueError), match=match):
            dpgraph.release(G, 1.0, seed=0, edge_attr="kind", values=VALUES, ledger=ledger, **sub)
    assert dpgraph.release(G, 1.0, seed=0, edge_attr="kind", values=VALUES, ledger=ledger,
                           keep=0.5).keep == 0.5  # the whole budget was still there
