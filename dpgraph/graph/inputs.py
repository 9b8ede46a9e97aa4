"""What :func:`dpgraph.release` accepts, turned into an :class:`EncodedGraph`.

* a networkx ``Graph`` / ``DiGraph`` (its nodes are the vertex set, or
  ``nodes=`` extends them with isolated nodes);
* a square scipy.sparse adjacency matrix (row i is node ``nodes[i]``, by
  default i; the shape is the vertex set; any non-zero entry is an edge);
* an (m, 2) array of edges (node labels) with ``nodes=``;
* the path of an edge-list text file (``u v`` per line, ``#`` comments,
  further columns ignored, like ``networkx.read_edgelist``) with ``nodes=``.

The vertex set is public: it is what the release reveals about the nodes.  It
is therefore never inferred from an edge list or array, whose nodes are only
those with an edge (that would reveal which nodes have none); pass it as
``nodes=``.  Errors give counts and line numbers, never labels or edges.
"""

from __future__ import annotations

import os
from collections.abc import Hashable, Sequence
from pathlib import Path
from typing import TYPE_CHECKING, Any, Union

import networkx as nx
import numpy as np

from .encoding import EncodedGraph, NodeIndex, canonical_node_order, encode_graph, pair_index

if TYPE_CHECKING:
    import scipy.sparse

__all__ = ["GraphInput", "encode_input"]

#: Everything :func:`dpgraph.release` takes as its graph.
GraphInput = Union[
    nx.Graph,
    "scipy.sparse.sparray",
    "scipy.sparse.spmatrix",
    np.ndarray,
    str,
    "os.PathLike[str]",
]


def encode_input(G: GraphInput, directed: bool = False,
                 nodes: Sequence[Hashable] | None = None) -> EncodedGraph:
    """Validate any accepted graph input and encode its edges as node positions.

    Parameters
    ----------
    G : networkx graph, scipy.sparse matrix, (m, 2) array or edge-list path
    directed : bool, default False
        Ordered pairs; a networkx input must then be a DiGraph, a matrix
        may be asymmetric, and ``u v`` is the edge u -> v.
    nodes : sequence of node labels, optional
        The public vertex set.  Required for an edge array or file; for a
        matrix, the labels of its rows (default 0..n-1); for a networkx
        graph, a superset of its nodes.

    Returns
    -------
    EncodedGraph
        The public vertex set in canonical order and every edge once, as
        positions (``rows < cols`` if undirected).

    Raises
    ------
    TypeError, ValueError
        For an input of another type, a missing or inconsistent ``nodes``,
        self-loops, or an asymmetric matrix without ``directed=True``.

    Examples
    --------
    >>> enc = encode_input(np.array([[0, 1], [1, 2]]), nodes=range(4))
    >>> enc.n, enc.rows.tolist(), enc.cols.tolist()
    (4, [0, 1], [1, 2])
    """
    if isinstance(G, nx.Graph):
        enc = encode_graph(G, directed=directed)
        return enc if nodes is None else _widen(enc, _index(nodes), G.number_of_nodes())
    if _is_scipy_sparse(G):
        return _encode_matrix(G, directed, nodes)
    if isinstance(G, (str, os.PathLike)):
        index = _index(nodes, "an edge-list file")
        return _encode_pairs(index, *_read_edge_list(G, index), directed, "the file")
    if isinstance(G, (np.ndarray, list, tuple)):
        index = _index(nodes, "an edge array or list")
        arr = np.asarray(G)
        if arr.ndim != 2 or arr.shape[1] != 2:
            raise ValueError(f"an edge array must have shape (m, 2), got {arr.shape}; pass an "
                             "adjacency matrix as scipy.sparse, e.g. scipy.sparse.csr_array(A)")
        return _encode_pairs(index, index.find(arr[:, 0]), index.find(arr[:, 1]), directed,
                             "the edge array")
    raise TypeError(
        "G must be a networkx Graph or DiGraph, a scipy.sparse adjacency matrix, an (m, 2) "
        f"edge array or the path of an edge-list file, got {type(G).__name__}"
    )


def _is_scipy_sparse(G: Any) -> bool:
    if not type(G).__module__.startswith("scipy.sparse"):
        return False  # scipy is imported only for a scipy input
    import scipy.sparse as sp

    return bool(sp.issparse(G))


