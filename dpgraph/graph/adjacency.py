"""The adjacency interface: what every storage of a release provides.

A released graph is stored as one of several adjacencies: the bit-packed
matrix of a full release (:class:`~dpgraph.graph.packed.PackedAdjacency`),
the CSR rows of a sparse release
(:class:`~dpgraph.graph.sparse.SparseAdjacency`), or the packed tiles of a
store on disk (blockwise releases), or the value bit planes of a typed
release (:class:`~dpgraph.graph.typed.TypedAdjacency`) or the CSR rows and
values of a sparse typed one
(:class:`~dpgraph.graph.typed.SparseTypedAdjacency`).  :class:`Adjacency`
declares the members they all implement, so
:class:`~dpgraph.graph.private.PrivateGraph` and the analytics call them
without probing for attributes; :class:`PackedWords` adds the packed words of
the layouts that have them, and :class:`ValuedAdjacency` the counts by value
of a typed release (whose binary members describe its "any tie" graph).

Positions, not labels: every method takes and returns node *positions*
0..n-1 (``PrivateGraph.positions`` maps labels to positions).  An undirected
adjacency stores each unordered pair once, in the row of its smaller end.

:class:`AdjacencyBase` gives the defaults that follow from the required
members (a batch of cuts as a loop over single cuts, the edge list from the
row blocks, the edge count from the degrees); implementations override them
where they have something faster.

Products: :meth:`Adjacency.matmat` multiplies the released 0/1 adjacency
(symmetric, both triangles, for an undirected release) by a dense float
block without ever forming an n x n float matrix, so leading eigenvectors and
block sums of a partition cost passes over the stored bits, not n^2 floats.
"""

from __future__ import annotations

from collections.abc import Iterator, Sequence
from typing import ClassVar, Protocol, runtime_checkable

import numpy as np

__all__ = ["Adjacency", "AdjacencyBase", "CutSides", "PackedWords", "ValuedAdjacency"]

#: A batch of cut queries: (s, t) position arrays per query, disjoint sides.
CutSides = Sequence[tuple[np.ndarray, np.ndarray]]


@runtime_checkable
class Adjacency(Protocol):
    """The released pairs of a graph on n nodes, queried by node positions.

    Attributes
    ----------
    n : int
        Number of nodes.
    directed : bool
        Whether rows are ordered pairs.
    file_kind : str or None
        Payload kind in the dpgraph file format (``"packed"``, ``"sparse"``),
        or None when the adjacency is not saved to a single file (a store of
        tiles is its own file).
    """

    n: int
    directed: bool
    file_kind: ClassVar[str | None]

    @property
    def nbytes(self) -> int:
        """Bytes of released data held (or stored, for an on-disk adjacency)."""
        ...

    def number_of_edges(self) -> int:
        """Released edges (each unordered pair once)."""
        ...

    def degrees(self) -> np.ndarray:
        """Released degree of every node (out-degree if directed), int64."""
        ...

    def cut_count(self, s: np.ndarray, t: np.ndarray) -> int:
        """Released edges between disjoint position sets s and t (s -> t if directed)."""
        ...

    def cut_counts(self, sides: CutSides) -> np.ndarray:
        """``cut_count`` of every (s, t) of a batch, as int64."""
        ...

    def membership_cut_counts(self, member: np.ndarray) -> np.ndarray:
        """Raw cut counts of a (Q, n) int8 membership matrix: 1 = in S_q, -1 = in T_q, 0 = neither."""
        ...

    def within_count(self, s: np.ndarray) -> int:
        """Released edges with both ends in s (ordered pairs if directed)."""
        ...

    def row_blocks(self, block: int = 2048) -> Iterator[tuple[int, np.ndarray]]:
        """Yield (first row, bool block of shape (rows, n)) of the stored pairs."""
        ...

    def edge_array(self) -> tuple[np.ndarray, np.ndarray]:
        """Positions (rows, cols) of every stored pair, row-major."""
        ...

    def matmat(self, X: np.ndarray, transpose: bool = False) -> np.ndarray:
        """A @ X for the released 0/1 adjacency A (A^T @ X with ``transpose``; A symmetric if undirected)."""
        ...

    def matvec(self, x: np.ndarray, transpose: bool = False) -> np.ndarray:
        """A @ x for one vector (A^T @ x with ``transpose``)."""
        ...


@runtime_checkable
class PackedWords(Adjacency, Protocol):
    """An adjacency in the packed layout of :mod:`dpgraph.graph.packed`."""

    @property
    def words(self) -> np.ndarray:
        """The packed matrix, uint64 of shape (n, words_per_row(n)) (read-only view)."""
        ...


