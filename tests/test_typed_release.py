"""Typed releases: the K-ary sampler's exact pmf, privacy, K = 2 bit for bit, storage, bad input."""

from __future__ import annotations

import hashlib
import warnings

import networkx as nx
import numpy as np
import pytest
from scipy import stats

import dpgraph
from dpgraph.audit import neighbour_audit
from dpgraph.core import Universe, rr_probabilities
from dpgraph.core import sampling as core_sampling
from dpgraph.core.randomness import SeededRandom
from dpgraph.core.sampling import kary_words
from dpgraph.exceptions import DroppedAttributesWarning
from dpgraph.graph.adjacency import Adjacency, PackedWords, ValuedAdjacency
from dpgraph.graph.encoding import encode_graph
from dpgraph.graph.typed import sampler as typed_sampler
from dpgraph.graph.typed.encoding import encode_typed, tie_values, value_bits
from dpgraph.graph.typed.sampler import sample_shift_planes

warnings.filterwarnings("ignore", category=dpgraph.SeededReleaseWarning)

P_MIN = 1e-4  # a chi-square p-value below this fails: about 1 false alarm in 10,000 runs


def _typed_graph(n: int, K: int, density: float, seed: int, directed: bool = False) -> nx.Graph:
    rng = np.random.default_rng(seed)
    G = nx.gnp_random_graph(n, density, seed=seed, directed=directed)
    for u, v in G.edges:
        G.edges[u, v]["kind"] = f"v{rng.integers(1, K)}"
    return G


def _truth_and_release(G: nx.Graph, K: int, eps: float, seed: int):
    values = [f"v{k}" for k in range(1, K)]
    R = dpgraph.release(G, eps, seed=seed, directed=G.is_directed(), edge_attr="kind", values=values)
    enc = encode_graph(G, directed=G.is_directed(), edge_data=True)
    n = R.number_of_nodes()
    X = np.zeros((n, n), dtype=np.int64)
    X[enc.rows, enc.cols] = encode_typed(enc, R.tie_values)
    if G.is_directed():
        i, j = np.nonzero(~np.eye(n, dtype=bool))
    else:
        i, j = np.triu_indices(n, 1)
    return X[i, j], R.adjacency.edge_values(i, j), R


@pytest.mark.parametrize("K,directed", [(3, False), (4, True), (5, False), (4, False)])
def test_transition_matrix_matches_the_kary_pmf(K, directed):
    """Every row of P(released | true) is the certified pmf: truth 1 - (K-1) m', others m'."""
    G = _typed_graph(500, K, 0.4, seed=K, directed=directed)
    x, y, R = _truth_and_release(G, K, 1.0, seed=11 + K)
    rr = rr_probabilities(1.0, K)
    assert R.probabilities.flip_numerator == rr.flip_numerator
    table = np.zeros((K, K))
    np.add.at(table, (x, y), 1)
    for true in range(K):
        pmf = np.full(K, rr.flip_probability)
        pmf[true] = rr.truth_probability
        row = table[true]
        assert row.sum() > 5_000
        p = stats.chisquare(row, pmf * row.sum()).pvalue
        assert p > P_MIN, (true, row / row.sum(), pmf)


@pytest.mark.parametrize("K", [3, 4, 6])
def test_shift_sampler_pmf_exact(K):
    """kary_words: P(S = s) = m' for s >= 1, the rest at 0; chi-square over 1.3M lanes."""
    rr = rr_probabilities(0.7, K)
    S = kary_words(20_000, rr, SeededRandom(K))
    bits = np.unpackbits(S.view(np.uint8), axis=1, bitorder="little").astype(np.int64)
    values = sum(bits[k] << k for k in range(S.shape[0]))
    counts = np.bincount(values, minlength=1 << S.shape[0]).astype(float)
    assert counts[K:].sum() == 0
    pmf = np.full(K, rr.flip_probability)
    pmf[0] = rr.truth_probability
    assert stats.chisquare(counts[:K], pmf * values.size).pvalue > P_MIN


