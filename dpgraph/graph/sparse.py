"""Sparse releases: randomized response then subsampling, in O(m + output).

A dense release flips every one of the N vertex pairs with probability p', so
it has about p' N edges: 27% of all pairs at eps = 1, far too many to store
for a large network.  A *sparse* release keeps each released edge with
probability s.  That is post-processing of the dense release, so the privacy
guarantee is the dense one, and a pair ends up in the output with

    P(1 | edge)     = alpha = s (1 - p'),
    P(1 | non-edge) = beta  = s p'.

The estimators use the binary channel (alpha, beta) of the core
(:meth:`dpgraph.core.Channel.binary`), computed from exact fractions by the
core's :class:`~dpgraph.core.SubsampledProbabilities` (the one derivation,
:mod:`dpgraph.core.subsampling`).

Exactness
---------
s is rounded to a dyadic k / 2^64 and p' = M / 2^64 is the certified flip
probability, so alpha = k (2^64 - M) / 2^128 and beta = k M / 2^128 are exact
dyadic rationals.  True edges (there are m of them) are sampled directly: kept
iff a uniform word u1 >= M (not flipped) and a second word u2 < k (kept), which
has probability exactly alpha.

Non-edges are never enumerated.  The released non-edges are a Bernoulli(beta)
subset of the pair space minus the true edges; we sample a Bernoulli(beta)
subset of the *whole* pair space by exact geometric gaps between successes
(:func:`dpgraph.core.sampling.bernoulli_positions`) and drop the candidates
that fall on a true edge (pairs are independent, so this is exactly the
Bernoulli(beta) process on non-edges).  So every sampled pair is in the output
with probability exactly alpha or beta, with no floating-point approximation.
All randomness comes from the core :class:`~dpgraph.core.RandomSource` words.

Pair index
----------
Candidate positions are linear pair indices, row-major, mapped back to (i, j)
arithmetically without materializing the pair space (the numbering lives in
the core, :mod:`dpgraph.core.pairs`: ``pair_count``, ``pair_index``,
``pair_from_index``).
"""

from __future__ import annotations

from collections.abc import Iterator
from typing import NamedTuple

import numpy as np

from ..core import SubsampledProbabilities
from ..core.pairs import pair_count, pair_from_index, pair_index
from ..core.randomness import RandomSource
from ..core.sampling import bernoulli_positions
from ..validation import Integer, validate_params
from .adjacency import AdjacencyBase, _as_block
from .encoding import EncodedGraph

__all__ = [
    "SparseAdjacency",
    "SparseInput",
    "bernoulli_positions",
    "draw_kept",
    "release_sparse",
    "sparse_input",
    "sparse_release_bytes",
]

_TWO64 = 1 << 64


# ---------------------------------------------------------------------------
# the sparse release
# ---------------------------------------------------------------------------
def sparse_release_bytes(probs: SubsampledProbabilities, n: int, directed: bool,
                         edge_bound: int | None = None) -> int:
    """Memory a sparse release of ``n`` nodes needs, from public quantities only, with a margin.

    Never from the input's edge count: the size decides a refusal, and a
    refusal is an output (a graph released and its neighbour refused would
    tell them apart).  ``edge_bound`` is the curator's public bound on the
    edges (``dpgraph.release(..., edge_bound=)``); None sizes for the worst
    case, every pair an edge.  What the sampler allocates after the charge
    (what grows with m itself, the sorted edges and the mask, is allocated
    before it by :func:`sparse_input`):

    - the output, at most alpha B + beta (N - B) pairs in expectation (B
      the bound: alpha >= beta, so more edges never shrink it) plus six
      standard deviations (a larger release has probability below 1e-9),
      each pair's column in the parts;
    - then the larger of the concatenated CSR (each column again) and one
      batch of candidate pairs, about 128 bytes each while drawn, filtered
      and merged (measured 73 to 106), at most 2^21 of them, which lives
      beside the parts but not beside the whole;
    - the kept true edges, 8 bytes each, alpha B plus six deviations;
    - the row counts, pointers and one bincount, 24 bytes a node;

    times a margin of 1.1.  ``benchmarks/bench_release_memory.py`` measures
    the sampler's peak with tracemalloc against this estimate (peak /
    estimate 0.56 to 0.93 at n = 20,000 to 200,000, keep = 1 to 0.001; the
    previous estimate, without the candidate batch, was exceeded 1.02 to 9.7
    times).

    Examples
    --------
    >>> from dpgraph.core import rr_probabilities, subsampled_probabilities
    >>> sp = subsampled_probabilities(rr_probabilities(1.0), 60_000, False, keep=0.5)
    >>> sparse_release_bytes(sp, 60_000, False, 10**6) < sparse_release_bytes(sp, 60_000, False)
    True
    """
    N = pair_count(n, directed)
    B = N if edge_bound is None else min(int(edge_bound), N)
    alpha, beta = float(probs.alpha), float(probs.beta)
    mean = alpha * B + beta * (N - B)
    std = (max(alpha * (1 - alpha), beta * (1 - beta)) * N) ** 0.5
    width = 4 if n < 2**31 else 8
    kept = alpha * B + 6 * (alpha * B) ** 0.5  # the kept true edges, 8 bytes each
    expected = beta * N  # the batch of candidates bernoulli_positions draws at once
    batch = min(_CANDIDATE_BATCH, expected * 1.01 + 6 * expected ** 0.5 + 64)
    out = width * (mean + 6 * std + 1)  # the parts; then the whole, or a batch's scratch
    need = out + max(out, _BATCH_BYTES * batch) + 8 * kept + 24 * (int(n) + 1)
    return int(_PEAK_MARGIN * need)


