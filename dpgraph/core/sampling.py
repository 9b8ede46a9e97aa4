"""Exact samplers driven by uniform 64-bit words.

A word u is uniform on {0, ..., 2^64 - 1}, so ``u < m`` has probability exactly
m / 2^64: no floating point touches the privacy-critical comparison.  The
geometric sampler (:func:`geometric`, :func:`bernoulli_positions`) handles
probabilities that are not dyadic with 64 bits (products like s p') exactly
too, with floating point only as a certified shortcut.
"""

from __future__ import annotations

import math
from collections.abc import Iterator
from decimal import Context, Decimal
from fractions import Fraction
from functools import lru_cache

import numpy as np

from .probabilities import RRProbabilities
from .randomness import RandomSource

__all__ = [
    "EXACT_MARGIN",
    "bernoulli_positions",
    "bernoulli_words",
    "geometric",
    "kary_words",
    "rr_sample",
    "uniform_integers",
    "value_bits",
]


def rr_sample(indices: np.ndarray, rr: RRProbabilities, source: RandomSource) -> np.ndarray:
    """K-ary randomized response on value indices, one 64-bit word a row.

    With u uniform on [0, 2^64) and m the certified flip numerator, the row
    flips iff u < (K-1) m; it then flips to the j-th other value with
    j = u // m, which is uniform on 0..K-2 given a flip.  So each other value
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
    # j = u // m < K - 1 exactly when u < (K-1) m; clamp "no flip" to K - 1
    j = source.uint64(x.size).reshape(x.shape)
    np.floor_divide(j, np.uint64(rr.flip_numerator), out=j)
    np.minimum(j, np.uint64(K - 1), out=j)
    flat = j.view(np.int64)  # values 0..K-1: the same bits as int64
    flat += x * K
    # outcome[x, j]: the j-th value other than x, or x itself for j = K - 1
    others = np.arange(K - 1)
    outcome = np.empty((K, K), dtype=np.intp)
    outcome[:, : K - 1] = others + (others[None, :] >= np.arange(K)[:, None])
    outcome[:, K - 1] = np.arange(K)
    return np.take(outcome.ravel(), flat)


def uniform_integers(count: int, b: int, source: RandomSource) -> np.ndarray:
    """``count`` independent integers uniform on 0..b-1, exactly (1 <= b < 2^32).

    A word u is accepted when u < b floor(2^64 / b) (then u mod b is exactly
    uniform) and redrawn otherwise, with probability below b / 2^64.

    Examples
    --------
    >>> from dpgraph.core.randomness import SeededRandom
    >>> x = uniform_integers(30_000, 3, SeededRandom(0))
    >>> sorted(set(x.tolist())), bool(abs(np.mean(x == 2) - 1 / 3) < 0.011)
    ([0, 1, 2], True)
    """
    count, b = int(count), int(b)
    if not 1 <= b < 1 << 32 or count < 0:
        raise ValueError("b must lie in 1..2^32 - 1 and count be >= 0")
    out = np.zeros(count, dtype=np.int64)
    if b == 1:
        return out
    limit = b * ((1 << 64) // b)  # 2^64 when b is a power of two: every word is accepted
    todo = np.arange(count)
    while todo.size:
        u = source.uint64(todo.size)
        ok = np.ones(u.size, dtype=bool) if limit == 1 << 64 else u < np.uint64(limit)
        out[todo[ok]] = (u[ok] % np.uint64(b)).astype(np.int64)
        todo = todo[~ok]
    return out


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
    """(dense_rounds, sparse_round, kary_dense_rounds, kary_sparse_round, count_planes)
    compiled by numba, or None without numba."""
    global _KERNELS
    if _KERNELS is None and not _NUMBA_STATE["tried"]:
        _NUMBA_STATE["tried"] = True
        from .._numba import load_kernels

        _KERNELS = load_kernels("dpgraph.core._samplekernel", (
            "dense_rounds", "sparse_round", "kary_dense_rounds", "kary_sparse_round",
            "count_planes"))
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
    dense_rounds, sparse_round = _numba_kernels()[:2]
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


# ---------------------------------------------------------------------------
# K-ary shifts, bit-sliced: the comparison above against K - 1 thresholds
#
# A K-ary randomized response moves a value x to (x + S) mod K with a shift S
# independent of the data: S = #{j in 1..K-1 : U < j m} for a uniform 64-bit
# U and the certified flip numerator m, so S = s with probability exactly
# m / 2^64 for every s in 1..K-1 (U in [(K-1-s) m, (K-s) m)) and S = 0 with
# the rest.  U is compared with the K - 1 thresholds j m at once by the
# bit-sliced rounds of bernoulli_words, 64 lanes a word, all thresholds
# reading the same random words.
# ---------------------------------------------------------------------------
_KARY_DENSE_ROUNDS = 10  # rounds drawn for every word of a chunk (K > 2); part of the seed contract


def value_bits(K: int) -> int:
    """Bits needed to store a value index 0..K-1: ceil(log2 K), at least 1.

    Examples
    --------
    >>> value_bits(2), value_bits(3), value_bits(4), value_bits(5)
    (1, 2, 2, 3)
    """
    return max(1, (int(K) - 1).bit_length())


@lru_cache(maxsize=64)
def _threshold_bits(numerator: int, K: int) -> np.ndarray:
    """tbits[j, k]: bit 63 - k of the threshold (j + 1) m as 0 or all ones, uint64 (K - 1, 64).

    Cached and read-only: public, fixed by epsilon and K.
    """
    bits = np.array([[_ALL_ONES if ((j * numerator) >> (63 - k)) & 1 else 0 for k in range(64)]
                     for j in range(1, K)], dtype=np.uint64)
    bits.flags.writeable = False
    return bits


def _kary_chunk_numpy(c: int, tbits: np.ndarray, source: RandomSource) -> np.ndarray:
    """lt (J, c): the lanes whose U is below each threshold, with numpy rounds."""
    J = tbits.shape[0]
    draws = source.uint64(_KARY_DENSE_ROUNDS * c).reshape(_KARY_DENSE_ROUNDS, c)
    lt = np.zeros((J, c), dtype=np.uint64)
    und = np.empty((J, c), dtype=np.uint64)
    for j in range(J):  # the binary sampler's first rounds, one threshold at a time
        und[j] = _dense_rounds_numpy(draws, [int(b) & 1 for b in tbits[j]], lt[j])
    alive = np.flatnonzero(np.bitwise_or.reduce(und, axis=0))
    k = _KARY_DENSE_ROUNDS
    while alive.size and k < 64:  # one word per open word, all thresholds at once
        d = source.uint64(alive.size)
        still = np.zeros(alive.size, dtype=np.uint64)
        for j in range(J):
            b = tbits[j, k]
            u = und[j, alive]
            lt[j, alive] |= ~d & u & b
            u &= ~(d ^ b)
            und[j, alive] = u
            still |= u
        alive = alive[still != 0]
        k += 1
    return lt


def _kary_chunk_numba(c: int, tbits: np.ndarray, source: RandomSource) -> np.ndarray:
    """:func:`_kary_chunk_numpy` with the rounds in numba: same draws, same lanes."""
    _, _, dense, sparse, _ = _numba_kernels()
    J = tbits.shape[0]
    draws = source.uint64(_KARY_DENSE_ROUNDS * c).reshape(_KARY_DENSE_ROUNDS, c)
    lt = np.empty((J, c), dtype=np.uint64)
    alive = np.empty(c, dtype=np.int64)
    open_und = np.empty((c, J), dtype=np.uint64)
    count = dense(draws, tbits, lt, alive, open_und)
    k = _KARY_DENSE_ROUNDS
    while count and k < 64:
        count = sparse(lt, open_und, alive, source.uint64(count), tbits[:, k], count)
        k += 1
    return lt


def kary_words(n_words: int, rr: RRProbabilities, source: RandomSource) -> np.ndarray:
    """Bit planes of the K-ary shift S of 64 ``n_words`` lanes.

    S = #{j in 1..K-1 : U < j m} for a uniform 64-bit U per lane, m =
    ``rr.flip_numerator``: P(S = s) = m / 2^64 exactly for s = 1..K-1 and
    S = 0 with the rest, so (x + S) mod K is K-ary randomized response of x.
    Every lane is compared with the K - 1 thresholds by the bit-sliced
    rounds of :func:`bernoulli_words` (U's bits most significant first, one
    random word a round for 64 lanes; a lane equal to a threshold on all 64
    bits is not below it).  For K = 2 that *is* :func:`bernoulli_words`.

    Schedule (fixed, so a seed gives the same planes on every machine, with
    or without numba): chunks of 2^15 words; for K > 2, the first 10 rounds
    are drawn for every word of a chunk in one call, then one word per word
    with an open lane, round by round, until none is open.

    Parameters
    ----------
    n_words : int
        Number of 64-lane words.
    rr : RRProbabilities
        Certified probabilities for K = ``rr.K`` values.
    source : RandomSource

    Returns
    -------
    numpy.ndarray of uint64, shape (value_bits(K), n_words)
        Plane k holds bit k of every lane's S.

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
    n_words = int(n_words)
    if n_words < 0:
        raise ValueError("n_words must be >= 0")
    K = rr.K
    if K == 2:
        return bernoulli_words(n_words, rr.flip_numerator, source)[None]
    B = value_bits(K)
    tbits = _threshold_bits(rr.flip_numerator, K)
    out = np.empty((B, n_words), dtype=np.uint64)
    kernels = _numba_kernels()
    chunk = _kary_chunk_numpy if kernels is None else _kary_chunk_numba
    for a in range(0, n_words, _CHUNK_WORDS):
        c = min(_CHUNK_WORDS, n_words - a)
        lt = chunk(c, tbits, source)
        if kernels is not None:
            S = np.zeros((B, c), dtype=np.uint64)  # contiguous rows: the counter vectorizes
            kernels[4](lt, S)
            out[:, a : a + c] = S
            continue
        S = out[:, a : a + c]
        S[...] = 0
        for j in range(lt.shape[0]):  # bit-sliced counter: S += [U < t_j]
            carry = lt[j]
            for k in range(B):
                nxt = S[k] & carry
                S[k] ^= carry
                carry = nxt
    return out