def test_numba_and_numpy_rounds_give_the_same_planes(monkeypatch):
    rr = rr_probabilities(1.3, 5)
    a = sample_shift_planes(300, True, rr, SeededRandom(4))
    monkeypatch.setattr(core_sampling, "_KERNELS", None)
    monkeypatch.setitem(core_sampling._NUMBA_STATE, "tried", True)
    b = sample_shift_planes(300, True, rr, SeededRandom(4))
    assert np.array_equal(a, b)


@pytest.mark.parametrize("directed", [False, True])
def test_numba_and_numpy_shift_the_ties_alike(monkeypatch, directed):
    G = _typed_graph(300, 6, 0.1, seed=2, directed=directed)
    kw = dict(seed=5, directed=directed, edge_attr="kind", values=[f"v{k}" for k in range(1, 6)])
    a = dpgraph.release(G, 0.8, **kw).adjacency.planes
    monkeypatch.setitem(typed_sampler._SHIFT_KERNEL, "kernel", None)
    b = dpgraph.release(G, 0.8, **kw).adjacency.planes
    assert np.array_equal(a, b)


def test_tie_values_stand_on_the_core_universe():
    """The universe of a pair is the core's Universe([None, *values]); index_of goes through it."""
    ties = tie_values("kind", ["friend", ("a", 1), 3])
    assert isinstance(ties.universe, Universe) and ties.K == ties.universe.K == 4
    assert ties.universe.decode([0, 1, 2, 3]).tolist() == [None, "friend", ("a", 1), 3]
    assert [ties.index_of(v) for v in ties.values] == [1, 2, 3]
    assert ties.indices(["friend", "x", None, [1], 3.0]).tolist() == [1, -1, 0, -1, 3]
    for bad in ("secret", None, [1]):
        with pytest.raises(ValueError, match="value is not one of the 3 declared") as info:
            ties.index_of(bad)
        assert "secret" not in str(info.value)


@pytest.mark.filterwarnings("ignore::dpgraph.exceptions.DroppedAttributesWarning")  # untyped on purpose
@pytest.mark.parametrize("directed", [False, True])
def test_k2_typed_release_is_the_binary_release_bit_for_bit(directed):
    G = _typed_graph(700, 2, 0.02, seed=5, directed=directed)
    B = dpgraph.release(G, 0.8, seed=99, directed=directed)
    T = dpgraph.release(G, 0.8, seed=99, directed=directed, edge_attr="kind", values=["v1"])
    assert hashlib.sha256(np.ascontiguousarray(B.adjacency.words)).hexdigest() == \
        hashlib.sha256(np.ascontiguousarray(T.adjacency.words)).hexdigest()
    assert np.array_equal(T.adjacency.planes[0], B.adjacency.words)
    assert T.channel.d == B.channel.d and np.allclose(T.channel.r, B.channel.r)


def _audit_sampler(copies: int):
    """Outcome codes (base K over the 3 pairs of a triangle) of typed releases, ``copies`` per release."""
    def sampler(G, epsilon, n, source):
        nodes = sorted(G)
        big = nx.Graph()
        big.add_nodes_from(range(3 * copies))
        for c in range(copies):
            for u, v, k in G.edges(data="kind"):
                big.add_edge(3 * c + nodes.index(u), 3 * c + nodes.index(v), kind=k)
        out = np.empty(n, dtype=np.int64)
        base = (np.arange(copies) * 3)[:, None]
        rows = (base + np.array([0, 0, 1])[None]).ravel()
        cols = (base + np.array([1, 2, 2])[None]).ravel()
        done = 0
        while done < n:
            R = dpgraph.release(big, epsilon, seed=source, edge_attr="kind", values=["a", "b", "c"])
            vals = R.adjacency.edge_values(rows, cols).reshape(copies, 3)
            take = min(copies, n - done)
            out[done : done + take] = vals[:take] @ np.array([1, 4, 16])
            done += take
        return out
    return sampler


