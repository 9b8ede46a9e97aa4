"""The edges of a blockwise release: the public vertex set and sorted pair keys.

Edges are stored as sorted unique row-major keys ``i * n + j`` of node
positions (``j > i`` for an undirected graph).  :func:`edge_keys` builds them
from any input of the input table (:mod:`dpgraph.graph.inputs`); an edge-list
file is read in one streaming pass, so memory is the keys plus one chunk.
"""

from __future__ import annotations

import hashlib
import numbers
import struct
from typing import Any

import numpy as np

from ..._frames import drops_input_frames
from ...validation import Boolean, validate_params
from ..edgelist import DEFAULT_CHUNK_BYTES
from ..encoding import NodeIndex
from ..inputs import ReadOptions, check_pairs, stream_input

__all__ = ["EdgeKeys", "edge_keys"]


class EdgeKeys:
    """The validated input of a blockwise release: a vertex set and sorted pair keys.

    Built by :func:`edge_keys`; a hand-built one is checked on construction,
    so a key can never name a pair that is not a row of the database (the
    sampler XORs every key into the flips: a key on the diagonal or below it
    would be written unflipped).

    Parameters
    ----------
    index : NodeIndex
        Over sorted integer labels (:meth:`NodeIndex.from_integers`).
    keys : array of int64
        Strictly increasing row-major keys i * n + j, 0 <= key < n^2,
        i != j, and j > i for an undirected graph.  Kept as a read-only copy.
    directed : bool

    Raises
    ------
    TypeError, ValueError
        Naming the first rule a key breaks (never the key).
    """

    __slots__ = ("_directed", "_index", "_keys")

    def __init__(self, index: NodeIndex, keys: Any, directed: bool) -> None:
        if not isinstance(index, NodeIndex) or index.labels is None:
            raise TypeError("index must be a NodeIndex over integer labels "
                            "(NodeIndex.from_integers)")
        if not isinstance(directed, (bool, np.bool_)):
            raise TypeError(f"directed must be True or False, got {type(directed).__name__}")
        arr = np.asarray(keys)
        if arr.ndim != 1 or (arr.size and arr.dtype.kind not in "iu"):
            raise TypeError("keys must be a one-dimensional array of integers")
        n = len(index)
        if arr.size and arr.dtype.kind == "u" and int(arr.max()) >= n * n:
            raise ValueError(f"keys must lie in 0..n^2 - 1 = {n * n - 1}")
        arr = np.array(arr, dtype=np.int64)  # our own copy, read-only
        check_keys(arr, n, bool(directed))
        arr.setflags(write=False)
        self._index = index
        self._keys = arr
        self._directed = bool(directed)

    @property
    def index(self) -> NodeIndex:
        """The public vertex set (read-only: the keys were checked against it)."""
        return self._index

    @property
    def directed(self) -> bool:
        """Whether the keys are ordered pairs (read-only: the keys were checked for it)."""
        return self._directed

    @property
    def keys(self) -> np.ndarray:
        """The sorted pair keys (read-only)."""
        return self._keys

    @property
    def n(self) -> int:
        return len(self.index)

    def digest(self) -> bytes:
        """SHA-256 of the public shape and the edge keys (used only under an HMAC)."""
        h = hashlib.sha256()
        h.update(struct.pack("<qq?", self.n, self._keys.size, self.directed))
        h.update(self.index.labels.tobytes())
        h.update(self._keys.tobytes())
        return h.digest()

    def __repr__(self) -> str:  # counts only: the keys are the private edges
        kind = "directed" if self.directed else "undirected"
        return f"EdgeKeys({kind}, n={self.n}, edges={self._keys.size})"


def check_keys(keys: np.ndarray, n: int, directed: bool, *, chunk: int = 1 << 20) -> None:
    """Refuse int64 keys that are not strictly increasing pairs (i, j), i != j, of an n-node
    matrix (j > i when undirected); ``chunk`` keys at a time, so memory stays bounded.

    The messages name the rule, never a key (the keys are the private edges).
    """
    size = int(keys.size)
    for a in range(0, size, chunk):
        part = keys[a : min(a + chunk + 1, size)]  # one key of overlap: order across chunks
        if int(part.min()) < 0 or int(part.max()) >= n * n:
            raise ValueError(f"keys must lie in 0..n^2 - 1 = {n * n - 1}")
        if np.any(part[1:] <= part[:-1]):
            raise ValueError("keys must be sorted and distinct (np.unique(keys))")
        rows, cols = np.divmod(part, n)
        if np.any(rows == cols):
            raise ValueError("keys name diagonal pairs (i, i), which are not rows of the "
                             "database")
        if not directed and np.any(cols < rows):
            raise ValueError("an undirected input stores each pair once as i * n + j "
                             "with j > i; some keys lie below the diagonal")


def _integer_index(index: NodeIndex) -> NodeIndex:
    if index.labels is not None:
        return index
    nodes = index.nodes
    if not all(isinstance(v, numbers.Integral) and not isinstance(v, bool) for v in nodes):
        raise TypeError(
            "blockwise releases need integer node labels; relabel first, e.g. "
            "nx.convert_node_labels_to_integers(G, ordering='sorted')"
        )
    return NodeIndex.from_integers(np.asarray([int(v) for v in nodes], dtype=np.int64))


@drops_input_frames
@validate_params(directed=Boolean())
def edge_keys(G: Any, nodes: Any = None, *, directed: bool = False,
              chunk_bytes: int = DEFAULT_CHUNK_BYTES,
              storage_options: dict | None = None) -> EdgeKeys:
    """The :class:`EdgeKeys` of any input of the input table (integer node labels).

    An edge-list file (a path or any fsspec URL) is read in one streaming
    pass of ``chunk_bytes`` at a time (extra columns ignored, ``#``
    comments, gzip), never into one Python object per edge.  Duplicate pairs
    (including (u, v) and (v, u) of an undirected graph) are collapsed: the
    input is a set of vertex pairs.

    Parameters
    ----------
    G : networkx graph, edge-list path or URL, scipy.sparse matrix, DataFrame or edge array
    nodes : int or collection of int, optional
        The public vertex set: n (labels 0..n-1) or the labels themselves.
        Required unless G is a graph or a matrix; never read from the edges.
    directed : bool, default False
    chunk_bytes : int, default 16 MiB
    storage_options : dict, optional
        fsspec options for a remote file.

    Returns
    -------
    EdgeKeys

    Examples
    --------
    >>> import tempfile, os
    >>> d = tempfile.mkdtemp(); p = os.path.join(d, "g.txt")
    >>> _ = open(p, "w").write("# demo\\n0 1\\n2 1\\n1 0\\n")
    >>> e = edge_keys(p, nodes=4)
    >>> e.n, e.keys.tolist()
    (4, [1, 6])
    >>> import networkx as nx
    >>> edge_keys(nx.path_graph(3)).keys.tolist()
    [1, 5]
    """
    stream = stream_input(G, nodes, directed,
                          options=ReadOptions(int(chunk_bytes), storage_options, compact=True))
    index = _integer_index(stream.index)
    n = len(index)
    parts: list[np.ndarray] = []
    for u, v in stream.chunks:
        u, v = check_pairs(np.asarray(u), np.asarray(v), directed, stream.what)
        parts.append(np.unique(u * n + v))
        if len(parts) > 16:  # bounded: merge as we go
            parts = [np.unique(np.concatenate(parts))]
    keys = np.unique(np.concatenate(parts)) if parts else np.zeros(0, dtype=np.int64)
    return EdgeKeys(index, keys, directed)