# ---------------------------------------------------------------------------
# exact Bernoulli((1 - beta)^x) trials, geometric gaps, Bernoulli subsets
#
# A gap G ~ Geometric(beta) (failures before a success) is drawn exactly as
# G = L D + R with L = 2^l <= 1/beta (the decomposition of Bringmann and
# Friedrich, ICALP 2013): D counts the successes of Bernoulli((1 - beta)^L)
# trials before the first failure, and R is uniform on 0..L-1 (the top l bits
# of a word) accepted with probability (1 - beta)^R.  Every one of those
# Bernoulli((1 - beta)^x) trials compares a uniform 64-bit word with
# (1 - beta)^x evaluated in floating point *with a certified margin*: when the
# word is within a relative ``margin`` (2^-30 by default, about 10^7 times the
# worst error of libm's ``exp``/``log1p``) of the threshold, the trial is
# decided exactly by :func:`_exact_power_less`, which extends the uniform with
# further words and evaluates (1 - beta)^x with ``decimal`` at growing
# precision and rigorous error bounds.  So every draw has exactly its stated
# distribution, assuming only that libm's ``exp`` and ``log1p`` are accurate to
# far better than 2^-30 (they are accurate to about 1 ulp = 2^-52).
# ---------------------------------------------------------------------------
#: Default relative margin around a floating-point threshold inside which a
#: trial is decided in exact arithmetic instead.
EXACT_MARGIN = 2.0**-30
_BATCH = 1 << 21  # gaps drawn per batch: bounds the working memory of the sampler


