"""A graph as the database of its vertex pairs.

Undirected graphs have one row per unordered pair {i, j}; directed graphs, by
opt-in, one row per ordered pair (i, j), i != j.  The vertex set is public and
put in a canonical order that depends on the labels only (sorted where the
labels are comparable), never on the order edges or nodes were inserted,
which could reveal the input's edges.
"""

from __future__ import annotations

import itertools
from array import array
from collections.abc import Hashable, Iterable, Sequence
from dataclasses import dataclass, field
from itertools import chain, compress, repeat
from operator import itemgetter
from typing import Any

import networkx as nx
import numpy as np

__all__ = [
    "EncodedGraph",
    "NodeIndex",
    "canonical_node_order",
    "encode_graph",
]


def canonical_node_order(nodes: Iterable[Hashable]) -> list:
    """Order node labels by the labels alone, never by how they were inserted.

    Totally ordered labels are sorted; anything else (mixed types, or labels
    where ``<`` is only a partial order, such as frozensets or NaN, for which
    ``sorted`` silently keeps the input order) is ordered by (type name, repr).

    Raises
    ------
    ValueError
        If the labels have no canonical order at all (two labels share a type
        and a repr, e.g. two NaNs).

    Examples
    --------
    >>> canonical_node_order([3, 1, 2])
    [1, 2, 3]
    >>> canonical_node_order([frozenset({2}), frozenset({1})])
    [frozenset({1}), frozenset({2})]
    """
    nodes = list(nodes)
    try:
        out = sorted(nodes)
        if set(map(type, out)) == {int}:  # plain ints: a total order, checked vectorized
            ints = np.array(out)
            if ints.dtype != object and bool(np.all(ints[1:] > ints[:-1])):
                return out
        if all(a < b for a, b in itertools.pairwise(out)):
            return out
    except TypeError:
        pass
    keys = sorted(((type(v).__name__, repr(v)), k) for k, v in enumerate(nodes))
    if any(a[0] == b[0] for a, b in itertools.pairwise(keys)):
        raise ValueError(
            "G's node labels have no canonical order (they are not totally ordered and "
            "some share a repr, e.g. NaN); relabel them, e.g. "
            "nx.convert_node_labels_to_integers(G, ordering='sorted')"
        )
    return [nodes[k] for _, k in keys]


def _exact_int64(labels: np.ndarray) -> np.ndarray:
    """Integer labels as int64 without rounding: numpy compares and searches uint64 against
    int64 through float64 (2^53 + 1 would find 2^53), so unsigned labels are converted here;
    those above int64 are no label of an int64 index and become int64's minimum, which no
    index holds (its labels are within +-2^62)."""
    if labels.dtype.kind != "u" or labels.dtype.itemsize < 8:
        return labels.astype(np.int64, copy=False)
    big = labels > np.uint64(np.iinfo(np.int64).max)
    return np.where(big, np.iinfo(np.int64).min, labels.astype(np.int64))