@pytest.mark.parametrize("change", ["kind", "existence"])
def test_neighbour_audit_stays_below_epsilon(change):
    """One pair's value changed (a -> b, or a tie -> no tie): eps lower bound <= eps."""
    G = nx.Graph()
    G.add_nodes_from([0, 1, 2])
    G.add_edge(0, 1, kind="a")
    G.add_edge(1, 2, kind="c")
    H = G.copy()
    if change == "kind":
        H.edges[0, 1]["kind"] = "b"
    else:
        H.remove_edge(0, 1)
    res = neighbour_audit(_audit_sampler(2000), G, H, epsilon=1.0, n=60_000, n_search=10_000, seed=3)
    assert res.passed, str(res)
    assert res.eps_lower <= 1.0


def test_storage_is_log2_k_planes_and_reads_as_the_any_tie_adjacency():
    G = _typed_graph(300, 4, 0.05, seed=2)
    R = dpgraph.release(G, 1.0, seed=3, edge_attr="kind", values=["v1", "v2", "v3"])
    adj = R.adjacency
    assert isinstance(adj, ValuedAdjacency) and isinstance(adj, PackedWords) and isinstance(adj, Adjacency)
    assert value_bits(4) == 2 and adj.nbytes == 2 * 300 * 5 * 8  # n^2 ceil(log2 K) / 8, padded rows
    planes = adj.planes
    any_tie = planes[0] | planes[1]
    assert np.array_equal(adj.words, any_tie)
    assert adj.number_of_edges() == int(np.bitwise_count(any_tie).sum())
    counts = adj.value_counts()
    assert counts.sum() == R.number_of_pairs() and counts[1:].sum() == adj.number_of_edges()
    deg = adj.value_degrees()
    assert np.array_equal(deg[:, 1:].sum(axis=1), adj.degrees())
    rng = np.random.default_rng(0)
    perm = rng.permutation(300)
    s, t = np.sort(perm[:100]), np.sort(perm[100:220])
    by_value = adj.value_cut_counts(s, t)
    assert by_value[1:].sum() == adj.cut_count(s, t) and by_value.sum() == s.size * t.size
    with pytest.raises(ValueError):
        planes[0, 0, 0] = 1  # read-only


def test_to_networkx_carries_each_released_value():
    G = _typed_graph(80, 4, 0.1, seed=1)
    R = dpgraph.release(G, 1.0, seed=2, edge_attr="kind", values=["v1", "v2", "v3"])
    H = R.to_networkx()
    assert H.number_of_edges() == R.number_of_released_edges()
    pos = {v: i for i, v in enumerate(R.nodes)}
    for u, v, k in H.edges(data="kind"):
        i, j = sorted((pos[u], pos[v]))
        assert k == R.tie_values.values[int(R.adjacency.edge_values([i], [j])[0]) - 1]


def test_bins_map_a_numeric_attribute():
    G = nx.Graph()
    G.add_edge(0, 1, w=-3.5)
    G.add_edge(1, 2, w=0.0)
    G.add_edge(2, 3, w=10.0)  # the last bin includes its right edge
    enc = encode_graph(G, edge_data=True)
    ties = tie_values("w", bins=[-10, 0, 3, 10])
    assert encode_typed(enc, ties).tolist() == [1, 2, 3]
    R = dpgraph.release(G, 50.0, seed=0, edge_attr="w", bins=[-10, 0, 3, 10],
                        values=["neg", "low", "high"])
    assert {k for _, _, k in R.to_networkx().edges(data="w")} <= {"neg", "low", "high"}


SECRET = "secret-kind-7f3a"