def _exact_power_less(u: int, x: int, beta: Fraction, source: RandomSource) -> bool:
    """Decide U < (1 - beta)^x exactly, U = (u + V) / 2^64, V uniform, drawn lazily.

    (1 - beta)^x is evaluated with ``decimal`` (correctly rounded ln, exp) at
    growing precision with a rigorous error bound; U is refined by further
    64-bit words until the two intervals separate.
    """
    num, bits, prec = int(u), 64, 40
    base_num = beta.denominator - beta.numerator
    while True:
        digits = prec + len(str(int(x))) + 10
        ctx = Context(prec=digits)
        unit = Fraction(1, 10 ** (digits - 1))  # >= the relative rounding error of one op
        base = ctx.divide(Decimal(base_num), Decimal(beta.denominator))
        y = ctx.multiply(ctx.ln(base), Decimal(int(x)))
        t = Fraction(ctx.exp(y))
        # |y - x ln(1-beta)| <= (x + 2|y| + 2) unit; exp adds one more unit
        rel = 2 * ((int(x) + 2 * abs(Fraction(y)) + 3) * unit)
        t_lo, t_hi = t * (1 - rel), t * (1 + rel)
        u_lo, u_hi = Fraction(num, 1 << bits), Fraction(num + 1, 1 << bits)
        if u_hi <= t_lo:
            return True
        if u_lo >= t_hi:
            return False
        num = (num << 64) | int(source.uint64(1)[0])
        bits += 64
        prec += 20