class NodeIndex:
    """Public map between node labels and positions 0..n-1.

    :meth:`from_integers` builds one over sorted integer labels without a
    dict per label (vertex sets of millions of nodes).
    """

    def __init__(self, nodes: Sequence[Hashable]) -> None:
        self.nodes = tuple(nodes)
        self._pos_map: dict | None = {v: i for i, v in enumerate(self.nodes)}
        if len(self._pos_map) != len(self.nodes):
            raise ValueError("node labels must be distinct")
        # plain int labels in increasing order: vectorized lookups (searchsorted,
        # or the identity when the labels are 0..n-1)
        self._ints = None
        if self.nodes and set(map(type, self.nodes)) == {int} \
                and min(self.nodes) > -(1 << 62) and max(self.nodes) < 1 << 62:
            ints = np.array(self.nodes, dtype=np.int64)
            if np.all(ints[1:] > ints[:-1]):
                self._ints = ints

    @classmethod
    def from_integers(cls, labels: Any) -> NodeIndex:
        """An index over sorted, unique int64 labels, built without a dict.

        Lookups are vectorized (the identity when the labels are 0..n-1, else
        ``searchsorted``); ``nodes`` is a ``range`` in the first case.

        Examples
        --------
        >>> NodeIndex.from_integers([0, 1, 2]).nodes
        range(0, 3)
        >>> NodeIndex.from_integers([10, 20]).lookup([20, 5])[1]
        1
        """
        ints = np.asarray(labels, dtype=np.int64)
        if ints.ndim != 1 or ints.size == 0 or np.any(ints[1:] <= ints[:-1]):
            raise ValueError("labels must be a non-empty, sorted array of distinct integers")
        self = cls.__new__(cls)
        self._ints = ints
        self._pos_map = None  # built on first use by the generic lookups only
        self.nodes = range(ints.size) if self._identity else tuple(ints.tolist())
        return self

    @property
    def _pos(self) -> dict:
        if self._pos_map is None:
            self._pos_map = {v: i for i, v in enumerate(self.nodes)}
        return self._pos_map

    @property
    def labels(self) -> np.ndarray | None:
        """The labels as a sorted int64 array when they are plain integers, else None."""
        return self._ints

    def lookup(self, labels: Any) -> tuple[np.ndarray, int]:
        """Positions of integer labels and how many of them are not in the index.

        Unknown labels get position 0; callers refuse them when the count is
        not zero.  Needs integer labels (``labels`` is not None).
        """
        if self._ints is None:
            raise TypeError("lookup needs an index over integer labels")
        arr = np.asarray(labels)
        arr = _exact_int64(arr) if arr.dtype.kind in "iu" else arr.astype(np.int64)
        n = self._ints.size
        if self._identity:
            bad = (arr < 0) | (arr >= n)
            return np.where(bad, 0, arr), int(bad.sum())
        pos = np.minimum(np.searchsorted(self._ints, arr), n - 1)
        bad = self._ints[pos] != arr
        return np.where(bad, 0, pos), int(bad.sum())

    def positions(self, labels: Iterable[Hashable], count: int = -1) -> np.ndarray:
        """Positions of node labels known to be in the index (no validation).

        ``count``, when known, is the number of labels (saves resizing).
        """
        if self._ints is not None:
            arr = np.fromiter(labels, dtype=np.int64, count=count)
            return arr if self._identity else np.searchsorted(self._ints, arr)
        return np.fromiter(map(self._pos.__getitem__, labels), dtype=np.int64, count=count)

    @property
    def _identity(self) -> bool:
        ints = self._ints
        return ints is not None and ints[0] == 0 and ints[-1] == ints.size - 1

    def __len__(self) -> int:
        return len(self.nodes)

    def __contains__(self, v: Any) -> bool:
        """Whether ``v`` is one node label (False for an unhashable value, as in networkx).

        Examples
        --------
        >>> 3 in NodeIndex.from_integers(range(10**6)), "a" in NodeIndex(["a"]), [1] in NodeIndex([1])
        (True, True, False)
        """
        try:
            hash(v)
        except TypeError:
            return False
        if self._ints is not None:  # no dict for integer labels; 2.0 finds 2, as a dict would
            if isinstance(v, (float, np.floating)) and float(v).is_integer():
                v = int(v)
            if not isinstance(v, (int, np.integer)) or not -(1 << 62) < int(v) < 1 << 62:
                return False
            return self.lookup(np.array([int(v)], dtype=np.int64))[1] == 0
        return v in self._pos

    def find(self, labels: Iterable[Hashable]) -> np.ndarray:
        """Positions of node labels, -1 where a label is not a node (no error raised).

        Examples
        --------
        >>> NodeIndex(["a", "b"]).find(["b", "z"]).tolist()
        [1, -1]
        """
        if self._ints is not None and isinstance(labels, np.ndarray) and labels.dtype.kind in "iu":
            labels = _exact_int64(labels)  # uint64 against int64 would compare through float64
            n = self._ints.size
            if self._identity:  # labels 0..n-1: a label is its position
                return np.where((labels >= 0) & (labels < n), labels, -1).astype(np.int64)
            pos = np.minimum(np.searchsorted(self._ints, labels), n - 1)
            return np.where(self._ints[pos] == labels, pos, -1).astype(np.int64)
        items = labels.tolist() if isinstance(labels, np.ndarray) else list(labels)
        try:  # dict lookups at C speed, -1 for unknown labels
            return np.fromiter(map(self._pos.get, items, repeat(-1, len(items))), dtype=np.int64,
                               count=len(items))
        except TypeError:
            raise TypeError("node labels must be hashable") from None

    def indices(self, labels: Any, name: str) -> np.ndarray:
        """Positions of a collection of node labels (duplicates removed, sorted).

        A numpy boolean array of length n is a mask over the nodes (position
        i selected when ``labels[i]`` is True); a dict is refused (TypeError)
        rather than read as its keys.  Raises ValueError naming ``name`` if it
        is empty or has unknown nodes.
        """
        if labels is None:
            raise TypeError(f"{name} must be a collection of nodes, not None")
        if isinstance(labels, (str, bytes)) or not isinstance(labels, Iterable):
            raise TypeError(
                f"{name} must be a collection of nodes (list, set, array), "
                f"got {type(labels).__name__}"
            )
        if isinstance(labels, dict):  # its keys would be taken silently
            raise TypeError(f"{name} must be a collection of nodes, not a dict; pass list(d) "
                            "if the keys are the nodes")
        if isinstance(labels, np.ndarray) and labels.dtype == np.bool_:  # a mask over the nodes
            if labels.ndim != 1 or labels.size != len(self.nodes):
                raise ValueError(f"{name}: a boolean mask must have one entry per node "
                                 f"({len(self.nodes)}), got shape {labels.shape}")
            if not labels.any():
                raise ValueError(f"{name} is empty; a cut needs at least one node on each side")
            return np.flatnonzero(labels)
        fast = self._int_fast(labels, name)
        if fast is not None:
            return fast
        items = labels.tolist() if isinstance(labels, np.ndarray) else list(labels)
        if not items:
            raise ValueError(f"{name} is empty; a cut needs at least one node on each side")
        pos = self._pos
        try:  # dict lookups at C speed (map over pos.get), -1 for unknown labels
            idx = np.fromiter(map(pos.get, items, repeat(-1, len(items))), dtype=np.int64, count=len(items))
        except TypeError:
            raise TypeError(f"{name} contains unhashable items; pass node labels") from None
        if (idx < 0).any():
            raise _unknown_nodes(name, [items[k] for k in np.flatnonzero(idx < 0)])
        return np.unique(idx)

    def _int_fast(self, labels: Any, name: str) -> np.ndarray | None:
        """Vectorized path for integer arrays/lists/ranges/sets against int labels, else None."""
        if self._ints is None:
            return None
        if isinstance(labels, (set, frozenset, list, tuple)):
            # array('q') converts at C speed and accepts ints only (bool and numpy
            # ints included, which equal the same int labels); a float, str or other
            # label raises and takes the exact dict path below
            try:
                items = labels if isinstance(labels, list) else list(labels)  # array() iterates lists fastest
                arr = np.frombuffer(array("q", items), dtype=np.int64)
            except (TypeError, OverflowError, ValueError):
                return None
        elif isinstance(labels, (range, np.ndarray)):
            arr = labels if isinstance(labels, np.ndarray) else np.arange(labels.start, labels.stop, labels.step)
        else:
            return None
        if arr.ndim != 1 or arr.size == 0 or arr.dtype.kind not in "iu":
            return None
        if arr.dtype.kind == "u":  # compare as int64: uint64 vs int64 would go through float64
            too_big = arr > np.iinfo(np.int64).max
            if too_big.any():
                raise _unknown_nodes(name, arr[too_big].tolist())
            arr = arr.astype(np.int64)
        n = self._ints.size
        if self._identity and arr[0] >= 0 and arr[-1] < n and bool(np.all(arr[1:] > arr[:-1])):
            return arr.astype(np.int64)  # already sorted, distinct, in range: a copy of it
        pos, missing = self.lookup(arr)
        if missing:
            raise _unknown_nodes(name, arr[self.find(arr) < 0].tolist())
        member = np.zeros(n, dtype=bool)  # sort-free unique
        member[pos] = True
        return np.flatnonzero(member)