@runtime_checkable
class ValuedAdjacency(Adjacency, Protocol):
    """A typed release: each pair holds a value index 0..K-1 (0 = no tie).

    Its :class:`Adjacency` members describe the released "any tie" graph
    (value index >= 1), so binary code reads it unchanged; these members count
    released pairs by value.  Arrays indexed by value have K entries, entry
    0 counting released "no tie" pairs.  A dense typed release is also
    :class:`PackedWords` (its any-tie matrix); a sparse one is CSR.
    """

    K: int

    def value_counts(self) -> np.ndarray:
        """Released pairs per value index, int64 (K,)."""
        ...

    def value_cut_counts(self, s: np.ndarray, t: np.ndarray) -> np.ndarray:
        """Released pairs of S x T per value index, int64 (K,)."""
        ...

    def value_within_counts(self, s: np.ndarray) -> np.ndarray:
        """Released pairs with both ends in s per value index, int64 (K,)."""
        ...

    def value_degrees(self, direction: str = "out") -> np.ndarray:
        """Released degree of every node per value index, int64 (n, K) ("out" or "in")."""
        ...

    def value_row_blocks(self, value: int, block: int = 2048) -> Iterator[tuple[int, np.ndarray]]:
        """Yield (first row, bool block (rows, n)) of the stored pairs of value index ``value``."""
        ...

    def edge_values(self, rows: np.ndarray, cols: np.ndarray) -> np.ndarray:
        """Released value index of the given pairs, int64."""
        ...


class AdjacencyBase:
    """Defaults for :class:`Adjacency` implementations.

    Subclasses set ``n`` and ``directed`` in their constructor and implement
    ``nbytes``, ``degrees``, ``cut_count``, ``within_count`` and
    ``row_blocks``; the rest has a default here.
    """

    n: int
    directed: bool
    file_kind: ClassVar[str | None] = None

    def degrees(self) -> np.ndarray:  # pragma: no cover - abstract
        raise NotImplementedError

    def cut_count(self, s: np.ndarray, t: np.ndarray) -> int:  # pragma: no cover - abstract
        raise NotImplementedError

    def row_blocks(self, block: int = 2048) -> Iterator[tuple[int, np.ndarray]]:  # pragma: no cover
        raise NotImplementedError

    def number_of_edges(self) -> int:
        """Released edges (each unordered pair once): half the degree sum if undirected."""
        total = int(self.degrees().sum(dtype=np.int64))
        return total if self.directed else total // 2

    def cut_counts(self, sides: CutSides) -> np.ndarray:
        """``cut_count`` of every (s, t) of a batch, one query at a time."""
        return np.array([self.cut_count(s, t) for s, t in sides], dtype=np.int64)

    def membership_cut_counts(self, member: np.ndarray) -> np.ndarray:
        """:meth:`cut_counts` of the queries of a (Q, n) membership matrix (1 = S, -1 = T)."""
        return self.cut_counts([(np.flatnonzero(row == 1), np.flatnonzero(row == -1)) for row in member])

    def matmat(self, X: np.ndarray, transpose: bool = False) -> np.ndarray:
        """The released 0/1 adjacency A times a dense block: A @ X, or A^T @ X with ``transpose``.

        A is n x n with A[i, j] = 1 when pair (i, j) is released as an edge
        (both triangles for an undirected release, so A is symmetric and
        ``transpose`` changes nothing; the diagonal is 0).  The default reads
        :meth:`row_blocks` (about 2^22 pairs at a time) and multiplies each
        block with BLAS, so memory stays O(block + n k): never an n x n float.

        Parameters
        ----------
        X : numpy.ndarray, shape (n, k) or (n,)
            float32 stays float32 (sums of 0/1 entries are exact below 2^24),
            anything else is computed in float64.
        transpose : bool, default False
            Multiply by A^T (directed releases: in-edges instead of out-edges).

        Returns
        -------
        numpy.ndarray
            Same shape as ``X``.
        """
        X, vector = _as_block(X, self.n)
        out = np.zeros_like(X)
        rows = max(1, (1 << 22) // max(self.n, 1))
        for i0, bits in self.row_blocks(rows):
            B = bits.astype(X.dtype)
            i1 = i0 + B.shape[0]
            if not self.directed or not transpose:
                out[i0:i1] += B @ X
            if not self.directed or transpose:
                out += B.T @ X[i0:i1]
        return out[:, 0] if vector else out

    def matvec(self, x: np.ndarray, transpose: bool = False) -> np.ndarray:
        """:meth:`matmat` of one vector: A @ x (A^T @ x with ``transpose``), shape (n,)."""
        x = np.asarray(x)
        if x.ndim != 1:
            raise ValueError(f"x must be a vector of length n = {self.n}, got shape {x.shape}")
        return self.matmat(x, transpose)

    def edge_array(self) -> tuple[np.ndarray, np.ndarray]:
        """Positions (rows, cols) of every stored pair, row-major, from :meth:`row_blocks`."""
        rows, cols = [], []
        for i0, bits in self.row_blocks():
            r, c = np.nonzero(bits)
            rows.append(r + i0)
            cols.append(c)
        if not rows:
            return np.zeros(0, dtype=np.int64), np.zeros(0, dtype=np.int64)
        return np.concatenate(rows), np.concatenate(cols)


def _as_block(X: np.ndarray, n: int) -> tuple[np.ndarray, bool]:
    """(C-contiguous float32/float64 block of shape (n, k), whether X was a vector)."""
    X = np.asarray(X)
    if X.ndim not in (1, 2) or X.shape[0] != n:
        raise ValueError(f"X must have shape (n,) or (n, k) with n = {n} nodes, got shape {X.shape}")
    if not (np.issubdtype(X.dtype, np.number) or X.dtype == np.bool_) or np.iscomplexobj(X):
        raise TypeError(f"X must be a real numeric array, got dtype {X.dtype}")
    dtype = np.float32 if X.dtype == np.float32 else np.float64
    vector = X.ndim == 1
    X = np.ascontiguousarray(X.reshape(n, -1), dtype=dtype)
    return X, vector
