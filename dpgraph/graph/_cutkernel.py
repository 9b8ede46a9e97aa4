"""numba kernels for packed cut counts (one SWAR and-popcount); imported lazily by :mod:`dpgraph.graph.packed`."""

from __future__ import annotations

import numba as nb
import numpy as np

_M1 = np.uint64(0x5555555555555555)
_M2 = np.uint64(0x3333333333333333)
_M4 = np.uint64(0x0F0F0F0F0F0F0F0F)
_H01 = np.uint64(0x0101010101010101)


@nb.njit(cache=True, nogil=True, inline="always")
def _and_popcount(a, b):  # pragma: no cover - compiled
    """Sum of popcount(a[w] & b[w]) over two equal-length uint64 vectors (SWAR popcount)."""
    one, two, four, sh = np.uint64(1), np.uint64(2), np.uint64(4), np.uint64(56)
    acc = np.uint64(0)
    for w in range(a.size):  # contiguous 1-D views: LLVM vectorizes the loop
        x = a[w] & b[w]
        x = x - ((x >> one) & _M1)
        x = (x & _M2) + ((x >> two) & _M2)
        x = (x + (x >> four)) & _M4
        acc += (x * _H01) >> sh
    return acc


@nb.njit(cache=True, nogil=True)
def masked_row_popcount(words, rows, mask, upper):  # pragma: no cover - compiled
    """Sum over rows i of popcount(words[i, s:] & mask[s:]), s = i // 64 if upper else 0."""
    total = np.uint64(0)
    for k in range(rows.size):
        i = rows[k]
        start = (i >> 6) if upper else 0
        total += _and_popcount(words[i, start:], mask[start:])
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
            counts[q] += _and_popcount(a, b)
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
                out[q] += np.int64(_and_popcount(a, masks[q, start:]))
    return out
