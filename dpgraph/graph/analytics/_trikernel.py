"""numba kernels of the triangle pass: integer row reductions of C = Y Y, from bits or a CSR.

Imported lazily (through :func:`dpgraph._numba.load_kernels`) by
:mod:`.triangle_counting`, whose numpy paths give the same integers when
numba is absent.  The CSR kernel returns, for each requested row i, the
eight integer reductions (``REDUCTIONS`` in :mod:`.triangle_counting`)

    C1 = sum_{j != i} c_ij,        Cd = sum_{j != i} c_ij d_j,   A2 = sum_{j != i} c_ij^2,
    E1 = sum_{j in N(i)} c_ij,     Ed = sum_{j in N(i)} c_ij d_j, E2 = sum_{j in N(i)} c_ij^2,
    N1 = sum_{j in N(i)} d_j,      N2 = sum_{j in N(i)} d_j^2,

with c_ij the released common neighbours of i and j, d the released degrees
and N(i) the released neighbours of i.  The packed kernels AND two rows only
where the pair is a released edge or probed (``_probed_pair``), and return
thirteen raw sums :mod:`.triangle_counting` completes: in place of C1
nothing (C1 = N1 - d_i), of Cd the sum of N1_j over the neighbours (Cd =
that - d_i^2), of A2 the sum of c_ij^2 over the probed non-neighbours j, and
in columns 8-12 the sums of 1, d_j, d_j^2, c_ij and c_ij d_j over them.
"""

from __future__ import annotations

import numba as nb
import numpy as np

from .._cutkernel import H01, M1, M2, M4, and_popcount

try:  # one instruction (tzcnt) where numba exposes it
    from numba.cpython.unsafe.numbers import trailing_zeros as _tz
except ImportError:  # pragma: no cover - other numba versions
    _tz = None

if _tz is None:  # pragma: no cover - other numba versions
    @nb.njit(cache=True, nogil=True, inline="always")
    def _lowest(x):
        """Index of the lowest set bit of x != 0: popcount(lowbit - 1)."""
        x = (x & (~x + np.uint64(1))) - np.uint64(1)
        x = x - ((x >> np.uint64(1)) & M1)
        x = (x & M2) + ((x >> np.uint64(2)) & M2)
        x = (x + (x >> np.uint64(4))) & M4
        return np.int64((x * H01) >> np.uint64(56))
else:
    @nb.njit(cache=True, nogil=True, inline="always")
    def _lowest(x):  # pragma: no cover - compiled
        """Index of the lowest set bit of x != 0."""
        return np.int64(_tz(x))


@nb.njit(cache=True, nogil=True, inline="always")
def _bit(words, i, j):  # pragma: no cover - compiled
    return (words[i, j >> 6] >> np.uint64(j & 63)) & np.uint64(1)


@nb.njit(cache=True, nogil=True, inline="always")
def _edge(out, r, c, dj, n1j):  # pragma: no cover - compiled
    """Add released edge (i, j)'s terms to row r's raw sums: c = c_ij, dj = d_j, n1j = N1_j."""
    out[r, 1] += n1j
    out[r, 3] += c
    out[r, 4] += c * dj
    out[r, 5] += c * c
    out[r, 6] += dj
    out[r, 7] += dj * dj


@nb.njit(cache=True, nogil=True, inline="always")
def _probed_pair(i, j, key, threshold):  # pragma: no cover - compiled
    """Whether pair (i, j) is probed: splitmix64 of (min, max) ^ key, top 53 bits < threshold."""
    if threshold >= np.uint64(1 << 53):
        return True
    lo, hi = min(i, j), max(i, j)
    x = ((np.uint64(lo) << np.uint64(32)) | np.uint64(hi)) ^ key
    x = (x ^ (x >> np.uint64(30))) * np.uint64(0xBF58476D1CE4E5B9)
    x = (x ^ (x >> np.uint64(27))) * np.uint64(0x94D049BB133111EB)
    x ^= x >> np.uint64(31)
    return (x >> np.uint64(11)) < threshold


@nb.njit(cache=True, nogil=True, inline="always")
def _probed(out, r, c, dj):  # pragma: no cover - compiled
    """Add probed non-edge (i, j)'s monomials to row r's raw sums: c = c_ij, dj = d_j."""
    out[r, 2] += c * c
    out[r, 8] += 1
    out[r, 9] += dj
    out[r, 10] += dj * dj
    out[r, 11] += c
    out[r, 12] += c * dj


@nb.njit(cache=True, nogil=True)
def _transpose64(a):  # pragma: no cover - compiled
    """In-place transpose of a 64 x 64 bit block (bit c of a[r] is entry (r, c))."""
    j = 32
    m = np.uint64(0x00000000FFFFFFFF)
    while j != 0:
        k = 0
        sj = np.uint64(j)
        while k < 64:
            t = ((a[k] >> sj) ^ a[k + j]) & m
            a[k + j] ^= t
            a[k] ^= t << sj
            k = (k + j + 1) & ~j
        j >>= 1
        m ^= m << np.uint64(j)
    return a


