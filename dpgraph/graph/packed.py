"""The packed layout of a released graph: one bit per row of the database.

Row i of the matrix is ``words_per_row(n) = ceil(n / 64)`` uint64 words; bit
``j % 64`` of word ``j // 64`` is the released value of pair (i, j).  An
undirected release keeps only the strict upper triangle (j > i), so each
unordered pair is stored once; the full matrix costs n^2 bits, i.e. 2 bits per
unordered pair.  A directed release uses the whole matrix but the diagonal.
Bits that are not pairs (the diagonal, columns j <= i of an undirected row,
padding past column n - 1) are always 0.

This module is the one place the layout is written down; the in-memory
release, the file format and the tiles of a blockwise store all use it:

* :func:`words_per_row`, :func:`pack_indices` (a node set as a column mask);
* :func:`clear_non_pairs` (zero the bits that are not pairs, in the whole
  matrix or in a tile given its offsets) and :func:`has_non_pair_bits` (the
  check a file reader makes);
* :func:`xor_edges` (XOR true edges into the words, whole matrix or tile);
* the counting kernels: :func:`masked_row_popcount` (one mask, many rows) and
  :func:`multi_query_popcount` (many masks, one pass over the rows, with the
  tile's offsets), numba-compiled when numba is available;
* :func:`packed_matmat`: the 0/1 matrix times a dense float block, one pass
  over the set bits (numba) or BLAS on unpacked row blocks (numpy);
* :class:`PackedAdjacency`, the in-memory adjacency.
"""

from __future__ import annotations

import sys
from collections.abc import Iterator

import numpy as np

from .._numba import load_kernels, numba_enabled
from .._numba import threads as numba_threads
from .adjacency import AdjacencyBase, CutSides, _as_block

__all__ = [
    "HAVE_NUMBA",
    "PackedAdjacency",
    "clear_non_pairs",
    "has_non_pair_bits",
    "masked_row_popcount",
    "multi_query_popcount",
    "pack_indices",
    "pack_rows",
    "packed_matmat",
    "read_only",
    "words_per_row",
    "xor_edges",
]

_ONE = np.uint64(1)


def read_only(a: np.ndarray) -> np.ndarray:
    """A read-only view of ``a``: a release's stored bits are handed out, never changed."""
    view = a.view()
    view.flags.writeable = False
    return view

_DEGREES_AFTER = 16  # a batch this large computes (and caches) the released degrees


def _masked_row_popcount_numpy(words: np.ndarray, rows: np.ndarray, mask: np.ndarray,
                               upper: bool) -> int:
    total = 0
    for k in range(0, rows.size, 4096):  # bounded scratch: 4096 rows at a time
        block = words[rows[k : k + 4096]]
        block &= mask
        total += int(np.bitwise_count(block).sum(dtype=np.int64))
    return total


# numba earns its place here: one fused pass over the selected rows (AND, SWAR
# popcount, sum, vectorized by LLVM), skipping the all-zero words left of the
# diagonal of an undirected release, instead of numpy's gather copy + AND +
# popcount + sum passes: about 10x on the half cuts of ego-Facebook.  The
# counts are integers, identical with or without numba; set
# DPGRAPH_DISABLE_NUMBA=1 (or uninstall numba) to use the numpy fallback.
# numba is imported and the kernels compiled (or loaded from numba's cache,
# see dpgraph._numba) on first use, so ``import dpgraph`` does not pay for it;
# any failure to compile or cache falls back to numpy silently.
HAVE_NUMBA = numba_enabled()
_KERNELS: tuple | None = None
_WORK = 0  # words counted so far in this process (decides when to load numba)


def _kernels() -> tuple | None:
    """(masked_row_popcount, batch_cut_counts, multi_query_popcount, packed_matmat) compiled, or None."""
    global _KERNELS, HAVE_NUMBA
    if _KERNELS is None and HAVE_NUMBA:
        _KERNELS = load_kernels("dpgraph.graph._cutkernel",
                                ("masked_row_popcount", "batch_cut_counts", "multi_query_popcount",
                                 "packed_matmat"))
        HAVE_NUMBA = _KERNELS is not None
    return _KERNELS


#: packed words from which :func:`packed_matmat` runs on numba's threads (below, waking a
#: second thread costs more than the product)
PARALLEL_WORDS = 1 << 20


