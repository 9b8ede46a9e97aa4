"""Queries on a stored blockwise release: Dask reductions over its tiles.

Edge counts are popcounts, degrees row and column sums, and a batch of Q cuts
reads each tile once and answers all Q (with numba, each row is ANDed with
the masks of every query that selects it in one pass).
"""

from __future__ import annotations

from collections.abc import Iterator, Sequence
from typing import Any

import numpy as np

from ...core.probabilities import RRProbabilities
from ..adjacency import AdjacencyBase
from ..encoding import NodeIndex
from ..packed import multi_query_popcount, words_per_row
from ..private import PrivateGraph
from .cluster import share
from .location import StoreLocation
from .tiles import TilePlan

__all__ = ["BlockwiseGraph", "ZarrAdjacency"]


def _read_tile(loc: StoreLocation, plan: TilePlan, a: int, b: int) -> np.ndarray:
    r0, r1, c0, c1 = plan.bounds(a, b)
    return np.asarray(loc.array("adjacency")[r0:r1, c0:c1])


def _unpack(words: np.ndarray, ncols: int) -> np.ndarray:
    return np.unpackbits(words.view(np.uint8), axis=1, bitorder="little")[:, :ncols]


def _tile_bilinear(loc: StoreLocation, plan: TilePlan, a: int, b: int,
                   left: np.ndarray, right: np.ndarray) -> np.ndarray:
    """sum_{i, j in tile} L[q, i] A_ij R[q, j] for every q.

    ``left`` holds the row sets packed 8 to a byte (little-endian bit order),
    ``right`` the column sets packed 64 to a word like the rows of the
    adjacency.
    """
    words = _read_tile(loc, plan, a, b)
    r0, r1, c0, c1 = plan.bounds(a, b)
    rows = np.unpackbits(left[:, r0 // 8 : -(-r1 // 8)], axis=1, bitorder="little")[:, : r1 - r0]
    return multi_query_popcount(words, rows, right[:, c0:c1], r0, c0, not plan.directed)


def _tile_popcount(loc: StoreLocation, plan: TilePlan, a: int, b: int) -> int:
    return int(np.bitwise_count(_read_tile(loc, plan, a, b)).sum(dtype=np.int64))


def _tile_degrees(loc: StoreLocation, plan: TilePlan, a: int, b: int) -> np.ndarray:
    words = _read_tile(loc, plan, a, b)
    r0, r1, c0, c1 = plan.bounds(a, b)
    deg = np.zeros(plan.n, dtype=np.int64)
    deg[r0:r1] += np.bitwise_count(words).sum(axis=1, dtype=np.int64)
    if not plan.directed:
        j0, j1 = 64 * c0, min(plan.n, 64 * c1)
        for s0 in range(0, r1 - r0, 1024):
            deg[j0:j1] += _unpack(words[s0 : s0 + 1024], j1 - j0).sum(axis=0, dtype=np.int64)
    return deg


class ZarrAdjacency(AdjacencyBase):
    """The :class:`~dpgraph.graph.adjacency.Adjacency` of a Zarr store of packed tiles.

    Every query is a Dask reduction over the tiles (run on the active
    distributed client if there is one, else on Dask's threads).
    :meth:`cut_counts` answers a batch of cuts reading each tile once.
    """

    def __init__(self, location: StoreLocation, plan: TilePlan) -> None:
        self.location = location
        self._plan = plan
        self.n = plan.n
        self.directed = plan.directed

    @property
    def nbytes(self) -> int:
        """Bytes of packed words held by the tiles that store pairs."""
        total = 0
        for a, b in self._plan.tiles():
            r0, r1, c0, c1 = self._plan.bounds(a, b)
            total += (r1 - r0) * (c1 - c0) * 8
        return total

    def _reduce(self, fn: Any, *args: Any) -> list:
        import dask

        args_d = [share(x) if isinstance(x, np.ndarray) else x for x in args]
        tasks = [dask.delayed(fn, pure=True)(self.location, self._plan, a, b, *args_d)
                 for a, b in self._plan.tiles()]
        return list(dask.compute(*tasks))

    def number_of_edges(self) -> int:
        """Released edges (each unordered pair once)."""
        return int(sum(self._reduce(_tile_popcount)))

    def degrees(self) -> np.ndarray:
        """Released degree of every node (out-degree if directed)."""
        parts = self._reduce(_tile_degrees)
        return np.sum(parts, axis=0, dtype=np.int64)

    def _bool_masks(self, sets: Sequence[np.ndarray]) -> np.ndarray:
        m = np.zeros((len(sets), 64 * words_per_row(self.n)), dtype=np.uint8)
        for q, s in enumerate(sets):
            m[q, s] = 1
        return m

    def _bilinear(self, lefts: Sequence[np.ndarray], rights: Sequence[np.ndarray]) -> np.ndarray:
        L = np.packbits(self._bool_masks(lefts), axis=1, bitorder="little")
        R = np.packbits(self._bool_masks(rights), axis=1, bitorder="little")
        R64 = np.ascontiguousarray(R).view("<u8").astype(np.uint64, copy=False)
        parts = self._reduce(_tile_bilinear, L, R64)
        return np.sum(parts, axis=0, dtype=np.int64)

    def cut_counts(self, pairs: Sequence[tuple[np.ndarray, np.ndarray]]) -> np.ndarray:
        """Released edges across each (s, t) of a batch, one pass over the tiles."""
        s_list = [s for s, _ in pairs]
        t_list = [t for _, t in pairs]
        if self.directed:
            return self._bilinear(s_list, t_list)
        return self._bilinear(s_list + t_list, t_list + s_list).reshape(2, -1).sum(axis=0)

    def cut_count(self, s: np.ndarray, t: np.ndarray) -> int:
        """Released edges between disjoint position sets s and t (s -> t if directed)."""
        return int(self.cut_counts([(s, t)])[0])

    def within_count(self, s: np.ndarray) -> int:
        """Released edges with both ends in s (ordered pairs if directed)."""
        return int(self._bilinear([s], [s])[0])

    def row_blocks(self, block: int = 2048) -> Iterator[tuple[int, np.ndarray]]:
        """Yield (first row, bool block of shape (rows, n)) read from the store."""
        arr = self.location.array("adjacency")
        for i0 in range(0, self.n, block):
            words = np.asarray(arr[i0 : i0 + block])
            yield i0, _unpack(words, self.n).astype(bool)

    def edge_array(self) -> tuple[np.ndarray, np.ndarray]:
        """Positions (rows, cols) of every stored 1 bit, read 256 rows at a time."""
        rows, cols = [np.zeros(0, dtype=np.int64)], [np.zeros(0, dtype=np.int64)]
        for i0, bits in self.row_blocks(256):
            r, c = np.nonzero(bits)
            rows.append(r + i0)
            cols.append(c)
        return np.concatenate(rows), np.concatenate(cols)

    @property
    def words(self) -> np.ndarray:
        """The whole packed matrix read into memory (small releases and tests only)."""
        return np.asarray(self.location.array("adjacency")[:])


class BlockwiseGraph(PrivateGraph):
    """A :class:`PrivateGraph` backed by a Zarr store.

    ``cuts(batch)`` answers the whole batch in one pass over the tiles
    (:meth:`ZarrAdjacency.cut_counts`, used by :meth:`PrivateGraph.cuts`).

    Attributes
    ----------
    release_id : str
    metadata : dict
        The store's public metadata.
    """

    def __init__(self, adjacency: ZarrAdjacency, index: NodeIndex,
                 probabilities: RRProbabilities, metadata: dict) -> None:
        super().__init__(adjacency, index, probabilities)
        self.metadata = dict(metadata)
        self.release_id = str(metadata["release_id"])

    @property
    def nonce(self) -> bytes:
        """The release's public nonce: with the secret key it reproduces the release."""
        return bytes.fromhex(self.metadata["nonce"])

    def __repr__(self) -> str:  # no pass over the store just to print
        kind = "directed" if self.directed else "undirected"
        return (
            f"BlockwiseGraph({kind}, nodes={self.number_of_nodes()}, epsilon={self.epsilon:g}, "
            f"flip_probability={self.flip_probability:.6g}, release_id={self.release_id})"
        )
