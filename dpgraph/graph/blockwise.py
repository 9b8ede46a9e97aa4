"""Blockwise releases on Dask, stored as a Zarr array of packed bits.

The packed adjacency (the same bit layout as
:class:`~dpgraph.graph.packed.PackedAdjacency`: bit ``j % 64`` of word ``j // 64``
of row i is pair (i, j); undirected releases keep only j > i) is cut into tiles
of ``tile_rows`` rows by ``tile_cols`` columns.  Tile (a, b) is sampled from its
own stream ``SecureRandom(key).substream(a, b)`` (an HMAC-SHA256 derivation of
one release key and the tile coordinates), so the release is the same bit for
bit whatever the number of workers or the order in which tiles run.  Inside a
tile, words are drawn in 64-row bands exactly as the in-memory release
(:func:`~dpgraph.graph.release.sample_packed_flips`) draws them, so a release
made of one tile equals
``dpgraph.release(G, eps, seed=SecureRandom(key=key).substream(0, 0))``.

Tiles below the diagonal of an undirected release hold no pairs and are never
written (Zarr stores no chunk for them).  Queries (edge counts, degrees, batches
of cuts) are Dask reductions over the tiles; a batch of Q cuts reads each tile
once and answers all Q with one matrix product.

Optional dependencies: ``dask``, ``distributed`` (for a cluster), ``zarr`` and
``fsspec`` (any fsspec URL as the store).  They are imported inside the
functions, so ``import dpgraph`` works without them.

Store layout (a Zarr v3 group)::

    <store>/zarr.json      group attributes: the metadata below
    <store>/adjacency      uint64 (n, ceil(n / 64)), chunks = one tile
    <store>/nodes          int64 (n,): the node labels in canonical (sorted) order

Metadata: ``format`` ("dpgraph-blockwise"), ``format_version``, ``release_id``,
``epsilon``, ``flip_numerator`` (decimal string of M, p' = M / 2^64), ``n``,
``directed``, ``tile``, ``input_tag`` (a keyed HMAC of the input, meaningless
without the key) and ``complete``.

Key reuse.  Two releases of *different* graphs under one key use the same
random flips, so XOR-ing them reveals exactly the pairs where the graphs
differ, with no noise at all.  Writing refuses a key that has already released
a different input (checked against the target store and a small local registry
of (release id, input tag) pairs, neither of which says anything about a graph
to someone without the key).  Re-running the same input with the same key is
allowed: it reproduces the same release and costs no privacy.
"""

from __future__ import annotations

import numbers

import hashlib
import hmac
import json
import os
import struct
import warnings
from dataclasses import dataclass
from pathlib import Path
from typing import Any, Iterable, Iterator, Sequence

import numpy as np

from ..core.probabilities import RRProbabilities, rr_probabilities
from ..core.randomness import SecureRandom
from .encoding import encode_graph
from .packed import PackedAdjacency, masked_row_popcount, words_per_row
from .private import PrivateGraph
from .release import fill_bands  # the in-memory schedule; shared so tiles reproduce it

__all__ = [
    "FORMAT",
    "FORMAT_VERSION",
    "EdgeInput",
    "IntegerNodeIndex",
    "read_edge_list",
    "edge_input_from_graph",
    "release_blockwise",
    "release_tiled",
    "open_blockwise",
    "BlockwiseGraph",
    "ZarrAdjacency",
    "WORKER_ENV",
    "local_cluster",
]

FORMAT = "dpgraph-blockwise"
FORMAT_VERSION = 1
_ONE = np.uint64(1)
_DEFAULT_TILE = (4096, 32768)


# ---------------------------------------------------------------------------
# input: integer node labels, edges as sorted row-major keys i * n + j
# ---------------------------------------------------------------------------
class IntegerNodeIndex:
    """Public map between integer node labels and positions, without a dict.

    Parameters
    ----------
    labels : numpy.ndarray of int64, sorted and unique
    """

    def __init__(self, labels: np.ndarray) -> None:
        self.labels = np.asarray(labels, dtype=np.int64)
        self._range = bool(self.labels.size and self.labels[0] == 0
                           and self.labels[-1] == self.labels.size - 1)

    @property
    def nodes(self) -> Sequence[int]:
        return range(self.labels.size) if self._range else tuple(self.labels.tolist())

    def __len__(self) -> int:
        return int(self.labels.size)

    def positions(self, labels: np.ndarray) -> tuple[np.ndarray, int]:
        """Positions of integer labels and how many labels are unknown."""
        labels = np.asarray(labels, dtype=np.int64)
        if self._range:
            bad = (labels < 0) | (labels >= self.labels.size)
            return np.where(bad, 0, labels), int(bad.sum())
        pos = np.searchsorted(self.labels, labels)
        pos = np.minimum(pos, self.labels.size - 1)
        bad = self.labels[pos] != labels
        return pos, int(bad.sum())

    def indices(self, labels: Any, name: str) -> np.ndarray:
        """Sorted unique positions of a node collection; errors name ``name``."""
        if labels is None or isinstance(labels, (str, bytes)) or not isinstance(labels, Iterable):
            raise TypeError(f"{name} must be a collection of integer node labels")
        arr = np.asarray(list(labels) if not isinstance(labels, np.ndarray) else labels)
        if arr.size == 0:
            raise ValueError(f"{name} is empty; a cut needs at least one node on each side")
        if arr.dtype.kind not in "iu":
            raise TypeError(f"{name} must hold integer node labels, got dtype {arr.dtype}")
        pos, missing = self.positions(arr.ravel())
        if missing:
            raise ValueError(
                f"{name} contains {missing} node(s) that are not in the graph; "
                "use labels from the release's nodes"
            )
        return np.unique(pos)


