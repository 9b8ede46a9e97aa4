"""Tiles of a blockwise release: the grid, each tile's random stream, sampling a tile.

Tile (a, b) holds rows ``a * tile_rows ...`` and packed words
``b * tile_words ...`` of the packed adjacency (the layout of
:class:`~dpgraph.graph.packed.PackedAdjacency`).  Inside a tile, words are
drawn in 64-row bands exactly as the in-memory release draws them
(:func:`~dpgraph.graph.dense.fill_bands`), so one tile covering the matrix
reproduces ``dpgraph.release`` for the same stream.
"""

from __future__ import annotations

import hashlib
import hmac
import os
from dataclasses import dataclass
from typing import Any

import numpy as np

from ...core.probabilities import rr_probabilities
from ...core.randomness import SecureRandom
from ..dense import fill_bands  # the in-memory schedule; shared so tiles reproduce it
from ..packed import PackedAdjacency, clear_non_pairs, words_per_row, xor_edges
from ..private import PrivateGraph
from .edges import EdgeKeys

__all__ = [
    "DEFAULT_TILE",
    "NONCE_BYTES",
    "TilePlan",
    "check_key",
    "check_nonce",
    "check_tile",
    "new_nonce",
    "release_tiled",
    "sample_tile",
    "tile_source",
]

DEFAULT_TILE = (4096, 32768)
NONCE_BYTES = 16


