"""Mechanism E on typed pairs: K-ary randomized response, bit-sliced into value planes.

A pair's released value is y = (x + S) mod K, where the shift S is drawn
independently of the data:

* with U a uniform 64-bit integer per pair and m the certified flip numerator
  of :func:`~dpgraph.core.rr_probabilities` for K values,
  S = #{j in 1..K-1 : U < j m}.  So S = s with probability exactly m / 2^64
  for every s in 1..K-1, and S = 0 (the truth kept) with the rest,
  1 - (K - 1) m / 2^64: each other value is released with probability
  m / 2^64 whatever x is, the certified K-ary pmf.
* U is compared with all K - 1 thresholds at once by the bit-sliced
  comparison of the binary sampler (:func:`~dpgraph.core.sampling.bernoulli_words`):
  64 pairs a word, U's bits drawn most significant first, a pair decided
  against a threshold at the first bit where they differ; about the same
  number of random words as one binary flip per pair.

The noise is drawn for every pair as if it were "no tie" (y = S); only the
true ties are then shifted by their value, a pass linear in the edges like
the binary release's XOR.  For K = 2 the shift is the binary release's own
flip sampler and the shift of a tie is the XOR: the release is the binary
release, bit for bit.

The value index is stored in ``value_bits(K)`` packed bit planes (plane k
holds bit k of each pair's value index, in the layout of
:mod:`dpgraph.graph.packed`).  The stream use depends on n and on the random
bits only, never on the data.
"""

from __future__ import annotations

from functools import lru_cache

import numpy as np

from ...core.probabilities import RRProbabilities
from ...core.randomness import RandomSource
from .._memory import check_fits
from ..dense import sample_packed_flips
from ..encoding import EncodedGraph
from ..packed import clear_non_pairs, words_per_row, xor_edges
from .adjacency import TypedAdjacency
from .encoding import value_bits

__all__ = ["kary_words", "release_typed", "sample_shift_planes"]

_GROUP_WORDS = 1 << 20  # words sampled per group of bands; fixed, part of the seed contract
_CHUNK_WORDS = 1 << 15  # words per chunk of the bit-sliced rounds; fixed, part of the seed contract
_DENSE_ROUNDS = 10  # rounds drawn for every word of a chunk before compacting the open ones
_ALL = 0xFFFFFFFFFFFFFFFF

_KERNELS: tuple | None = None
_NUMBA_STATE = {"tried": False}


def _numba_kernels() -> tuple | None:
    """(dense_rounds_one, compact, sparse_round, count_planes) compiled by numba, or None.

    Without them the numpy rounds give the same results.
    """
    global _KERNELS
    if _KERNELS is None and not _NUMBA_STATE["tried"]:
        _NUMBA_STATE["tried"] = True
        from ..._numba import load_kernels

        _KERNELS = load_kernels("dpgraph.graph.typed._karykernel",
                                ("dense_rounds_one", "compact", "sparse_round", "count_planes"))
    return _KERNELS


@lru_cache(maxsize=64)
def _thresholds(numerator: int, K: int) -> np.ndarray:
    """tbits of the thresholds j m, j = 1..K-1 (cached: public, fixed by epsilon and K)."""
    bits = _threshold_bits([j * numerator for j in range(1, K)])
    bits.flags.writeable = False
    return bits


def _threshold_bits(thresholds: list[int]) -> np.ndarray:
    """tbits[k, j]: bit 63 - k of threshold j, as 0 or all ones (uint64, shape (64, J))."""
    return np.array([[_ALL if (t >> (63 - k)) & 1 else 0 for t in thresholds] for k in range(64)],
                    dtype=np.uint64)


def _rounds_numpy(lt: np.ndarray, und: np.ndarray, draws: np.ndarray, tbits: np.ndarray) -> np.ndarray:
    """The dense rounds of :mod:`._karykernel` in numpy; returns the open words."""
    lt[...] = 0
    und[...] = np.uint64(_ALL)
    for k in range(draws.shape[0]):
        d = draws[k]
        for j in range(lt.shape[0]):
            b = tbits[k, j]
            u = und[j]
            lt[j] |= ~d & u & b
            u &= ~(d ^ b)
    return np.flatnonzero(np.bitwise_or.reduce(und, axis=0))


