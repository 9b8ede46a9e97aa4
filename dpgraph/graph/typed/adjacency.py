"""The stored typed release: value bit planes, seen as the "any tie" adjacency too.

Storage: ``value_bits(K) = ceil(log2 K)`` packed bit planes of n rows of
``ceil(n / 64)`` words (the layout of :mod:`dpgraph.graph.packed`); plane k
holds bit k of every pair's value index (0 = no tie).  That is
n^2 ceil(log2 K) / 8 bytes, against n^2 (K - 1) / 8 for one bit set per value
(docs/design.md, "Typed storage").  The indicator of value v >= 1 is the AND
of the planes (or their complements) that spell v; since v has a 1 bit, bits
that are not pairs stay 0.

A :class:`TypedAdjacency` is also an ordinary
:class:`~dpgraph.graph.adjacency.Adjacency`: its binary methods (cuts,
degrees, edges, packed ``words``) describe the released "any tie" graph, the
OR of the planes, so every binary analytic reads a typed release as the
collapse to "any tie" (with the channel the release supplies).  The typed
members (:class:`~dpgraph.graph.adjacency.ValuedAdjacency`) count released
pairs by value.
"""

from __future__ import annotations

from collections.abc import Iterator
from typing import Any

import numpy as np

from ..adjacency import AdjacencyBase, CutSides
from ..packed import PackedAdjacency, pack_indices, read_only, words_per_row

__all__ = ["AnyTieAdjacency", "TypedAdjacency"]

_ALL = np.uint64(0xFFFFFFFFFFFFFFFF)
_ROWS = 4096  # rows per block of the typed counting loops (bounded scratch)


def _indicator(P: np.ndarray, v: int) -> np.ndarray:
    """Words of the pairs whose value index is v >= 1, from plane rows P (B, rows, nw)."""
    out = None
    for k in range(P.shape[0]):
        plane = P[k] if (v >> k) & 1 else ~P[k]
        out = plane.copy() if out is None else np.bitwise_and(out, plane, out=out)
    return out


class AnyTieAdjacency(AdjacencyBase):
    """The binary members of a valued adjacency: each is answered by its "any tie" graph.

    A subclass provides ``any_tie``, the released graph of the pairs holding
    any tie value (an :class:`~dpgraph.graph.adjacency.Adjacency`); every
    binary query (counts, cuts, degrees, row blocks, products) is that
    graph's, so the any-tie collapse serves every binary analytic unchanged.
    """

    any_tie: Any  # the released "any tie" graph (a property of the subclass)

    def number_of_edges(self) -> int:
        return self.any_tie.number_of_edges()

    def degrees(self) -> np.ndarray:
        return self.any_tie.degrees()

    def cut_count(self, s: np.ndarray, t: np.ndarray) -> int:
        return self.any_tie.cut_count(s, t)

    def cut_counts(self, sides: CutSides) -> np.ndarray:
        return self.any_tie.cut_counts(sides)

    def membership_cut_counts(self, member: np.ndarray) -> np.ndarray:
        return self.any_tie.membership_cut_counts(member)

    def within_count(self, s: np.ndarray) -> int:
        return self.any_tie.within_count(s)

    def row_blocks(self, block: int = 2048) -> Iterator[tuple[int, np.ndarray]]:
        return self.any_tie.row_blocks(block)

    def edge_array(self) -> tuple[np.ndarray, np.ndarray]:
        return self.any_tie.edge_array()

    def matmat(self, X: np.ndarray, transpose: bool = False) -> np.ndarray:
        return self.any_tie.matmat(X, transpose)