@dataclass(frozen=True)
class TilePlan:
    """The tile grid of a release: n nodes, tiles of ``tile_rows`` x ``tile_words`` words."""

    n: int
    directed: bool
    tile_rows: int
    tile_words: int

    @property
    def nw(self) -> int:
        return words_per_row(self.n)

    @property
    def grid(self) -> tuple[int, int]:
        return -(-self.n // self.tile_rows), -(-self.nw // self.tile_words)

    def bounds(self, a: int, b: int) -> tuple[int, int, int, int]:
        """(first row, end row, first word, end word) of tile (a, b)."""
        r0, c0 = a * self.tile_rows, b * self.tile_words
        return r0, min(self.n, r0 + self.tile_rows), c0, min(self.nw, c0 + self.tile_words)

    def holds_pairs(self, a: int, b: int) -> bool:
        if self.directed:
            return True
        r0, _, _, c1 = self.bounds(a, b)
        return min(self.n, 64 * c1) - 1 > r0  # some column j > the first row

    def count_tiles(self) -> int:
        """Number of tiles that hold pairs, in O(log n) (no list of tiles, no loop over rows).

        Undirected: tile row a (first row r0 = a * tile_rows, r0 + 1 < n)
        holds pairs in its tile columns from (r0 + 1) // (64 * tile_words)
        on; the sum over a of those floors is a floor sum.
        """
        ra, cb = self.grid
        if self.directed:
            return ra * cb
        tr, width = self.tile_rows, 64 * self.tile_words
        rows = min(ra, -(-(self.n - 1) // tr))  # tile rows with r0 + 1 < n
        rows = min(rows, -(-(cb * width - 1) // tr))  # ... and some tile column left
        return rows * cb - _floor_sum(rows, width, tr, 1)

    def tiles(self) -> list[tuple[int, int]]:
        """The tiles that hold pairs (undirected: none wholly below the diagonal)."""
        ra, cb = self.grid
        return [(a, b) for a in range(ra) for b in range(cb) if self.holds_pairs(a, b)]


def _floor_sum(n: int, m: int, a: int, b: int) -> int:
    """sum(floor((a * i + b) / m) for i in range(n)) for non-negative ints, in O(log m)."""
    total = 0
    while True:
        if a >= m:
            total += n * (n - 1) // 2 * (a // m)
            a %= m
        if b >= m:
            total += n * (b // m)
            b %= m
        y_max = a * n + b
        if y_max < m:
            return total
        n, b = divmod(y_max, m)
        m, a = a, m


def check_tile(tile: Any) -> tuple[int, int]:
    """A (rows, cols) tile shape, both positive multiples of 64."""
    try:
        tr, tc = (int(x) for x in tile)
    except (TypeError, ValueError):
        raise TypeError("tile must be a (rows, cols) pair of integers, e.g. (4096, 32768)") from None
    if tr < 64 or tr % 64 or tc < 64 or tc % 64:
        raise ValueError(f"tile sides must be positive multiples of 64, got {(tr, tc)}")
    return tr, tc


def check_key(key: Any) -> bytes:
    """A release key: 16 or 32 secret bytes."""
    if not isinstance(key, (bytes, bytearray)) or len(key) not in (16, 32):
        raise TypeError(
            "key must be 16 or 32 bytes (e.g. os.urandom(32)), kept secret; "
            "or None for a fresh, unrecorded key"
        )
    return bytes(key)


def check_nonce(nonce: Any) -> bytes:
    """A release nonce: 16 bytes (public; stored with the release)."""
    if not isinstance(nonce, (bytes, bytearray)) or len(nonce) != NONCE_BYTES:
        raise TypeError(f"nonce must be {NONCE_BYTES} bytes, e.g. a stored release's B.nonce")
    return bytes(nonce)


def new_nonce() -> bytes:
    """A fresh random release nonce from the operating system."""
    return os.urandom(NONCE_BYTES)


def tile_source(key: bytes, nonce: bytes, a: int, b: int) -> SecureRandom:
    """The random stream of tile (a, b) of the release made with ``key`` and ``nonce``.

    The stream key is HMAC-SHA256(key, label || nonce): every release draws a
    fresh nonce, so two releases under one key never share a flip, and tile
    (a, b) then takes the substream (a, b) of that stream.
    """
    stream_key = hmac.new(check_key(key), b"dpgraph-blockwise-stream" + check_nonce(nonce),
                          hashlib.sha256).digest()
    return SecureRandom(key=stream_key).substream(a, b)


def sample_tile(source: SecureRandom, plan: TilePlan, a: int, b: int, numerator: int,
                keys: np.ndarray, out: np.ndarray | None = None) -> np.ndarray:
    """The packed words of tile (a, b): flips from ``source``, true edges XOR-ed in.

    Follows the randomness schedule of :func:`dpgraph.graph.dense.sample_packed_flips`
    restricted to the tile's words: bands of 64 rows, each drawing the words
    from max(first tile word, the band's diagonal word) on.  A single tile
    covering the matrix therefore reproduces the in-memory release exactly.

    ``out``, a uint64 array at least the tile's shape (e.g. a full-size
    buffer reused from tile to tile: no fresh pages to fault in), receives the
    words in its top-left corner, which is returned; the rest of ``out`` is
    left as it is.
    """
    n, directed = plan.n, plan.directed
    r0, r1, c0, c1 = plan.bounds(a, b)
    if out is None:
        out = np.zeros((r1 - r0, c1 - c0), dtype=np.uint64)
    else:
        out = out[: r1 - r0, : c1 - c0]
        if not directed and ((r1 - 1) >> 6) > c0:  # the bands below leave words left of the diagonal
            out[...] = 0
    bands = [(s0, min(r1, s0 + 64), max(c0, 0 if directed else s0 >> 6))
             for s0 in range(r0, r1, 64)]
    bands = [band for band in bands if band[2] < c1]
    fill_bands(out, bands, c1, numerator, source, row0=r0, word0=c0)
    clear_non_pairs(out, n, directed, row0=r0, word0=c0)
    lo, hi = np.searchsorted(keys, [r0 * n, r1 * n])
    if hi > lo:
        kk = keys[lo:hi]
        rows, cols = kk // n, kk % n
        inside = (cols >= 64 * c0) & (cols < 64 * c1)
        xor_edges(out, rows[inside], cols[inside], row0=r0, word0=c0)
    return out


def release_tiled(edges: EdgeKeys, epsilon: float, key: bytes,
                  tile: tuple[int, int] = DEFAULT_TILE, *,
                  nonce: bytes | None = None) -> PrivateGraph:
    """The blockwise release computed in memory, tile by tile: a reference, not a release.

    Bit for bit what :func:`~dpgraph.graph.blockwise.release_blockwise`
    writes for the same key, nonce, tile shape and input (pass a stored
    release's ``B.nonce`` to reproduce it): the reference the tests compare
    stores with.  It is not part of the package's face: it charges no ledger
    and goes through no release transaction, so it must never publish
    anything (release through ``dpgraph.release`` or ``release_blockwise``).

    Parameters
    ----------
    edges : EdgeKeys
        From :func:`~dpgraph.graph.blockwise.edge_keys`.
    epsilon : float
    key : bytes
        16 or 32 secret bytes.
    tile : (int, int), default (4096, 32768)
        Rows and columns of a tile, multiples of 64.
    nonce : bytes, optional
        16 bytes.  ``None`` (the default) draws a fresh one, so the same key
        never repeats a flip; give a nonce only to reproduce a release.

    Returns
    -------
    PrivateGraph
        With a :class:`~dpgraph.graph.packed.PackedAdjacency`.

    Examples
    --------
    >>> import networkx as nx
    >>> from dpgraph.graph.blockwise import edge_keys
    >>> R = release_tiled(edge_keys(nx.path_graph(5)), 1.0, bytes(16))
    >>> R.number_of_nodes()
    5
    """
    rr = rr_probabilities(epsilon, 2)
    key = check_key(key)
    nonce = new_nonce() if nonce is None else check_nonce(nonce)
    tr, tc = check_tile(tile)
    plan = TilePlan(edges.n, edges.directed, tr, tc // 64)
    words = np.zeros((plan.n, plan.nw), dtype=np.uint64)
    for a, b in plan.tiles():
        r0, r1, c0, c1 = plan.bounds(a, b)
        words[r0:r1, c0:c1] = sample_tile(tile_source(key, nonce, a, b), plan, a, b,
                                          rr.flip_numerator, edges.keys)
    adjacency = PackedAdjacency(words, plan.n, plan.directed)
    return PrivateGraph(adjacency, edges.index, rr)