def _numba_kernel():
    k = _kernels()
    return None if k is None else k[0]


def _batch_kernel():
    k = _kernels()
    return None if k is None else k[1]


def _multi_kernel():
    k = _kernels()
    return None if k is None else k[2]


def masked_row_popcount(words: np.ndarray, rows: np.ndarray, mask: np.ndarray,
                        upper: bool = False) -> int:
    """Number of 1 bits in ``words[rows] & mask`` (summed over the rows).

    Parameters
    ----------
    words : numpy.ndarray of uint64, shape (n, nw)
    rows : numpy.ndarray of int
        Row positions.
    mask : numpy.ndarray of uint64, shape (nw,)
    upper : bool
        Promise that row i has no 1 bit left of word i // 64 (an undirected
        release), so those words can be skipped.

    Returns
    -------
    int

    Examples
    --------
    >>> w = np.array([[3, 0], [1, 7]], dtype=np.uint64)
    >>> masked_row_popcount(w, np.array([0, 1]), np.array([1, 6], dtype=np.uint64))
    4
    """
    rows = np.ascontiguousarray(rows, dtype=np.int64)
    global _WORK
    work = rows.size * words.shape[1]
    _WORK += work
    # loading numba and its cached kernel costs ~0.3 s: worth it once the work is large
    if HAVE_NUMBA and words.flags.c_contiguous and (
            _KERNELS is not None or work >= 1 << 22 or _WORK >= 1 << 25):
        kernel = _numba_kernel()
        if kernel is not None:
            return int(kernel(words, rows, mask, bool(upper)))
    return _masked_row_popcount_numpy(words, rows, mask, upper)


def multi_query_popcount(words: np.ndarray, rowsel: np.ndarray, masks: np.ndarray,
                         first_row: int = 0, first_word: int = 0,
                         upper: bool = False) -> np.ndarray:
    """For every query q, the 1 bits of ``words[i] & masks[q]`` summed over rows with rowsel[q, i].

    ``words`` may be a tile: its row i is row ``first_row + i`` of the matrix
    and its word w is word ``first_word + w``.  With ``upper`` (an undirected
    release) the words left of each row's diagonal word are known to be zero
    and skipped.  With numba, one pass over the rows answers every query
    (each row is read once and ANDed, while in cache, with the masks of the
    queries that select it); otherwise one :func:`masked_row_popcount` per
    query.  The counts are identical either way.

    Parameters
    ----------
    words : numpy.ndarray of uint64, shape (rows, nw)
    rowsel : numpy.ndarray of uint8 or bool, shape (Q, rows)
    masks : numpy.ndarray of uint64, shape (Q, nw)
    first_row, first_word : int
        Offsets of the tile in the matrix.
    upper : bool
        True for a tile of an upper-triangular release (words left of the
        diagonal are skipped).

    Returns
    -------
    numpy.ndarray of int64, shape (Q,)
        Set bits of the selected rows under each query's mask.

    Examples
    --------
    >>> w = np.array([[3], [1]], dtype=np.uint64)
    >>> multi_query_popcount(w, np.array([[1, 1], [0, 1]], dtype=np.uint8),
    ...                      np.array([[1], [3]], dtype=np.uint64)).tolist()
    [2, 1]
    """
    words = np.ascontiguousarray(words)
    rowsel = np.ascontiguousarray(rowsel)
    masks = np.ascontiguousarray(masks)
    if HAVE_NUMBA:
        kernel = _multi_kernel()
        if kernel is not None:
            return kernel(words, rowsel, masks, int(first_row), int(first_word), bool(upper))
    total = np.zeros(masks.shape[0], dtype=np.int64)
    for q in range(masks.shape[0]):
        sel = np.flatnonzero(rowsel[q])
        if sel.size:
            total[q] = _masked_row_popcount_numpy(words, sel, masks[q], False)
    return total


