"""Exact samplers driven by uniform 64-bit words.

A word u is uniform on {0, ..., 2^64 - 1}, so ``u < m`` has probability exactly
m / 2^64: no floating point touches the privacy-critical comparison.
"""

from __future__ import annotations

import numpy as np

from .probabilities import RRProbabilities
from .randomness import RandomSource

__all__ = ["flip_mask", "rr_sample", "bernoulli_words"]


def flip_mask(n: int, numerator: int, source: RandomSource) -> np.ndarray:
    """Independent Bernoulli(numerator / 2^64) draws.

    Parameters
    ----------
    n : int
        Number of draws.
    numerator : int
        0 <= numerator <= 2^64 - 1.
    source : RandomSource

    Returns
    -------
    numpy.ndarray of bool, shape (n,)

    Examples
    --------
    >>> from dpgraph.core.randomness import SeededRandom
    >>> flip_mask(5, 0, SeededRandom(1)).tolist()
    [False, False, False, False, False]
    """
    if not 0 <= int(numerator) < 1 << 64:
        raise ValueError("numerator must lie in [0, 2^64)")
    return source.uint64(n) < np.uint64(numerator)


def rr_sample(indices: np.ndarray, rr: RRProbabilities, source: RandomSource) -> np.ndarray:
    """K-ary randomized response on value indices, one 64-bit word a row.

    With u uniform on [0, 2^64) and m the certified move numerator, the row
    moves iff u < (K-1) m; it then moves to the j-th other value with
    j = u // m, which is uniform on 0..K-2 given a move.  So each other value
    has probability exactly m / 2^64 and the true value keeps the rest.

    Parameters
    ----------
    indices : numpy.ndarray of int
        True value indices in 0..K-1.
    rr : RRProbabilities
    source : RandomSource

    Returns
    -------
    numpy.ndarray of intp, same shape as ``indices``
    """
    x = np.asarray(indices, dtype=np.intp)
    K = rr.K
    # j = u // m < K - 1 exactly when u < (K-1) m; clamp "no move" to K - 1
    j = source.uint64(x.size).reshape(x.shape)
    np.floor_divide(j, np.uint64(rr.move_numerator), out=j)
    np.minimum(j, np.uint64(K - 1), out=j)
    flat = j.view(np.int64)  # values 0..K-1: the same bits as int64
    flat += x * K
    # outcome[x, j]: the j-th value other than x, or x itself for j = K - 1
    others = np.arange(K - 1)
    outcome = np.empty((K, K), dtype=np.intp)
    outcome[:, : K - 1] = others + (others[None, :] >= np.arange(K)[:, None])
    outcome[:, K - 1] = np.arange(K)
    return np.take(outcome.ravel(), flat)


def _dense_rounds_numpy(draws: np.ndarray, bits: list, out: np.ndarray) -> np.ndarray:
    """First rounds of the bit-sliced comparison for every word; returns the open lanes."""
    und = np.full(out.size, np.uint64(0xFFFFFFFFFFFFFFFF))
    tmp = np.empty(out.size, dtype=np.uint64)
    for k in range(draws.shape[0]):
        np.invert(draws[k], out=tmp)
        if bits[k]:  # lanes whose U-bit is 0 (< numerator's 1) are decided 1
            tmp &= und
            out |= tmp
            und &= draws[k]
        else:  # lanes whose U-bit is 1 (> numerator's 0) are decided 0
            und &= tmp
    return und


# numba earns its place here once the random words come fast (AES-CTR with
# AES-NI): the numpy rounds make ~4 passes over temporaries per round plus a
# separate compaction pass, the kernels in ._samplekernel one fused pass.  Same
# words, same order, same results: a seed gives identical bits either way (and
# DPGRAPH_DISABLE_NUMBA=1 forces the numpy path).  numba is loaded on first use.
_KERNELS: tuple | None = None
_NUMBA_STATE = {"tried": False}


def _numba_kernels():
    """(dense_rounds, sparse_round) compiled by numba, or None without numba."""
    global _KERNELS
    if _KERNELS is None and not _NUMBA_STATE["tried"]:
        _NUMBA_STATE["tried"] = True
        from .._numba import load_kernels

        _KERNELS = load_kernels("dpgraph.core._samplekernel", ("dense_rounds", "sparse_round"))
    return _KERNELS


_ALL_ONES = 0xFFFFFFFFFFFFFFFF
_DENSE_ROUNDS = 8  # rounds drawn for every word before compacting the undecided ones
_CHUNK_WORDS = 1 << 15  # output words per chunk: fixed, so the stream use never depends on the machine