@nb.njit(cache=True, parallel=True)
def symmetric_words(words, n):  # pragma: no cover - compiled
    """words | words^T for an upper-triangular packed matrix: every row holds its full neighbourhood."""
    nw = words.shape[1]
    out = words.copy()
    nb_rows = (n + 63) // 64
    for wb in nb.prange(nw):  # output rows wb*64 .. wb*64+63 are written by this iteration only
        a = np.zeros(64, dtype=np.uint64)
        for rb in range(min(wb + 1, nb_rows)):
            for r in range(64):
                i = rb * 64 + r
                a[r] = words[i, wb] if i < n else np.uint64(0)
            _transpose64(a)
            for c in range(64):
                row = wb * 64 + c
                if row < n:
                    out[row, rb] |= a[c]
    return out


@nb.njit(cache=True, parallel=True)
def packed_rows(sym, deg, n1, key, threshold, rows, group):  # pragma: no cover - compiled
    """The raw sums of the given rows, each row ANDed with its neighbours' and probed partners'."""
    n = sym.shape[0]
    k = rows.size
    out = np.zeros((k, 13), dtype=np.int64)
    ngroups = (k + group - 1) // group
    for g in nb.prange(ngroups):
        r0 = g * group
        r1 = min(k, r0 + group)
        for j in range(n):
            b = sym[j]
            dj = deg[j]
            for r in range(r0, r1):
                i = rows[r]
                if i == j:
                    continue
                if _bit(sym, i, j):
                    _edge(out, r, np.int64(and_popcount(sym[i], b)), dj, n1[j])
                elif _probed_pair(i, j, key, threshold):
                    _probed(out, r, np.int64(and_popcount(sym[i], b)), dj)
    return out


@nb.njit(cache=True, parallel=True)
def packed_all_rows(sym, deg, n1, key, threshold, g0, g1, group, acc):  # pragma: no cover - compiled
    """Add the raw sums of the pairs i < j with i in row groups g0 .. g1 - 1 into ``acc``.

    ``acc`` has shape (threads, n, 13); each unordered pair is looked at once
    and counted for both of its rows (thread t writes only ``acc[t]``): a
    released edge and a probed non-edge alike.
    Summed over threads and over all groups it is the raw sums of every row.
    """
    n = sym.shape[0]
    nthreads = acc.shape[0]
    for t in nb.prange(nthreads):
        out = acc[t]
        for g in range(g0 + t, g1, nthreads):  # round-robin: early groups have more pairs
            i0 = g * group
            i1 = min(n, i0 + group)
            for j in range(i0 + 1, n):
                b = sym[j]
                dj = deg[j]
                for i in range(i0, min(i1, j)):
                    if _bit(sym, i, j):
                        c = np.int64(and_popcount(sym[i], b))
                        _edge(out, i, c, dj, n1[j])  # the pair counts for both of its rows
                        _edge(out, j, c, deg[i], n1[i])
                    elif _probed_pair(i, j, key, threshold):
                        c = np.int64(and_popcount(sym[i], b))
                        _probed(out, i, c, dj)
                        _probed(out, j, c, deg[i])


@nb.njit(cache=True, parallel=True)
def csr_rows(indptr, indices, deg, rows, nthreads):  # pragma: no cover - compiled
    """The eight reductions of the given rows of a symmetric CSR (common neighbours by 2-hop counting)."""
    n = indptr.size - 1
    k = rows.size
    out = np.zeros((k, 8), dtype=np.int64)
    for t in nb.prange(nthreads):
        cnt = np.zeros(n, dtype=np.int64)
        touched = np.empty(n, dtype=np.int64)
        for r in range(t, k, nthreads):
            i = rows[r]
            nt = 0
            for p in range(indptr[i], indptr[i + 1]):
                m = indices[p]
                for q in range(indptr[m], indptr[m + 1]):
                    j = indices[q]
                    if j == i:
                        continue
                    if cnt[j] == 0:
                        touched[nt] = j
                        nt += 1
                    cnt[j] += 1
            c1 = 0
            cd = 0
            a2 = 0
            for s in range(nt):
                j = touched[s]
                c = cnt[j]
                c1 += c
                cd += c * deg[j]
                a2 += c * c
            e1 = 0
            ed = 0
            e2 = 0
            n1 = 0
            n2 = 0
            for p in range(indptr[i], indptr[i + 1]):
                j = indices[p]
                c = cnt[j]
                dj = deg[j]
                e1 += c
                ed += c * dj
                e2 += c * c
                n1 += dj
                n2 += dj * dj
            for s in range(nt):
                cnt[touched[s]] = 0
            out[r, 0] = c1
            out[r, 1] = cd
            out[r, 2] = a2
            out[r, 3] = e1
            out[r, 4] = ed
            out[r, 5] = e2
            out[r, 6] = n1
            out[r, 7] = n2
    return out


