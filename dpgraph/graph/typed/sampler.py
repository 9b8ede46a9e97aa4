"""Mechanism E on typed pairs: K-ary randomized response, in value bit planes.

A pair's released value is y = (x + S) mod K, where the shift S is drawn
independently of the data by the core's bit-sliced K-ary sampler
(:func:`~dpgraph.core.sampling.kary_words`): S = s with probability exactly
m / 2^64 for every s in 1..K-1 and S = 0 (the truth kept) with the rest, m
the certified flip numerator of :func:`~dpgraph.core.rr_probabilities` for K
values, so each other value is released with probability m / 2^64 whatever
x is: the certified K-ary pmf.

The noise is drawn for every pair as if it were "no tie" (y = S), in the
binary release's bands and groups (:func:`~dpgraph.graph.dense.sample_bands`);
only the true ties are then shifted by their value, a pass linear in the
edges like the binary release's XOR.  For K = 2 the shift is the binary
release's own flip sampler and the shift of a tie is the XOR: the release is
the binary release, bit for bit.

The value index is stored in ``value_bits(K)`` packed bit planes (plane k
holds bit k of each pair's value index, in the layout of
:mod:`dpgraph.graph.packed`).  The stream use depends on n and on the random
bits only, never on the data.
"""

from __future__ import annotations

import numpy as np

from ...core.probabilities import RRProbabilities
from ...core.randomness import RandomSource
from ...core.sampling import kary_words, value_bits
from .._memory import NODE_BYTES as _NODE_BYTES
from ..dense import _GROUP_WORDS, row_bands, sample_bands, sample_packed_flips
from ..encoding import EncodedGraph
from ..packed import clear_non_pairs, words_per_row, xor_edges
from .adjacency import TypedAdjacency

__all__ = ["release_typed", "sample_shift_planes", "typed_release_bytes"]


def sample_shift_planes(n: int, directed: bool, rr: RRProbabilities,
                        source: RandomSource) -> np.ndarray:
    """Bit planes of the shift S of every pair: 0 with probability 1 - (K-1) m / 2^64,
    else each of 1..K-1 with probability m / 2^64.

    K = 2 is the binary release's flip sampler (same schedule, same bits).
    Otherwise the pairs are visited in the binary release's bands (an
    undirected release draws nothing for the lower triangle), grouped so one
    call of :func:`~dpgraph.core.sampling.kary_words` samples at most 2^20 words.

    Returns
    -------
    numpy.ndarray of uint64, shape (value_bits(K), n, words_per_row(n))
        Bits that are not pairs are zero in every plane.

    Examples
    --------
    >>> from dpgraph.core import rr_probabilities
    >>> from dpgraph.core.randomness import SeededRandom
    >>> S = sample_shift_planes(200, False, rr_probabilities(0.5, 4), SeededRandom(0))
    >>> S.shape
    (2, 200, 4)
    """
    K = rr.K
    if K == 2:
        return sample_packed_flips(n, directed, rr.flip_numerator, source)[None]
    nw = words_per_row(n)
    B = value_bits(K)
    planes = np.zeros((B, n, nw), dtype=np.uint64)
    sample_bands(planes, row_bands(n, nw, directed), nw, lambda total: kary_words(total, rr, source))
    for b in range(B):
        clear_non_pairs(planes[b], n, directed)
    return planes


_SHIFT_KERNEL: dict = {}


def _shift_kernel():
    """The numba kernel of :func:`_shift_ties`, or None (numpy, the same planes)."""
    if "kernel" not in _SHIFT_KERNEL:
        from ..._numba import load_kernels

        loaded = load_kernels("dpgraph.graph.typed._shiftkernel", ("shift_ties",))
        _SHIFT_KERNEL["kernel"] = None if loaded is None else loaded[0]
    return _SHIFT_KERNEL["kernel"]


def _shift_ties(planes: np.ndarray, rows: np.ndarray, cols: np.ndarray, values: np.ndarray,
                K: int) -> None:
    """Replace the released value S at every true tie by (x + S) mod K, in place.

    One pass over the ties, linear in m like the binary release's XOR.
    """
    if rows.size == 0:
        return
    nw = planes.shape[2]
    kernel = _shift_kernel()
    if kernel is not None:
        kernel(planes.reshape(planes.shape[0], -1), nw, np.asarray(rows, dtype=np.int64),
               np.asarray(cols, dtype=np.int64), np.asarray(values, dtype=np.int64), int(K))
        return
    flat = rows.astype(np.int64) * nw + (cols >> 6)
    shift = (cols & 63).astype(np.uint64)
    bit = np.left_shift(np.uint64(1), shift)
    S = np.zeros(rows.size, dtype=np.int64)
    views = planes.reshape(planes.shape[0], -1)
    for k in range(planes.shape[0]):
        S |= ((views[k, flat] >> shift) & np.uint64(1)).astype(np.int64) << k
    change = ((values + S) % K) ^ S  # bits of the stored value that must toggle
    for k in range(planes.shape[0]):
        on = ((change >> k) & 1).astype(bool)
        # positions are distinct (words may repeat): one unbuffered XOR pass, like xor_edges
        np.bitwise_xor.at(views[k], flat[on], bit[on])


def typed_release_bytes(n: int, K: int) -> int:
    """Memory a typed release of ``n`` nodes and ``K`` values needs: public quantities only.

    Its value bit planes and two planes of work (the shift of the ties),
    one group of sampled words and the sampler's scratch, and the encoded
    input's node table; checked by the release before its ledger is
    charged, never by the sampler after.

    Examples
    --------
    >>> typed_release_bytes(10_000, 3) > 2 * 10_000 * 157 * 8
    True
    """
    n = int(n)
    return ((value_bits(K) + 2) * n * words_per_row(n) * 8 + 12 * 8 * _GROUP_WORDS
            + _NODE_BYTES * n)


def release_typed(enc: EncodedGraph, values: np.ndarray, rr: RRProbabilities,
                  source: RandomSource) -> TypedAdjacency:
    """K-ary randomized response on every pair of ``enc``, ties valued ``values``.

    Parameters
    ----------
    enc : EncodedGraph
        The validated input (positions of the ties).
    values : numpy.ndarray of int
        Value index 1..K-1 of every tie of ``enc``.
    rr : RRProbabilities
        Certified probabilities for K = ``rr.K`` values.
    source : RandomSource

    Returns
    -------
    TypedAdjacency

    The memory is not checked here, after a charge: the release checks
    :func:`typed_release_bytes` before it.

    Examples
    --------
    >>> import networkx as nx
    >>> from dpgraph.graph.encoding import encode_graph
    >>> from dpgraph.core import rr_probabilities
    >>> from dpgraph.core.randomness import SeededRandom
    >>> enc = encode_graph(nx.path_graph(100))
    >>> adj = release_typed(enc, np.ones(99, dtype=int), rr_probabilities(2.0, 3), SeededRandom(0))
    >>> adj.K, adj.nbytes
    (3, 3200)
    """
    n, directed, K = enc.n, enc.directed, rr.K
    planes = sample_shift_planes(n, directed, rr, source)
    if K == 2:  # (1 + S) mod 2 is the XOR: the binary release's own step
        xor_edges(planes[0], enc.rows, enc.cols)
    else:
        _shift_ties(planes, enc.rows, enc.cols, np.asarray(values, dtype=np.int64), K)
    return TypedAdjacency(planes, n, directed, K)