def _kary_chunk(c: int, tbits: np.ndarray, source: RandomSource) -> np.ndarray:
    """lt (J, c): lanes whose uniform 64-bit integer U is below each threshold t_j.

    Bit-sliced comparison of every lane's U with all thresholds at once, most
    significant bit first, one random word supplying one bit of U for the 64
    lanes of a word: a lane is decided against t_j at the first bit where they
    differ.  Schedule (fixed): ``_DENSE_ROUNDS`` rounds for every word, then
    one word per word with an open lane, until none is open (a lane equal to
    t_j on all 64 bits has U == t_j, not below it).
    """
    J = tbits.shape[1]
    lt = np.empty((J, c), dtype=np.uint64)
    und = np.empty((J, c), dtype=np.uint64)
    draws = source.uint64(_DENSE_ROUNDS * c).reshape(_DENSE_ROUNDS, c)
    kernels = _numba_kernels()
    if kernels is not None:
        dense_one, compact, sparse, _ = kernels
        for j in range(J):  # one threshold at a time: contiguous rows, vectorized
            dense_one(draws, np.ascontiguousarray(tbits[:_DENSE_ROUNDS, j]), lt[j], und[j])
        alive = np.empty(c, dtype=np.int64)
        open_und = np.empty((c, J), dtype=np.uint64)
        count = compact(und, alive, open_und)
        k = _DENSE_ROUNDS
        while count and k < 64:
            count = sparse(lt, open_und, alive, source.uint64(count), tbits[k], count)
            k += 1
        return lt
    alive = _rounds_numpy(lt, und, draws, tbits)
    k = _DENSE_ROUNDS
    while alive.size and k < 64:
        d = source.uint64(alive.size)
        still = np.zeros(alive.size, dtype=np.uint64)
        for j in range(J):
            b = tbits[k, j]
            u = und[j, alive]
            lt[j, alive] |= ~d & u & b
            u &= ~(d ^ b)
            und[j, alive] = u
            still |= u
        alive = alive[still != 0]
        k += 1
    return lt


def kary_words(n_words: int, rr: RRProbabilities, source: RandomSource) -> np.ndarray:
    """Bit planes (value_bits(K), n_words) of the shift S of 64 n_words pairs.

    S = #{j in 1..K-1 : U < j m} for a uniform 64-bit U per lane, m the
    certified flip numerator: P(S = s) = m / 2^64 exactly for s = 1..K-1 (U in
    [(K-1-s) m, (K-s) m)) and S = 0 otherwise.  Chunks of 2^15 words.

    Examples
    --------
    >>> from dpgraph.core import rr_probabilities
    >>> from dpgraph.core.randomness import SeededRandom
    >>> S = kary_words(20_000, rr_probabilities(1.0, 4), SeededRandom(0))
    >>> bits = np.unpackbits(S.view(np.uint8), axis=1, bitorder="little")
    >>> values = bits[0] + 2 * bits[1]
    >>> [bool(abs(np.mean(values == s) - 0.1749) < 0.002) for s in (1, 2, 3)]
    [True, True, True]
    """
    K = rr.K
    B = value_bits(K)
    tbits = _thresholds(rr.flip_numerator, K)
    out = np.zeros((B, int(n_words)), dtype=np.uint64)
    for a in range(0, int(n_words), _CHUNK_WORDS):
        c = min(_CHUNK_WORDS, int(n_words) - a)
        lt = _kary_chunk(c, tbits, source)
        S = out[:, a : a + c]
        kernels = _numba_kernels()
        if kernels is not None:
            buf = np.zeros((B, c), dtype=np.uint64)  # contiguous rows: the counter vectorizes
            kernels[3](lt, buf)
            S[...] = buf
            continue
        for j in range(lt.shape[0]):  # bit-sliced counter: S += [U < t_j]
            carry = lt[j]
            for k in range(B):
                nxt = S[k] & carry
                S[k] ^= carry
                carry = nxt
    return out


def sample_shift_planes(n: int, directed: bool, rr: RRProbabilities,
                        source: RandomSource) -> np.ndarray:
    """Bit planes of the shift S of every pair: 0 with probability 1 - (K-1) m / 2^64,
    else each of 1..K-1 with probability m / 2^64.

    K = 2 is the binary release's flip sampler (same schedule, same bits).
    Otherwise the pairs are visited in the binary release's bands (an
    undirected release draws nothing for the lower triangle), grouped so one
    call of :func:`kary_words` samples at most 2^20 words.

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
    bands = [(r0, min(n, r0 + 64), 0 if directed else r0 >> 6) for r0 in range(0, n, 64)]
    k = 0
    while k < len(bands):
        group, total = [], 0
        while k < len(bands):
            r0, r1, w0 = bands[k]
            size = (r1 - r0) * (nw - w0)
            if group and total + size > _GROUP_WORDS:
                break
            group.append(bands[k])
            total += size
            k += 1
        S = kary_words(total, rr, source)
        off = 0
        for r0, r1, w0 in group:
            size = (r1 - r0) * (nw - w0)
            planes[:, r0:r1, w0:] = S[:, off : off + size].reshape(B, r1 - r0, nw - w0)
            off += size
    for b in range(B):
        clear_non_pairs(planes[b], n, directed)
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
    change = ((values + S) % K) ^ S  # bits of the stored value that must toggle
    for k in range(planes.shape[0]):
        on = ((change >> k) & 1).astype(bool)
        # positions are distinct (words may repeat): one unbuffered XOR pass, like xor_edges
        np.bitwise_xor.at(views[k], flat[on], bit[on])


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