@dataclass(frozen=True)
class EdgeInput:
    """A validated input graph for a blockwise release.

    Attributes
    ----------
    index : IntegerNodeIndex
    keys : numpy.ndarray of int64
        Sorted unique row-major keys i * n + j of the pairs to store
        (j > i for an undirected graph).
    directed : bool
    """

    index: IntegerNodeIndex
    keys: np.ndarray
    directed: bool

    @property
    def n(self) -> int:
        return len(self.index)

    def digest(self) -> bytes:
        """SHA-256 of the public shape and the edge keys (used only under an HMAC)."""
        h = hashlib.sha256()
        h.update(struct.pack("<qq?", self.n, self.keys.size, self.directed))
        h.update(self.index.labels.tobytes())
        h.update(np.ascontiguousarray(self.keys).tobytes())
        return h.digest()


def _node_labels(nodes: Any) -> np.ndarray:
    if isinstance(nodes, (bool, np.bool_)):
        raise TypeError("nodes must be the number of nodes or a collection of integer labels")
    if isinstance(nodes, (int, np.integer)):
        if int(nodes) < 2:
            raise ValueError(f"nodes must be >= 2, got {int(nodes)}")
        return np.arange(int(nodes), dtype=np.int64)
    if nodes is None or not isinstance(nodes, Iterable) or isinstance(nodes, (str, bytes)):
        raise TypeError(
            "nodes must be the number of nodes n (labels 0..n-1) or a collection of integer "
            "labels; the vertex set is public and must be given, not read from the edges"
        )
    arr = np.asarray(list(nodes) if not isinstance(nodes, np.ndarray) else nodes)
    if arr.dtype.kind not in "iu":
        raise TypeError(f"nodes must hold integer labels, got dtype {arr.dtype}")
    labels = np.unique(arr.astype(np.int64))
    if labels.size != arr.size:
        raise ValueError("nodes contains duplicate labels")
    if labels.size < 2:
        raise ValueError(f"nodes must hold at least 2 labels, got {labels.size}")
    return labels


def _keys_from_pairs(index: IntegerNodeIndex, u: np.ndarray, v: np.ndarray,
                     directed: bool, what: str) -> np.ndarray:
    n = len(index)
    pu, bad_u = index.positions(u)
    pv, bad_v = index.positions(v)
    if bad_u + bad_v:
        raise ValueError(
            f"{what} references {bad_u + bad_v} endpoint(s) that are not in nodes; "
            "pass the full public vertex set as nodes="
        )
    loops = int((pu == pv).sum())
    if loops:
        raise ValueError(
            f"{what} has {loops} self-loop(s); vertex pairs {{i, i}} are not rows of the "
            "database. Remove them first"
        )
    if not directed:
        pu, pv = np.minimum(pu, pv), np.maximum(pu, pv)
    return pu * n + pv


def read_edge_list(path: str | os.PathLike, nodes: Any, *, directed: bool = False,
                   comments: str = "#", chunk_bytes: int = 1 << 26,
                   storage_options: dict | None = None) -> EdgeInput:
    """Read an edge-list file in one streaming pass.

    Each line holds two integer node labels (extra columns, e.g. weights, are
    ignored; lines starting with ``comments`` are skipped).  The file is read
    in chunks of ``chunk_bytes`` and parsed by numpy, never into one Python
    object per edge.  Duplicate pairs (including (u, v) and (v, u) of an
    undirected graph) are collapsed: the input is a set of vertex pairs.

    Parameters
    ----------
    path : str or os.PathLike
        A local path or any fsspec URL.
    nodes : int or collection of int
        The public vertex set: n (labels 0..n-1) or the labels themselves.
        It is not read from the edges, which would leak which nodes have one.
    directed : bool, default False
    comments : str, default "#"
    chunk_bytes : int, default 64 MiB
    storage_options : dict, optional
        Passed to fsspec for remote files.

    Returns
    -------
    EdgeInput

    Examples
    --------
    >>> import tempfile, os
    >>> d = tempfile.mkdtemp(); p = os.path.join(d, "g.txt")
    >>> _ = open(p, "w").write("# demo\\n0 1\\n2 1\\n1 0\\n")
    >>> e = read_edge_list(p, nodes=4)
    >>> e.n, e.keys.tolist()
    (4, [1, 6])
    """
    import io

    index = IntegerNodeIndex(_node_labels(nodes))
    chunk_bytes = int(chunk_bytes)
    if chunk_bytes < 1024:
        raise ValueError("chunk_bytes must be >= 1024")
    parts: list[np.ndarray] = []
    path_str = os.fspath(path)
    if "://" in path_str:
        import fsspec

        opener = fsspec.open(path_str, "rb", **(storage_options or {}))
    else:
        if not os.path.exists(path_str):
            raise FileNotFoundError(f"edge list {path_str!r} does not exist")
        opener = open(path_str, "rb")
    carry = b""
    with opener as fh:
        while True:
            block = fh.read(chunk_bytes)
            data = carry + block
            if not block:
                carry = b""
            else:
                cut = data.rfind(b"\n")
                if cut < 0:
                    carry = data
                    continue
                data, carry = data[: cut + 1], data[cut + 1 :]
            if data.strip():
                with warnings.catch_warnings():
                    warnings.simplefilter("ignore", UserWarning)  # empty chunk of comments
                    try:
                        arr = np.loadtxt(io.BytesIO(data), dtype=np.int64, comments=comments,
                                         usecols=(0, 1), ndmin=2)
                    except ValueError:
                        raise ValueError(
                            "edge list must hold two integer node labels per line"
                        ) from None
                if arr.size:
                    keys = _keys_from_pairs(index, arr[:, 0], arr[:, 1], directed, "the edge list")
                    parts.append(np.unique(keys))
            if not block:
                break
    keys = np.unique(np.concatenate(parts)) if parts else np.zeros(0, dtype=np.int64)
    return EdgeInput(index, keys, bool(directed))