@pytest.mark.parametrize("kwargs,exc,match", [
    ({"values": ["a", "a"]}, ValueError, "values has duplicates"),
    ({"values": ["a", "no tie"]}, ValueError, "'no tie' is implicit"),
    ({"values": ["a", None]}, ValueError, "'no tie' is implicit"),
    ({"values": []}, ValueError, "values is empty"),
    ({"values": "ab"}, TypeError, "values must be a sequence"),
    ({"values": [float("nan")]}, ValueError, "NaN"),
    ({"values": [f"v{k}" for k in range(256)]}, ValueError, "at most 255"),
    ({"bins": [0, float("inf")]}, ValueError, "bins must be finite"),
    ({"bins": [0, 2, 1]}, ValueError, "strictly increasing"),
    ({"bins": ["0", "1", "2"]}, TypeError, "bins must hold real numbers"),
    ({"bins": [False, True]}, TypeError, "bins must hold real numbers"),
    ({}, ValueError, "declared in advance"),
])
def test_bad_declarations_name_the_argument(kwargs, exc, match):
    G = nx.Graph([(0, 1, {"kind": "a"})])
    with pytest.raises(exc, match=match):
        dpgraph.release(G, 1.0, seed=0, edge_attr="kind", **kwargs)


def test_undeclared_missing_and_nonfinite_values_are_refused_without_echo():
    G = nx.Graph([(0, 1, {"kind": "a"}), (1, 2, {"kind": SECRET})])
    with pytest.raises(ValueError, match="1 edge") as info:
        dpgraph.release(G, 1.0, seed=0, edge_attr="kind", values=["a", "b"])
    assert SECRET not in str(info.value)
    G = nx.Graph([(0, 1, {"kind": "a"}), (1, 2)])
    with pytest.raises(ValueError, match="have no edge attribute"):
        dpgraph.release(G, 1.0, seed=0, edge_attr="kind", values=["a"])
    G = nx.Graph([(0, 1, {"w": float("nan")}), (1, 2, {"w": 1.0})])
    with pytest.raises(ValueError, match="NaN or infinite"):
        dpgraph.release(G, 1.0, seed=0, edge_attr="w", bins=[0, 1, 2])
    G = nx.Graph([(0, 1, {"w": float("inf")})])
    with pytest.raises(ValueError, match="NaN or infinite"):
        dpgraph.release(G, 1.0, seed=0, edge_attr="w", values=[1.0])
    G = nx.Graph([(0, 1, {"w": 123.25})])
    with pytest.raises(ValueError, match="outside the declared bins") as info:
        dpgraph.release(G, 1.0, seed=0, edge_attr="w", bins=[0, 1, 2])
    assert "123.25" not in str(info.value)


@pytest.mark.parametrize("secret", ["1.375", b"1.375", True, np.True_, None, 1 + 0j])
def test_bins_refuse_attributes_that_are_not_real_numbers(secret):
    """A string holding a number, a bool: refused for bins=, counted, naming the attribute."""
    G = nx.Graph([(0, 1, {"w": 0.5}), (1, 2, {"w": secret}), (2, 3, {"w": np.float32(1.5)})])
    with pytest.raises(TypeError, match="1 edge\\(s\\) of G have an edge attribute 'w' that is not "
                       "a real number") as info:
        dpgraph.release(G, 1.0, seed=0, edge_attr="w", bins=[0, 1, 2])
    assert "1.375" not in str(info.value) and "True" not in str(info.value)
    G.edges[1, 2]["w"] = 1  # an int is a number
    assert dpgraph.release(G, 1.0, seed=0, edge_attr="w", bins=[0, 1, 2]).adjacency.K == 3


def test_typed_release_refuses_what_it_does_not_support():
    G = nx.Graph([(0, 1, {"kind": "a"})])
    with pytest.raises(ValueError, match="either keep= or target_edges="):
        dpgraph.release(G, 1.0, seed=0, edge_attr="kind", values=["a"], keep=0.5, target_edges=1)
    with pytest.raises(TypeError, match="pass edge_attr="):
        dpgraph.release(G, 1.0, seed=0, values=["a"])
    with pytest.raises(TypeError, match="networkx Graph"):
        dpgraph.release(np.array([[0, 1]]), 1.0, seed=0, nodes=range(3), edge_attr="kind",
                        values=["a"])


