"""numba kernels for packed cut counts (one SWAR and-popcount); imported lazily by :mod:`dpgraph.graph.packed`,
and the column counts of a packed block (the degree pass of a blockwise store, :mod:`.blockwise.graph`).

The SWAR constants and :func:`and_popcount` are the one popcount of the
packed bits: the triangle kernels (:mod:`dpgraph.graph.analytics._trikernel`)
import them from here.
"""

from __future__ import annotations

import numba as nb
import numpy as np

M1 = np.uint64(0x5555555555555555)
M2 = np.uint64(0x3333333333333333)
M4 = np.uint64(0x0F0F0F0F0F0F0F0F)
H01 = np.uint64(0x0101010101010101)


@nb.njit(cache=True, nogil=True, inline="always")
def and_popcount(a, b):  # pragma: no cover - compiled
    """Sum of popcount(a[w] & b[w]) over two equal-length uint64 vectors (SWAR popcount)."""
    one, two, four, sh = np.uint64(1), np.uint64(2), np.uint64(4), np.uint64(56)
    acc = np.uint64(0)
    for w in range(a.size):  # contiguous 1-D views: LLVM vectorizes the loop
        x = a[w] & b[w]
        x = x - ((x >> one) & M1)
        x = (x & M2) + ((x >> two) & M2)
        x = (x + (x >> four)) & M4
        acc += (x * H01) >> sh
    return acc


@nb.njit(cache=True, nogil=True)
def masked_row_popcount(words, rows, mask, upper):  # pragma: no cover - compiled
    """Sum over rows i of popcount(words[i, s:] & mask[s:]), s = i // 64 if upper else 0."""
    total = np.uint64(0)
    for k in range(rows.size):
        i = rows[k]
        start = (i >> 6) if upper else 0
        total += and_popcount(words[i, start:], mask[start:])
    return total


@nb.njit(cache=True, nogil=True)
def batch_cut_counts(words, side, smasks, tmasks, upper):  # pragma: no cover - compiled
    """Raw cut counts of Q queries in one pass over the rows.

    side[q, i] is 1 if node i is in S_q, 2 if in T_q, else 0.  Row i is read
    once and, while in cache, ANDed with the masks of every query it takes
    part in: T_q's mask when i is in S_q, and (upper triangle storage) S_q's
    mask when i is in T_q.
    """
    Q, n = side.shape
    counts = np.zeros(Q, dtype=np.uint64)
    for i in range(n):
        start = (i >> 6) if upper else 0
        a = words[i, start:]
        for q in range(Q):
            sd = side[q, i]
            if sd == 0 or (sd == 2 and not upper):
                continue
            b = tmasks[q, start:] if sd == 1 else smasks[q, start:]
            counts[q] += and_popcount(a, b)
    return counts


@nb.njit(cache=True, nogil=True)
def multi_query_popcount(words, rowsel, masks, first_row, first_word,
                         upper):  # pragma: no cover - compiled
    """out[q] = sum over rows i with rowsel[q, i] of popcount(words[i] & masks[q]).

    ``words`` is a tile whose row i is row first_row + i of the matrix and
    whose word w is word first_word + w.  One pass over the rows: each row is
    read once (it stays in L1) and ANDed with the mask of every query that
    selects it; with ``upper`` the words left of the row's diagonal word are
    skipped (they are zero in an undirected release).
    """
    nq = masks.shape[0]
    nr = words.shape[0]
    out = np.zeros(nq, dtype=np.int64)
    for i in range(nr):
        start = 0
        if upper:
            start = max(0, ((first_row + i) >> 6) - first_word)
        a = words[i, start:]
        for q in range(nq):
            if rowsel[q, i]:
                out[q] += np.int64(and_popcount(a, masks[q, start:]))
    return out


# index of the lowest set bit of a byte (entry 0 unused)
_LOW_BIT = np.array([0] + [(v & -v).bit_length() - 1 for v in range(1, 256)], dtype=np.int64)