def edge_input_from_graph(G: Any, directed: bool = False) -> EdgeInput:
    """Validate a networkx graph with integer node labels as an :class:`EdgeInput`.

    Examples
    --------
    >>> import networkx as nx
    >>> edge_input_from_graph(nx.path_graph(3)).keys.tolist()
    [1, 5]
    """
    enc = encode_graph(G, directed=directed)
    nodes = enc.index.nodes
    # only true integers: strings or floats would convert to int64 silently (out of order,
    # or truncated into collisions)
    if not all(isinstance(v, numbers.Integral) and not isinstance(v, bool) for v in nodes):
        raise TypeError(
            "blockwise releases need integer node labels; relabel first, e.g. "
            "nx.convert_node_labels_to_integers(G, ordering='sorted')"
        )
    labels = np.asarray(nodes, dtype=np.int64)
    index = IntegerNodeIndex(labels)
    keys = np.sort(enc.rows * enc.n + enc.cols)
    return EdgeInput(index, keys, bool(directed))


# ---------------------------------------------------------------------------
# tiles
# ---------------------------------------------------------------------------
@dataclass(frozen=True)
class _Plan:
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
        r0, c0 = a * self.tile_rows, b * self.tile_words
        return r0, min(self.n, r0 + self.tile_rows), c0, min(self.nw, c0 + self.tile_words)

    def holds_pairs(self, a: int, b: int) -> bool:
        if self.directed:
            return True
        r0, _, c0, c1 = self.bounds(a, b)
        return min(self.n, 64 * c1) - 1 > r0  # some column j > the first row

    def tiles(self) -> list[tuple[int, int]]:
        ra, cb = self.grid
        return [(a, b) for a in range(ra) for b in range(cb) if self.holds_pairs(a, b)]

    def pairs_in(self, a: int, b: int) -> int:
        """Vertex pairs (database rows) stored in tile (a, b)."""
        r0, r1, c0, c1 = self.bounds(a, b)
        j0, j1 = 64 * c0, min(self.n, 64 * c1)
        rows = np.arange(r0, r1, dtype=np.int64)
        if self.directed:
            return int((j1 - j0) * rows.size - ((rows >= j0) & (rows < j1)).sum())
        return int(np.clip(j1 - np.maximum(rows + 1, j0), 0, None).sum())


def _check_tile(tile: Any) -> tuple[int, int]:
    try:
        tr, tc = (int(x) for x in tile)
    except (TypeError, ValueError):
        raise TypeError("tile must be a (rows, cols) pair of integers, e.g. (4096, 32768)") from None
    if tr < 64 or tr % 64 or tc < 64 or tc % 64:
        raise ValueError(f"tile sides must be positive multiples of 64, got {(tr, tc)}")
    return tr, tc