def _index(nodes: Any, what: str | None = None) -> NodeIndex:
    if nodes is None:
        raise TypeError(
            f"G must be a networkx graph, or come with nodes= (the public vertex set, e.g. "
            f"nodes=range(n)) when it is {what}: the vertex set is not inferred from the "
            "edges, which would reveal which nodes have none"
        )
    if isinstance(nodes, (str, bytes)) or not hasattr(nodes, "__iter__"):
        raise TypeError(f"nodes must be a collection of node labels, got {type(nodes).__name__}")
    labels = list(nodes)
    if len(labels) < 2:
        raise ValueError(f"nodes must have at least 2 nodes, got {len(labels)}")
    if len(set(labels)) != len(labels):
        raise ValueError("nodes has repeated labels; pass each node once")
    return NodeIndex(canonical_node_order(labels))


def _widen(enc: EncodedGraph, index: NodeIndex, n_graph: int) -> EncodedGraph:
    """Re-encode ``enc`` over a larger public vertex set."""
    old = enc.index.nodes
    pos = index.find(old)
    missing = int((pos < 0).sum())
    if missing:
        raise ValueError(
            f"G has {missing} of its {n_graph} node(s) outside nodes=; nodes must be the "
            "whole public vertex set"
        )
    rows, cols = pos[enc.rows], pos[enc.cols]
    if not enc.directed:  # the new order may swap the ends of a pair
        rows, cols = np.minimum(rows, cols), np.maximum(rows, cols)
    return EncodedGraph(index, rows, cols, enc.directed)


def _encode_pairs(index: NodeIndex, u: np.ndarray, v: np.ndarray, directed: bool,
                  what: str) -> EncodedGraph:
    """Positions of the ends of every edge (-1: unknown) -> a simple graph's EncodedGraph."""
    missing = int((u < 0).sum() + (v < 0).sum())
    if missing:
        raise ValueError(
            f"{what} names {missing} edge end(s) that are not in nodes=; nodes must be the "
            "whole public vertex set"
        )
    if np.any(u == v):
        raise ValueError(
            f"{what} has self-loops; vertex pairs {{i, i}} are not rows of the database. "
            "Remove them"
        )
    if not directed:
        u, v = np.minimum(u, v), np.maximum(u, v)
    n = len(index)
    # repeated mentions of a pair (or both orders of an undirected one) are one edge
    _, first = np.unique(pair_index(u, v, n, directed), return_index=True)
    first.sort()
    return EncodedGraph(index, u[first].astype(np.int64), v[first].astype(np.int64),
                        bool(directed))


def _read_edge_list(path: str | os.PathLike[str], index: NodeIndex) -> tuple[np.ndarray, np.ndarray]:
    """Positions of the two ends of every line of an edge-list file (-1: not a node)."""
    by_text: dict[str, int] = {}
    for k, v in enumerate(index.nodes):
        if by_text.setdefault(str(v), k) != k:
            raise ValueError(
                "two labels of nodes= read the same as text (e.g. 1 and '1'), so the lines "
                "of an edge-list file cannot name them; relabel the nodes"
            )
    u, v = [], []
    path = Path(path)
    with open(path, encoding="utf-8") as fh:
        for lineno, line in enumerate(fh, 1):
            tokens = line.split("#", 1)[0].split()
            if not tokens:
                continue
            if len(tokens) < 2:
                raise ValueError(f"{path.name} line {lineno}: expected two node labels")
            u.append(by_text.get(tokens[0], -1))
            v.append(by_text.get(tokens[1], -1))
    return np.array(u, dtype=np.int64), np.array(v, dtype=np.int64)


def _encode_matrix(A: Any, directed: bool, nodes: Any) -> EncodedGraph:
    import scipy.sparse as sp

    if A.ndim != 2 or A.shape[0] != A.shape[1]:
        raise ValueError(f"an adjacency matrix must be square, got shape {A.shape}")
    n = int(A.shape[0])
    labels = list(range(n)) if nodes is None else list(nodes)
    if len(labels) != n:
        raise ValueError(f"nodes= has {len(labels)} labels for a {n} x {n} matrix; pass one a row")
    index = _index(labels)
    B = sp.csr_array(A, copy=True)
    B.eliminate_zeros()
    if B.diagonal().any():
        raise ValueError("the matrix has non-zero diagonal entries (self-loops); "
                         "vertex pairs {i, i} are not rows of the database. Zero the diagonal")
    pattern = (B != 0).astype(np.int8)
    if not directed and (pattern != pattern.T).nnz:
        raise ValueError("the matrix is not symmetric; pass directed=True for a directed "
                         "graph, or symmetrize it (e.g. A + A.T)")
    coo = pattern.tocoo()
    r, c = coo.row.astype(np.int64), coo.col.astype(np.int64)
    if not directed:
        keep = r < c
        r, c = r[keep], c[keep]
    order = index.find(labels)  # matrix row -> canonical position
    return _encode_pairs(index, order[r], order[c], directed, "the matrix")