#: candidates per batch of :func:`~dpgraph.core.sampling.bernoulli_positions` (its cap)
_CANDIDATE_BATCH = 1 << 21
#: scratch a candidate costs while its batch is drawn, filtered and merged (measured: 73-106)
_BATCH_BYTES = 128
#: the estimate against the peak tracemalloc measures (benchmarks/bench_release_memory.py)
_PEAK_MARGIN = 1.1


class SparseInput(NamedTuple):
    """The input of a sparse release, made ready before the ledger is charged.

    Everything whose size follows the input's edge count is allocated here,
    where reading the input allocates too: the sorted pair index of every
    true edge and the mask the sampler fills.  After the charge the sampler
    allocates only what public quantities bound
    (:func:`sparse_release_bytes`).
    """

    n: int
    directed: bool
    edges: np.ndarray  # sorted linear pair index of every true edge
    kept: np.ndarray  # bool, one per true edge: filled by the sampler


def sparse_input(enc: EncodedGraph) -> SparseInput:
    """The sorted pair index of ``enc``'s edges and the sampler's mask (no randomness)."""
    edges = pair_index(enc.rows, enc.cols, enc.n, enc.directed)
    edges.sort()
    return SparseInput(enc.n, enc.directed, edges, np.empty(edges.size, dtype=bool))


#: true edges whose words are drawn per call: bounds the sampler's scratch after the charge
_EDGE_CHUNK = 1 << 20


def draw_kept(kept: np.ndarray, flip_numerator: int, keep_numerator: int,
              source: RandomSource) -> None:
    """Fill ``kept``: edge e is released (u1 >= M) and kept (u2 < k), one word each.

    The words are drawn in chunks, all the u1 then all the u2: the same
    stream as one draw of m words and then another, with O(chunk) scratch.
    """
    m = kept.size
    for a in range(0, m, _EDGE_CHUNK):
        b = min(m, a + _EDGE_CHUNK)
        np.greater_equal(source.uint64(b - a), np.uint64(flip_numerator), out=kept[a:b])
    if keep_numerator < _TWO64:
        for a in range(0, m, _EDGE_CHUNK):
            b = min(m, a + _EDGE_CHUNK)
            kept[a:b] &= source.uint64(b - a) < np.uint64(keep_numerator)


