"""numba kernels of the exports, imported lazily by :mod:`.convert`: the set bits of packed rows as
(row, column) pairs, the edge-list text of a block of pairs, and the edge-list text straight from
packed rows or CSR rows (listed and formatted in one loop)."""

from __future__ import annotations

import numba as nb
import numpy as np

from ._cutkernel import H01, M1, M2, M4


@nb.njit(cache=True, nogil=True)
def packed_edges(words, row0, n, rows, cols):  # pragma: no cover - compiled
    """Fill rows/cols with the positions of the set bits of ``words`` (rows row0.., row-major).

    ``rows`` and ``cols`` are as long as the number of set bits; bit b of
    word w of a row is column 64 w + b (columns >= n are never set).
    """
    k = 0
    one = np.uint64(1)
    for a in range(words.shape[0]):
        i = row0 + a
        for w in range(words.shape[1]):
            x = words[a, w]
            base = 64 * w
            while x:
                low = x & (~x + one)  # the lowest set bit
                y = low - one  # its index: the popcount of the bits below it (SWAR)
                y = y - ((y >> one) & M1)
                y = (y & M2) + ((y >> np.uint64(2)) & M2)
                y = (y + (y >> np.uint64(4))) & M4
                b = (y * H01) >> np.uint64(56)
                rows[k] = i
                cols[k] = base + b
                k += 1
                x ^= low
    return k


@nb.njit(cache=True, nogil=True)
def format_lines(pool, starts, lens, rows, cols, delim, out):  # pragma: no cover - compiled
    """Write label(rows[k]) delim label(cols[k]) newline for every k into ``out``; return bytes used.

    Label i is ``pool[starts[i] : starts[i] + lens[i]]``; ``out`` is long
    enough (the caller sums the line lengths).
    """
    p = 0
    D = delim.size
    for k in range(rows.size):
        i, j = rows[k], cols[k]
        s, m = starts[i], lens[i]
        for t in range(m):
            out[p + t] = pool[s + t]
        p += m
        for t in range(D):
            out[p + t] = delim[t]
        p += D
        s, m = starts[j], lens[j]
        for t in range(m):
            out[p + t] = pool[s + t]
        p += m
        out[p] = 10
        p += 1
    return p


@nb.njit(cache=True, nogil=True)
def packed_lines(words, row0, pool, starts, lens, delim, out):  # pragma: no cover - compiled
    """Write the edge-list lines of the set bits of packed rows (rows row0..) into ``out``.

    Lists and formats in one loop (no position arrays): for every set bit,
    label(row) delim label(column) newline.  ``out`` holds at least
    popcount(words) * (longest label * 2 + delim.size + 1) bytes; returns the
    bytes used.  The row's label and the delimiter are copied once a row into
    ``head`` and from there once a line.
    """
    p = 0
    D = delim.size
    one = np.uint64(1)
    head = np.empty(int(lens.max()) + D, dtype=np.uint8)
    for a in range(words.shape[0]):
        i = row0 + a
        s, m = starts[i], lens[i]
        for t in range(m):
            head[t] = pool[s + t]
        for t in range(D):
            head[m + t] = delim[t]
        h = m + D
        for w in range(words.shape[1]):
            x = words[a, w]
            base = 64 * w
            while x:
                low = x & (~x + one)
                y = low - one
                y = y - ((y >> one) & M1)
                y = (y & M2) + ((y >> np.uint64(2)) & M2)
                y = (y + (y >> np.uint64(4))) & M4
                j = base + ((y * H01) >> np.uint64(56))
                for t in range(h):
                    out[p + t] = head[t]
                p += h
                s2, m2 = starts[j], lens[j]
                for t in range(m2):
                    out[p + t] = pool[s2 + t]
                p += m2
                out[p] = 10
                p += 1
                x ^= low
    return p


@nb.njit(cache=True, nogil=True)
def csr_lines(indptr, indices, i0, i1, pool, starts, lens, delim, out):  # pragma: no cover
    """Write the edge-list lines of CSR rows i0..i1-1 into ``out``; return the bytes used.

    ``out`` holds at least (indptr[i1] - indptr[i0]) * (longest label * 2 +
    delim.size + 1) bytes.
    """
    p = 0
    D = delim.size
    for i in range(i0, i1):
        s, m = starts[i], lens[i]
        for k in range(indptr[i], indptr[i + 1]):
            for t in range(m):
                out[p + t] = pool[s + t]
            p += m
            for t in range(D):
                out[p + t] = delim[t]
            p += D
            j = indices[k]
            s2, m2 = starts[j], lens[j]
            for t in range(m2):
                out[p + t] = pool[s2 + t]
            p += m2
            out[p] = 10
            p += 1
    return p