@nb.njit(cache=True, nogil=True)
def _matmat_columns(words, X, out, w0, step, gather, scatter, upper):  # pragma: no cover - compiled
    """out += (A @ X and/or A^T @ X) restricted to the word columns w0, w0 + step, ... of A.

    Byte tables ("four Russians"): for the 8 bytes of one word column, the
    sum of the rows of X selected by each of the 256 byte values is
    tabulated once (T), so a row of A times X costs one k-vector addition
    per non-zero byte instead of one per set bit; the transposed product
    accumulates X[i] per (byte, value) (S) and spreads each sum over the
    value's bits at the end of the column.  An undirected release stores the
    upper triangle U and both directions give (U + U^T) X; ``upper`` skips
    rows whose diagonal word lies right of the column (zero there).
    """
    n, nw = words.shape
    k = X.shape[1]
    T = np.zeros((8, 256, k), dtype=out.dtype)
    S = np.zeros((8, 256, k), dtype=out.dtype)
    mask = np.uint64(255)
    for w in range(w0, nw, step):
        c0 = w << 6
        for g in range(8):
            for c in range(k):
                T[g, 0, c] = 0.0
            for v in range(1, 256):
                prev = v & (v - 1)
                col = c0 + (g << 3) + _LOW_BIT[v]
                if gather and col < n:
                    for c in range(k):
                        T[g, v, c] = T[g, prev, c] + X[col, c]
                else:
                    for c in range(k):
                        T[g, v, c] = T[g, prev, c]
                if scatter:
                    for c in range(k):
                        S[g, v, c] = 0.0
        rows = min(n, c0 + 64) if upper else n
        for i in range(rows):
            word = words[i, w]
            if word == 0:
                continue
            for g in range(8):
                v = np.int64((word >> np.uint64(g << 3)) & mask)
                if v == 0:
                    continue
                if gather:
                    for c in range(k):
                        out[i, c] += T[g, v, c]
                if scatter:
                    for c in range(k):
                        S[g, v, c] += X[i, c]
        if scatter:
            for g in range(8):
                for v in range(1, 256):
                    vv = v
                    while vv != 0:
                        col = c0 + (g << 3) + _LOW_BIT[vv]
                        if col < n:
                            for c in range(k):
                                out[col, c] += S[g, v, c]
                        vv &= vv - 1
    return out


@nb.njit(cache=True, parallel=True)
def packed_matmat(words, X, outs, gather, scatter, upper):  # pragma: no cover - compiled
    """outs[t] += thread t's share of A @ X (``gather``) and/or A^T @ X (``scatter``).

    Thread t of ``outs.shape[0]`` takes the word columns t, t + threads, ...
    (round robin, so the upper triangle's longer right-hand columns are
    shared evenly) into its own output; the caller sums ``outs`` over
    threads.  See :func:`_matmat_columns` for one thread's pass.
    """
    step = outs.shape[0]
    for t in nb.prange(step):
        _matmat_columns(words, X, outs[t], t, step, gather, scatter, upper)
    return outs


@nb.njit(cache=True, nogil=True)
def column_counts(words, cols):  # pragma: no cover - compiled
    """Add to ``cols[64 w + b]`` the number of rows of ``words`` whose bit b of word w is set.

    A bit-sliced counter a word column: plane k holds bit k of the 64
    columns' running counts, and each row is added with a ripple of ANDs and
    XORs (about two planes a word on average), then the planes are read out
    once.  The column sums of a packed block without unpacking it to one
    byte a pair.
    """
    rows, nw = words.shape
    depth = 1
    while (1 << depth) <= rows:
        depth += 1
    planes = np.zeros((depth, nw), dtype=np.uint64)
    for a in range(rows):
        for w in range(nw):
            carry = words[a, w]
            k = 0
            while carry:
                t = planes[k, w] & carry
                planes[k, w] ^= carry
                carry = t
                k += 1
    one = np.uint64(1)
    for w in range(nw):
        for k in range(depth):
            x = planes[k, w]
            if x:
                for b in range(64):
                    cols[64 * w + b] += np.int64((x >> np.uint64(b)) & one) << k
