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

#: tiles whose results are gathered before they are folded into the answer
_BATCH = 256


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


def _tile_degrees(loc: StoreLocation, plan: TilePlan, a: int, b: int) -> tuple:
    """(first row, row sums, first column, column sums) of tile (a, b): the tile's share of the
    degrees, its size the tile's sides (not n: a full vector per tile would not fit at 10^6)."""
    words = _read_tile(loc, plan, a, b)
    r0, r1, c0, c1 = plan.bounds(a, b)
    rows = np.bitwise_count(words).sum(axis=1, dtype=np.int64)
    j0, j1 = 64 * c0, min(plan.n, 64 * c1)
    cols = np.zeros(max(0, j1 - j0), dtype=np.int64)
    if not plan.directed:
        kernel = _column_kernel()
        if kernel is not None:  # bit-sliced counters: about 5x faster than unpacking the tile
            counts = np.zeros(64 * words.shape[1], dtype=np.int64)
            kernel(np.ascontiguousarray(words), counts)
            cols += counts[: j1 - j0]
        else:
            for s0 in range(0, r1 - r0, 1024):
                cols += _unpack(words[s0 : s0 + 1024], j1 - j0).sum(axis=0, dtype=np.int64)
    return r0, rows, j0, cols


_COLUMN_KERNEL: list = []


def _column_kernel() -> Any:
    """The compiled column counter of :mod:`dpgraph.graph._cutkernel`, or None (numpy's path).

    Loaded and tried on a tiny block once a process: any failure means
    numpy's path (the same counts).
    """
    if not _COLUMN_KERNEL:
        from ..._numba import load_kernels

        kernels = load_kernels("dpgraph.graph._cutkernel", ("column_counts",))
        fn = None if kernels is None else kernels[0]
        if fn is not None:
            try:
                fn(np.ones((1, 1), dtype=np.uint64), np.zeros(64, dtype=np.int64))
            except Exception:  # any failure of the compiled path: numpy's
                fn = None
        _COLUMN_KERNEL.append(fn)
    return _COLUMN_KERNEL[0]


