"""numba kernels of the bit-sliced K-ary sampler; imported lazily by :mod:`.sampler`.

They compute exactly what the numpy rounds in :mod:`.sampler` compute, from
the same random words in the same order, fused into one pass, so a seed gives
identical planes with or without numba.
"""

from __future__ import annotations

import numba as nb
import numpy as np

_ALL = np.uint64(0xFFFFFFFFFFFFFFFF)


@nb.njit(cache=True, nogil=True)
def dense_rounds_one(draws, tbits_j, lt_j, und_j):  # pragma: no cover - compiled
    """First rounds of one threshold for every word (the binary sampler's rounds).

    draws[k, i] supplies bit 63 - k of the lanes' uniform integers for word
    i; tbits_j[k] is bit 63 - k of the threshold as 0 or all ones.  lt_j
    collects the lanes decided U < t, und_j the lanes still equal to t's
    prefix.  Round-major over contiguous rows, so LLVM vectorizes the loop.
    """
    rounds, c = draws.shape
    for i in range(c):
        lt_j[i] = 0
        und_j[i] = _ALL
    for k in range(rounds):
        b = tbits_j[k]
        row = draws[k]
        for i in range(c):
            d = row[i]
            u = und_j[i]
            lt_j[i] |= ~d & u & b
            und_j[i] = u & ~(d ^ b)


@nb.njit(cache=True, nogil=True)
def compact(und, alive, open_und):  # pragma: no cover - compiled
    """Indices of the words with an open lane (any threshold) and their open lanes; returns how many."""
    J, c = und.shape
    count = 0
    for i in range(c):
        o = np.uint64(0)
        for j in range(J):
            o |= und[j, i]
        if o != 0:
            alive[count] = i
            for j in range(J):
                open_und[count, j] = und[j, i]
            count += 1
    return count


@nb.njit(cache=True, nogil=True)
def sparse_round(lt, open_und, alive, draws, tbits_k, count):  # pragma: no cover - compiled
    """One further round for the ``count`` open words (one draw each); returns the new count."""
    J = tbits_k.shape[0]
    kept = 0
    for q in range(count):
        i = alive[q]
        d = draws[q]
        o = np.uint64(0)
        for j in range(J):
            b = tbits_k[j]
            u = open_und[q, j]
            lt[j, i] |= ~d & u & b
            u &= ~(d ^ b)
            open_und[kept, j] = u
            o |= u
        if o != 0:
            alive[kept] = i
            kept += 1
    return kept


@nb.njit(cache=True, nogil=True)
def count_planes(lt, S):  # pragma: no cover - compiled
    """S += [U < t_j] for every j: a bit-sliced counter over the planes S (B, c)."""
    J, c = lt.shape
    B = S.shape[0]
    carry = np.empty(c, dtype=np.uint64)
    for j in range(J):
        for i in range(c):
            carry[i] = lt[j, i]
        for k in range(B):
            for i in range(c):
                s = S[k, i]
                S[k, i] = s ^ carry[i]
                carry[i] = s & carry[i]