@nb.njit(cache=True)
def packed_to_csr(words, deg):  # pragma: no cover - compiled
    """Symmetric CSR (sorted rows) of an upper-triangular packed matrix with known degrees."""
    n = words.shape[0]
    nw = words.shape[1]
    indptr = np.zeros(n + 1, dtype=np.int64)
    for i in range(n):
        indptr[i + 1] = indptr[i] + deg[i]
    up = np.zeros(n, dtype=np.int64)  # stored (upper) pairs of each row
    for i in range(n):
        a = words[i, i >> 6:]
        up[i] = np.int64(and_popcount(a, a))
    low = indptr[:-1].copy()  # next free slot of each row's lower part (columns < i)
    hi = np.empty(n, dtype=np.int64)
    for i in range(n):
        hi[i] = indptr[i + 1] - up[i]
    indices = np.empty(indptr[n], dtype=np.int32)
    for i in range(n):
        for w in range(i >> 6, nw):
            x = words[i, w]
            while x:
                j = w * 64 + _lowest(x)
                indices[hi[i]] = j
                hi[i] += 1
                indices[low[j]] = i
                low[j] += 1
                x &= x - np.uint64(1)
    return indptr, indices


@nb.njit(cache=True, parallel=True)
def bit_neighbour_sums(sym, deg):  # pragma: no cover - compiled
    """(N1, N2): sums of d_j and d_j^2 over the released neighbours j of every row of ``sym``."""
    n = sym.shape[0]
    nw = sym.shape[1]
    out = np.zeros((n, 2), dtype=np.int64)
    for i in nb.prange(n):
        s1 = 0
        s2 = 0
        for w in range(nw):
            x = sym[i, w]
            base = w * 64
            while x:
                dj = deg[base + _lowest(x)]
                s1 += dj
                s2 += dj * dj
                x &= x - np.uint64(1)
        out[i, 0] = s1
        out[i, 1] = s2
    return out


@nb.njit(cache=True, parallel=True)
def csr_neighbour_sums(indptr, indices, deg):  # pragma: no cover - compiled
    """(N1, N2): sums of d_j and d_j^2 over the neighbours j of every row of a CSR."""
    n = indptr.size - 1
    out = np.zeros((n, 2), dtype=np.int64)
    for i in nb.prange(n):
        s1 = 0
        s2 = 0
        for p in range(indptr[i], indptr[i + 1]):
            dj = deg[indices[p]]
            s1 += dj
            s2 += dj * dj
        out[i, 0] = s1
        out[i, 1] = s2
    return out


@nb.njit(cache=True, parallel=True)
def csr_matmul(indptr, indices, X):  # pragma: no cover - compiled
    """Y X for the symmetric CSR Y and a float matrix X (n, r)."""
    n = indptr.size - 1
    out = np.zeros((n, X.shape[1]))
    for i in nb.prange(n):
        for p in range(indptr[i], indptr[i + 1]):
            j = indices[p]
            for c in range(X.shape[1]):
                out[i, c] += X[j, c]
    return out


@nb.njit(cache=True, parallel=True)
def bit_matmul(sym, X):  # pragma: no cover - compiled
    """Y X for the packed symmetric rows ``sym`` and a float matrix X (n, r)."""
    n = sym.shape[0]
    nw = sym.shape[1]
    out = np.zeros((n, X.shape[1]))
    for i in nb.prange(n):
        for w in range(nw):
            x = sym[i, w]
            base = w * 64
            while x:
                j = base + _lowest(x)
                for c in range(X.shape[1]):
                    out[i, c] += X[j, c]
                x &= x - np.uint64(1)
    return out


@nb.njit(cache=True, parallel=True)
def packed_degrees(words, nthreads):  # pragma: no cover - compiled
    """Degrees of an upper-triangular packed matrix: row popcounts plus column counts."""
    n = words.shape[0]
    nw = words.shape[1]
    cols = np.zeros((nthreads, n), dtype=np.int64)
    deg = np.zeros(n, dtype=np.int64)
    chunk = (n + nthreads - 1) // nthreads
    for t in nb.prange(nthreads):
        col = cols[t]
        for i in range(t * chunk, min(n, (t + 1) * chunk)):
            a = words[i, i >> 6:]
            deg[i] = np.int64(and_popcount(a, a))
            for w in range(i >> 6, nw):
                x = words[i, w]
                base = w * 64
                while x:
                    col[base + _lowest(x)] += 1
                    x &= x - np.uint64(1)
    for t in range(nthreads):
        deg += cols[t]
    return deg
