"""The compiled (numba) paths give the same bits and answers as the numpy paths.

numba is optional: every kernel has a numpy fallback that must give identical
results for a seed.  The numpy side runs in a fresh process with
``DPGRAPH_DISABLE_NUMBA=1``, exactly as a user without numba would run it.
"""

from __future__ import annotations

import hashlib
import os
import subprocess
import sys

import networkx as nx
import numpy as np
import pytest

import dpgraph
from dpgraph.core.probabilities import rr_probabilities
from dpgraph.core.randomness import SecureRandom, SeededRandom
from dpgraph.core.sampling import bernoulli_words
from dpgraph.graph.packed import PackedAdjacency, words_per_row

NUMERATORS = [rr_probabilities(e).flip_numerator for e in (0.1, 1.0, 5.0, 40.0)] + [1, 1 << 63, (1 << 64) - 1]
ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))


def _digests() -> list[str]:
    """SHA-256 of bernoulli_words for every numerator, seeded and keyed streams, odd sizes."""
    out = []
    for m in NUMERATORS:
        for source in (SeededRandom(11), SecureRandom(key=bytes(range(16)))):
            for n_words in (1, 70_001):  # one word; more than two chunks with a ragged end
                words = bernoulli_words(n_words, m, source)
                out.append(hashlib.sha256(words.tobytes()).hexdigest()[:16])
    return out


def _run_without_numba(code: str) -> str:
    env = dict(os.environ, DPGRAPH_DISABLE_NUMBA="1", PYTHONPATH=ROOT)
    return subprocess.run([sys.executable, "-c", code], env=env, capture_output=True, text=True,
                          check=True, cwd=ROOT).stdout


def test_sampler_numba_and_numpy_give_identical_words():
    from dpgraph.core import sampling

    here = _digests()
    assert sampling._numba_kernels() is not None, "numba is a test dependency: the kernels must load"
    code = ("from tests.test_fast_paths import _digests\n"
            "from dpgraph.core import sampling\n"
            "assert sampling._numba_kernels() is None\n"
            "print(' '.join(_digests()))\n")
    assert _run_without_numba(code).split() == here


def test_sampler_probability_is_exact_per_lane():
    """Each lane is 1 with probability numerator / 2^64: mean within 4 standard errors."""
    m = rr_probabilities(1.0).flip_numerator
    p = m / 2**64
    words = bernoulli_words(200_000, m, SeededRandom(5))
    bits = np.unpackbits(words.view(np.uint8))
    se = np.sqrt(p * (1 - p) / bits.size)
    assert abs(bits.mean() - p) < 4 * se
    # every lane position is unbiased too (the bit-slicing treats lanes alike)
    lanes = np.unpackbits(words.view(np.uint8).reshape(-1, 8), axis=1, bitorder="little").mean(axis=0)
    assert np.all(np.abs(lanes - p) < 4 * np.sqrt(p * (1 - p) / words.size))


def test_bernoulli_words_out_buffer_is_overwritten():
    m = rr_probabilities(2.0).flip_numerator
    buf = np.full(40_000, 0xFFFF, dtype=np.uint64)  # stale contents must not leak into the result
    got = bernoulli_words(40_000, m, SeededRandom(3), out=buf)
    assert got is buf
    assert np.array_equal(buf, bernoulli_words(40_000, m, SeededRandom(3)))
    with pytest.raises(ValueError, match="out must be"):
        bernoulli_words(10, m, SeededRandom(3), out=np.zeros(9, dtype=np.uint64))


def test_kernel_loading_falls_back_silently(monkeypatch):
    """A numba that cannot compile or cache (e.g. no writable cache dir) means numpy, no error."""
    import importlib

    from dpgraph import _numba

    def broken(name, *args, **kwargs):
        raise RuntimeError("cannot cache function: no locator available")

    monkeypatch.setattr(importlib, "import_module", broken)
    assert _numba.load_kernels("dpgraph.core._samplekernel", ("dense_rounds",)) is None


# ---- cut queries: every input form and engine path gives the same counts ---------------------


def _release(G, seed=0, **kw):
    import warnings

    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        return dpgraph.release(G, 1.0, seed=seed, **kw)