def release_sparse(data: EncodedGraph | SparseInput, probs: SubsampledProbabilities,
                   source: RandomSource) -> SparseAdjacency:
    """Sample the subsampled release of ``data`` in O(m + output) time and memory.

    True edges first (two words each: not flipped, kept), then the candidate
    non-edges in pair order from :func:`bernoulli_positions`, dropping those that
    fall on a true edge.  The stream consumed depends only on n, the edge
    count and the random words, so a keyed source gives a reproducible release.

    Parameters
    ----------
    data : EncodedGraph or SparseInput
        The input; :func:`sparse_input` of it made ready before a charge, so
        that what is allocated after is bounded by public quantities.
    probs : SubsampledProbabilities
    source : RandomSource

    Returns
    -------
    SparseAdjacency
    """
    if isinstance(data, EncodedGraph):
        data = sparse_input(data)
    n, directed, edges = data.n, data.directed, data.edges
    N = pair_count(n, directed)
    m = edges.size
    draw_kept(data.kept, probs.flip_numerator, probs.keep_numerator, source)
    kept_edges = edges[data.kept]
    counts = np.zeros(n, dtype=np.int64)
    col_dtype = np.int32 if n < 2**31 else np.int64
    col_parts: list[np.ndarray] = []
    lo = 0  # first pair index not yet emitted
    stream = bernoulli_positions(N, probs.beta, source) if probs.beta > 0 else iter(())
    for cand in stream:
        hi = int(cand[-1]) + 1
        if m:
            at = np.searchsorted(edges, cand)
            on_edge = edges[np.minimum(at, m - 1)] == cand
            cand = cand[~on_edge]
        a, b = np.searchsorted(kept_edges, [lo, hi])
        if b > a:  # merge the kept true edges of this range, in order, in O(batch)
            ke = kept_edges[a:b]
            cand = np.insert(cand, np.searchsorted(cand, ke), ke)
        _emit(cand, n, directed, counts, col_parts, col_dtype)
        lo = hi
    a = np.searchsorted(kept_edges, lo)
    if a < kept_edges.size:
        _emit(kept_edges[a:], n, directed, counts, col_parts, col_dtype)
    indptr = np.zeros(n + 1, dtype=np.int64)
    np.cumsum(counts, out=indptr[1:])
    indices = np.concatenate(col_parts) if col_parts else np.zeros(0, dtype=col_dtype)
    return SparseAdjacency(indptr, indices, n, directed, keep_numerator=probs.keep_numerator)


def _emit(positions: np.ndarray, n: int, directed: bool, counts: np.ndarray,
          col_parts: list, col_dtype: type) -> None:
    if positions.size == 0:
        return
    r, c = pair_from_index(positions, n, directed)
    counts += np.bincount(r, minlength=n)
    col_parts.append(c.astype(col_dtype))