def _sample_tile(source: SecureRandom, plan: _Plan, a: int, b: int, numerator: int,
                 keys: np.ndarray) -> np.ndarray:
    """The packed words of tile (a, b): flips from ``source``, true edges XOR-ed in.

    Follows the randomness schedule of :func:`dpgraph.graph.release.sample_packed_flips`
    restricted to the tile's words: bands of 64 rows, each drawing the words
    from max(first tile word, the band's diagonal word) on, bands grouped so
    that one sampler call draws at most ``_GROUP_WORDS`` words.  A single tile
    covering the matrix therefore reproduces the in-memory release exactly.
    """
    n, directed = plan.n, plan.directed
    r0, r1, c0, c1 = plan.bounds(a, b)
    out = np.zeros((r1 - r0, c1 - c0), dtype=np.uint64)
    bands = [(s0, min(r1, s0 + 64), max(c0, 0 if directed else s0 >> 6))
             for s0 in range(r0, r1, 64)]
    bands = [band for band in bands if band[2] < c1]
    fill_bands(out, bands, c1, numerator, source, row0=r0, word0=c0)
    i = np.arange(r0, r1)
    iw, ib = i >> 6, (i & 63).astype(np.uint64)
    ok = (iw >= c0) & (iw < c1)
    if directed:  # clear the diagonal bit
        out[i[ok] - r0, iw[ok] - c0] &= ~np.left_shift(_ONE, ib[ok])
    else:  # in the word holding column i, keep only columns j > i
        out[i[ok] - r0, iw[ok] - c0] &= ~(np.left_shift(np.uint64(2), ib[ok]) - _ONE)
    tail = n & 63
    if tail and c1 == plan.nw:
        out[:, -1] &= np.uint64((1 << tail) - 1)
    lo, hi = np.searchsorted(keys, [r0 * n, r1 * n])
    if hi > lo:
        kk = keys[lo:hi]
        rows, cols = kk // n, kk % n
        inside = (cols >= 64 * c0) & (cols < 64 * c1)
        rows, cols = rows[inside] - r0, cols[inside]
        flat_pos = rows * (c1 - c0) + ((cols >> 6) - c0)
        np.bitwise_xor.at(out.reshape(-1), flat_pos,
                          np.left_shift(_ONE, (cols & 63).astype(np.uint64)))
    return out


def _tile_source(key: bytes, a: int, b: int) -> SecureRandom:
    return SecureRandom(key=key).substream(a, b)


def _release_id(key: bytes) -> str:
    return hmac.new(key, b"dpgraph-blockwise-release-id", hashlib.sha256).hexdigest()[:32]


def _input_tag(key: bytes, edges: EdgeInput, rr: RRProbabilities, tile: tuple[int, int]) -> str:
    msg = b"dpgraph-blockwise-input" + edges.digest() + struct.pack(
        "<Qqq", rr.move_numerator, tile[0], tile[1])
    return hmac.new(key, msg, hashlib.sha256).hexdigest()


def _check_key(key: Any) -> bytes:
    if not isinstance(key, (bytes, bytearray)) or len(key) not in (16, 32):
        raise TypeError(
            "key must be 16 or 32 bytes (e.g. os.urandom(32)), kept secret; "
            "or None for a fresh, unrecorded key"
        )
    return bytes(key)