def _unknown_nodes(name: str, labels: list) -> ValueError:
    """The error for labels that are not nodes, naming the first few (labels are public)."""
    shown = ", ".join(repr(v) for v in labels[:5]) + (", ..." if len(labels) > 5 else "")
    return ValueError(f"{name} contains {len(labels)} node(s) that are not in the graph: "
                      f"{shown}; use labels from R.nodes")


@dataclass(frozen=True)
class EncodedGraph:
    """Validated input: canonical node order and edge endpoints as positions.

    For an undirected graph every edge appears once with ``rows < cols``.
    ``edge_data``, read only when asked (a typed release), holds the
    attribute dict of every edge, aligned with ``rows`` and ``cols``.
    """

    index: NodeIndex
    rows: np.ndarray
    cols: np.ndarray
    directed: bool
    edge_data: list | None = field(default=None, repr=False, compare=False)

    @property
    def n(self) -> int:
        return len(self.index)


def encode_graph(G: Any, directed: bool = False, edge_data: bool = False) -> EncodedGraph:
    """Validate a networkx graph and encode its edges as node positions.

    Edge and node attributes are dropped: only the presence of each vertex
    pair is released (a typed release reads each edge's attribute dict in
    the same pass, ``edge_data=True``).

    Parameters
    ----------
    G : networkx.Graph or networkx.DiGraph
    directed : bool, default False
        Must be True to release a DiGraph (one row per ordered pair).
    edge_data : bool, default False
        Keep every edge's attribute dict, aligned with the encoded edges
        (``EncodedGraph.edge_data``): references, not copies.

    Returns
    -------
    EncodedGraph

    Raises
    ------
    TypeError, ValueError
        For a non-graph, a multigraph, self-loops, a directed graph without
        ``directed=True`` (or the reverse), or fewer than 2 nodes.
    """
    from ..validation import check_bool

    directed = check_bool(directed, "directed")  # "yes" or 1 would silently mean True
    if not isinstance(G, nx.Graph):
        raise TypeError(f"G must be a networkx Graph or DiGraph, got {type(G).__name__}")
    if G.is_multigraph():
        raise ValueError(
            "G is a multigraph; edge-DP here releases the presence of each vertex pair. "
            "Collapse parallel edges first, e.g. nx.Graph(G)"
        )
    if G.is_directed() and not directed:
        raise ValueError(
            "G is directed; pass directed=True to release one row per ordered pair, "
            "or G.to_undirected() to release unordered pairs"
        )
    if directed and not G.is_directed():
        raise ValueError("directed=True needs a networkx.DiGraph; got an undirected graph")
    if G.number_of_nodes() < 2:
        raise ValueError(f"G must have at least 2 nodes, got {G.number_of_nodes()}")
    index = NodeIndex(canonical_node_order(G.nodes()))
    # read the adjacency dicts at C speed (np.fromiter over chained dict keys)
    # rather than a Python generator over G.edges(); G.adjacency() yields
    # networkx's own neighbour dicts (successors if directed), where the
    # G.adj / G.succ views would wrap each one in a Python-level view
    items = list(G.adjacency())
    inner = list(map(itemgetter(1), items))
    deg = np.fromiter(map(len, inner), dtype=np.int64, count=len(inner))
    rows = np.repeat(index.positions(map(itemgetter(0), items), len(items)), deg)
    cols = index.positions(chain.from_iterable(inner), int(deg.sum()))
    if np.any(rows == cols):
        raise ValueError(
            "G has self-loops; vertex pairs {i, i} are not rows of the database. "
            "Remove them, e.g. G.remove_edges_from(nx.selfloop_edges(G))"
        )
    data = chain.from_iterable(map(dict.values, inner)) if edge_data else None
    if not directed:  # every undirected edge appears in both endpoints' dicts: keep one
        keep = rows < cols
        rows, cols = rows[keep], cols[keep]
        if data is not None:
            data = compress(data, keep.tolist())
    # fresh arrays, owned by the encoding
    return EncodedGraph(index, rows, cols, bool(directed), None if data is None else list(data))