class ZarrAdjacency(AdjacencyBase):
    """The :class:`~dpgraph.graph.adjacency.Adjacency` of a Zarr store of packed tiles.

    Every query is a Dask reduction over the tiles (run on the active
    distributed client if there is one, else on Dask's threads).
    :meth:`cut_counts` answers a batch of cuts reading each tile once.
    """

    #: the payload kind of a ``.dpg`` file pointing at the store (:mod:`dpgraph.graph.store_io`)
    file_kind = "store"

    def __init__(self, location: StoreLocation, plan: TilePlan, metadata: dict | None = None) -> None:
        self.location = location
        self.metadata = dict(metadata or {})  # the store's public metadata, as validated on open
        self._plan = plan
        self.n = plan.n
        self.directed = plan.directed
        self._degrees: np.ndarray | None = None  # the store never changes: one pass answers both
        self._words: np.ndarray | None = None  # the whole matrix, once a call has read it

    @property
    def nbytes(self) -> int:
        """Bytes of packed words held by the tiles that store pairs."""
        total = 0
        for a, b in self._plan.tiles():
            r0, r1, c0, c1 = self._plan.bounds(a, b)
            total += (r1 - r0) * (c1 - c0) * 8
        return total

    def _reduce(self, fn: Any, fold: Any, total: Any, *args: Any) -> Any:
        """``total`` folded with ``fn``'s result for every tile, ``_BATCH`` tiles at a time.

        The results of a batch are folded before the next batch runs, so the
        caller holds one batch of tile results, never one per tile of the
        store (3,248 tiles at 917,504 nodes).
        """
        import dask

        args_d = [share(x) if isinstance(x, np.ndarray) else x for x in args]
        tiles = self._plan.tiles()
        for k in range(0, len(tiles), _BATCH):
            tasks = [dask.delayed(fn, pure=True)(self.location, self._plan, a, b, *args_d)
                     for a, b in tiles[k : k + _BATCH]]
            for part in dask.compute(*tasks):
                total = fold(total, part)
        return total

    def number_of_edges(self) -> int:
        """Released edges (each unordered pair once): from the degrees, one pass over the tiles.

        The degree pass reads each tile once and answers the edge count too
        (sum of the degrees, halved if undirected), so a caller that asks for
        both (the degree distribution, a report) reads the store once.
        """
        total = int(self.degrees().sum(dtype=np.int64))
        return total if self.directed else total // 2

    def degrees(self) -> np.ndarray:
        """Released degree of every node (out-degree if directed); one pass, computed once."""

        def fold(deg: np.ndarray, part: tuple) -> np.ndarray:
            r0, rows, j0, cols = part
            deg[r0 : r0 + rows.size] += rows
            deg[j0 : j0 + cols.size] += cols
            return deg

        if self._degrees is None:
            self._degrees = self._reduce(_tile_degrees, fold, np.zeros(self.n, dtype=np.int64))
        return self._degrees.copy()

    def _bool_masks(self, sets: Sequence[np.ndarray]) -> np.ndarray:
        m = np.zeros((len(sets), 64 * words_per_row(self.n)), dtype=np.uint8)
        for q, s in enumerate(sets):
            m[q, s] = 1
        return m

    def _bilinear(self, lefts: Sequence[np.ndarray], rights: Sequence[np.ndarray]) -> np.ndarray:
        L = np.packbits(self._bool_masks(lefts), axis=1, bitorder="little")
        R = np.packbits(self._bool_masks(rights), axis=1, bitorder="little")
        R64 = np.ascontiguousarray(R).view("<u8").astype(np.uint64, copy=False)
        return self._reduce(_tile_bilinear, lambda t, x: t + x,
                            np.zeros(len(lefts), dtype=np.int64), L, R64)

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
        arr = self.location.array("adjacency") if self._words is None else self._words
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
        """The whole packed matrix, read into memory once and kept (read-only).

        The analytics that need the whole matrix (triangles, clustering,
        communities; sized first by :class:`BlockwiseGraph`) then share one
        read of the store, and :meth:`row_blocks` reads from it.
        """
        if self._words is None:
            words = np.asarray(self.location.array("adjacency")[:])
            words.flags.writeable = False
            self._words = words
        return self._words


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
                 probabilities: RRProbabilities, metadata: dict, name: str | None = None) -> None:
        super().__init__(adjacency, index, probabilities, name=name)
        self.metadata = dict(metadata)
        self.release_id = str(metadata["release_id"])

    @property
    def nonce(self) -> bytes:
        """The release's public nonce: with the secret key it reproduces the release."""
        return bytes.fromhex(self.metadata["nonce"])

    # ---- what needs the whole matrix in memory: sized before the store is read --------
    def _whole_matrix(self, call: str) -> None:
        """Refuse ``call`` before reading, when the packed matrix it copies cannot fit."""
        from .._memory import Alternative, check_call_fits, sparse_release_alternative

        n = self.number_of_nodes()
        # the whole (n x words) matrix read from the store, and the analytic's working copy of it
        need = 2 * 8 * n * words_per_row(n) if self.adjacency._words is None else 8 * n * words_per_row(n)
        check_call_fits(self, need,
                        f"{call} on a blockwise store of {n:,} nodes reads its whole packed matrix "
                        "into memory; it",
                        [Alternative("the store answers in one pass each: R.number_of_edges(), "
                                     "R.degree(), R.degree_distribution(), R.cuts(...)"),
                         sparse_release_alternative(n)])

    def triangles(self, *args: Any, **kwargs: Any) -> Any:
        """:meth:`PrivateGraph.triangles`, refused before the store is read when its packed
        matrix cannot fit in memory (MemoryError with both sizes and the alternatives)."""
        self._whole_matrix("R.triangles()")
        return super().triangles(*args, **kwargs)

    def transitivity(self, *args: Any, **kwargs: Any) -> Any:
        """:meth:`PrivateGraph.transitivity`, refused like :meth:`triangles` when it cannot fit."""
        self._whole_matrix("R.transitivity()")
        return super().transitivity(*args, **kwargs)

    def communities(self, *args: Any, **kwargs: Any) -> Any:
        """:meth:`PrivateGraph.communities`, refused like :meth:`triangles` when it cannot fit."""
        self._whole_matrix("R.communities()")
        return super().communities(*args, **kwargs)

    def save(self, path: Any, *, signing_key: Any = None, name: str | None = None) -> None:
        """Write a small ``.dpg`` file that points at this release's store.

        The file (payload kind ``"store"``, docs/file-format.md) holds the
        public header of every release file (vertex set, epsilon, the exact
        flip numerator; a name and a signature if asked) and names the store:
        its path relative to the file's folder (its URL if remote), its
        release id and nonce, and a SHA-256 of its metadata.  No pair is
        copied: :func:`dpgraph.load` reopens the store and refuses it if it
        is missing, moved, holds another release or changed.  ``dpgraph
        report FILE.dpg`` then reports the store.  Parameters and errors as
        :meth:`PrivateGraph.save`.

        Examples
        --------
        >>> import networkx as nx, dpgraph, tempfile, os, warnings
        >>> from dpgraph.graph.blockwise import release_blockwise
        >>> folder = tempfile.mkdtemp()
        >>> with warnings.catch_warnings():
        ...     warnings.simplefilter("ignore")
        ...     B = release_blockwise(nx.path_graph(200), 1.0, os.path.join(folder, "s.zarr"),
        ...                           key=bytes(32))
        >>> B.save(os.path.join(folder, "s.dpg"))
        >>> R = dpgraph.load(os.path.join(folder, "s.dpg"))
        >>> type(R).__name__, R.release_id == B.release_id
        ('BlockwiseGraph', True)
        """
        super().save(path, signing_key=signing_key, name=name)

    def __repr__(self) -> str:  # no pass over the store just to print
        kind = "directed" if self.directed else "undirected"
        return (
            f"BlockwiseGraph({kind}, nodes={self.number_of_nodes()}, epsilon={self.epsilon:g}, "
            f"flip_probability={self.flip_probability:.6g}, release_id={self.release_id})"
        )
