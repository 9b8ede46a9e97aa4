"""Released edges to networkx, building the adjacency dicts directly.

``Graph.add_edges_from`` spends most of its time per edge in Python (a tuple,
a lookup, an attribute-dict update for each of the millions of released
edges).  Here the edges are sorted by endpoint once with numpy and every
node's neighbour dict is filled by one ``dict.update(zip(...))`` at C speed.
The result is the graph ``add_edges_from`` would build: the same nodes and
edges, one fresh attribute dict per edge, shared by its two directions
(``H[u][v] is H[v][u]`` for an undirected graph, ``H.succ[u][v] is
H.pred[v][u]`` for a directed one), so it behaves like any networkx graph.
"""

from __future__ import annotations

from collections.abc import Sequence
from operator import itemgetter

import networkx as nx
import numpy as np

__all__ = ["edges_to_networkx"]

_BLOCK = 1 << 22  # edges per block (bounds the temporary lists; larger blocks measured faster)


def _sort_key(keys: np.ndarray, n: int) -> np.ndarray:
    """``keys`` in the narrowest unsigned type: numpy's stable sort is then a radix sort."""
    for dtype in (np.uint8, np.uint16):
        if n <= np.iinfo(dtype).max:
            return keys.astype(dtype)
    return keys


def _fill(adj: dict, nodes: Sequence, as_labels, keys: np.ndarray, others: np.ndarray, dicts: Sequence) -> None:
    """adj[nodes[keys[j]]][label of others[j]] = dicts[j]; ``keys`` sorted."""
    if keys.size == 0:
        return
    neighbours = as_labels(others)
    starts = np.flatnonzero(np.r_[True, keys[1:] != keys[:-1]])
    ends = np.r_[starts[1:], keys.size]
    for k, a, b in zip(keys[starts].tolist(), starts.tolist(), ends.tolist()):
        adj[nodes[k]].update(zip(neighbours[a:b], dicts[a:b]))


def edges_to_networkx(nodes: Sequence, rows: np.ndarray, cols: np.ndarray, directed: bool) -> nx.Graph:
    """A networkx (Di)Graph on ``nodes`` with edges (nodes[rows[k]], nodes[cols[k]]).

    Parameters
    ----------
    nodes : sequence of hashable
        Node labels; positions index into it.
    rows, cols : numpy.ndarray of int
        Edge endpoints as positions, row-major (``rows`` sorted); each
        undirected edge once; no self-loops.
    directed : bool

    Returns
    -------
    networkx.Graph or networkx.DiGraph

    Examples
    --------
    >>> H = edges_to_networkx(["a", "b", "c"], np.array([0, 1]), np.array([1, 2]), False)
    >>> sorted(H.edges()), H["a"]["b"] is H["b"]["a"]
    ([('a', 'b'), ('b', 'c')], True)
    """
    H = nx.DiGraph() if directed else nx.Graph()
    nodes = tuple(nodes)
    H.add_nodes_from(nodes)
    n = len(nodes)
    rows = np.asarray(rows, dtype=np.int64)
    cols = np.asarray(cols, dtype=np.int64)
    if rows.size > 1 and np.any(rows[1:] < rows[:-1]):
        order = np.argsort(_sort_key(rows, n), kind="stable")
        rows, cols = rows[order], cols[order]
    if all(type(v) is int for v in nodes) and nodes == tuple(range(n)):
        as_labels = np.ndarray.tolist  # labels 0..n-1 are the positions
    else:
        objects = np.empty(n, dtype=object)  # element-wise: tuple labels stay whole
        for i, v in enumerate(nodes):
            objects[i] = v
        as_labels = lambda pos: objects[pos].tolist()
    # networkx's own storage, filled as add_edges_from fills it and in the same
    # neighbour order, a block of row-major edges at a time (blocks only bound
    # the temporary lists: fewer, larger updates measured faster): in-neighbours
    # (the lower half if undirected) from the block sorted by column, then
    # out-neighbours (the upper half) from the block as it is, both sharing each
    # edge's new attribute dict.  A node's lower neighbours all come from blocks
    # up to its own row, before its upper ones.
    by_row, by_col = (H._succ, H._pred) if directed else (H._adj, H._adj)
    for a in range(0, rows.size, _BLOCK):
        r, c = rows[a : a + _BLOCK], cols[a : a + _BLOCK]
        dicts = [{} for _ in range(r.size)]
        order = np.argsort(_sort_key(c, n), kind="stable")
        by_col_dicts = itemgetter(*order.tolist())(dicts) if r.size > 1 else dicts  # C-speed gather
        _fill(by_col, nodes, as_labels, c[order], r[order], by_col_dicts)
        _fill(by_row, nodes, as_labels, r, c, dicts)
    return H