def bernoulli_words(n_words: int, numerator: int, source: RandomSource,
                    out: np.ndarray | None = None) -> np.ndarray:
    """``n_words`` words of 64 independent Bernoulli(numerator / 2^64) bits each.

    Bit-sliced comparison: each of the 64 lanes of a word compares its own
    uniform 64-bit integer U with ``numerator`` most significant bit first,
    one random word supplying one bit of U for all 64 lanes.  A lane is
    decided at the first bit where U and the numerator differ (U < numerator
    gives a 1), so each random word settles about half of the lanes still
    open and a word needs about log2(64) + 2 random words instead of 64.
    Every lane is therefore 1 with probability exactly numerator / 2^64: a lane
    that matches the numerator on all 64 bits has U == numerator and gives 0.

    Schedule (fixed, so a seed gives the same words on every machine): the
    output is cut into chunks of 2^15 words; for each chunk, the first 8
    rounds (bits 63..56) are drawn for every word in one call, then the words
    with lanes still open (about 22 %, falling by half a round) are compacted
    and each further round draws one word per open word, until none is open.

    Parameters
    ----------
    n_words : int
        Number of 64-bit output words (64 draws each).
    numerator : int
        In [0, 2^64): P(bit = 1) = numerator / 2^64 exactly.
    source : RandomSource
        Uniform 64-bit words (``source.uint64(k)``).
    out : numpy.ndarray of uint64, shape (n_words,), optional
        Contiguous array to write the words into (its contents are replaced),
        e.g. a scratch buffer reused across calls.

    Returns
    -------
    numpy.ndarray of uint64, shape (n_words,)
        ``out`` when given.

    Examples
    --------
    >>> from dpgraph.core.randomness import SeededRandom
    >>> w = bernoulli_words(10_000, 1 << 62, SeededRandom(0))   # p = 1/4
    >>> bits = np.unpackbits(w.view(np.uint8)).mean()
    >>> bool(abs(bits - 0.25) < 0.005)
    True
    """
    numerator = int(numerator)
    if not 0 <= numerator < 1 << 64:
        raise ValueError("numerator must lie in [0, 2^64)")
    n_words = int(n_words)
    if n_words < 0:
        raise ValueError("n_words must be >= 0")
    if out is None:
        result = np.zeros(n_words, dtype=np.uint64)
    else:
        if (not isinstance(out, np.ndarray) or out.dtype != np.uint64 or out.shape != (n_words,)
                or not out.flags.c_contiguous):
            raise ValueError(f"out must be a contiguous uint64 array of shape ({n_words},)")
        result = out
        result[...] = 0
    if numerator == 0 or n_words == 0:
        return result
    bits = [(numerator >> b) & 1 for b in range(63, -1, -1)]
    kernels = _numba_kernels()
    chunk = _bernoulli_chunk if kernels is None else _bernoulli_chunk_numba
    for start in range(0, n_words, _CHUNK_WORDS):
        chunk(result[start : start + _CHUNK_WORDS], bits, source)
    return result


def _bernoulli_chunk_numba(out: np.ndarray, bits: list, source: RandomSource) -> None:
    """:func:`_bernoulli_chunk` with the rounds in numba: same draws, same words."""
    dense_rounds, sparse_round = _numba_kernels()
    c = out.size
    masks = np.array([_ALL_ONES if b else 0 for b in bits], dtype=np.uint64)
    draws = source.uint64(_DENSE_ROUNDS * c).reshape(_DENSE_ROUNDS, c)
    alive = np.empty(c, dtype=np.int64)
    und = np.empty(c, dtype=np.uint64)
    count = dense_rounds(draws, masks[:_DENSE_ROUNDS], out, alive, und)
    k = _DENSE_ROUNDS
    while count and k < 64:  # lanes equal to the numerator on all 64 bits stay 0
        count = sparse_round(out, alive, und, source.uint64(count), masks[k], count)
        k += 1


def _bernoulli_chunk(out: np.ndarray, bits: list, source: RandomSource) -> None:
    """Fill ``out`` (a view) with bit-sliced Bernoulli words; see bernoulli_words."""
    c = out.size
    dense = _DENSE_ROUNDS
    draws = source.uint64(dense * c).reshape(dense, c)
    und = _dense_rounds_numpy(draws, bits, out)
    alive = np.flatnonzero(und)
    if alive.size == 0:
        return
    und = und[alive]
    acc = np.zeros(alive.size, dtype=np.uint64)
    for k in range(dense, 64):
        r = source.uint64(alive.size)
        if bits[k]:
            acc |= und & ~r
            und &= r
        else:
            und &= ~r
        keep = und != 0
        if not keep.all():
            out[alive] |= acc
            alive, und = alive[keep], und[keep]
            acc = np.zeros(alive.size, dtype=np.uint64)
            if alive.size == 0:
                return
    out[alive] |= acc  # lanes equal to the numerator on all 64 bits stay 0