def test_typed_release_goes_through_the_transaction(tmp_path):
    G = nx.Graph([(0, 1, {"kind": "a"})])
    ledger = dpgraph.PrivacyLedger.open(tmp_path / "ledger.json", total_epsilon=1.5)
    dpgraph.release(G, 1.0, seed=0, edge_attr="kind", values=["a"], ledger=ledger)
    with pytest.raises(dpgraph.BudgetExceededError):
        dpgraph.release(G, 1.0, seed=0, edge_attr="kind", values=["a"], ledger=ledger)
    # a refused input costs nothing
    with pytest.raises(ValueError):
        dpgraph.release(G, 0.4, seed=0, edge_attr="kind", values=["b"], ledger=ledger)
    dpgraph.release(G, 0.5, edge_attr="kind", values=["a"], ledger=ledger)
    with pytest.warns(dpgraph.SeededReleaseWarning):
        warnings.simplefilter("always", dpgraph.SeededReleaseWarning)
        dpgraph.release(G, 1.0, seed=1, edge_attr="kind", values=["a"])


def test_other_attributes_are_dropped_with_a_warning_the_typed_one_is_not():
    G = nx.Graph([(0, 1, {"kind": "a"}), (1, 2, {"kind": "a"})])
    with warnings.catch_warnings():
        warnings.simplefilter("error", DroppedAttributesWarning)
        dpgraph.release(G, 1.0, seed=0, edge_attr="kind", values=["a"])
    G.edges[0, 1]["time"] = 5
    with pytest.warns(DroppedAttributesWarning, match="other than 'kind'"):
        dpgraph.release(G, 1.0, seed=0, edge_attr="kind", values=["a"])
    # every edge is looked at, not one edge a node: (1, 2) is no node's first edge in K4
    for directed in (False, True):
        H = nx.complete_graph(4, create_using=nx.DiGraph if directed else nx.Graph)
        nx.set_edge_attributes(H, "a", "kind")
        H.edges[1, 2]["time"] = 5
        with pytest.warns(DroppedAttributesWarning, match="other than 'kind'"):
            dpgraph.release(H, 1.0, seed=0, directed=directed, edge_attr="kind", values=["a"])
    with pytest.raises(ValueError, match="max_edges="):
        dpgraph.release(G, 1.0, seed=0, edge_attr="kind", values=["a"], max_edges=10)


def test_repr_and_files_hold_no_input():
    G = nx.Graph([(0, 1, {"kind": "a", "note": SECRET})])
    with pytest.warns(DroppedAttributesWarning) as record:
        R = dpgraph.release(G, 1.0, seed=0, edge_attr="kind", values=["a"])
    assert record[0].filename == __file__ and SECRET not in str(record[0].message)
    assert SECRET not in repr(R) and "K=2" in repr(R)


@pytest.mark.filterwarnings("ignore::dpgraph.exceptions.DroppedAttributesWarning")  # untyped on purpose
@pytest.mark.parametrize("directed", [False, True])
def test_typed_encoding_with_a_wider_public_vertex_set(directed):
    G = _typed_graph(60, 4, 0.1, seed=8, directed=directed)
    G = nx.relabel_nodes(G, {v: f"n{59 - v:02d}" for v in G})  # insertion order != canonical order
    nodes = [f"n{k:02d}" for k in range(70)]
    enc = encode_graph(G, directed=directed, edge_data=True)
    direct = dict(zip(zip(enc.rows.tolist(), enc.cols.tolist()),
                      encode_typed(enc, tie_values("kind", ["v1", "v2", "v3"])).tolist()))
    from dpgraph.graph.inputs import read_input

    wide = read_input(G, directed=directed, nodes=nodes, edge_data=True)
    x = encode_typed(wide, tie_values("kind", ["v1", "v2", "v3"]))
    for r, c, v in zip(wide.rows.tolist(), wide.cols.tolist(), x.tolist()):
        u, w = wide.index.nodes[r], wide.index.nodes[c]
        assert f"v{v}" == G.edges[u, w]["kind"]
    assert sorted(direct.values()) == sorted(x.tolist())