GRAPHS = {
    "gnp": lambda: nx.gnp_random_graph(300, 0.05, seed=1),
    "star": lambda: nx.star_graph(200),
    "sbm": lambda: nx.stochastic_block_model([120, 90, 70], [[0.2, 0.01, 0.02], [0.01, 0.3, 0.0],
                                                             [0.02, 0.0, 0.25]], seed=3),
    "strings": lambda: nx.relabel_nodes(nx.path_graph(150), {i: f"v{i:03d}" for i in range(150)}),
    "sparse ints": lambda: nx.relabel_nodes(nx.cycle_graph(130), {i: 7 * i + 3 for i in range(130)}),
}


@pytest.mark.parametrize("kind", sorted(GRAPHS))
def test_cut_input_forms_agree_with_networkx(kind):
    """Sets, lists, arrays, masks, cuts(), cut_batch() all give networkx's count on the release."""
    R = _release(GRAPHS[kind]())
    H = R.to_networkx()
    nodes = np.array(R.nodes, dtype=object)
    n = len(nodes)
    rng = np.random.default_rng(7)
    M = np.zeros((12, n), dtype=np.int8)
    for q in range(12):
        perm = rng.permutation(n)
        k = rng.integers(1, n - 1)
        M[q, perm[:k]] = 1
        if q % 2:  # complement cut
            M[q, perm[k:]] = -1
        else:  # a partial T
            M[q, perm[k : k + rng.integers(1, n - k + 1)]] = -1
    want = []
    for row in M:
        S, T = list(nodes[row == 1]), list(nodes[row == -1])
        raw = nx.cut_size(H, S, T)
        est = R.cut(set(S), set(T))
        assert est.raw == R.cut(S, T).raw == R.cut(np.array(S, dtype=object), T).raw
        assert est.raw == R.cut(row == 1, row == -1).raw  # boolean masks over R.nodes
        assert est.raw == R.channel.debias(raw, len(S) * len(T))
        want.append(est.raw)
    assert np.array_equal(R.cuts([(set(nodes[r == 1]), list(nodes[r == -1])) for r in M]).raw, want)
    assert np.array_equal(R.cut_batch(M).raw, want)
    comp = M[1::2] == 1
    assert np.array_equal(R.cut_batch(comp).raw, np.asarray(want)[1::2])


def test_complement_trick_matches_the_direct_count():
    """vol(A) - 2 e(A) (degrees cached) equals the two-sided count, whichever side is smaller."""
    R = _release(nx.gnp_random_graph(500, 0.1, seed=2), seed=4)
    adj = R.adjacency
    rng = np.random.default_rng(0)
    for k in (1, 10, 250, 499):
        s = np.sort(rng.permutation(500)[:k])
        t = np.setdiff1d(np.arange(500), s)
        before = adj.cut_count(s, t)  # degrees not cached yet: the direct count
        adj.degrees()
        assert adj.cut_count(s, t) == before == adj.cut_count(t, s)


def test_one_pass_batch_equals_query_by_query():
    """Above 8 MiB the batch uses one pass over the rows for all queries: same counts."""
    n = 8300  # 8300 x 130 words x 8 bytes > 8 MiB
    rng = np.random.default_rng(3)
    words = rng.integers(0, 2**63, size=(n, words_per_row(n)), dtype=np.uint64)
    i = np.arange(n)
    keep = np.arange(64 * words_per_row(n))[None, :] > i[:, None]  # strict upper triangle, no padding
    keep &= np.arange(64 * words_per_row(n))[None, :] < n
    words &= np.packbits(keep, axis=1, bitorder="little").view(np.uint64)
    A = PackedAdjacency(words, n, False)
    M = np.where(rng.random((6, n)) < 0.5, 1, -1).astype(np.int8)
    M[4, :100] = 0  # not a complement cut
    single = [A.cut_count(np.flatnonzero(r == 1), np.flatnonzero(r == -1)) for r in M]
    assert A.membership_cut_counts(M).tolist() == single


