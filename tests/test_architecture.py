"""The declared interfaces: adjacency protocol, packed layout, accessors, validation."""

from __future__ import annotations

import warnings
from pathlib import Path

import networkx as nx
import numpy as np
import pytest

import dpgraph
from dpgraph.core.estimators import Channel, count_estimate
from dpgraph.core.probabilities import rr_probabilities
from dpgraph.graph import packed
from dpgraph.graph.adjacency import Adjacency, AdjacencyBase, PackedWords
from dpgraph.graph.packed import (
    PackedAdjacency,
    clear_non_pairs,
    has_non_pair_bits,
    multi_query_popcount,
    words_per_row,
    xor_edges,
)
from dpgraph.graph.sparse import SparseAdjacency
from dpgraph.validation import Epsilon, Integer, Optional, Options, Probability, validate_params

warnings.filterwarnings("ignore", category=dpgraph.SeededReleaseWarning)


def _releases():
    G = nx.gnp_random_graph(150, 0.05, seed=3)
    yield dpgraph.release(G, 1.0, seed=1)
    yield dpgraph.release(G, 1.0, seed=1, keep=0.3)
    D = nx.gnp_random_graph(90, 0.05, seed=4, directed=True)
    yield dpgraph.release(D, 1.0, seed=2, directed=True)
    yield dpgraph.release(D, 1.0, seed=2, directed=True, target_edges=200)


@pytest.mark.parametrize("R", list(_releases()), ids=["packed", "sparse", "packed-di", "sparse-di"])
def test_adjacencies_implement_the_protocol(R):
    adj = R.adjacency
    assert isinstance(adj, Adjacency)
    assert isinstance(adj, PackedWords) == isinstance(adj, PackedAdjacency)
    assert adj.file_kind in ("packed", "sparse")
    rng = np.random.default_rng(0)
    perm = rng.permutation(adj.n)
    sides = [(np.sort(perm[:20]), np.sort(perm[20:50])), (np.sort(perm[60:61]), np.sort(perm[70:]))]
    # the batch equals the single queries, and the base-class loop agrees
    batch = adj.cut_counts(sides)
    assert batch.tolist() == [adj.cut_count(s, t) for s, t in sides]
    assert AdjacencyBase.cut_counts(adj, sides).tolist() == batch.tolist()
    assert AdjacencyBase.number_of_edges(adj) == adj.number_of_edges()
    r, c = adj.edge_array()
    er, ec = AdjacencyBase.edge_array(adj)
    assert np.array_equal(r, er) and np.array_equal(c, ec)
    # the public accessors are the adjacency's answers
    assert np.array_equal(R.released_degrees(), adj.degrees())
    rr, rc = R.released_edges()
    assert rr.size == R.number_of_released_edges()
    if not R.directed:
        assert np.all(rr < rc)
    assert R.node_index.nodes == R.nodes


def test_packed_words_are_read_only():
    R = dpgraph.release(nx.path_graph(70), 1.0, seed=0)
    with pytest.raises(ValueError):
        R.adjacency.words[0, 0] = 1
    with pytest.raises(AttributeError):
        R.adjacency = None


def test_sparse_keep_numerator_is_set_at_construction():
    R = dpgraph.release(nx.path_graph(40), 1.0, seed=0, keep=0.5)
    assert R.adjacency.keep_numerator == 1 << 63
    A = SparseAdjacency.from_pairs(np.array([0]), np.array([1]), 3, False, keep_numerator=5)
    assert A.keep_numerator == 5
    assert SparseAdjacency.from_pairs(np.array([0]), np.array([1]), 3, False).keep_numerator == 1 << 64
    with pytest.raises(ValueError, match="keep_numerator"):
        SparseAdjacency.from_pairs(np.array([0]), np.array([1]), 3, False, keep_numerator=0)


def test_positions_and_cut_positions():
    R = dpgraph.release(nx.path_graph(["a", "b", "c", "d"]), 1.0, seed=0)
    assert R.positions(["d", "a", "a"]).tolist() == [0, 3]
    with pytest.raises(ValueError, match="share 1 node"):
        R.cut_positions(["a", "b"], ["b"])
    with pytest.raises(ValueError, match="not in the graph"):
        R.positions(["z"])


# ----------------------------------------------------------------------------- channel
@pytest.mark.parametrize("channel", [
    Channel.randomized_response(rr_probabilities(0.7)),
    Channel.binary(0.3, 0.05),
    Channel.binary(0.9, 0.4),
])
def test_channel_accessors(channel):
    from fractions import Fraction

    beta = channel.r[1]
    assert channel.beta == beta
    assert abs(channel.alpha - (1 - channel.r[0])) < 1e-12
    counts = np.array([0.0, 1.0, 17.0, 250.0])
    rows = np.array([1.0, 1.0, 40.0, 600.0])
    # the same bits as the estimator's value
    assert np.array_equal(channel.debias(counts, rows), count_estimate(counts, rows, channel).value)
    v0, v1 = channel.entry_variances()
    a, b = Fraction(channel.alpha), Fraction(beta)
    d2 = Fraction(channel.d) ** 2
    assert v0 == pytest.approx(float(b * (1 - b) / d2), rel=1e-12)
    assert v1 == pytest.approx(float(a * (1 - a) / d2), rel=1e-12)
    assert channel.row_variance(np.array([0, 1, 1])).tolist() == [v0, v1, v1]
    # the per-row variance is the variance of the estimator of a single row
    assert count_estimate(0.0, 1.0, channel).std ** 2 == pytest.approx(max(v0, v1), rel=1e-12)


