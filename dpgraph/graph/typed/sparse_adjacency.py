"""The stored sparse typed release: CSR rows of the stored ties and a value byte each.

Row i lists the stored pairs (i, j) (j > i for an undirected release, as
every adjacency of dpgraph stores them) with their value index 1..K-1; a pair
not stored reads as "no tie" (value index 0).  Memory: 8 (n + 1) bytes plus
5 bytes a stored tie (9 if n >= 2^31).

Like the dense :class:`~dpgraph.graph.typed.TypedAdjacency`, it is an
ordinary :class:`~dpgraph.graph.adjacency.Adjacency` of the released "any
tie" graph (its binary members are those of the
:class:`~dpgraph.graph.sparse.SparseAdjacency` of its pairs) and a
:class:`~dpgraph.graph.adjacency.ValuedAdjacency`: counts by value.
"""

from __future__ import annotations

from collections.abc import Iterator

import numpy as np

from ...core.pairs import pair_index
from ..sparse import SparseAdjacency
from .adjacency import AnyTieAdjacency

__all__ = ["SparseTypedAdjacency"]

_TWO64 = 1 << 64


class SparseTypedAdjacency(AnyTieAdjacency):
    """A sparse typed release: CSR pairs and their value indices.

    Parameters
    ----------
    indptr : numpy.ndarray of int64, shape (n + 1,)
    indices : numpy.ndarray of int32 or int64
        Column of every stored pair, sorted within each row.
    values : numpy.ndarray of uint8
        Value index 1..K-1 of every stored pair.
    n : int
    directed : bool
    K : int
        Values a pair can take (tie values + "no tie"), 2..256.
    keep_numerator : int, default 2^64
        k of the keep probability k / 2^64.

    Examples
    --------
    >>> A = SparseTypedAdjacency(np.array([0, 2, 2, 2]), np.array([1, 2], dtype=np.int32),
    ...                          np.array([1, 2], dtype=np.uint8), 3, False, 3)
    >>> A.value_counts().tolist(), A.number_of_edges()
    ([1, 1, 1], 2)
    """

    file_kind = "sparsetyped"

    def __init__(self, indptr: np.ndarray, indices: np.ndarray, values: np.ndarray, n: int,
                 directed: bool, K: int, keep_numerator: int = _TWO64) -> None:
        self.any_tie = SparseAdjacency(indptr, indices, n, directed, keep_numerator)
        values = np.asarray(values)
        if values.dtype != np.uint8 or values.shape != self.any_tie.indices.shape:
            raise ValueError("values must be uint8, one per stored pair")
        if not 2 <= int(K) <= 256:
            raise ValueError("K must lie in 2..256")
        if values.size and (values.min() < 1 or values.max() >= K):
            raise ValueError("values must be tie value indices 1..K-1")
        self.values = values
        self.n = int(n)
        self.directed = bool(directed)
        self.K = int(K)
        self.keep_numerator = self.any_tie.keep_numerator
        self.indptr, self.indices = self.any_tie.indptr, self.any_tie.indices
        self._value_degrees: dict[str, np.ndarray] = {}

    @property
    def nbytes(self) -> int:
        return self.any_tie.nbytes + int(self.values.nbytes)

    def _entries(self, rows: np.ndarray) -> np.ndarray:
        """Indices into ``indices``/``values`` of the stored pairs of the given rows."""
        rows = np.asarray(rows, dtype=np.int64)
        starts = self.indptr[rows]
        lens = self.indptr[rows + 1] - starts
        total = int(lens.sum())
        if total == 0:
            return np.zeros(0, dtype=np.int64)
        return np.repeat(starts - (np.cumsum(lens) - lens), lens) + np.arange(total)

    def _hist(self, rows: np.ndarray, cols: np.ndarray) -> np.ndarray:
        """Stored pairs (i, j), i in rows, j in cols, per value index (index 0 left 0)."""
        member = np.zeros(self.n, dtype=bool)
        member[cols] = True
        e = self._entries(rows)
        e = e[member[self.indices[e]]]
        return np.bincount(self.values[e], minlength=self.K).astype(np.int64)

    def value_counts(self) -> np.ndarray:
        """Stored pairs per value index 0..K-1 (index 0: the pairs not stored), int64."""
        out = np.bincount(self.values, minlength=self.K).astype(np.int64)
        out[0] = self.n * (self.n - 1) // (1 if self.directed else 2) - out[1:].sum()
        return out

    def value_cut_counts(self, s: np.ndarray, t: np.ndarray) -> np.ndarray:
        """Pairs of S x T (s -> t if directed) per value index, int64 (K,)."""
        out = self._hist(s, t)
        if not self.directed:  # pairs stored in the row of their smaller end
            out += self._hist(t, s)
        out[0] = len(s) * len(t) - out[1:].sum()
        return out

    def value_within_counts(self, s: np.ndarray) -> np.ndarray:
        """Pairs with both ends in s per value index, int64 (K,)."""
        out = self._hist(s, s)
        out[0] = len(s) * (len(s) - 1) // (1 if self.directed else 2) - out[1:].sum()
        return out

    def value_degrees(self, direction: str = "out") -> np.ndarray:
        """Degree of every node per value index, int64 (n, K); column 0 counts "no tie"."""
        if direction not in ("out", "in"):
            raise ValueError(f"direction must be 'out' or 'in', got {direction!r}")
        key = direction if self.directed else "out"
        if key not in self._value_degrees:
            n, K = self.n, self.K
            rows = np.repeat(np.arange(n, dtype=np.int64), np.diff(self.indptr))
            v = self.values.astype(np.int64)
            by_row = np.bincount(rows * K + v, minlength=n * K).reshape(n, K)
            by_col = np.bincount(self.indices.astype(np.int64) * K + v, minlength=n * K).reshape(n, K)
            degs = {"out": by_row, "in": by_col} if self.directed else {"out": by_row + by_col}
            for deg in degs.values():
                deg[:, 0] = (n - 1) - deg[:, 1:].sum(axis=1)
            self._value_degrees = degs
        return self._value_degrees[key].copy()

    def value_row_blocks(self, value: int, block: int = 2048) -> Iterator[tuple[int, np.ndarray]]:
        """Yield (first row, bool block (rows, n)) of the stored pairs whose value index is ``value``."""
        if not 1 <= int(value) < self.K:
            raise ValueError(f"value must be a tie value index in 1..{self.K - 1}")
        for i0 in range(0, self.n, block):
            i1 = min(self.n, i0 + block)
            out = np.zeros((i1 - i0, self.n), dtype=bool)
            a, b = int(self.indptr[i0]), int(self.indptr[i1])
            r = np.repeat(np.arange(i1 - i0), np.diff(self.indptr[i0 : i1 + 1]))
            on = self.values[a:b] == value
            out[r[on], self.indices[a:b][on]] = True
            yield i0, out

    def edge_values(self, rows: np.ndarray, cols: np.ndarray) -> np.ndarray:
        """Value index of pairs (rows[k], cols[k]) (stored orientation), 0 where not stored."""
        r, c = self.edge_array()
        stored = pair_index(r, c, self.n, self.directed)  # sorted: CSR is row-major
        want = pair_index(np.asarray(rows, dtype=np.int64), np.asarray(cols, dtype=np.int64),
                          self.n, self.directed)
        out = np.zeros(want.size, dtype=np.int64)
        if stored.size:
            at = np.minimum(np.searchsorted(stored, want), stored.size - 1)
            hit = stored[at] == want
            out[hit] = self.values[at[hit]]
        return out

    def valued_edge_array(self) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
        """Positions (rows, cols) and value index of every stored tie, row-major."""
        r, c = self.edge_array()
        return r, c, self.values.astype(np.int64)

    def __repr__(self) -> str:
        kind = "directed" if self.directed else "undirected"
        return f"SparseTypedAdjacency({kind}, n={self.n}, K={self.K}, stored_pairs={self.values.size})"
