"""Bit-packed adjacency of a released graph: one bit per row of the database.

Row i of the matrix is ``ceil(n / 64)`` uint64 words; bit ``j % 64`` of word
``j // 64`` is the released value of pair (i, j).  An undirected release keeps
only the strict upper triangle (j > i), so each unordered pair is stored once;
the full matrix costs n^2 bits, i.e. 2 bits per unordered pair.  A directed
release uses the whole matrix but the diagonal.
"""

from __future__ import annotations

import importlib.util
import os
import sys
from typing import Iterator

import numpy as np

__all__ = ["PackedAdjacency", "pack_indices", "words_per_row", "masked_row_popcount", "HAVE_NUMBA"]

_ONES = np.uint64(0xFFFFFFFFFFFFFFFF)


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
# numba is imported and the kernel compiled (or loaded from numba's cache) on
# first use, so ``import dpgraph`` does not pay for it.
HAVE_NUMBA = (not os.environ.get("DPGRAPH_DISABLE_NUMBA")
              and importlib.util.find_spec("numba") is not None)
_KERNEL = None
_WORK = 0  # words counted so far in this process (decides when to load numba)


def _numba_kernel():
    global _KERNEL, HAVE_NUMBA
    if _KERNEL is None:
        try:
            from ._cutkernel import masked_row_popcount as kernel
        except ImportError:  # pragma: no cover - numba missing or broken
            HAVE_NUMBA = False
            return None
        _KERNEL = kernel
    return _KERNEL


def _batch_kernel():
    if _numba_kernel() is None:  # pragma: no cover - numba missing
        return None
    from ._cutkernel import batch_cut_counts

    return batch_cut_counts


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
            _KERNEL is not None or work >= 1 << 22 or _WORK >= 1 << 25):
        kernel = _numba_kernel()
        if kernel is not None:
            return int(kernel(words, rows, mask, bool(upper)))
    return _masked_row_popcount_numpy(words, rows, mask, upper)


def words_per_row(n: int) -> int:
    """Number of 64-bit words a packed row of n bits takes."""
    return (int(n) + 63) // 64


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


class PackedAdjacency:
    """Packed released adjacency with the counting primitives estimators need.

    Parameters
    ----------
    words : numpy.ndarray of uint64, shape (n, words_per_row(n))
    directed : bool
    """

    def __init__(self, words: np.ndarray, n: int, directed: bool) -> None:
        if words.dtype != np.uint64 or words.shape != (n, words_per_row(n)):
            raise ValueError("words must be a uint64 array of shape (n, ceil(n / 64))")
        self.words = words
        self.n = int(n)
        self.directed = bool(directed)

    @property
    def nbytes(self) -> int:
        return int(self.words.nbytes)

    def number_of_edges(self) -> int:
        """Released edges (each unordered pair once)."""
        return int(np.bitwise_count(self.words).sum(dtype=np.int64))

    def _rows_against(self, rows: np.ndarray, mask: np.ndarray) -> int:
        return masked_row_popcount(self.words, rows, mask, upper=not self.directed)

    def cut_count(self, s: np.ndarray, t: np.ndarray) -> int:
        """Released edges between disjoint position sets s and t (s -> t if directed)."""
        observed = self._rows_against(s, pack_indices(t, self.n))
        if not self.directed:  # pairs stored in the row of their smaller end
            observed += self._rows_against(t, pack_indices(s, self.n))
        return observed

    def cut_counts(self, sides: list[tuple[np.ndarray, np.ndarray]]) -> np.ndarray:
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
        # one pass pays off once the matrix no longer fits in cache (> 8 MiB)
        big = Q > 1 and self.nbytes >= 1 << 23
        kernel = _batch_kernel() if (HAVE_NUMBA and big and self.words.flags.c_contiguous) else None
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
        return kernel(self.words, side, smasks, tmasks, not self.directed).astype(np.int64)

    def within_count(self, s: np.ndarray) -> int:
        """Released edges with both ends in s (ordered pairs if directed)."""
        return self._rows_against(s, pack_indices(s, self.n))

    def row_blocks(self, block: int = 2048) -> Iterator[tuple[int, np.ndarray]]:
        """Yield (first row, bool block of shape (rows, n)) of the stored bits."""
        for i0 in range(0, self.n, block):
            w = self.words[i0 : i0 + block]
            bits = np.unpackbits(w.view(np.uint8), axis=1, bitorder="little")[:, : self.n]
            yield i0, bits.astype(bool, copy=False)

    def edge_array(self) -> tuple[np.ndarray, np.ndarray]:
        """Positions (rows, cols) of every stored 1 bit, row-major."""
        rows, cols = [], []
        for i0, bits in self.row_blocks():
            r, c = np.nonzero(bits)
            rows.append(r + i0)
            cols.append(c)
        return np.concatenate(rows), np.concatenate(cols)

    def degrees(self) -> np.ndarray:
        """Released degree of every node (out-degree if directed)."""
        deg = np.bitwise_count(self.words).sum(axis=1, dtype=np.int64)
        if not self.directed:
            for _, bits in self.row_blocks():
                deg += bits.sum(axis=0, dtype=np.int64)
        return deg