def _bernoulli_power(x: np.ndarray, beta: Fraction, log1m_beta: float,
                     source: RandomSource, margin: float = EXACT_MARGIN) -> np.ndarray:
    """Independent Bernoulli((1 - beta)^x) trials, one per entry of x, exactly."""
    u = source.uint64(x.size)
    xf = x.astype(np.float64)
    t = np.exp(xf * log1m_beta)
    uf = u.astype(np.float64) * 2.0**-64  # within a relative 2^-53 of u / 2^64
    accept = uf * (1 + 2.0**-50) + 2.0**-63 < t * (1 - margin)
    reject = uf * (1 - 2.0**-50) >= t * (1 + margin)
    accept |= x == 0
    undecided = np.flatnonzero(~(accept | reject))
    for idx in undecided.tolist():  # probability about 2^-29 per trial
        accept[idx] = _exact_power_less(int(u[idx]), int(x[idx]), beta, source)
    return accept


def geometric(count: int, beta: Fraction, limit: int, source: RandomSource, *,
              margin: float = EXACT_MARGIN) -> np.ndarray:
    """``count`` exact Geometric(beta) draws (failures before a success), capped at ``limit``.

    G = L D + R with L = 2^l <= 1/beta, D ~ Geometric(1 - (1-beta)^L) and R on
    0..L-1 with P(R = r) proportional to (1-beta)^r, sampled by rejection from
    uniform proposals.  Values >= ``limit`` are returned as ``limit`` (past the
    end of whatever is being sampled anyway).

    Parameters
    ----------
    count : int
    beta : Fraction
        Success probability, in (0, 1).
    limit : int
        Cap, below 2^61.
    source : RandomSource
    margin : float, default 2^-30
        Relative band around each floating-point threshold inside which a
        trial is decided in exact arithmetic.  Any value in (0, 0.5) gives the
        same distribution; larger ones only take the exact path more often.

    Returns
    -------
    numpy.ndarray of int64, shape (count,)
        The draws, each capped at ``limit``.

    Examples
    --------
    >>> from dpgraph.core.randomness import SeededRandom
    >>> g = geometric(20_000, Fraction(1, 4), 10**6, SeededRandom(0))
    >>> bool(abs(g.mean() - 3) < 0.1)    # mean (1 - beta) / beta, within 4 standard errors
    True
    """
    ell = (beta.denominator // beta.numerator).bit_length() - 1  # 2^ell <= 1/beta
    ell = max(1, min(ell, 62))
    L = 1 << ell
    log1m = math.log1p(-float(beta))
    D = np.zeros(count, dtype=np.int64)
    alive = np.arange(count)
    d_cap = limit // L + 1
    xL = np.array([L], dtype=np.int64)
    while alive.size:
        ok = _bernoulli_power(np.broadcast_to(xL, alive.shape), beta, log1m, source, margin)
        alive = alive[ok]
        D[alive] += 1
        alive = alive[D[alive] < d_cap]  # already past the end: stop counting
    R = np.empty(count, dtype=np.int64)
    pending = np.arange(count)
    while pending.size:
        r = (source.uint64(pending.size) >> np.uint64(64 - ell)).astype(np.int64)
        ok = _bernoulli_power(r, beta, log1m, source, margin)
        R[pending[ok]] = r[ok]
        pending = pending[~ok]
    # D <= d_cap, so D L + R <= limit + 2L < 2^63 for limit < 2^61
    return np.minimum(D * L + R, limit)


def bernoulli_positions(N: int, beta: Fraction, source: RandomSource,
                        batch: int = _BATCH) -> Iterator[np.ndarray]:
    """Yield the sorted positions of a Bernoulli(beta) subset of 0..N-1, batch by batch.

    Each position is in the subset independently with probability exactly
    ``beta``; time and memory are proportional to the subset (plus one batch).

    Examples
    --------
    >>> from dpgraph.core.randomness import SeededRandom
    >>> pos = np.concatenate(list(bernoulli_positions(10_000, Fraction(1, 10), SeededRandom(0))))
    >>> bool(np.all(np.diff(pos) > 0)), 800 < pos.size < 1200
    (True, True)
    """
    N = int(N)
    beta = Fraction(beta)
    if not 0 < beta < 1:
        raise ValueError("beta must lie in (0, 1)")
    pos = -1
    while True:
        remaining = N - 1 - pos
        expected = float(remaining * beta)
        size = int(min(batch, max(64.0, expected * 1.01 + 6 * math.sqrt(expected) + 64)))
        gaps = geometric(size, beta, remaining + 1, source) + 1
        # find where the running sum passes the end without risking overflow
        stop = int(np.searchsorted(np.cumsum(gaps, dtype=np.float64), 2.0 * (remaining + 1)))
        p = pos + np.cumsum(gaps[: stop + 1])
        inside = p[p < N]
        if inside.size:
            yield inside
        if inside.size < p.size:
            return
        pos = int(p[-1])