def test_masks_and_batches_are_validated():
    R = _release(nx.path_graph(10))
    with pytest.raises(ValueError, match="one entry per node"):
        R.cut(np.ones(9, dtype=bool), [9])
    with pytest.raises(ValueError, match="S is empty"):
        R.cut(np.zeros(10, dtype=bool), [1])
    with pytest.raises(ValueError, match=r"shape \(Q, 10\)"):
        R.cut_batch(np.ones((2, 9), dtype=bool))
    with pytest.raises(ValueError, match="row 1 has an empty side"):
        R.cut_batch(np.array([[True] * 5 + [False] * 5, [True] * 10]))
    with pytest.raises(ValueError, match="1 \\(node in S\\), -1"):
        R.cut_batch(np.full((1, 10), 2))
    with pytest.raises(TypeError, match="numpy array"):
        R.cut_batch([[1, -1] * 5])
    with pytest.raises(ValueError, match="not in the graph"):
        R.cut({1.5, 2}, [3])  # floats are labels, never truncated to ints
    with pytest.raises(ValueError, match="not in the graph"):
        R.cut({"1"}, [3])


# ---- to_networkx -----------------------------------------------------------------------------
@pytest.mark.parametrize("block", [7, 1 << 22])  # many blocks of edges, or one
@pytest.mark.parametrize("directed", [False, True])
def test_to_networkx_is_the_graph_add_edges_from_builds(directed, block, monkeypatch):
    from dpgraph.graph import convert

    monkeypatch.setattr(convert, "_BLOCK", block)
    G = nx.gnp_random_graph(120, 0.05, seed=1, directed=directed)
    G = nx.relabel_nodes(G, {i: (i % 7, f"n{i}") for i in range(120)})  # tuple labels
    R = _release(G, directed=directed)
    H = R.to_networkx()
    r, c = R.released_edges()
    ref = nx.DiGraph() if directed else nx.Graph()
    ref.add_nodes_from(R.nodes)
    nodes = R.node_index.nodes  # by position
    ref.add_edges_from((nodes[a], nodes[b]) for a, b in zip(r.tolist(), c.tolist()))
    assert nx.utils.graphs_equal(H, ref) and type(H) is type(ref)
    assert all(list(H.adj[v]) == list(ref.adj[v]) for v in ref)  # same neighbour order
    if directed:
        assert all(list(H.pred[v]) == list(ref.pred[v]) for v in ref)
    dicts = [H.edges[e] for e in H.edges]
    assert len({id(d) for d in dicts}) == len(dicts)  # one attribute dict per edge
    u, v = next(iter(H.edges))
    H.edges[u, v]["w"] = 1  # shared by both directions, like networkx's own
    assert (H.pred[v][u] if directed else H[v][u])["w"] == 1
    H.add_edge(u, "new")
    assert H.has_edge(u, "new")


# ---- numba's cache: the first query of a session compiles nothing -----------------------------
def test_first_query_of_a_session_loads_compiled_kernels_from_cache():
    code = (
        "import warnings, numpy as np, networkx as nx, dpgraph\n"
        "warnings.simplefilter('ignore')\n"
        "from dpgraph.graph import packed\n"
        "from dpgraph.core import sampling\n"
        "R = dpgraph.release(nx.gnp_random_graph(3000, 0.01, seed=1), 1.0, seed=1)\n"
        "s = np.arange(0, 3000, 2)\n"
        "R.adjacency.cut_count(s, np.arange(1, 3000, 2))\n"
        "kernel = packed._numba_kernel()\n"
        "kernel(np.zeros((1, 1), np.uint64), np.zeros(1, np.int64), np.zeros(1, np.uint64), True)\n"
        "dense = sampling._numba_kernels()[0]\n"
        "print(sum(kernel.stats.cache_misses.values()), sum(kernel.stats.cache_hits.values()),\n"
        "      sum(dense.stats.cache_misses.values()), sum(dense.stats.cache_hits.values()))\n"
    )
    env = dict(os.environ, PYTHONPATH=ROOT)
    env.pop("DPGRAPH_DISABLE_NUMBA", None)
    run = lambda: subprocess.run([sys.executable, "-c", code], env=env, capture_output=True,
                                 text=True, check=True, cwd=ROOT).stdout.split()
    run()  # may compile and write the cache
    misses, hits, dense_misses, dense_hits = map(int, run())
    assert misses == 0 and hits >= 1, "the cut kernel was compiled again instead of loaded"
    assert dense_misses == 0 and dense_hits >= 1, "the sampler kernel was compiled again"
