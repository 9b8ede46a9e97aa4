"""Mechanism E on typed pairs: K-ary randomized response, bit-sliced into value planes.

A pair's released value is y = (x + S) mod K, where the shift S is drawn
independently of the data:

* S = 0 (the truth is kept) unless the pair flips; it flips with the certified
  dyadic probability (K - 1) m / 2^64 (``m`` the flip numerator of
  :func:`~dpgraph.core.rr_probabilities` for K values), drawn by
  :func:`~dpgraph.graph.dense.sample_packed_flips`, the binary release's own
  bit-sliced sampler and schedule;
* given a flip, S is uniform on 1..K-1: S = U + 1 with U uniform on 0..K-2,
  from ceil(log2(K - 1)) uniform bits per pair, redrawn (bit-sliced, only in
  the lanes that need it) when U > K - 2.

So each other value is released with probability exactly
(K - 1) m / 2^64 / (K - 1) = m / 2^64 and the truth with 1 - (K - 1) m / 2^64:
the certified K-ary pmf, whatever x is.  The noise is drawn for every pair
as if it were "no tie" (y = S); only the true ties are then shifted by their
value, a pass linear in the edges like the binary release's XOR.  For K = 2
the flips are drawn with the binary numerator, S is the flip bit and the
shift is the XOR: the release is the binary release, bit for bit.

The value index is stored in ``value_bits(K)`` packed bit planes (plane k
holds bit k of each pair's value index, in the layout of
:mod:`dpgraph.graph.packed`).  The stream use depends on n and on the random
bits only, never on the data.
"""

from __future__ import annotations

import numpy as np

from ...core.probabilities import RRProbabilities
from ...core.randomness import RandomSource
from .._memory import check_fits
from ..dense import sample_packed_flips
from ..encoding import EncodedGraph
from ..packed import words_per_row, xor_edges
from .adjacency import TypedAdjacency
from .encoding import value_bits

__all__ = ["release_typed", "sample_shift_planes"]

_GROUP_WORDS = 1 << 20  # flip words per group of shift draws; fixed, part of the seed contract
_ALL = np.uint64(0xFFFFFFFFFFFFFFFF)


def _at_least(U: np.ndarray, c: int) -> np.ndarray:
    """Lanes where the b-bit number with bit planes U[0..b-1] is >= c (bit-sliced)."""
    b = U.shape[0]
    if c >= 1 << b:
        return np.zeros(U.shape[1:], dtype=np.uint64)
    gt = np.zeros(U.shape[1:], dtype=np.uint64)
    eq = np.full(U.shape[1:], _ALL)
    for k in range(b - 1, -1, -1):
        if (c >> k) & 1:
            eq &= U[k]
        else:
            gt |= eq & U[k]
            eq &= ~U[k]
    return gt | eq


def _uniform_offsets(flips: np.ndarray, K: int, source: RandomSource) -> np.ndarray:
    """Bit planes (b, len(flips)) of U uniform on 0..K-2 in every lane (exact, by rejection)."""
    b = (K - 2).bit_length()
    U = source.uint64(b * flips.size).reshape(b, flips.size)
    need = flips & _at_least(U, K - 1)
    alive = np.flatnonzero(need)
    while alive.size:
        lanes = need[alive]
        fresh = source.uint64(b * alive.size).reshape(b, alive.size)
        U[:, alive] = (U[:, alive] & ~lanes) | (fresh & lanes)
        need[alive] = lanes & _at_least(U[:, alive], K - 1)
        alive = alive[need[alive] != 0]
    return U


def sample_shift_planes(n: int, directed: bool, rr: RRProbabilities,
                        source: RandomSource) -> np.ndarray:
    """Bit planes of the shift S of every pair: 0 with probability 1 - (K-1) m / 2^64,
    else uniform on 1..K-1.

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
    flips = sample_packed_flips(n, directed, (K - 1) * rr.flip_numerator, source)
    if K == 2:
        return flips[None]
    B = value_bits(K)
    planes = np.zeros((B, *flips.shape), dtype=np.uint64)
    flat = flips.reshape(-1)
    views = planes.reshape(B, -1)
    for g0 in range(0, flat.size, _GROUP_WORDS):
        f = flat[g0 : g0 + _GROUP_WORDS]
        idx = np.flatnonzero(f)
        if idx.size == 0:
            continue
        fi = f[idx]
        U = _uniform_offsets(fi, K, source)
        carry = np.full(idx.size, _ALL)  # S = U + 1, a bit-sliced increment
        for k in range(B):
            u = U[k] if k < U.shape[0] else np.zeros(idx.size, dtype=np.uint64)
            views[k, g0 + idx] = (u ^ carry) & fi
            carry = u & carry
    return planes


def _shift_ties(planes: np.ndarray, rows: np.ndarray, cols: np.ndarray, values: np.ndarray,
                K: int) -> None:
    """Replace the released value S at every true tie by (x + S) mod K, in place."""
    if rows.size == 0:
        return
    nw = planes.shape[2]
    flat = rows.astype(np.int64) * nw + (cols >> 6)
    shift = (cols & 63).astype(np.uint64)
    bit = np.left_shift(np.uint64(1), shift)
    S = np.zeros(rows.size, dtype=np.int64)
    views = planes.reshape(planes.shape[0], -1)
    for k in range(planes.shape[0]):
        S |= ((views[k, flat] >> shift) & np.uint64(1)).astype(np.int64) << k
    y = (values + S) % K
    for k in range(planes.shape[0]):
        np.bitwise_and.at(views[k], flat, ~bit)  # positions are distinct, words may repeat
        on = ((y >> k) & 1).astype(bool)
        np.bitwise_or.at(views[k], flat[on], bit[on])


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
    nw = words_per_row(n)
    B = value_bits(K)
    check_fits((B + 2) * n * nw * 8 + 12 * 8 * _GROUP_WORDS,
               f"a typed release of {n} nodes with K={K} values")
    planes = sample_shift_planes(n, directed, rr, source)
    if K == 2:  # (1 + S) mod 2 is the XOR: the binary release's own step
        xor_edges(planes[0], enc.rows, enc.cols)
    else:
        _shift_ties(planes, enc.rows, enc.cols, np.asarray(values, dtype=np.int64), K)
    return TypedAdjacency(planes, n, directed, K)
