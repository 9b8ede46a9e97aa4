"""Bit-packed adjacency of a released graph: one bit per row of the database.

Row i of the matrix is ``ceil(n / 64)`` uint64 words; bit ``j % 64`` of word
``j // 64`` is the released value of pair (i, j).  An undirected release keeps
only the strict upper triangle (j > i), so each unordered pair is stored once;
the full matrix costs n^2 bits, i.e. 2 bits per unordered pair.  A directed
release uses the whole matrix but the diagonal.
"""

from __future__ import annotations

from typing import Iterator

import numpy as np

__all__ = ["PackedAdjacency", "pack_indices", "words_per_row"]

_ONES = np.uint64(0xFFFFFFFFFFFFFFFF)


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
    mask = np.zeros(words_per_row(n), dtype=np.uint64)
    idx = np.asarray(indices, dtype=np.int64)
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
        return int(np.bitwise_count(self.words[rows] & mask).sum(dtype=np.int64))

    def cut_count(self, s: np.ndarray, t: np.ndarray) -> int:
        """Released edges between disjoint position sets s and t (s -> t if directed)."""
        observed = self._rows_against(s, pack_indices(t, self.n))
        if not self.directed:  # pairs stored in the row of their smaller end
            observed += self._rows_against(t, pack_indices(s, self.n))
        return observed

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