def packed_matmat(words: np.ndarray, n: int, X: np.ndarray, directed: bool,
                  transpose: bool = False) -> np.ndarray:
    """The packed 0/1 matrix A times a dense block: A @ X (A^T @ X with ``transpose``).

    For an undirected release (``directed=False``) the words hold the upper
    triangle U and A = U + U^T.  With numba, one pass over the packed words
    with byte tables (one k-vector addition per non-zero byte), its word
    columns shared round robin by numba's threads, each into its own
    output (n x k floats a thread), summed at the end; without numba, row blocks of about 2^22 pairs are
    unpacked to floats and multiplied with BLAS (only the columns right of
    the block's first row for an undirected release).  Never an n x n float.

    Parameters
    ----------
    words : numpy.ndarray of uint64, shape (n, words_per_row(n))
    n : int
    X : numpy.ndarray, shape (n, k) or (n,)
        float32 stays float32 (sums of 0/1 entries are exact below 2^24);
        anything else is computed in float64.
    directed : bool
    transpose : bool, default False
        A^T @ X (only changes a directed release).

    Returns
    -------
    numpy.ndarray
        Same shape as ``X``.

    Examples
    --------
    >>> w = np.array([[6], [4], [0]], dtype=np.uint64)  # edges 01, 02, 12
    >>> packed_matmat(w, 3, np.array([1.0, 10.0, 100.0]), directed=False).tolist()
    [110.0, 101.0, 11.0]
    """
    X, vector = _as_block(X, n)
    out = np.zeros_like(X)
    gather = not directed or not transpose
    scatter = not directed or transpose
    k = _kernels() if HAVE_NUMBA and words.flags.c_contiguous else None
    if k is not None:
        threads = 1 if words.size < PARALLEL_WORDS else numba_threads()
        if threads == 1:
            k[3](words, X, out[None], gather, scatter, not directed)
        else:  # one output per thread, summed: the threads never write the same row
            outs = np.zeros((threads,) + out.shape, dtype=out.dtype)
            out = k[3](words, X, outs, gather, scatter, not directed).sum(axis=0)
    else:
        rows = max(1, (1 << 22) // max(n, 1))
        for i0 in range(0, n, rows):
            w = words[i0 : i0 + rows]
            c0 = 0 if directed else (i0 >> 6) << 6  # undirected: no pair left of the diagonal word
            bits = np.unpackbits(w[:, c0 >> 6 :].view(np.uint8), axis=1, bitorder="little")
            B = bits[:, : n - c0].astype(X.dtype)
            i1 = i0 + B.shape[0]
            if gather:
                out[i0:i1] += B @ X[c0:]
            if scatter:
                out[c0:] += B.T @ X[i0:i1]
    return out[:, 0] if vector else out


# ----------------------------------------------------------------------------- the layout
def words_per_row(n: int) -> int:
    """Number of 64-bit words a packed row of n bits takes.

    Examples
    --------
    >>> words_per_row(64), words_per_row(65)
    (1, 2)
    """
    return (int(n) + 63) // 64


def clear_non_pairs(words: np.ndarray, n: int, directed: bool, row0: int = 0,
                    word0: int = 0) -> None:
    """Zero, in place, the bits of the diagonal words and the padding that are not pairs.

    In the word holding column i of row i, the diagonal bit (directed) or the
    bits of columns j <= i (undirected) are cleared; in the last word of every
    row, the padding bits past column n - 1.  Words left of the diagonal word
    of an undirected row are not touched (the samplers never fill them).

    ``words`` is the whole matrix (``row0 = word0 = 0``) or a tile whose row k
    is row ``row0 + k`` and whose word w is word ``word0 + w`` of the matrix.

    Examples
    --------
    >>> w = np.full((3, 1), 7, dtype=np.uint64)
    >>> clear_non_pairs(w, 3, False)
    >>> w[:, 0].tolist()
    [6, 4, 0]
    """
    r1, c1 = row0 + words.shape[0], word0 + words.shape[1]
    i = np.arange(row0, r1)
    iw, ib = i >> 6, (i & 63).astype(np.uint64)
    if row0 != 0 or word0 != 0 or c1 != words_per_row(n):  # a tile: its diagonal words only
        ok = (iw >= word0) & (iw < c1)
        i, iw, ib = i[ok], iw[ok], ib[ok]
    if directed:  # clear the diagonal bit
        words[i - row0, iw - word0] &= ~np.left_shift(_ONE, ib)
    else:  # in the word holding column i, keep only columns j > i
        words[i - row0, iw - word0] &= ~(np.left_shift(np.uint64(2), ib) - _ONE)
    tail = n & 63
    if tail and c1 == words_per_row(n):
        words[:, -1] &= np.uint64((1 << tail) - 1)


def has_non_pair_bits(words: np.ndarray, n: int, directed: bool) -> bool:
    """Whether the packed matrix has a 1 bit that is not a pair.

    Checks the diagonal (directed), columns j <= i of every row and the words
    left of the diagonal word (undirected), and the padding past column n - 1.

    Examples
    --------
    >>> has_non_pair_bits(np.array([[2], [1]], dtype=np.uint64), 2, False)
    True
    """
    nw = words.shape[1]
    i = np.arange(n)
    iw, ib = i >> 6, (i & 63).astype(np.uint64)
    if directed:
        bad = words[i, iw] & np.left_shift(_ONE, ib)
    else:
        bad = words[i, iw] & (np.left_shift(np.uint64(2), ib) - _ONE)
        for r0 in range(0, n, 64):  # words left of the diagonal word must be zero
            if np.any(words[r0 : r0 + 64, : r0 >> 6]):
                return True
    tail = n & 63
    pad = bool(np.any(words[:, nw - 1] >> np.uint64(tail))) if tail else False
    return bool(np.any(bad)) or pad


def xor_edges(words: np.ndarray, rows: np.ndarray, cols: np.ndarray, row0: int = 0,
              word0: int = 0) -> None:
    """XOR bit (rows[k], cols[k]) of the packed matrix for every k, in place.

    The positions must be distinct (a simple graph's edges).  ``rows`` and
    ``cols`` are positions in the matrix; ``words`` is the whole matrix or a
    tile at offsets (``row0``, ``word0``) that holds every given position.

    Examples
    --------
    >>> w = np.zeros((2, 1), dtype=np.uint64)
    >>> xor_edges(w, np.array([0, 0]), np.array([1, 3]))
    >>> w[:, 0].tolist()
    [10, 0]
    """
    if rows.size == 0:
        return
    nw = words.shape[1]
    flat = (rows.astype(np.int64) - row0) * nw + ((cols >> 6) - word0)
    bit = np.left_shift(_ONE, (cols & 63).astype(np.uint64))
    # one unbuffered pass, linear in the edges (no sort: an O(m log m) sort made a
    # release's time grow ~8x faster with the edge count; see SECURITY.md, timing)
    np.bitwise_xor.at(words.reshape(-1), flat, bit)


def pack_rows(member: np.ndarray) -> np.ndarray:
    """Packed column masks of the rows of a (Q, n) boolean matrix: uint64 (Q, words_per_row(n)).

    Examples
    --------
    >>> pack_rows(np.array([[True, False, True], [False, True, False]])).tolist()
    [[5], [2]]
    """
    member = np.asarray(member, dtype=bool)
    Q, n = member.shape
    nw = words_per_row(n)
    if sys.byteorder != "little":  # pragma: no cover - big-endian hosts
        return np.array([pack_indices(np.flatnonzero(row), n) for row in member], dtype=np.uint64).reshape(Q, nw)
    out = np.zeros((Q, 8 * nw), dtype=np.uint8)  # bool membership packed LSB-first is the word layout
    out[:, : (n + 7) // 8] = np.packbits(member, axis=1, bitorder="little")
    return out.view(np.uint64)


def pack_indices(indices: np.ndarray, n: int) -> np.ndarray:
    """Packed indicator vector (``words_per_row(n)`` words) of a set of positions.

    Examples
    --------
    >>> pack_indices(np.array([0, 3, 64]), 70).tolist()
    [9, 1]
    """
    nw = words_per_row(n)
    idx = np.asarray(indices, dtype=np.int64)
    if sys.byteorder == "little":  # bool membership packed LSB-first is the word layout
        member = np.zeros(64 * nw, dtype=bool)
        member[idx] = True
        return np.packbits(member, bitorder="little").view(np.uint64)
    mask = np.zeros(nw, dtype=np.uint64)  # pragma: no cover - big-endian hosts
    np.bitwise_or.at(mask, idx >> 6, np.left_shift(np.uint64(1), (idx & 63).astype(np.uint64)))
    return mask


class PackedAdjacency(AdjacencyBase):
    """Packed released adjacency with the counting primitives estimators need.

    Implements :class:`~dpgraph.graph.adjacency.PackedWords`.

    Parameters
    ----------
    words : numpy.ndarray of uint64, shape (n, words_per_row(n))
        Taken as is (not copied); bits that are not pairs must be 0.
    n : int
    directed : bool
    """

    #: payload kind of the dpgraph file format (see :mod:`dpgraph.graph.io`)
    file_kind = "packed"

    def __init__(self, words: np.ndarray, n: int, directed: bool) -> None:
        if words.dtype != np.uint64 or words.shape != (n, words_per_row(n)):
            raise ValueError("words must be a uint64 array of shape (n, ceil(n / 64))")
        self._words = words
        self.n = int(n)
        self.directed = bool(directed)
        self._degrees: np.ndarray | None = None  # computed once, on first use (the words never change)

    @property
    def words(self) -> np.ndarray:
        """The packed matrix, uint64 of shape (n, words_per_row(n)); read-only view."""
        return read_only(self._words)

    @property
    def nbytes(self) -> int:
        return int(self._words.nbytes)

    def number_of_edges(self) -> int:
        """Released edges (each unordered pair once)."""
        return int(np.bitwise_count(self._words).sum(dtype=np.int64))

    def _rows_against(self, rows: np.ndarray, mask: np.ndarray) -> int:
        return masked_row_popcount(self._words, rows, mask, upper=not self.directed)

    def cut_count(self, s: np.ndarray, t: np.ndarray) -> int:
        """Released edges between disjoint position sets s and t (s -> t if directed)."""
        if not self.directed and self._degrees is not None and s.size + t.size == self.n:
            # T is the complement of S: cut = vol(A) - 2 e(A) for the smaller side A,
            # which reads only A's rows (half the words or fewer)
            a = s if s.size <= t.size else t
            return int(self._degrees[a].sum()) - 2 * self.within_count(a)
        observed = self._rows_against(s, pack_indices(t, self.n))
        if not self.directed:  # pairs stored in the row of their smaller end
            observed += self._rows_against(t, pack_indices(s, self.n))
        return observed

    def cut_counts(self, sides: CutSides) -> np.ndarray:
        """Raw counts of many cut queries; ``cut_counts(x)[k] == cut_count(*x[k])``.

        With numba, one pass over the rows serves every query (each row is
        read once and ANDed, while in cache, with the masks of the queries it
        takes part in), which matters when the matrix is far larger than the
        cache: about 100,000 nodes and up.  Without numba, one query at a time.

        Parameters
        ----------
        sides : list of (s, t)
            Disjoint position arrays per query.

        Returns
        -------
        numpy.ndarray of int64, shape (len(sides),)

        Examples
        --------
        >>> A = PackedAdjacency(np.array([[2], [0]], dtype=np.uint64), 2, False)
        >>> A.cut_counts([(np.array([0]), np.array([1])), (np.array([1]), np.array([0]))]).tolist()
        [1, 1]
        """
        Q = len(sides)
        if self._one_pass(Q):
            member = np.zeros((Q, self.n), dtype=np.int8)
            for q, (s, t) in enumerate(sides):
                member[q, s] = 1
                member[q, t] = -1
            return self.membership_cut_counts(member)
        if not self.directed and Q >= _DEGREES_AFTER:
            self.degrees()  # cached: complement cuts then read only the smaller side's rows
        return np.array([self.cut_count(s, t) for s, t in sides], dtype=np.int64)

    def _one_pass(self, Q: int) -> bool:
        """Whether one pass over the rows for all Q queries beats one pass per query.

        It does once the matrix no longer fits in cache (> 8 MiB) and numba
        is there; below that, a query's rows stream from cache and its mask
        stays in L1, which the one-pass kernel (all masks live) cannot match.
        """
        return Q > 1 and self.nbytes >= 1 << 23 and HAVE_NUMBA and self._words.flags.c_contiguous

    def _general_cut_counts(self, sides: CutSides) -> np.ndarray:
        Q = len(sides)
        # one pass pays off once the matrix no longer fits in cache (> 8 MiB)
        big = Q > 1 and self.nbytes >= 1 << 23
        kernel = _batch_kernel() if (HAVE_NUMBA and big and self._words.flags.c_contiguous) else None
        if kernel is None:
            return np.array([self.cut_count(s, t) for s, t in sides], dtype=np.int64)
        side = np.zeros((Q, self.n), dtype=np.uint8)
        smasks = np.empty((Q, words_per_row(self.n)), dtype=np.uint64)
        tmasks = np.empty_like(smasks)
        for q, (s, t) in enumerate(sides):
            side[q, s] = 1
            side[q, t] = 2
            smasks[q] = pack_indices(s, self.n)
            tmasks[q] = pack_indices(t, self.n)
        return kernel(self._words, side, smasks, tmasks, not self.directed).astype(np.int64)

    def membership_cut_counts(self, member: np.ndarray) -> np.ndarray:
        """Raw cut counts of Q queries given as a (Q, n) membership matrix.

        ``member[q, i]`` is 1 if node i is in S_q, -1 if in T_q, 0 if in
        neither.  Queries whose T is the complement of S (no 0 in the row) on
        an undirected release are answered as vol(A) - 2 e(A) for A the
        smaller side, in one pass over A's rows for all queries; the others
        as by :meth:`cut_counts`.  Counts are identical either way.

        Parameters
        ----------
        member : numpy.ndarray of int8, shape (Q, n)

        Returns
        -------
        numpy.ndarray of int64, shape (Q,)

        Examples
        --------
        >>> A = PackedAdjacency(np.array([[6], [4], [0]], dtype=np.uint64), 3, False)  # edges 01, 02, 12
        >>> A.membership_cut_counts(np.array([[1, -1, -1], [1, -1, 0]], dtype=np.int8)).tolist()
        [2, 1]
        """
        member = np.asarray(member)
        Q = member.shape[0]
        out = np.zeros(Q, dtype=np.int64)
        in_s, in_t = member == 1, member == -1
        complement = (in_s | in_t).all(axis=1) & (not self.directed)
        if complement.any():
            small = in_s[complement]
            flip = small.sum(axis=1) > self.n // 2
            small[flip] = ~small[flip]  # the smaller side: fewer rows to read
            vol = small.astype(np.int64) @ self.degrees()
            masks = pack_rows(small)
            if self._one_pass(small.shape[0]):
                within = multi_query_popcount(self._words, small.view(np.uint8), masks, upper=True)
            else:
                within = np.array([self._rows_against(np.flatnonzero(row), mask)
                                   for row, mask in zip(small, masks)], dtype=np.int64)
            out[complement] = vol - 2 * within
        rest = np.flatnonzero(~complement)
        if rest.size:
            out[rest] = self._general_cut_counts([(np.flatnonzero(in_s[q]), np.flatnonzero(in_t[q]))
                                                  for q in rest])
        return out

    def within_count(self, s: np.ndarray) -> int:
        """Released edges with both ends in s (ordered pairs if directed)."""
        return self._rows_against(s, pack_indices(s, self.n))

    def matmat(self, X: np.ndarray, transpose: bool = False) -> np.ndarray:
        """A @ X for the released 0/1 adjacency A (symmetric if undirected); see :func:`packed_matmat`.

        Examples
        --------
        >>> A = PackedAdjacency(np.array([[6], [4], [0]], dtype=np.uint64), 3, False)
        >>> A.matmat(np.eye(3)).astype(int).tolist()
        [[0, 1, 1], [1, 0, 1], [1, 1, 0]]
        """
        return packed_matmat(self._words, self.n, X, self.directed, transpose)

    def row_blocks(self, block: int = 2048) -> Iterator[tuple[int, np.ndarray]]:
        """Yield (first row, bool block of shape (rows, n)) of the stored bits."""
        for i0 in range(0, self.n, block):
            w = self._words[i0 : i0 + block]
            bits = np.unpackbits(w.view(np.uint8), axis=1, bitorder="little")[:, : self.n]
            yield i0, bits.astype(bool, copy=False)

    def degrees(self) -> np.ndarray:
        """Released degree of every node (out-degree if directed); computed once."""
        if self._degrees is None:
            deg = np.bitwise_count(self._words).sum(axis=1, dtype=np.int64)
            if not self.directed:
                for _, bits in self.row_blocks():
                    deg += bits.sum(axis=0, dtype=np.int64)
            self._degrees = deg
        return self._degrees.copy()

    def __repr__(self) -> str:
        kind = "directed" if self.directed else "undirected"
        return f"PackedAdjacency({kind}, n={self.n})"
