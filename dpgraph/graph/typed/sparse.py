"""Sparse typed releases: K-ary randomized response then subsampling, in O(m + output).

A dense typed release holds a value for every one of the N pairs; about
(K - 1) m' N of them are ties, most of them noise.  A *sparse* typed release
(``dpgraph.release(G, eps, edge_attr=..., values=..., keep=s)`` or
``target_edges=``) keeps each released tie with the public probability s and
stores the kept ties with their values in CSR form
(:class:`~.sparse_adjacency.SparseTypedAdjacency`); a pair that is not
stored reads as "no tie".  Keeping is post-processing of the dense typed
release, so the privacy guarantee is the dense one.  A pair's stored value
then has the channel

    P(y = v | x) = s (1 - K m') [v = x] + s m'          (v = 1..K-1),
    P(y = 0 | x) = s (1 - K m') [x = 0] + 1 - s (1 - m'),

the form d [v = x] + r_v of :class:`~dpgraph.core.Channel` with
d = s (1 - K m'): every typed estimator debiases through it (in effect
scaling the counts by 1 / s), with the same plug-in variance as a dense
typed release (module :mod:`.estimators`), and the any-tie collapse is the
binary channel alpha = s (1 - m'), beta = s (K - 1) m'.

Exactness and sampling
----------------------
s = k / 2^64 and m' = M / 2^64 are dyadic, so every probability above is an
exact rational.  True ties (m of them) are released by the core's exact
K-ary sampler (:func:`~dpgraph.core.sampling.rr_sample`, one word each) and
a released tie is kept iff a second word u < k.  The pairs without a tie are
never enumerated: a Bernoulli(s (K - 1) m') subset of the whole pair space is
drawn by exact geometric gaps (:func:`~dpgraph.core.sampling.bernoulli_positions`),
each candidate gets a value uniform on 1..K-1
(:func:`~dpgraph.core.sampling.uniform_integers`, exact), and the candidates
that fall on a true tie are dropped (pairs are independent, so this is exactly
the process on the pairs without a tie).  Values are drawn for every
candidate before the true ties are dropped, so the stream used depends on n,
m and the random words only.  With one tie value (K = 2) this is the binary
sparse release, word for word.
"""

from __future__ import annotations

from typing import NamedTuple

import numpy as np

from ...core import TypedSubsampling
from ...core.pairs import pair_count, pair_from_index, pair_index
from ...core.randomness import RandomSource
from ...core.sampling import bernoulli_positions, rr_sample, uniform_integers
from ..encoding import EncodedGraph
from ..sparse import sparse_release_bytes
from .sparse_adjacency import SparseTypedAdjacency

__all__ = ["SparseTypedInput", "release_sparse_typed", "sparse_typed_bytes",
           "sparse_typed_input"]

_TWO64 = 1 << 64
_EDGE_CHUNK = 1 << 20  # ties whose words are drawn per call: bounds the scratch after the charge


def sparse_typed_bytes(sub: TypedSubsampling, n: int, directed: bool,
                       edge_bound: int | None = None) -> int:
    """Memory a sparse typed release needs: the binary sparse release's and a value byte a pair.

    :func:`~dpgraph.graph.sparse.sparse_release_bytes` with the same
    (alpha, beta) and the same public ``edge_bound`` (None: the worst case,
    never the input's tie count), plus a quarter for the values (a stored
    pair's column costs 8 or 16 bytes there, its value 2: the parts, then
    the whole).  What grows with the ties themselves is allocated before
    the charge (:func:`sparse_typed_input`).
    """
    base = sparse_release_bytes(sub, n, directed, edge_bound)
    return base + base // 4


class SparseTypedInput(NamedTuple):
    """The input of a sparse typed release, made ready before the ledger is charged.

    What grows with the ties is allocated here (their sorted pair index and
    values, the released values and the mask the sampler fills); after the
    charge the sampler allocates only what public quantities bound
    (:func:`sparse_typed_bytes`).
    """

    n: int
    directed: bool
    edges: np.ndarray  # sorted linear pair index of every true tie
    values: np.ndarray  # their value indices, int64
    released: np.ndarray  # uint8, filled by the sampler
    kept: np.ndarray  # bool, filled by the sampler