class TypedAdjacency(AnyTieAdjacency):
    """A typed release in bit planes; the binary members answer for "any tie".

    Implements :class:`~dpgraph.graph.adjacency.ValuedAdjacency` (and so
    :class:`~dpgraph.graph.adjacency.PackedWords`: ``words`` is the any-tie
    matrix).

    Parameters
    ----------
    planes : numpy.ndarray of uint64, shape (value_bits(K), n, words_per_row(n))
        Taken as is; bits that are not pairs must be 0 in every plane, and no
        pair may spell a value index >= K.
    n : int
    directed : bool
    K : int
        Values a pair can take (tie values + "no tie").
    """

    file_kind = "typed"

    def __init__(self, planes: np.ndarray, n: int, directed: bool, K: int) -> None:
        nw = words_per_row(n)
        if planes.dtype != np.uint64 or planes.ndim != 3 or planes.shape[1:] != (n, nw) \
                or not 2 <= K <= 1 << planes.shape[0] or (K - 1).bit_length() > planes.shape[0]:
            raise ValueError("planes must be uint64 of shape (value_bits(K), n, ceil(n / 64))")
        self._planes = planes
        self.n = int(n)
        self.directed = bool(directed)
        self.K = int(K)
        self._any: PackedAdjacency | None = None
        self._value_degrees: dict[str, np.ndarray] = {}

    # ---- storage -----------------------------------------------------------------
    @property
    def planes(self) -> np.ndarray:
        """The value bit planes, uint64 (value_bits(K), n, nw); read-only view."""
        return read_only(self._planes)

    @property
    def nbytes(self) -> int:
        """Bytes of the stored planes (the any-tie matrix is derived on demand)."""
        return int(self._planes.nbytes)

    @property
    def any_tie(self) -> PackedAdjacency:
        """The released "any tie" graph (OR of the planes), a packed adjacency (cached)."""
        if self._any is None:
            words = self._planes[0] if self._planes.shape[0] == 1 else np.bitwise_or.reduce(
                self._planes, axis=0)
            self._any = PackedAdjacency(words, self.n, self.directed)
        return self._any

    @property
    def words(self) -> np.ndarray:
        """Packed words of the any-tie graph (read-only view)."""
        return self.any_tie.words

    # ---- counts by value -----------------------------------------------------------
    def _rows_by_value(self, rows: np.ndarray, mask: np.ndarray) -> np.ndarray:
        """Released pairs (i, j), i in rows, j in mask, per value index (index 0 left 0)."""
        out = np.zeros(self.K, dtype=np.int64)
        rows = np.asarray(rows, dtype=np.int64)
        for a in range(0, rows.size, _ROWS):
            P = self._planes[:, rows[a : a + _ROWS], :]
            for v in range(1, self.K):
                ind = _indicator(P, v)
                ind &= mask
                out[v] += int(np.bitwise_count(ind).sum(dtype=np.int64))
        return out

    def value_counts(self) -> np.ndarray:
        """Released pairs per value index 0..K-1 (index 0: released "no tie"), int64.

        Examples
        --------
        >>> planes = np.array([[[6], [0], [0]], [[4], [0], [0]]], dtype=np.uint64)  # (0,1)=1, (0,2)=3
        >>> TypedAdjacency(planes, 3, False, 4).value_counts().tolist()
        [1, 1, 0, 1]
        """
        out = self._rows_by_value(np.arange(self.n), np.full(words_per_row(self.n), _ALL))
        pairs = self.n * (self.n - 1) // (1 if self.directed else 2)
        out[0] = pairs - out[1:].sum()
        return out

    def value_cut_counts(self, s: np.ndarray, t: np.ndarray) -> np.ndarray:
        """Released pairs of S x T (s -> t if directed) per value index, int64 (K,)."""
        out = self._rows_by_value(s, pack_indices(t, self.n))
        if not self.directed:  # pairs stored in the row of their smaller end
            out += self._rows_by_value(t, pack_indices(s, self.n))
        out[0] = s.size * t.size - out[1:].sum()
        return out

    def value_within_counts(self, s: np.ndarray) -> np.ndarray:
        """Released pairs with both ends in s per value index, int64 (K,)."""
        out = self._rows_by_value(s, pack_indices(s, self.n))
        pairs = s.size * (s.size - 1) // (1 if self.directed else 2)
        out[0] = pairs - out[1:].sum()
        return out

    def value_degrees(self, direction: str = "out") -> np.ndarray:
        """Released degree of every node per value index, int64 (n, K); column 0 counts "no tie".

        ``direction`` is "out" (ties i -> j) or "in" (j -> i) for a directed
        release; an undirected release has one degree ("out" and "in" agree).
        """
        if direction not in ("out", "in"):
            raise ValueError(f"direction must be 'out' or 'in', got {direction!r}")
        key = direction if self.directed else "out"
        if key not in self._value_degrees:
            n = self.n
            rows_deg = np.zeros((n, self.K), dtype=np.int64)
            cols_deg = np.zeros((n, self.K), dtype=np.int64)
            for a in range(0, n, _ROWS):
                P = self._planes[:, a : a + _ROWS, :]
                for v in range(1, self.K):
                    ind = _indicator(P, v)
                    rows_deg[a : a + ind.shape[0], v] = np.bitwise_count(ind).sum(axis=1, dtype=np.int64)
                    bits = np.unpackbits(ind.view(np.uint8), axis=1, bitorder="little")[:, :n]
                    cols_deg[:, v] += bits.sum(axis=0, dtype=np.int64)
            if self.directed:
                out_deg, in_deg = rows_deg, cols_deg
                out_deg[:, 0] = (n - 1) - out_deg[:, 1:].sum(axis=1)
                in_deg[:, 0] = (n - 1) - in_deg[:, 1:].sum(axis=1)
                self._value_degrees = {"out": out_deg, "in": in_deg}
            else:
                deg = rows_deg + cols_deg
                deg[:, 0] = (n - 1) - deg[:, 1:].sum(axis=1)
                self._value_degrees = {"out": deg}
        return self._value_degrees[key].copy()

    def value_row_blocks(self, value: int, block: int = 2048) -> Iterator[tuple[int, np.ndarray]]:
        """Yield (first row, bool block (rows, n)) of the stored pairs whose value index is ``value``."""
        if not 1 <= int(value) < self.K:
            raise ValueError(f"value must be a tie value index in 1..{self.K - 1}")
        for i0 in range(0, self.n, block):
            ind = _indicator(self._planes[:, i0 : i0 + block, :], int(value))
            bits = np.unpackbits(ind.view(np.uint8), axis=1, bitorder="little")[:, : self.n]
            yield i0, bits.astype(bool, copy=False)

    def edge_values(self, rows: np.ndarray, cols: np.ndarray) -> np.ndarray:
        """Released value index of pairs (rows[k], cols[k]) (stored orientation), int64."""
        rows = np.asarray(rows, dtype=np.int64)
        cols = np.asarray(cols, dtype=np.int64)
        out = np.zeros(rows.size, dtype=np.int64)
        shift = (cols & 63).astype(np.uint64)
        for k in range(self._planes.shape[0]):
            w = self._planes[k][rows, cols >> 6]
            out |= ((w >> shift) & np.uint64(1)).astype(np.int64) << k
        return out

    def __repr__(self) -> str:
        kind = "directed" if self.directed else "undirected"
        return f"TypedAdjacency({kind}, n={self.n}, K={self.K})"