def test_channel_accessors_refuse_k_ary():
    ch = Channel(0.5, np.array([0.1, 0.2, 0.2]))
    with pytest.raises(ValueError, match="binary"):
        _ = ch.alpha
    with pytest.raises(ValueError, match="binary"):
        ch.debias(1.0)


# ----------------------------------------------------------------------------- packed layout
@pytest.mark.parametrize("n", [5, 64, 130, 200])
@pytest.mark.parametrize("directed", [False, True])
def test_clear_non_pairs_by_tiles_equals_whole(n, directed):
    nw = words_per_row(n)
    rng = np.random.default_rng(n)
    full = rng.integers(0, 2**63, size=(n, nw), dtype=np.uint64) * np.uint64(2) + np.uint64(1)
    whole = full.copy()
    clear_non_pairs(whole, n, directed)
    tiled = full.copy()
    for r0 in range(0, n, 64):
        for c0 in range(0, nw, 1):
            tile = tiled[r0 : r0 + 64, c0 : c0 + 1].copy()
            clear_non_pairs(tile, n, directed, row0=r0, word0=c0)
            tiled[r0 : r0 + 64, c0 : c0 + 1] = tile
    assert np.array_equal(whole, tiled)
    bits = np.unpackbits(whole.view(np.uint8), axis=1, bitorder="little")
    i, j = np.indices((n, 64 * nw))
    # padding and the non-pairs of each diagonal word are cleared (words left of an
    # undirected diagonal word are the samplers' business: they never fill them)
    diagonal = (j == i) if directed else (j <= i)
    cleared = (j >= n) | (diagonal & (j // 64 == i // 64))
    assert not bits[cleared].any()
    kept = ~cleared & ~((j // 64) < (i // 64) if not directed else np.zeros_like(cleared))
    assert np.array_equal(bits[kept], np.unpackbits(full.view(np.uint8), axis=1, bitorder="little")[kept])
    if not directed:  # clear the untouched part too, then the matrix is a valid release
        whole[(j // 64 < i // 64)[:, ::64]] = 0
    assert not has_non_pair_bits(whole, n, directed)


def test_has_non_pair_bits_finds_each_kind():
    n = 70
    w = np.zeros((n, 2), dtype=np.uint64)
    assert not has_non_pair_bits(w, n, False)
    for r, c in [(3, 3), (5, 2), (66, 1), (0, 127)]:
        bad = w.copy()
        xor_edges(bad, np.array([r]), np.array([c]))
        assert has_non_pair_bits(bad, n, False), (r, c)
    bad = w.copy()
    xor_edges(bad, np.array([9]), np.array([9]))
    assert has_non_pair_bits(bad, n, True)
    ok = w.copy()
    xor_edges(ok, np.array([9]), np.array([3]))
    assert not has_non_pair_bits(ok, n, True)


def test_xor_edges_in_a_tile_equals_whole():
    n = 200
    rng = np.random.default_rng(1)
    pairs = np.unique(rng.integers(0, n, size=(500, 2)), axis=0)
    r, c = pairs[:, 0], pairs[:, 1]
    whole = np.zeros((n, words_per_row(n)), dtype=np.uint64)
    xor_edges(whole, r, c)
    sel = (r >= 64) & (r < 128) & (c >= 64) & (c < 192)
    tile = np.zeros((64, 2), dtype=np.uint64)
    xor_edges(tile, r[sel], c[sel], row0=64, word0=1)
    assert np.array_equal(tile, whole[64:128, 1:3])


@pytest.mark.parametrize("upper", [False, True])
def test_multi_query_popcount_matches_brute_force(upper, monkeypatch):
    n = 300
    nw = words_per_row(n)
    rng = np.random.default_rng(5)
    words = rng.integers(0, 2**63, size=(n, nw), dtype=np.uint64)
    if upper:
        clear_non_pairs(words, n, False)
        for i in range(n):
            words[i, : i >> 6] = 0
    r0, c0 = 64, 1
    tile = np.ascontiguousarray(words[r0:256, c0:nw])
    Q = 5
    rowsel = (rng.random((Q, tile.shape[0])) < 0.3).astype(np.uint8)
    masks = rng.integers(0, 2**63, size=(Q, tile.shape[1]), dtype=np.uint64)
    bits = np.unpackbits(tile.view(np.uint8), axis=1, bitorder="little").astype(np.int64)
    mbits = np.unpackbits(masks.view(np.uint8), axis=1, bitorder="little").astype(np.int64)
    expected = [int((bits[rowsel[q] == 1] * mbits[q]).sum()) for q in range(Q)]
    got = multi_query_popcount(tile, rowsel, masks, r0, c0, upper)
    assert got.tolist() == expected
    monkeypatch.setattr(packed, "HAVE_NUMBA", False)
    assert multi_query_popcount(tile, rowsel, masks, r0, c0, upper).tolist() == expected


def test_pair_numbering_lives_in_the_core():
    """pair_count, pair_index and pair_from_index are defined once, in dpgraph.core.pairs
    (the rows of a graph's database), and no module of the graph layer re-exports them."""
    import ast

    from dpgraph.core import pairs

    names = {"pair_count", "pair_index", "pair_from_index"}
    package = Path(dpgraph.__file__).parent
    defined = {f.relative_to(package).as_posix() for f in package.rglob("*.py")
               for node in ast.walk(ast.parse(f.read_text()))
               if isinstance(node, ast.FunctionDef) and node.name in names}
    assert defined == {"core/pairs.py"}
    exported = {m.__name__ for m in (dpgraph.graph, dpgraph.graph.encoding, dpgraph.graph.sparse)
                if names & set(getattr(m, "__all__", ()))}
    assert exported == set()
    R = dpgraph.release(nx.path_graph(9), 1.0, seed=0)
    assert R.number_of_pairs() == pairs.pair_count(9, False) == 36


# ----------------------------------------------------------------------------- validation
def test_validate_params_checks_and_converts():
    @validate_params(epsilon=Epsilon(), runs=Integer(minimum=2), rate=Optional(Probability()),
                     mode=Options("a", "b"))
    def f(epsilon, runs=2, rate=None, mode="a"):
        return epsilon, runs, rate, mode

    assert f(1, 3, 0.5) == (1.0, 3, 0.5, "a")
    assert type(f(np.int64(2))[0]) is float
    with pytest.raises(ValueError, match="runs must be >= 2"):
        f(1.0, runs=1)
    with pytest.raises(TypeError, match="runs must be an integer"):
        f(1.0, runs=2.5)  # checked before any conversion: 2.5 is not silently 2
    with pytest.raises(ValueError, match="rate must lie in"):
        f(1.0, rate=1.5)
    with pytest.raises(ValueError, match="mode must be one of"):
        f(1.0, mode="c")
    with pytest.raises(ValueError, match="epsilon must be > 0"):
        f(-1.0)
    with pytest.raises(TypeError, match="no parameter"):
        validate_params(x=Epsilon())(lambda epsilon: epsilon)


def test_release_declares_its_constraints():
    from dpgraph.graph.entry import release

    assert set(release.__dpgraph_constraints__) >= {"directed"}
    with pytest.raises(TypeError, match="directed must be True or False"):
        release(nx.path_graph(3), 1.0, seed=0, directed="yes")
    # epsilon, seed and ledger are the release transaction's to validate, once
    with pytest.raises(ValueError, match="epsilon"):
        release(nx.path_graph(3), -1.0)


# ----------------------------------------------------------------------------- names
def test_no_deprecated_aliases_remain():
    # nothing was ever published: renamed names are gone, not kept as warning aliases
    from dpgraph.core import MechanismE, Universe

    rr = rr_probabilities(1.0, 3)
    assert rr.truth_fraction + 2 * rr.flip_fraction == 1
    for old in ("move_numerator", "move_fraction", "move_probability", "keep_fraction",
                "keep_probability", "channel"):
        assert not hasattr(rr, old)
    M = MechanismE(Universe([1, 2, 3]), 1.0)
    assert not hasattr(M, "keep_probability") and not hasattr(M, "move_probability")
    root = Path(dpgraph.__file__).parent
    for f in root.rglob("*.py"):
        assert "DeprecationWarning" not in f.read_text(), f


def test_validate_params_finds_arguments_however_passed():
    @validate_params(b=Integer(minimum=0), c=Epsilon())
    def f(a, b, c=2, *rest, d=3):
        return a, b, c, rest, d

    assert f(1, 2) == (1, 2, 2.0, (), 3)
    assert f(1, b=5, c=1) == (1, 5, 1.0, (), 3)
    assert f(1, 2, 3, 4, d=5) == (1, 2, 3.0, (4,), 5)
    with pytest.raises(ValueError, match="b must be >= 0"):
        f(1, -1)
    with pytest.raises(ValueError, match="c must be > 0"):
        f(1, 2, c=0)
    with pytest.raises(TypeError):
        f(1)  # a missing argument is the call's own error
    with pytest.raises(TypeError):
        f(1, 2, b=3)  # so is a repeated one

    class A:
        @validate_params(x=Integer(minimum=1))
        def m(self, x=1):
            return x

    assert A().m() == 1 and A().m(4) == 4
    with pytest.raises(ValueError, match="x must be >= 1"):
        A().m(x=0)
