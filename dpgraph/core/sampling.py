"""Exact samplers driven by uniform 64-bit words.

A word u is uniform on {0, ..., 2^64 - 1}, so ``u < m`` has probability exactly
m / 2^64: no floating point touches the privacy-critical comparison.
"""

from __future__ import annotations

import numpy as np

from .probabilities import RRProbabilities
from .randomness import RandomSource

__all__ = ["flip_mask", "rr_sample"]


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
    u = source.uint64(x.size).reshape(x.shape)
    m = np.uint64(rr.move_numerator)
    moved = u < np.uint64((rr.K - 1) * rr.move_numerator)
    j = (u // m).astype(np.intp)  # only meaningful where moved
    target = j + (j >= x)
    return np.where(moved, target, x)