# ---------------------------------------------------------------------------
# in-memory tiled release (the reference the blockwise store must equal)
# ---------------------------------------------------------------------------
def release_tiled(edges: EdgeInput, epsilon: float, key: bytes,
                  tile: tuple[int, int] = _DEFAULT_TILE) -> PrivateGraph:
    """The blockwise release computed in memory, tile by tile, in one process.

    Bit for bit what :func:`release_blockwise` writes for the same key, tile
    shape and input; useful as a reference and for graphs that fit in memory.

    Never use one ``key`` for two different graphs: the two releases would
    share every flip, and XOR-ing them reveals exactly the pairs where the
    graphs differ.  Unlike :func:`release_blockwise`, this function keeps no
    registry of keys, so the caller must draw a fresh key (``os.urandom(16)``)
    per input.

    Parameters
    ----------
    edges : EdgeInput
        From :func:`read_edge_list` or :func:`edge_input_from_graph`.
    epsilon : float
    key : bytes
        16 or 32 secret bytes.
    tile : (int, int), default (4096, 32768)
        Rows and columns of a tile, multiples of 64.

    Returns
    -------
    PrivateGraph
        With a :class:`~dpgraph.graph.packed.PackedAdjacency`.

    Examples
    --------
    >>> import networkx as nx
    >>> R = release_tiled(edge_input_from_graph(nx.path_graph(5)), 1.0, bytes(16))
    >>> R.number_of_nodes()
    5
    """
    rr = rr_probabilities(epsilon, 2)
    key = _check_key(key)
    tr, tc = _check_tile(tile)
    plan = _Plan(edges.n, edges.directed, tr, tc // 64)
    words = np.zeros((plan.n, plan.nw), dtype=np.uint64)
    for a, b in plan.tiles():
        r0, r1, c0, c1 = plan.bounds(a, b)
        words[r0:r1, c0:c1] = _sample_tile(_tile_source(key, a, b), plan, a, b,
                                            rr.move_numerator, edges.keys)
    adjacency = PackedAdjacency(words, plan.n, plan.directed)
    return PrivateGraph(adjacency, edges.index, rr)


# ---------------------------------------------------------------------------
# the Zarr store
# ---------------------------------------------------------------------------
def _open_group(store: Any, mode: str, storage_options: dict | None):
    import zarr

    kwargs = {"storage_options": storage_options} if storage_options else {}
    return zarr.open_group(store=_store_arg(store), mode=mode, **kwargs)


def _store_arg(store: Any) -> Any:
    return os.fspath(store) if isinstance(store, os.PathLike) else store


def _store_exists(store: Any, storage_options: dict | None) -> bool:
    s = _store_arg(store)
    if isinstance(s, str) and "://" not in s:
        return os.path.exists(os.path.join(s, "zarr.json"))
    try:
        _open_group(store, "r", storage_options)
        return True
    except Exception:  # noqa: BLE001 - any backend's "not found"
        return False


def _registry_path(registry: Any) -> Path:
    if registry is not None:
        return Path(registry)
    env = os.environ.get("DPGRAPH_KEY_REGISTRY")
    if env:
        return Path(env)
    return Path.home() / ".cache" / "dpgraph" / "blockwise_keys.json"


_KEY_REUSE = (
    "this key already released a different input graph (or another epsilon or tile shape). "
    "Two releases under one key share their random flips, so XOR-ing them reveals exactly "
    "which vertex pairs differ between the inputs, with no noise: the privacy of every "
    "changed pair would be lost. Use a fresh key (e.g. os.urandom(32)) for every input"
)


def _check_registry(path: Path, release_id: str, tag: str) -> None:
    try:
        known = json.loads(path.read_text()) if path.exists() else {}
    except (OSError, ValueError):
        raise ValueError(
            f"the key registry {str(path)!r} is unreadable; fix or remove it "
            "(it guards against reusing a key across inputs)"
        ) from None
    if known.get(release_id, tag) != tag:
        raise ValueError(_KEY_REUSE)


def _record_registry(path: Path, release_id: str, tag: str) -> None:
    known = json.loads(path.read_text()) if path.exists() else {}
    known[release_id] = tag
    path.parent.mkdir(parents=True, exist_ok=True)
    tmp = path.with_suffix(".tmp")
    tmp.write_text(json.dumps(known, indent=0, sort_keys=True))
    os.replace(tmp, path)


def _write_tile(store: Any, storage_options: dict | None, key: bytes, plan: _Plan,
                a: int, b: int, numerator: int, keys: np.ndarray) -> int:
    import zarr

    kwargs = {"storage_options": storage_options} if storage_options else {}
    arr = zarr.open_array(store=_store_arg(store), path="adjacency", mode="r+", **kwargs)
    words = _sample_tile(_tile_source(key, a, b), plan, a, b, numerator, keys)
    r0, r1, c0, c1 = plan.bounds(a, b)
    arr[r0:r1, c0:c1] = words
    return int(np.bitwise_count(words).sum(dtype=np.int64))


def release_blockwise(
    edges: Any,
    epsilon: float,
    store: Any,
    *,
    nodes: Any = None,
    directed: bool = False,
    key: bytes | None = None,
    tile: tuple[int, int] = _DEFAULT_TILE,
    client: Any = None,
    registry: Any = None,
    overwrite: bool = False,
    storage_options: dict | None = None,
    progress: bool = False,
) -> "BlockwiseGraph":
    """Release a graph tile by tile on Dask and store it as a Zarr array of packed bits.

    Parameters
    ----------
    edges : str, os.PathLike, EdgeInput or networkx.Graph
        An edge-list file (read in one streaming pass by
        :func:`read_edge_list`; needs ``nodes``), a prepared :class:`EdgeInput`,
        or a networkx graph with integer node labels.
    epsilon : float
        Privacy parameter per vertex pair.
    store : str, os.PathLike or zarr store
        Where to write: a local directory (default) or any fsspec URL.
    nodes : int or collection of int, optional
        The public vertex set, required with an edge-list file.
    directed : bool, default False
    key : bytes, optional
        16 or 32 secret bytes making the release reproducible by whoever
        holds the key.  ``None`` (the safe default) draws a fresh key from the
        OS and forgets it.  Never reuse a key for a different input (refused).
    tile : (int, int), default (4096, 32768)
        Rows and columns of a tile, multiples of 64 (columns are packed 64 to
        a word; a default tile is 16 MiB).
    client : dask.distributed.Client, optional
        Where to run the tiles; default the active client or Dask's threads.
    registry : path, optional
        The key registry file; default ``$DPGRAPH_KEY_REGISTRY`` or
        ``~/.cache/dpgraph/blockwise_keys.json``.
    overwrite : bool, default False
        Replace an existing store.  Refused otherwise.
    storage_options : dict, optional
        fsspec options for a remote store.
    progress : bool, default False
        Show a tqdm bar over tiles.

    Returns
    -------
    BlockwiseGraph

    Raises
    ------
    ValueError
        On a key that already released a different input, an existing store
        without ``overwrite``, or invalid parameters.
    """
    import dask

    rr = rr_probabilities(epsilon, 2)
    if isinstance(edges, EdgeInput):
        data = edges
        if data.directed != bool(directed):
            raise ValueError("directed does not match the EdgeInput; build it with the same flag")
    elif isinstance(edges, (str, os.PathLike)):
        if nodes is None:
            raise ValueError(
                "nodes is required with an edge-list file: pass n or the public vertex set"
            )
        data = read_edge_list(edges, nodes, directed=directed, storage_options=storage_options)
    else:
        data = edge_input_from_graph(edges, directed=directed)
    tr, tc = _check_tile(tile)
    plan = _Plan(data.n, data.directed, tr, tc // 64)
    recorded = key is not None
    key = _check_key(key) if recorded else os.urandom(32)
    release_id = _release_id(key)
    tag = _input_tag(key, data, rr, (tr, tc))
    reg = _registry_path(registry)
    if recorded:
        _check_registry(reg, release_id, tag)
    target = _store_arg(store)
    if (isinstance(target, str) and "://" not in target and os.path.exists(target)
            and not _store_exists(store, storage_options)
            and (not os.path.isdir(target) or os.listdir(target))):
        raise ValueError(
            f"{target!r} exists and is not a dpgraph blockwise store; refusing to write "
            "over it. Choose a new location"
        )
    if _store_exists(store, storage_options):
        try:
            old = _open_group(store, "r", storage_options).attrs.asdict()
        except Exception:  # noqa: BLE001
            old = {}
        if old.get("format") != FORMAT:
            raise ValueError(
                f"{str(target)!r} holds a Zarr store that is not a dpgraph blockwise release; "
                "refusing to overwrite it. Choose a new location"
            )
        if old.get("release_id") == release_id and old.get("input_tag") != tag:
            raise ValueError(_KEY_REUSE)
        if not overwrite:
            raise ValueError(
                f"store {str(_store_arg(store))!r} already exists; pass overwrite=True to "
                "replace it or choose a new location"
            )
    import zarr

    group = _open_group(store, "w", storage_options)
    group.create_array("adjacency", shape=(plan.n, plan.nw), chunks=(tr, tc // 64),
                       dtype="uint64", fill_value=0, compressors=None)
    group.create_array("nodes", shape=(plan.n,), chunks=(min(plan.n, 1 << 20),),
                       dtype="int64", compressors=None)[:] = data.index.labels
    meta = {
        "format": FORMAT,
        "format_version": FORMAT_VERSION,
        "release_id": release_id,
        "epsilon": rr.epsilon,
        "flip_numerator": str(rr.move_numerator),
        "n": plan.n,
        "directed": plan.directed,
        "tile": [tr, tc],
        "input_tag": tag,
        "complete": False,
        "dpgraph_version": _version(),
    }
    group.attrs.update(meta)
    keys_d = _share(data.keys, client)
    tasks = [
        dask.delayed(_write_tile, pure=False)(store, storage_options, key, plan, a, b,
                                              rr.move_numerator, keys_d)
        for a, b in plan.tiles()
    ]
    if client is not None or progress:
        _run_with_progress(tasks, client, progress)
    else:
        dask.compute(*tasks)
    if recorded:
        _record_registry(reg, release_id, tag)
    group.attrs.update({"complete": True})
    del zarr
    return open_blockwise(store, release_id=release_id, storage_options=storage_options)


def _active_client(client: Any = None) -> Any:
    if client is not None:
        return client
    if dask_scheduler_is_local():
        return None
    try:
        from distributed import get_client

        return get_client()
    except (ImportError, ValueError):
        return None


def dask_scheduler_is_local() -> bool:
    """True when the Dask config forces a local scheduler (threads, sync, processes)."""
    import dask

    return dask.config.get("scheduler", None) in ("sync", "synchronous", "single-threaded",
                                                   "threads", "threading", "processes")


def _share(x: np.ndarray, client: Any = None) -> Any:
    """Ship a large array to the workers once (scatter), or wrap it as one Dask key."""
    import dask

    c = _active_client(client)
    if c is not None:
        return c.scatter(x, broadcast=True)
    return dask.delayed(x, pure=True, traverse=False)


#: Environment for Dask worker *processes*.  The nanny's default
#: ``MALLOC_TRIM_THRESHOLD_=65536`` also pins glibc's mmap threshold at 128 KiB,
#: so every temporary array of the sampler is a fresh mmap whose pages fault
#: in again: tile sampling measured 3-5x slower in CPU time than in a plain
#: process.  These values keep arrays up to 32 MiB on the heap.
WORKER_ENV = {"MALLOC_TRIM_THRESHOLD_": str(1 << 30), "MALLOC_MMAP_THRESHOLD_": str(1 << 25)}


def local_cluster(n_workers: int | None = None, threads_per_worker: int = 1, **kwargs: Any):
    """A ``distributed.LocalCluster`` whose worker processes use :data:`WORKER_ENV`.

    Parameters
    ----------
    n_workers : int, optional
        Default: one per core.
    threads_per_worker : int, default 1
    **kwargs
        Passed to ``LocalCluster`` (e.g. ``processes=False``, ``memory_limit``).

    Returns
    -------
    distributed.LocalCluster
    """
    import dask
    from distributed import LocalCluster

    env = {f"distributed.nanny.pre-spawn-environ.{k}": v for k, v in WORKER_ENV.items()}
    kwargs.setdefault("dashboard_address", ":0")  # any free port, never a clash
    with dask.config.set(env):
        return LocalCluster(n_workers=n_workers, threads_per_worker=threads_per_worker, **kwargs)


def _run_with_progress(tasks: list, client: Any, progress: bool) -> list:
    import dask

    if client is None:
        from tqdm.auto import tqdm

        out = []
        for t in tqdm(tasks, desc="tiles", disable=not progress):
            out.append(dask.compute(t)[0])
        return out
    from distributed import as_completed

    futures = client.compute(tasks)
    if progress:
        from tqdm.auto import tqdm

        bar = tqdm(total=len(futures), desc="tiles")
    results = []
    for f in as_completed(futures):
        results.append(f.result())
        if progress:
            bar.update(1)
    if progress:
        bar.close()
    return results


def _version() -> str:
    from .. import __version__

    return __version__


def open_blockwise(store: Any, *, release_id: str | None = None,
                   storage_options: dict | None = None) -> "BlockwiseGraph":
    """Open a stored blockwise release for queries.

    Parameters
    ----------
    store : str, os.PathLike or zarr store
    release_id : str, optional
        Refuse the store unless it holds this release.
    storage_options : dict, optional

    Returns
    -------
    BlockwiseGraph

    Raises
    ------
    FileNotFoundError
        No store at that location.
    ValueError
        Not a dpgraph blockwise store, another format version, another
        release, an interrupted write, or a flip probability that fails
        certification.
    """
    if not _store_exists(store, storage_options):
        raise FileNotFoundError(
            f"no dpgraph blockwise release at {str(_store_arg(store))!r}; "
            "check the path or write one with release_blockwise"
        )
    group = _open_group(store, "r", storage_options)
    meta = group.attrs.asdict()
    if meta.get("format") != FORMAT:
        raise ValueError(f"{str(_store_arg(store))!r} is not a dpgraph blockwise release store")
    if meta.get("format_version") != FORMAT_VERSION:
        raise ValueError(
            f"store has format version {meta.get('format_version')!r}; this dpgraph reads "
            f"version {FORMAT_VERSION}. Use the dpgraph version that wrote it"
        )
    if release_id is not None and meta.get("release_id") != release_id:
        raise ValueError(
            f"store holds release {meta.get('release_id')!r}, not {release_id!r}: "
            "it is from another release"
        )
    if not meta.get("complete"):
        raise ValueError("store holds an incomplete release (the write was interrupted); "
                         "write it again with overwrite=True")
    rr = RRProbabilities(K=2, epsilon=float(meta["epsilon"]),
                         move_numerator=int(meta["flip_numerator"]))
    if not rr.certify():
        raise ValueError("store's flip probability does not certify its epsilon; refusing it")
    n = int(meta["n"])
    arr = group["adjacency"]
    if arr.shape != (n, words_per_row(n)):
        raise ValueError("store's adjacency shape does not match its metadata")
    labels = np.asarray(group["nodes"][:], dtype=np.int64)
    tr, tc = (int(x) for x in meta["tile"])
    adjacency = ZarrAdjacency(store, storage_options, _Plan(n, bool(meta["directed"]), tr, tc // 64))
    return BlockwiseGraph(adjacency, IntegerNodeIndex(labels), rr, meta)


# ---------------------------------------------------------------------------
# queries as Dask reductions over tiles
# ---------------------------------------------------------------------------
def _read_tile(store: Any, storage_options: dict | None, plan: _Plan, a: int, b: int) -> np.ndarray:
    import zarr

    kwargs = {"storage_options": storage_options} if storage_options else {}
    arr = zarr.open_array(store=_store_arg(store), path="adjacency", mode="r", **kwargs)
    r0, r1, c0, c1 = plan.bounds(a, b)
    return np.asarray(arr[r0:r1, c0:c1])


def _unpack(words: np.ndarray, ncols: int) -> np.ndarray:
    return np.unpackbits(words.view(np.uint8), axis=1, bitorder="little")[:, :ncols]


def _multi_query_popcount_numpy(words: np.ndarray, rowsel: np.ndarray, masks: np.ndarray,
                                first_row: int, first_word: int, upper: bool) -> np.ndarray:
    total = np.zeros(masks.shape[0], dtype=np.int64)
    for q in range(masks.shape[0]):
        sel = np.flatnonzero(rowsel[q])
        if sel.size:
            total[q] = masked_row_popcount(words, sel, np.ascontiguousarray(masks[q]), upper=False)
    return total


_multi_query_popcount = _multi_query_popcount_numpy
if not os.environ.get("DPGRAPH_DISABLE_NUMBA"):
    try:
        import numba as _nb
    except ImportError:  # pragma: no cover - numba is optional
        _nb = None
    if _nb is not None:
        _M1 = np.uint64(0x5555555555555555)
        _M2 = np.uint64(0x3333333333333333)
        _M4 = np.uint64(0x0F0F0F0F0F0F0F0F)
        _H01 = np.uint64(0x0101010101010101)

        @_nb.njit(cache=True, nogil=True)
        def _multi_query_popcount(words, rowsel, masks, first_row, first_word,
                                  upper):  # pragma: no cover - compiled
            # One pass over the tile: each row is read once (it stays in L1) and
            # ANDed with the column mask of every query that selects it.
            nq = masks.shape[0]
            nr, nw = words.shape
            out = np.zeros(nq, dtype=np.int64)
            one, two, four, sh = np.uint64(1), np.uint64(2), np.uint64(4), np.uint64(56)
            for i in range(nr):
                start = 0
                if upper:  # words left of the diagonal word are zero
                    start = max(0, ((first_row + i) >> 6) - first_word)
                for q in range(nq):
                    if rowsel[q, i]:
                        acc = np.uint64(0)
                        for w in range(start, nw):
                            x = words[i, w] & masks[q, w]
                            x = x - ((x >> one) & _M1)
                            x = (x & _M2) + ((x >> two) & _M2)
                            x = (x + (x >> four)) & _M4
                            acc += (x * _H01) >> sh
                        out[q] += np.int64(acc)
            return out


def _tile_bilinear(store: Any, storage_options: dict | None, plan: _Plan, a: int, b: int,
                   left: np.ndarray, right: np.ndarray) -> np.ndarray:
    """sum_{i, j in tile} L[q, i] A_ij R[q, j] for every q.

    ``left`` holds the row sets packed 8 to a byte (little-endian bit order),
    ``right`` the column sets packed 64 to a word like the rows of the
    adjacency.  With numba, one pass over the tile answers every query (each
    row is read once and ANDed with the masks of the queries that select it);
    without, one fused AND + popcount pass per query
    (:func:`~dpgraph.graph.packed.masked_row_popcount`).
    """
    words = _read_tile(store, storage_options, plan, a, b)
    r0, r1, c0, c1 = plan.bounds(a, b)
    rows = np.unpackbits(left[:, r0 // 8 : -(-r1 // 8)], axis=1, bitorder="little")[:, : r1 - r0]
    masks = np.ascontiguousarray(right[:, c0:c1])
    return _multi_query_popcount(np.ascontiguousarray(words), np.ascontiguousarray(rows), masks,
                                 r0, c0, not plan.directed)


def _tile_popcount(store: Any, storage_options: dict | None, plan: _Plan, a: int, b: int) -> int:
    return int(np.bitwise_count(_read_tile(store, storage_options, plan, a, b)).sum(dtype=np.int64))


def _tile_degrees(store: Any, storage_options: dict | None, plan: _Plan, a: int,
                  b: int) -> np.ndarray:
    words = _read_tile(store, storage_options, plan, a, b)
    r0, r1, c0, c1 = plan.bounds(a, b)
    deg = np.zeros(plan.n, dtype=np.int64)
    deg[r0:r1] += np.bitwise_count(words).sum(axis=1, dtype=np.int64)
    if not plan.directed:
        j0, j1 = 64 * c0, min(plan.n, 64 * c1)
        for s0 in range(0, r1 - r0, 1024):
            deg[j0:j1] += _unpack(words[s0 : s0 + 1024], j1 - j0).sum(axis=0, dtype=np.int64)
    return deg


class ZarrAdjacency:
    """The adjacency interface of the graph layer over a Zarr store of tiles.

    Every query is a Dask reduction over the tiles (run on the active
    distributed client if there is one, else on Dask's threads).
    :meth:`cut_counts` answers a batch of cuts reading each tile once.
    """

    def __init__(self, store: Any, storage_options: dict | None, plan: _Plan) -> None:
        self.store = store
        self.storage_options = storage_options
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

        args_d = [_share(x) if isinstance(x, np.ndarray) else x for x in args]
        tasks = [dask.delayed(fn, pure=True)(self.store, self.storage_options, self._plan, a, b,
                                             *args_d) for a, b in self._plan.tiles()]
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
        import zarr

        kwargs = {"storage_options": self.storage_options} if self.storage_options else {}
        arr = zarr.open_array(store=_store_arg(self.store), path="adjacency", mode="r", **kwargs)
        for i0 in range(0, self.n, block):
            words = np.asarray(arr[i0 : i0 + block])
            yield i0, _unpack(words, self.n).astype(bool)

    def edge_array(self) -> tuple[np.ndarray, np.ndarray]:
        """Positions (rows, cols) of every stored 1 bit; memory grows with the output."""
        rows, cols = [], []
        for i0, bits in self.row_blocks(256):
            r, c = np.nonzero(bits)
            rows.append(r + i0)
            cols.append(c)
        return np.concatenate(rows), np.concatenate(cols)

    def words(self) -> np.ndarray:
        """The whole packed matrix in memory (small releases and tests only)."""
        import zarr

        kwargs = {"storage_options": self.storage_options} if self.storage_options else {}
        arr = zarr.open_array(store=_store_arg(self.store), path="adjacency", mode="r", **kwargs)
        return np.asarray(arr[:])


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

    def __init__(self, adjacency: ZarrAdjacency, index: IntegerNodeIndex,
                 probabilities: RRProbabilities, metadata: dict) -> None:
        super().__init__(adjacency, index, probabilities)
        self.metadata = dict(metadata)
        self.release_id = str(metadata["release_id"])

    def released_degrees(self) -> np.ndarray:
        """Raw released degrees (a Dask reduction over tiles)."""
        return self._adj.degrees()

    def __repr__(self) -> str:  # no pass over the store just to print
        kind = "directed" if self.directed else "undirected"
        return (
            f"BlockwiseGraph({kind}, nodes={self.number_of_nodes()}, epsilon={self.epsilon:g}, "
            f"flip_probability={self.flip_probability:.6g}, release_id={self.release_id})"
        )