class SparseAdjacency(AdjacencyBase):
    """Released adjacency in CSR form: row i lists the stored pairs (i, j).

    An undirected release stores each pair once, in the row of its smaller
    end (j > i), exactly like :class:`~dpgraph.graph.packed.PackedAdjacency`;
    a directed one stores every ordered pair.  Memory is 8 (n + 1) bytes plus
    4 bytes a released edge (8 if n >= 2^31).

    Parameters
    ----------
    indptr : numpy.ndarray of int64, shape (n + 1,)
    indices : numpy.ndarray of int32 or int64
        Column of every stored pair, sorted within each row.
    n : int
    directed : bool
    keep_numerator : int, default 2^64
        k of the keep probability k / 2^64 of the release that produced it
        (2^64: no subsampling); written to files with the pairs.

    Examples
    --------
    >>> A = SparseAdjacency.from_pairs(np.array([0, 0, 2]), np.array([1, 3, 3]), 4, False)
    >>> A.number_of_edges(), A.cut_count(np.array([0]), np.array([1, 3]))
    (3, 2)
    >>> A.degrees().tolist()
    [2, 1, 1, 2]
    """

    #: payload kind of the dpgraph file format (see :mod:`dpgraph.graph.sparse_io`)
    file_kind = "sparse"

    @validate_params(keep_numerator=Integer(minimum=1, maximum=_TWO64))
    def __init__(self, indptr: np.ndarray, indices: np.ndarray, n: int, directed: bool,
                 keep_numerator: int = _TWO64) -> None:
        indptr = np.asarray(indptr)
        indices = np.asarray(indices)
        if indptr.shape != (int(n) + 1,) or indptr.dtype != np.int64:
            raise ValueError("indptr must be an int64 array of length n + 1")
        if indices.ndim != 1 or indices.dtype not in (np.int32, np.int64):
            raise ValueError("indices must be a 1-d int32 or int64 array")
        if indptr[0] != 0 or indptr[-1] != indices.size:
            raise ValueError("indptr must start at 0 and end at len(indices)")
        self.keep_numerator = keep_numerator
        self.indptr = indptr
        self.indices = indices
        self.n = int(n)
        self.directed = bool(directed)

    @classmethod
    def from_pairs(cls, rows: np.ndarray, cols: np.ndarray, n: int,
                   directed: bool, keep_numerator: int = _TWO64) -> SparseAdjacency:
        """Build from stored pairs (undirected: rows < cols), in any order, no duplicates."""
        rows = np.asarray(rows, dtype=np.int64)
        cols = np.asarray(cols, dtype=np.int64)
        order = np.argsort(pair_index(rows, cols, n, directed), kind="stable")
        indptr = np.zeros(int(n) + 1, dtype=np.int64)
        np.cumsum(np.bincount(rows, minlength=n), out=indptr[1:])
        dtype = np.int32 if n < 2**31 else np.int64
        return cls(indptr, cols[order].astype(dtype), n, directed, keep_numerator)

    @property
    def nbytes(self) -> int:
        return int(self.indptr.nbytes + self.indices.nbytes)

    def number_of_edges(self) -> int:
        """Released edges (each unordered pair once)."""
        return int(self.indices.size)

    def _row_lengths(self) -> np.ndarray:
        return np.diff(self.indptr)

    def _gather(self, rows: np.ndarray) -> np.ndarray:
        """Concatenated columns of the given rows."""
        starts = self.indptr[rows]
        lens = self.indptr[rows + 1] - starts
        total = int(lens.sum())
        if total == 0:
            return self.indices[:0]
        shift = np.repeat(starts - (np.cumsum(lens) - lens), lens)
        return self.indices[shift + np.arange(total)]

    def _mask(self, positions: np.ndarray) -> np.ndarray:
        m = np.zeros(self.n, dtype=bool)
        m[positions] = True
        return m

    def _rows_into(self, rows: np.ndarray, col_mask: np.ndarray) -> int:
        """Stored pairs (i, j) with i in rows and col_mask[j]."""
        total = int((self.indptr[rows + 1] - self.indptr[rows]).sum())
        if total * 4 < self.indices.size:  # few rows: gather them
            return int(np.count_nonzero(col_mask[self._gather(rows)]))
        row_flag = np.repeat(self._mask(rows), self._row_lengths())
        return int(np.count_nonzero(row_flag & col_mask[self.indices]))

    def cut_count(self, s: np.ndarray, t: np.ndarray) -> int:
        """Released edges between disjoint position sets s and t (s -> t if directed)."""
        observed = self._rows_into(s, self._mask(t))
        if not self.directed:
            observed += self._rows_into(t, self._mask(s))
        return observed

    def within_count(self, s: np.ndarray) -> int:
        """Released edges with both ends in s (ordered pairs if directed)."""
        return self._rows_into(s, self._mask(s))

    def degrees(self) -> np.ndarray:
        """Released degree of every node (out-degree if directed)."""
        deg = self._row_lengths().astype(np.int64)
        if not self.directed:
            deg += np.bincount(self.indices, minlength=self.n)
        return deg

    def edge_array(self) -> tuple[np.ndarray, np.ndarray]:
        """Positions (rows, cols) of every stored pair, row-major."""
        rows = np.repeat(np.arange(self.n, dtype=np.int64), self._row_lengths())
        return rows, self.indices.astype(np.int64)

    def matmat(self, X: np.ndarray, transpose: bool = False) -> np.ndarray:
        """A @ X for the released 0/1 adjacency A (A^T @ X with ``transpose``; symmetric if undirected).

        Two sparse products with the stored CSR rows (U X + U^T X for an
        undirected release): O(stored pairs * k) time, no n x n array.

        Examples
        --------
        >>> A = SparseAdjacency.from_pairs(np.array([0, 0]), np.array([1, 2]), 3, False)
        >>> A.matmat(np.eye(3)).astype(int).tolist()
        [[0, 1, 1], [1, 0, 0], [1, 0, 0]]
        """
        from scipy.sparse import csr_array

        X, vector = _as_block(X, self.n)
        U = csr_array((np.ones(self.indices.size, dtype=X.dtype), self.indices, self.indptr),
                      shape=(self.n, self.n))
        if self.directed:
            out = (U.T @ X) if transpose else (U @ X)
        else:
            out = U @ X + U.T @ X
        out = np.asarray(out, dtype=X.dtype)
        return out[:, 0] if vector else out

    def row_blocks(self, block: int = 2048) -> Iterator[tuple[int, np.ndarray]]:
        """Yield (first row, bool block of shape (rows, n)) of the stored pairs.

        Dense blocks cost ``block * n`` bytes each; prefer :meth:`edge_array`
        for large sparse releases.
        """
        for i0 in range(0, self.n, block):
            i1 = min(self.n, i0 + block)
            out = np.zeros((i1 - i0, self.n), dtype=bool)
            a, b = self.indptr[i0], self.indptr[i1]
            r = np.repeat(np.arange(i1 - i0), self._row_lengths()[i0:i1])
            out[r, self.indices[a:b]] = True
            yield i0, out

    def __repr__(self) -> str:
        kind = "directed" if self.directed else "undirected"
        return f"SparseAdjacency({kind}, n={self.n}, stored_pairs={self.number_of_edges()})"
