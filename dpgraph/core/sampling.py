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


def bernoulli_words(n_words: int, numerator: int, source: RandomSource) -> np.ndarray:
    """``n_words`` words of 64 independent Bernoulli(numerator / 2^64) bits each.

    Bit-sliced comparison: each of the 64 lanes of a word compares its own
    uniform 64-bit integer U with ``numerator`` most significant bit first,
    one random word supplying one bit of U for all 64 lanes.  A lane is
    decided at the first bit where U and the numerator differ (U < numerator
    gives a 1), so each random word settles about half of the lanes still
    open and a word needs about log2(64) + 2 random words instead of 64.
    Words whose lanes are all decided drop out (compaction), and a lane that
    matches the numerator on all 64 bits has U == numerator, which gives 0.
    Every lane is therefore 1 with probability exactly numerator / 2^64.

    Parameters
    ----------
    n_words : int
    numerator : int
        In [0, 2^64).
    source : RandomSource

    Returns
    -------
    numpy.ndarray of uint64, shape (n_words,)

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
    result = np.zeros(n_words, dtype=np.uint64)
    if numerator == 0 or n_words == 0:
        return result
    open_lanes = np.full(n_words, np.uint64(0xFFFFFFFFFFFFFFFF))
    alive = np.arange(n_words)  # words with undecided lanes
    for bit in range(63, -1, -1):
        r = source.uint64(alive.size)
        und = open_lanes[alive]
        if (numerator >> bit) & 1:
            # U's bit is 0 where the numerator's is 1: U < numerator, decided 1
            result[alive] |= und & ~r
            und &= r
        else:
            # U's bit is 1 where the numerator's is 0: U > numerator, decided 0
            und &= ~r
        keep = und != 0
        open_lanes[alive] = und
        alive = alive[keep]
        if alive.size == 0:
            break
    return result
