"""Input of a blockwise release: the public vertex set and the edges as sorted pair keys.

Edges are stored as sorted unique row-major keys ``i * n + j`` of node
positions (``j > i`` for an undirected graph), read from an edge-list file in
one streaming pass or taken from a networkx graph with integer labels.
"""

from __future__ import annotations

import hashlib
import io
import numbers
import os
import struct
import warnings
from collections.abc import Iterable
from dataclasses import dataclass
from typing import Any

import numpy as np

from ..encoding import NodeIndex, encode_graph
from .location import fsspec_kwargs

__all__ = ["EdgeInput", "edge_input_from_graph", "read_edge_list"]


@dataclass(frozen=True)
class EdgeInput:
    """A validated input graph for a blockwise release.

    Attributes
    ----------
    index : NodeIndex
        Over the sorted integer labels (:meth:`NodeIndex.from_integers`).
    keys : numpy.ndarray of int64
        Sorted unique row-major keys i * n + j of the pairs to store
        (j > i for an undirected graph).
    directed : bool
    """

    index: NodeIndex
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


def node_labels(nodes: Any) -> np.ndarray:
    """Sorted unique int64 labels of a public vertex set given as n or as labels."""
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


def _keys_from_pairs(index: NodeIndex, u: np.ndarray, v: np.ndarray,
                     directed: bool, what: str) -> np.ndarray:
    n = len(index)
    pu, bad_u = index.lookup(u)
    pv, bad_v = index.lookup(v)
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
    index = NodeIndex.from_integers(node_labels(nodes))
    chunk_bytes = int(chunk_bytes)
    if chunk_bytes < 1024:
        raise ValueError("chunk_bytes must be >= 1024")
    parts: list[np.ndarray] = []
    path_str = os.fspath(path)
    if "://" in path_str:
        import fsspec

        opener = fsspec.open(path_str, "rb", **fsspec_kwargs(storage_options))
    else:
        if not os.path.exists(path_str):
            raise FileNotFoundError(f"edge list {path_str!r} does not exist")
        opener = open(path_str, "rb")  # noqa: SIM115 - entered by the with below
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
    index = NodeIndex.from_integers(np.asarray(nodes, dtype=np.int64))
    keys = np.sort(enc.rows * enc.n + enc.cols)
    return EdgeInput(index, keys, bool(directed))