def sparse_typed_input(enc: EncodedGraph, values: np.ndarray) -> SparseTypedInput:
    """Sort ``enc``'s ties by pair index with their values; allocate the sampler's buffers."""
    key = pair_index(enc.rows, enc.cols, enc.n, enc.directed)
    order = np.argsort(key, kind="stable")
    edges, x = key[order], np.asarray(values, dtype=np.int64)[order]
    del key, order
    return SparseTypedInput(enc.n, enc.directed, edges, x, np.empty(x.size, dtype=np.uint8),
                            np.empty(x.size, dtype=bool))


def release_sparse_typed(enc: EncodedGraph | SparseTypedInput, values: np.ndarray | None,
                         sub: TypedSubsampling, source: RandomSource) -> SparseTypedAdjacency:
    """Sample the sparse typed release of ``enc`` (ties valued ``values``) in O(m + output).

    Parameters
    ----------
    enc : EncodedGraph or SparseTypedInput
        The input; :func:`sparse_typed_input` of it made ready before a
        charge, so that what is allocated after is bounded by public
        quantities.
    values : numpy.ndarray of int or None
        Value index 1..K-1 of every tie of an ``EncodedGraph`` (None for a
        ``SparseTypedInput``, which holds them).
    sub : TypedSubsampling
    source : RandomSource

    Returns
    -------
    SparseTypedAdjacency

    Examples
    --------
    >>> import networkx as nx
    >>> from dpgraph.core import SeededRandom, rr_probabilities
    >>> from dpgraph.graph import encode_graph
    >>> enc = encode_graph(nx.path_graph(200))
    >>> sub = TypedSubsampling(rr_probabilities(2.0, 3), 1 << 60)
    >>> A = release_sparse_typed(enc, np.ones(199, dtype=int), sub, SeededRandom(0))
    >>> A.K, 0 < A.number_of_edges() < 400
    (3, True)
    """
    if isinstance(enc, EncodedGraph):
        enc = sparse_typed_input(enc, values)
    n, directed, K = enc.n, enc.directed, sub.K
    N = pair_count(n, directed)
    edges, x, y = enc.edges, enc.values, enc.released
    m = edges.size
    for a in range(0, m, _EDGE_CHUNK):  # the dense typed release's value of every true tie
        b = min(m, a + _EDGE_CHUNK)
        y[a:b] = rr_sample(x[a:b], sub.rr, source)  # one word a tie, in order: one stream
    kept = enc.kept
    np.not_equal(y, 0, out=kept)
    if sub.keep_numerator < _TWO64:
        for a in range(0, m, _EDGE_CHUNK):
            b = min(m, a + _EDGE_CHUNK)
            kept[a:b] &= source.uint64(b - a) < np.uint64(sub.keep_numerator)
    kept_edges, kept_values = edges[kept], y[kept]
    counts = np.zeros(n, dtype=np.int64)
    col_dtype = np.int32 if n < 2**31 else np.int64
    col_parts: list[np.ndarray] = []
    val_parts: list[np.ndarray] = []

    def emit(pos: np.ndarray, vals: np.ndarray) -> None:  # row-major batches, as the binary release
        if pos.size:
            r, c = pair_from_index(pos, n, directed)
            counts[...] += np.bincount(r, minlength=n)
            col_parts.append(c.astype(col_dtype))
            val_parts.append(vals)

    lo = 0  # first pair index not yet emitted
    stream = bernoulli_positions(N, sub.beta, source) if sub.beta > 0 else iter(())
    for cand in stream:
        hi = int(cand[-1]) + 1
        vals = (1 + uniform_integers(cand.size, K - 1, source)).astype(np.uint8)
        if m:
            at = np.searchsorted(edges, cand)
            off = edges[np.minimum(at, m - 1)] != cand
            cand, vals = cand[off], vals[off]
        a, b = np.searchsorted(kept_edges, [lo, hi])
        if b > a:  # merge the kept true ties of this range, in order, in O(batch)
            where = np.searchsorted(cand, kept_edges[a:b])
            cand = np.insert(cand, where, kept_edges[a:b])
            vals = np.insert(vals, where, kept_values[a:b])
        emit(cand, vals)
        lo = hi
    a = int(np.searchsorted(kept_edges, lo))
    emit(kept_edges[a:], kept_values[a:])
    indptr = np.zeros(n + 1, dtype=np.int64)
    np.cumsum(counts, out=indptr[1:])
    indices = np.concatenate(col_parts) if col_parts else np.zeros(0, dtype=col_dtype)
    stored = np.concatenate(val_parts) if val_parts else np.zeros(0, dtype=np.uint8)
    return SparseTypedAdjacency(indptr, indices, stored, n, directed, K, sub.keep_numerator)
